// SPDX-License-Identifier: BSD-3-Clause
// Raw log reading in 1 MiB chunks; a record straddling two chunks is moved to the front before refilling.
#include "raw_reader.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace p3s::interpose {
namespace {
constexpr std::size_t kChunk = 1 << 20;
/// The longest record the recorder writes is far below this (a call site's text, the command line): a longer
/// length is damage, and is never allocated.
constexpr std::uint32_t kMaxRecordBytes = 16U << 20;
}  // namespace

RawReader::RawReader(std::string path, std::FILE* file, const raw::FileHeader& header, std::uint64_t file_bytes)
    : path_(std::move(path)), file_(file), header_(header), chunk_(kChunk), file_bytes_(file_bytes) {}

std::uint64_t RawReader::bytes_left() const noexcept {
  const std::uint64_t at = sizeof(raw::FileHeader) + consumed_;
  return file_bytes_ > at ? file_bytes_ - at : 0;
}

std::uint64_t RawReader::bytes_unread() const noexcept { return torn_ ? bytes_left() : 0; }

RawReader::~RawReader() {
  if (file_ != nullptr) std::fclose(file_);
}

std::unique_ptr<RawReader> RawReader::open(const std::string& path, std::string& error) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    error = "cannot open " + path + ": " + std::strerror(errno);
    return nullptr;
  }
  raw::FileHeader h{};
  if (std::fread(&h, sizeof h, 1, f) != 1) {
    std::fclose(f);
    error = path + " is shorter than a p3s raw log header (the process died before MPI_Init completed)";
    return nullptr;
  }
  if (std::memcmp(h.magic, raw::kMagic, sizeof h.magic) != 0 || h.header_bytes != sizeof h) {
    std::fclose(f);
    error = path + " is not a p3s raw log";
    return nullptr;
  }
  if (h.version != raw::kVersion) {
    std::fclose(f);
    error = path + " has raw log version " + std::to_string(h.version) + ", this p3s reads version " +
            std::to_string(raw::kVersion) + "; use the p3s that recorded it";
    return nullptr;
  }
  struct stat st {};
  const std::uint64_t size = fstat(fileno(f), &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
  return std::unique_ptr<RawReader>(new RawReader(path, f, h, size));
}

bool RawReader::fill(std::size_t need) {
  if (end_ - begin_ >= need) return true;
  // Keep the unread tail, then read behind it.
  const std::size_t left = end_ - begin_;
  if (need > chunk_.size()) chunk_.resize(need);
  std::memmove(chunk_.data(), chunk_.data() + begin_, left);
  begin_ = 0;
  end_ = left;
  end_ += std::fread(chunk_.data() + end_, 1, chunk_.size() - end_, file_);
  return end_ - begin_ >= need;
}

bool RawReader::next(RawRecord& record) {
  if (torn_) return false;
  if (!fill(sizeof(raw::RecordHeader))) {
    torn_ = end_ != begin_;  // a partial header left at the end
    return false;
  }
  std::memcpy(&record.header, chunk_.data() + begin_, sizeof record.header);
  const std::uint32_t bytes = record.header.bytes;
  if (bytes < sizeof(raw::RecordHeader) || bytes % 8 != 0 || bytes > kMaxRecordBytes || bytes > bytes_left()) {
    torn_ = true;  // garbage: a write cut in the middle, or a damaged length (never allocated)
    return false;
  }
  if (!fill(bytes)) {
    torn_ = true;
    return false;
  }
  record.payload = chunk_.data() + begin_ + sizeof(raw::RecordHeader);
  record.payload_bytes = bytes - sizeof(raw::RecordHeader);
  begin_ += bytes;
  consumed_ += bytes;
  return true;
}

void RawReader::rewind() {
  std::fseek(file_, static_cast<long>(sizeof(raw::FileHeader)), SEEK_SET);
  begin_ = end_ = 0;
  consumed_ = 0;
  torn_ = false;
}

}  // namespace p3s::interpose
