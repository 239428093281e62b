// SPDX-License-Identifier: BSD-3-Clause
// Work counters read at every MPI enter/leave: PAPI presets where the hardware has them, else thread CPU time.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "p3s/interpose/config.hpp"
#include "p3s/interpose/cpu_clock.hpp"

namespace p3s::interpose {

/// What is actually read; stored in every raw log and stated in the archive.
enum class CounterMode : std::uint8_t { None = 0, CpuTime = 1, Papi = 2 };

/// At most instructions, cycles and last-level cache misses.
inline constexpr int kMaxMetrics = 3;

/// A thread's work counters less what its MPI calls counted: the burst before a call is its counters' value at the
/// call's Enter less the calls' share so far (one Metric event per call instead of two).
class CountsOutsideCalls {
 public:
  /// At an Enter: the counters' `n` values less the calls' share (0 where a counter went back).
  void enter(const std::uint64_t* counters, int n, std::uint64_t* outside) noexcept {
    for (int i = 0; i < n; ++i) {
      entered_[i] = counters[i];
      outside[i] = counters[i] > inside_[i] ? counters[i] - inside_[i] : 0;
    }
  }
  /// At the Leave of the call entered last: what it counted joins the calls' share.
  void leave(const std::uint64_t* counters, int n) noexcept {
    for (int i = 0; i < n; ++i) inside_[i] += counters[i] > entered_[i] ? counters[i] - entered_[i] : 0;
  }

 private:
  std::uint64_t inside_[kMaxMetrics] = {};   ///< per counter: what the MPI calls so far counted
  std::uint64_t entered_[kMaxMetrics] = {};  ///< per counter: its value at the open call's Enter
};

/// The counters one run uses; identical on every rank.
struct CounterSetup {
  CounterMode mode = CounterMode::None;
  int count = 0;                                 ///< values per enter/leave record
  std::array<std::string, kMaxMetrics> names{};  ///< metric member names, the work metric first
  std::string note;                              ///< why the mode differs from what was requested
  std::uint64_t cpu_window_ns = 0;               ///< CpuTime: the CpuClock window (0: a system call every read)
  bool cpu_perf = false;                         ///< CpuTime: the CpuClock reads the perf task clock
  std::string read_path;                         ///< CpuTime: how thread CPU time is read (archive provenance)
};

/// Outcome of deciding on counters: `error` is set when PAPI was demanded but cannot be used.
struct CounterProbe {
  CounterSetup setup;
  std::string error;
};

/// Resolves a request against this machine. `auto` and a failed `papi` fall back to thread CPU time;
/// the fallback is explained in setup.note. Initialises PAPI when it is tried.
/// `cpu_window_ns` is the CpuClock window of thread CPU time.
[[nodiscard]] CounterProbe probe_counters(CountersRequest request,
                                          std::uint64_t cpu_window_ns = kDefaultCpuWindowUs * 1000ULL) noexcept;

/// Name of the work metric of a setup (trace::metric::*).
[[nodiscard]] const char* work_metric_name(const CounterSetup& setup) noexcept;

/// Per-thread reader; constant-initialisable so it can live in a thread_local without a guard.
class CounterReader {
 public:
  constexpr CounterReader() noexcept = default;
  /// Starts counting on the calling thread; false (and mode None) if that fails.
  bool start(const CounterSetup& setup) noexcept;
  /// Writes setup.count values (monotonic since start) into out.
  void read(std::uint64_t* out) noexcept;
  /// read(out) at the start of an MPI call, and the clock_ns() the call starts at: counters first, so that the
  /// burst before the call excludes the clock read; for CPU time one clock read serves both.
  [[nodiscard]] std::uint64_t read_then_clock(std::uint64_t* out) noexcept;
  /// read(out) at the end of an MPI call that returned at `leave_ns`, after the recorder's work on it. CPU time is
  /// taken at `leave_ns` (no clock read), so that it and the call's Leave time stand for the same moment; hardware
  /// counters are read now, so that they leave the recorder's instructions out of the next burst.
  void read_at_leave(std::uint64_t* out, std::uint64_t leave_ns) noexcept;
  /// Whether this thread reads CPU time without the switch records the run set up (its perf event or ring was
  /// refused, e.g. by the perf mlock budget): its values then follow the window alone.
  [[nodiscard]] bool misses_switches(const CounterSetup& setup) const noexcept {
    return mode_ == CounterMode::CpuTime && setup.cpu_perf && setup.cpu_window_ns != 0 && !cpu_.follows_switches();
  }
  void stop() noexcept;

 private:
  CpuClock cpu_;
  CounterMode mode_ = CounterMode::None;
  int eventset_ = -1;
  int count_ = 0;
};

}  // namespace p3s::interpose
