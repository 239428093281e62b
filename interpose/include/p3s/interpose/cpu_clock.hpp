// SPDX-License-Identifier: BSD-3-Clause
// The calling thread's CPU time at the cost of a clock read: a system call at most once per window of wall time.
#pragma once

#include <cstdint>
#include <string>

namespace p3s::interpose {

/// Thread CPU time in ns. A thread that runs without a break gains CPU time exactly as the monotonic clock (a vDSO
/// read, tens of ns) advances, so between two system-call reads (several hundred ns on a VM) the value is the last
/// one plus the wall time since. Two things end that:
/// - a context switch of the thread: the next read is a system call again. Where the kernel allows it, the thread
///   has a perf task-clock event whose ring receives a record at each switch, so a moved ring head shows one;
/// - the window: once `window_ns` of wall time passed since the last system call, the next read is one. A break
///   the kernel cannot report (the hypervisor stealing the vCPU, or any break without the ring) therefore makes a
///   value at most one window (and at most the break) too high, and the next system call corrects it.
///
/// The system call reads that same task clock (read(2) of the event), which runs with the thread's CPU time from
/// where it was when the clock was opened. It counts the time the thread is on a CPU as the kernel's scheduler
/// clock sees it, interrupts and time stolen by the hypervisor included, which CLOCK_THREAD_CPUTIME_ID leaves out
/// where the kernel accounts for them apart (0.04 % apart on a compute loop here). It does not use
/// clock_gettime(CLOCK_THREAD_CPUTIME_ID): that call updates the scheduler's accounting of the thread, and on a node
/// with more runnable threads than cores it made the ranks be preempted several times more often (a 2-rank ping-pong
/// beside two busy processes ran 5-20x slower with it, not with the task clock). Where perf events are refused,
/// clock_gettime is the fallback. Values never decrease.
class CpuClock {
 public:
  constexpr CpuClock() noexcept = default;
  CpuClock(const CpuClock&) = delete;
  CpuClock& operator=(const CpuClock&) = delete;
  ~CpuClock() { close(); }

  /// Prepares reading on the calling thread. `window_ns` 0 makes every read a system call; `use_perf` opens the
  /// task-clock event and its switch ring (false, or refused by the kernel: clock_gettime, and the window alone
  /// bounds the error).
  void open(std::uint64_t window_ns, bool use_perf) noexcept;
  /// The CPU time at wall time `now_ns`, a CLOCK_MONOTONIC value the caller has just read (clock_ns()).
  [[nodiscard]] std::uint64_t read(std::uint64_t now_ns) noexcept { return read(now_ns, now_ns); }
  /// The CPU time at wall time `at_ns`, read a moment later (the leave of an MPI call, after the recorder's own
  /// work on it): no clock read of its own. When a system call is due, its value (the CPU time now, the moment
  /// later) is given for `at_ns`, and the anchor takes the clock read with it.
  [[nodiscard]] std::uint64_t read_back(std::uint64_t at_ns) noexcept { return read(at_ns, 0); }
  void close() noexcept;

  [[nodiscard]] bool uses_task_clock() const noexcept { return fd_ >= 0; }
  [[nodiscard]] bool follows_switches() const noexcept { return ring_ != nullptr; }
  /// Reads that were system calls, and all reads (tests and benchmarks).
  [[nodiscard]] std::uint64_t syscalls() const noexcept { return syscalls_; }
  [[nodiscard]] std::uint64_t reads() const noexcept { return reads_; }

 private:
  /// `now_ns`: the clock just read, or 0 to read it before a system call.
  [[nodiscard]] std::uint64_t read(std::uint64_t at_ns, std::uint64_t now_ns) noexcept;
  [[nodiscard]] std::uint64_t exact() noexcept;
  void anchor(std::uint64_t now_ns, std::uint64_t head) noexcept;

  int fd_ = -1;
  const void* ring_ = nullptr;
  std::uint64_t offset_ = 0;           ///< thread CPU time when the task clock read 0
  std::uint64_t fallback_offset_ = 0;  ///< added to clock_gettime's value: a forked child goes on from the parent's
  std::uint64_t window_ns_ = 0;
  std::uint64_t head_ = 0;         ///< the ring's head when the anchor was read
  std::uint64_t anchor_cpu_ = 0;   ///< CPU time of the last system call ...
  std::uint64_t anchor_wall_ = 0;  ///< ... and the wall time it stands for
  bool anchored_ = false;
  std::uint64_t last_ = 0;
  std::uint64_t syscalls_ = 0;
  std::uint64_t reads_ = 0;
  unsigned fork_generation_ = 0;  ///< a forked child's event counts its parent's thread, not the child
};

/// The calling thread's CPU time by clock_gettime(CLOCK_THREAD_CPUTIME_ID).
[[nodiscard]] std::uint64_t thread_cpu_ns() noexcept;

/// Whether this process may open a perf task-clock event with a switch ring for its threads; tried once. `why`
/// says why not.
[[nodiscard]] bool task_clock_available(std::string* why = nullptr) noexcept;

/// How a run reads thread CPU time, for the archive.
[[nodiscard]] std::string cpu_clock_description(std::uint64_t window_ns, bool task_clock, const std::string& why_not);

}  // namespace p3s::interpose
