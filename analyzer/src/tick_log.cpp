// SPDX-License-Identifier: BSD-3-Clause
// Tick files: plain 64-bit values in 64 KiB blocks (one file per location is open at a time in each pass).
#include "tick_log.hpp"

#include <cerrno>
#include <cstring>

#include "p3s/error.hpp"

namespace p3s::analyzer {
namespace {
constexpr std::size_t kValues = 8192;

[[noreturn]] void fail(const std::filesystem::path& p, const char* what) {
  throw Error(std::string("analyzer scratch file '") + p.string() + "': " + what + ": " + std::strerror(errno) +
              "; check free space in the temporary directory (TMPDIR)");
}
}  // namespace

TickWriter::TickWriter(const std::filesystem::path& path) : path_(path), buffer_(kValues) {
  file_ = std::fopen(path.c_str(), "wb");
  if (file_ == nullptr) fail(path, "cannot create");
}

TickWriter::~TickWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

void TickWriter::flush() {
  if (used_ != 0 && std::fwrite(buffer_.data(), sizeof(std::uint64_t), used_, file_) != used_)
    fail(path_, "cannot write");
  used_ = 0;
}

void TickWriter::finish() {
  flush();
  const int rc = std::fclose(file_);
  file_ = nullptr;
  if (rc != 0) fail(path_, "cannot close");
}

TickReader::TickReader(const std::filesystem::path& path) : path_(path), buffer_(kValues) {
  file_ = std::fopen(path.c_str(), "rb");
  if (file_ == nullptr) fail(path, "cannot open");
}

TickReader::~TickReader() {
  if (file_ != nullptr) std::fclose(file_);
}

void TickReader::refill() {
  begin_ = 0;
  end_ = std::fread(buffer_.data(), sizeof(std::uint64_t), buffer_.size(), file_);
  if (end_ == 0) {
    throw Error("analyzer scratch file '" + path_.string() + "' is shorter than its operations (internal error)");
  }
}

}  // namespace p3s::analyzer
