// SPDX-License-Identifier: BSD-3-Clause
// Tick files: plain 64-bit values through stdio buffers of 64 KiB (one per location is open at a time in the
// Lamport pass, so buffers stay small).
#include "tick_log.hpp"

#include <cerrno>
#include <cstring>

#include "p3s/error.hpp"

namespace p3s::analyzer {
namespace {
constexpr std::size_t kBuffer = 1 << 16;

[[noreturn]] void fail(const std::filesystem::path& p, const char* what) {
  throw Error(std::string("analyzer scratch file '") + p.string() + "': " + what + ": " + std::strerror(errno) +
              "; check free space in the temporary directory (TMPDIR)");
}
}  // namespace

TickWriter::TickWriter(const std::filesystem::path& path) : path_(path), buffer_(kBuffer) {
  file_ = std::fopen(path.c_str(), "wb");
  if (file_ == nullptr) fail(path, "cannot create");
  std::setvbuf(file_, buffer_.data(), _IOFBF, buffer_.size());
}

TickWriter::~TickWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

void TickWriter::write(std::uint64_t op_tick, std::span<const std::uint64_t> action_ticks) {
  if (std::fwrite(&op_tick, sizeof op_tick, 1, file_) != 1 ||
      (!action_ticks.empty() &&
       std::fwrite(action_ticks.data(), sizeof(std::uint64_t), action_ticks.size(), file_) != action_ticks.size())) {
    fail(path_, "cannot write");
  }
}

void TickWriter::finish() {
  const int rc = std::fclose(file_);
  file_ = nullptr;
  if (rc != 0) fail(path_, "cannot close");
}

TickReader::TickReader(const std::filesystem::path& path) : path_(path), buffer_(kBuffer) {
  file_ = std::fopen(path.c_str(), "rb");
  if (file_ == nullptr) fail(path, "cannot open");
  std::setvbuf(file_, buffer_.data(), _IOFBF, buffer_.size());
}

TickReader::~TickReader() {
  if (file_ != nullptr) std::fclose(file_);
}

void TickReader::next(std::size_t actions, std::uint64_t& op_tick, std::vector<std::uint64_t>& action_ticks) {
  action_ticks.resize(actions);
  if (std::fread(&op_tick, sizeof op_tick, 1, file_) != 1 ||
      (actions != 0 && std::fread(action_ticks.data(), sizeof(std::uint64_t), actions, file_) != actions)) {
    throw Error("analyzer scratch file '" + path_.string() + "' is shorter than its operations (internal error)");
  }
}

}  // namespace p3s::analyzer
