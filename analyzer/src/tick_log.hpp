// SPDX-License-Identifier: BSD-3-Clause
// Per-location tick files (64-bit values, buffered in 64 KiB): for every operation, the tick it belongs to followed by
// one tick per action (0 for actions without one). Written by the Lamport pass, read in step with the operation files.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <span>
#include <vector>

namespace p3s::analyzer {

class TickWriter {
 public:
  explicit TickWriter(const std::filesystem::path& path);
  ~TickWriter();
  TickWriter(const TickWriter&) = delete;
  TickWriter& operator=(const TickWriter&) = delete;
  void write(std::uint64_t op_tick, std::span<const std::uint64_t> action_ticks) {
    put(op_tick);
    for (std::uint64_t t : action_ticks) put(t);
  }
  void finish();

 private:
  void put(std::uint64_t v) {
    if (used_ == buffer_.size()) flush();
    buffer_[used_++] = v;
  }
  void flush();
  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
  std::vector<std::uint64_t> buffer_;
  std::size_t used_ = 0;
};

class TickReader {
 public:
  explicit TickReader(const std::filesystem::path& path);
  ~TickReader();
  TickReader(const TickReader&) = delete;
  TickReader& operator=(const TickReader&) = delete;
  /// Reads the ticks of an operation with `actions` actions.
  void next(std::size_t actions, std::uint64_t& op_tick, std::vector<std::uint64_t>& action_ticks) {
    op_tick = get();
    action_ticks.resize(actions);
    for (std::size_t i = 0; i < actions; ++i) action_ticks[i] = get();
  }

 private:
  std::uint64_t get() {
    if (begin_ == end_) refill();
    return buffer_[begin_++];
  }
  void refill();
  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
  std::vector<std::uint64_t> buffer_;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
};

}  // namespace p3s::analyzer
