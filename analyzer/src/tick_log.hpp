// SPDX-License-Identifier: BSD-3-Clause
// Per-location tick files: for every operation, the tick it belongs to followed by one tick per action
// (0 for actions without one). Written by the Lamport pass, read in step with the operation files.
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
  void write(std::uint64_t op_tick, std::span<const std::uint64_t> action_ticks);
  void finish();

 private:
  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
  std::vector<char> buffer_;
};

class TickReader {
 public:
  explicit TickReader(const std::filesystem::path& path);
  ~TickReader();
  TickReader(const TickReader&) = delete;
  TickReader& operator=(const TickReader&) = delete;
  /// Reads the ticks of an operation with `actions` actions.
  void next(std::size_t actions, std::uint64_t& op_tick, std::vector<std::uint64_t>& action_ticks);

 private:
  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
  std::vector<char> buffer_;
};

}  // namespace p3s::analyzer
