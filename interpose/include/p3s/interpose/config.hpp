// SPDX-License-Identifier: BSD-3-Clause
// The interposer's configuration: every P3S_* environment variable, declared once in config.cpp.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace p3s::interpose {

/// Which work counters to read at every MPI call's enter and leave.
enum class CountersRequest : std::uint8_t { Auto, Papi, CpuTime, None };

/// When to measure clock offsets between ranks (ranks sharing rank 0's host share its clock).
enum class ClockSync : std::uint8_t { Auto, Always, Never };

/// Thread CPU time is read by a system call at most this often (P3S_CPUTIME_WINDOW_US).
inline constexpr std::uint32_t kDefaultCpuWindowUs = 20;

/// Effective configuration of one traced process.
struct Config {
  std::string trace_dir = "p3s-trace";
  CountersRequest counters = CountersRequest::Auto;
  bool callsite = false;
  std::uint32_t cputime_window_us = kDefaultCpuWindowUs;  ///< 0: a system call at every read
  std::uint32_t buffer_mb = 8;
  std::uint32_t flush_seconds = 1;
  bool keep_raw = false;
  ClockSync clock_sync = ClockSync::Auto;
  bool enabled = true;
  bool verbose = false;
  std::string command;
  std::string record_lock;  ///< the token of the p3s record holding the directory's lock (dir_lock.hpp)
};

/// One row of the variable table.
struct EnvVar {
  const char* name;
  const char* type;  ///< "string", "bool", "int" or "enum"
  const char* default_value;
  const char* allowed;  ///< allowed values for enums and ranges for ints, "" otherwise
  const char* help;
};

/// All variables the interposer reads, in documentation order.
[[nodiscard]] std::span<const EnvVar> env_table() noexcept;

/// Result of parsing: the configuration plus one warning line per problem (invalid value, unknown P3S_ name).
struct ParsedConfig {
  Config config;
  std::vector<std::string> warnings;
};

/// Parses `NAME=value` entries (as in `environ`); entries not starting with P3S_ are ignored.
[[nodiscard]] ParsedConfig parse_config(std::span<const char* const> environment);

/// The variable table as Markdown (README) or as aligned text (`p3s record --help-env`).
[[nodiscard]] std::string env_table_markdown();
[[nodiscard]] std::string env_table_text();

[[nodiscard]] std::string_view to_string(CountersRequest c) noexcept;

}  // namespace p3s::interpose
