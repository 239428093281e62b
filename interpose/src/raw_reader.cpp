// SPDX-License-Identifier: BSD-3-Clause
// Raw log reading in 1 MiB chunks; a record straddling two chunks is moved to the front before refilling, and
// each record is decoded into a buffer of its own.
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
/// A record's length is a varint of at most this many bytes.
constexpr std::size_t kMaxLengthBytes = 4;
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
  if (h.version < raw::kOldestVersion || h.version > raw::kVersion) {
    std::fclose(f);
    error = path + " has raw log version " + std::to_string(h.version) + ", this p3s reads versions " +
            std::to_string(raw::kOldestVersion) + " to " + std::to_string(raw::kVersion) +
            "; use the p3s that recorded it";
    return nullptr;
  }
  if (h.version < 3) h.event_file = 0;  // a reserved byte before
  // Sizes that readers allocate by: a flipped byte must not make a run of billions of ranks.
  if (h.world_size < 1 || h.world_size > kMaxWorldSize || h.rank < 0 || h.rank >= h.world_size ||
      h.metric_count > kMaxMetricNames) {
    std::fclose(f);
    error = path + " has a damaged header (rank " + std::to_string(h.rank) + " of " + std::to_string(h.world_size) +
            ", " + std::to_string(h.metric_count) + " metrics)";
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
  if (end_ - begin_ < kMaxLengthBytes) fill(kMaxLengthBytes);  // fewer at the end of the file
  if (end_ == begin_) return false;
  const std::byte* p = chunk_.data() + begin_;
  std::uint64_t length = 0;
  if (!raw::get_varint(p, chunk_.data() + end_, length)) {
    torn_ = true;  // a partial length at the end, or damage
    return false;
  }
  const auto head = static_cast<std::size_t>(p - (chunk_.data() + begin_));
  if (length == 0 || length > kMaxRecordBytes || head + length > bytes_left()) {
    torn_ = true;  // a write cut in the middle, or a damaged length (never allocated)
    return false;
  }
  if (end_ - begin_ < head + length && !fill(head + length)) {
    torn_ = true;
    return false;
  }
  const std::byte* body = chunk_.data() + begin_ + head;
  const auto kind = static_cast<raw::Kind>(static_cast<std::uint8_t>(*body) & raw::kTagKindMask);
  if (!raw::verbatim(kind) && length > raw::kMaxCodedBody) {
    torn_ = true;  // no structure the recorder writes encodes that long: damage, never allocated 8x over
    return false;
  }
  // No encoded byte gives more than 8 decoded ones; a verbatim body gives itself.
  const std::size_t room = (raw::verbatim(kind) ? length : 8 * length) + 8;
  if (decoded_.size() < room) decoded_.resize(room);
  const long bytes = raw::decode(body, body + length, codec_, record.header, decoded_.data());
  if (bytes < 0) {
    torn_ = true;
    return false;
  }
  record.payload = decoded_.data();
  record.payload_bytes = static_cast<std::size_t>(bytes);
  begin_ += head + length;
  consumed_ += head + length;
  return true;
}

void RawReader::rewind() {
  std::fseek(file_, static_cast<long>(sizeof(raw::FileHeader)), SEEK_SET);
  begin_ = end_ = 0;
  consumed_ = 0;
  codec_ = {};
  torn_ = false;
}

}  // namespace p3s::interpose
