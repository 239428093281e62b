// SPDX-License-Identifier: BSD-3-Clause
// Work counters read at every MPI enter/leave: PAPI presets where the hardware has them, else thread CPU time.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "p3s/interpose/config.hpp"

namespace p3s::interpose {

/// What is actually read; stored in every raw log and stated in the archive.
enum class CounterMode : std::uint8_t { None = 0, CpuTime = 1, Papi = 2 };

/// At most instructions, cycles and last-level cache misses.
inline constexpr int kMaxMetrics = 3;

/// The counters one run uses; identical on every rank.
struct CounterSetup {
  CounterMode mode = CounterMode::None;
  int count = 0;                                 ///< values per enter/leave record
  std::array<std::string, kMaxMetrics> names{};  ///< metric member names, the work metric first
  std::string note;                              ///< why the mode differs from what was requested
};

/// Outcome of deciding on counters: `error` is set when PAPI was demanded but cannot be used.
struct CounterProbe {
  CounterSetup setup;
  std::string error;
};

/// Resolves a request against this machine. `auto` and a failed `papi` fall back to thread CPU time;
/// the fallback is explained in setup.note. Initialises PAPI when it is tried.
[[nodiscard]] CounterProbe probe_counters(CountersRequest request) noexcept;

/// Name of the work metric of a setup (trace::metric::*).
[[nodiscard]] const char* work_metric_name(const CounterSetup& setup) noexcept;

/// Per-thread reader; constant-initialisable so it can live in a thread_local without a guard.
class CounterReader {
 public:
  constexpr CounterReader() noexcept = default;
  /// Starts counting on the calling thread; false (and mode None) if that fails.
  bool start(const CounterSetup& setup) noexcept;
  /// Writes setup.count values (monotonic since start) into out.
  void read(std::uint64_t* out) const noexcept;
  void stop() noexcept;

 private:
  CounterMode mode_ = CounterMode::None;
  int eventset_ = -1;
  int count_ = 0;
};

}  // namespace p3s::interpose
