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

/// The calling thread's CPU time in ns without a system call on the hot path. A perf software event of the thread
/// maps a page whose sequence count the kernel bumps whenever it schedules the thread in or out: while the count is
/// unchanged the thread has run without a break since the last system-call read, so its CPU time has advanced as
/// the monotonic clock (a vDSO read). After a change the next read is a system call again. Where the kernel
/// refuses the event (perf_event_paranoid, seccomp) every read is the system call. Never decreases.
/// Constant-initialisable (lives in the per-thread reader).
class CpuClock {
 public:
  constexpr CpuClock() noexcept = default;
  /// Maps the page for the calling thread when `allow_mapped`; false where it cannot (then every read is
  /// clock_gettime(CLOCK_THREAD_CPUTIME_ID)).
  bool open(bool allow_mapped = true) noexcept;
  [[nodiscard]] std::uint64_t read() noexcept;
  void close() noexcept;
  [[nodiscard]] bool mapped() const noexcept { return page_ != nullptr; }
  /// Reads that were system calls, and all reads (for tests and benchmarks).
  [[nodiscard]] std::uint64_t syscalls() const noexcept { return syscalls_; }
  [[nodiscard]] std::uint64_t reads() const noexcept { return reads_; }

 private:
  int fd_ = -1;
  const void* page_ = nullptr;
  std::uint32_t seq_ = 1;  ///< odd: no base yet
  std::uint64_t base_cpu_ = 0;
  std::uint64_t base_mono_ = 0;
  std::uint64_t last_ = 0;
  std::uint64_t syscalls_ = 0;
  std::uint64_t reads_ = 0;
  unsigned fork_generation_ = 0;  ///< a forked child's page is its parent's: reads after a fork are system calls
};

/// Whether this process may map a CPU-time page (CpuClock): tried once; `why` says why not.
[[nodiscard]] bool cpu_clock_available(std::string* why = nullptr) noexcept;

/// Per-thread reader; constant-initialisable so it can live in a thread_local without a guard.
class CounterReader {
 public:
  constexpr CounterReader() noexcept = default;
  /// Starts counting on the calling thread; false (and mode None) if that fails.
  bool start(const CounterSetup& setup) noexcept;
  /// Writes setup.count values (monotonic since start) into out.
  void read(std::uint64_t* out) noexcept;
  void stop() noexcept;

 private:
  CpuClock cpu_;
  CounterMode mode_ = CounterMode::None;
  int eventset_ = -1;
  int count_ = 0;
};

}  // namespace p3s::interpose
