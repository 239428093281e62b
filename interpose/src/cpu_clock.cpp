// SPDX-License-Identifier: BSD-3-Clause
// Thread CPU time from the monotonic clock between system-call reads, bounded by a window and by context switches.
#include "p3s/interpose/cpu_clock.hpp"

#include <linux/perf_event.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "clock.hpp"

namespace p3s::interpose {
namespace {

/// The calling thread's task clock (its time on a CPU); its ring receives a record each time the thread is
/// switched in or out.
int open_task_clock() noexcept {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.context_switch = 1;
  attr.exclude_kernel = 1;  // allowed at perf_event_paranoid 2; the task clock counts kernel time all the same
  attr.exclude_hv = 1;
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC));
}

/// The metadata page and one data page; read-only, so the kernel overwrites old records and never stops.
std::size_t ring_bytes() noexcept { return 2 * static_cast<std::size_t>(sysconf(_SC_PAGESIZE)); }

std::uint64_t ring_head(const void* ring) noexcept {
  return static_cast<const volatile perf_event_mmap_page*>(ring)->data_head;
}

bool read_event(int fd, std::uint64_t& value) noexcept {
  return ::read(fd, &value, sizeof value) == static_cast<ssize_t>(sizeof value);
}

/// Bumped in a forked child, whose inherited event counts the parent's thread.
std::atomic<unsigned> g_fork_generation{0};

void count_forks() noexcept {
  static const int registered = pthread_atfork(nullptr, nullptr, [] { g_fork_generation.fetch_add(1); });
  (void)registered;
}

}  // namespace

std::uint64_t thread_cpu_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<std::uint64_t>(ts.tv_nsec);
}

bool task_clock_available(std::string* why) noexcept {
  static std::atomic<int> known{-1};  // -1 untried, else errno of the attempt (0: available)
  if (known.load(std::memory_order_acquire) < 0) {
    const int fd = open_task_clock();
    int error = fd < 0 ? errno : 0;
    if (fd >= 0) {
      std::uint64_t value = 0;
      void* ring = mmap(nullptr, ring_bytes(), PROT_READ, MAP_SHARED, fd, 0);
      if (ring == MAP_FAILED) {
        error = errno;
      } else {
        munmap(ring, ring_bytes());
        if (!read_event(fd, value)) error = errno != 0 ? errno : EIO;
      }
      ::close(fd);
    }
    known.store(error, std::memory_order_release);
  }
  const int error = known.load(std::memory_order_acquire);
  if (error == 0) return true;
  if (why != nullptr) {
    *why = std::string("perf task clock refused: ") + std::strerror(error) +
           (error == EACCES || error == EPERM ? ", see /proc/sys/kernel/perf_event_paranoid" : "");
  }
  return false;
}

std::string cpu_clock_description(std::uint64_t window_ns, bool task_clock, const std::string& why_not) {
  const std::string source = task_clock ? "the perf task clock" : "clock_gettime(CLOCK_THREAD_CPUTIME_ID)";
  if (window_ns == 0) return "thread CPU time read from " + source + " at every MPI call";
  std::string s =
      "thread CPU time read from " + source + " at most every " + std::to_string(window_ns / 1000) + " us of wall time";
  if (task_clock) return s + " and after each context switch (perf switch records), the monotonic clock between";
  return s + ", the monotonic clock between" + (why_not.empty() ? "" : " (" + why_not + ")") +
         "; a value is at most one window too high";
}

void CpuClock::open(std::uint64_t window_ns, bool use_perf) noexcept {
  close();
  window_ns_ = window_ns;
  if (!use_perf) return;
  count_forks();
  fork_generation_ = g_fork_generation.load(std::memory_order_relaxed);
  const int fd = open_task_clock();
  std::uint64_t clock = 0;
  if (fd < 0) return;
  const std::uint64_t before = thread_cpu_ns();
  if (!read_event(fd, clock)) {
    ::close(fd);
    return;
  }
  const std::uint64_t after = thread_cpu_ns();
  fd_ = fd;
  const std::uint64_t at_read = before + (after - before) / 2;
  offset_ = at_read > clock ? at_read - clock : 0;
  void* ring = mmap(nullptr, ring_bytes(), PROT_READ, MAP_SHARED, fd, 0);
  if (ring != MAP_FAILED) ring_ = ring;
}

void CpuClock::close() noexcept {
  // A forked child has no copy of the ring (perf maps it VM_DONTCOPY): its address may hold something else.
  const bool forked = fork_generation_ != g_fork_generation.load(std::memory_order_relaxed);
  if (ring_ != nullptr && !forked) munmap(const_cast<void*>(ring_), ring_bytes());
  if (fd_ >= 0) ::close(fd_);
  ring_ = nullptr;
  fd_ = -1;
  anchored_ = false;
}

std::uint64_t CpuClock::exact() noexcept {
  std::uint64_t clock = 0;
  if (fd_ >= 0 && read_event(fd_, clock)) return offset_ + clock;
  return fallback_offset_ + thread_cpu_ns();
}

void CpuClock::anchor(std::uint64_t now_ns, std::uint64_t head) noexcept {
  head_ = head;
  std::atomic_signal_fence(std::memory_order_seq_cst);  // the head before the read: a switch during it counts
  anchor_cpu_ = exact();
  const std::uint64_t after = clock_ns();
  // The kernel samples the CPU time somewhere inside the call: take the middle of it as its wall time.
  anchor_wall_ = now_ns + (after > now_ns ? (after - now_ns) / 2 : 0);
  anchored_ = true;
  ++syscalls_;
}

std::uint64_t CpuClock::read(std::uint64_t at_ns, std::uint64_t now_ns) noexcept {
  ++reads_;
  if (fd_ >= 0 && fork_generation_ != g_fork_generation.load(std::memory_order_relaxed)) {
    // A forked child: the event and its ring belong to the parent's thread. The child's own CPU time (from 0) goes
    // on from the parent's last value.
    close();
    const std::uint64_t own = thread_cpu_ns();
    fallback_offset_ = last_ > own ? last_ - own : 0;
  }
  const std::uint64_t head = ring_ != nullptr ? ring_head(ring_) : 0;
  // A read right after the system call can come before the middle of it: no time has passed since the anchor.
  const std::uint64_t since = at_ns > anchor_wall_ ? at_ns - anchor_wall_ : 0;
  std::uint64_t now = 0;
  if (anchored_ && head == head_ && since < window_ns_) {
    now = anchor_cpu_ + since;
  } else {
    // The anchor's wall time is that of the system call, never an earlier `at_ns`: a switch in between would
    // otherwise shift every extrapolation after it.
    anchor(now_ns != 0 ? now_ns : clock_ns(), head);
    now = anchor_cpu_;
  }
  // After a break the system call can be below the last extrapolation; the metric never goes back.
  if (now < last_) now = last_;
  last_ = now;
  return now;
}

}  // namespace p3s::interpose
