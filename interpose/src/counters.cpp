// SPDX-License-Identifier: BSD-3-Clause
// PAPI and thread-CPU-time work counters, with detection of machines that have no hardware counters. Thread CPU
// time is read through a perf_event page where the kernel allows it (CpuClock), by a system call elsewhere.
#include "p3s/interpose/counters.hpp"

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

#include "p3s/trace/schema.hpp"

#ifdef P3S_HAVE_PAPI
#include <papi.h>
#endif

namespace p3s::interpose {
namespace {

std::uint64_t thread_cpu_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<std::uint64_t>(ts.tv_nsec);
}

CounterSetup cputime_setup(std::string note) {
  CounterSetup s;
  s.mode = CounterMode::CpuTime;
  s.count = 1;
  s.names[0] = trace::metric::kCpuTime;
  std::string why;
  const std::string path = cpu_clock_available(&why)
                               ? "thread CPU time read through a perf_event page (a system call only after the "
                                 "thread was descheduled)"
                               : "thread CPU time read by a system call at every MPI call (" + why + ")";
  s.note = note.empty() ? path : std::move(note) + "; " + path;
  return s;
}

/// A software event of the calling thread that counts nothing we read: its page is what matters.
int open_switch_event() noexcept {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CONTEXT_SWITCHES;
  attr.exclude_kernel = 1;  // allowed at perf_event_paranoid 2
  attr.exclude_hv = 1;
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC));
}

#ifdef P3S_HAVE_PAPI
unsigned long papi_thread_id() { return static_cast<unsigned long>(pthread_self()); }

constexpr int kPresets[kMaxMetrics] = {PAPI_TOT_INS, PAPI_TOT_CYC, PAPI_L3_TCM};
constexpr const char* kPresetNames[kMaxMetrics] = {trace::metric::kInstructions, trace::metric::kCycles,
                                                   trace::metric::kLastLevelMisses};

/// Initialises PAPI once per process and checks that the presets can actually be counted (a preset may be
/// listed yet refuse to start in a VM or under perf_event_paranoid). Returns "" or the reason it cannot.
std::string try_papi(CounterSetup& setup) {
  static int init_rc = PAPI_NOT_INITED;
  if (init_rc == PAPI_NOT_INITED) {
    init_rc = PAPI_library_init(PAPI_VER_CURRENT);
    if (init_rc == PAPI_VER_CURRENT) PAPI_thread_init(papi_thread_id);
  }
  if (init_rc != PAPI_VER_CURRENT) return "PAPI_library_init failed (" + std::to_string(init_rc) + ")";
  if (PAPI_query_event(PAPI_TOT_INS) != PAPI_OK) {
    return "PAPI preset PAPI_TOT_INS is not available on this machine (no hardware performance counters)";
  }
  int set = PAPI_NULL;
  if (PAPI_create_eventset(&set) != PAPI_OK) return "PAPI_create_eventset failed";
  setup = CounterSetup{};
  setup.mode = CounterMode::Papi;
  for (int i = 0; i < kMaxMetrics; ++i) {
    // Instructions are mandatory; cycles and cache misses are added only where the hardware has them.
    if (PAPI_query_event(kPresets[i]) != PAPI_OK || PAPI_add_event(set, kPresets[i]) != PAPI_OK) {
      if (i == 0) break;
      continue;
    }
    setup.names[setup.count++] = kPresetNames[i];
  }
  std::string reason;
  if (setup.count == 0) {
    reason = "PAPI cannot add PAPI_TOT_INS to an event set";
  } else if (PAPI_start(set) != PAPI_OK) {
    reason = "PAPI cannot start counting (check /proc/sys/kernel/perf_event_paranoid)";
  } else {
    long long scratch[kMaxMetrics] = {};
    PAPI_stop(set, scratch);
  }
  PAPI_cleanup_eventset(set);
  PAPI_destroy_eventset(&set);
  return reason;
}
#endif

}  // namespace

bool cpu_clock_available(std::string* why) noexcept {
  static std::atomic<int> known{-1};  // -1 untried, 0 no, 1 yes
  static int error = 0;
  if (known.load(std::memory_order_acquire) < 0) {
    const int fd = open_switch_event();
    error = fd < 0 ? errno : 0;
    if (fd >= 0) ::close(fd);
    known.store(fd >= 0 ? 1 : 0, std::memory_order_release);
  }
  if (known.load(std::memory_order_acquire) == 1) return true;
  if (why != nullptr) {
    *why = std::string("perf_event_open refused: ") + std::strerror(error) +
           (error == EACCES || error == EPERM ? ", see /proc/sys/kernel/perf_event_paranoid" : "");
  }
  return false;
}

namespace {

/// Bumped in a forked child: the page a thread mapped before the fork tells of the parent's thread, not the child.
std::atomic<unsigned> g_fork_generation{0};

void count_forks() noexcept {
  static const int registered = pthread_atfork(nullptr, nullptr, [] { g_fork_generation.fetch_add(1); });
  (void)registered;
}

}  // namespace

bool CpuClock::open(bool allow_mapped) noexcept {
  close();
  if (!allow_mapped) return false;
  count_forks();
  fork_generation_ = g_fork_generation.load(std::memory_order_relaxed);
  const int fd = open_switch_event();
  if (fd < 0) return false;
  void* page = mmap(nullptr, static_cast<std::size_t>(sysconf(_SC_PAGESIZE)), PROT_READ, MAP_SHARED, fd, 0);
  if (page == MAP_FAILED) {
    ::close(fd);
    return false;
  }
  fd_ = fd;
  page_ = page;
  seq_ = 1;
  return true;
}

void CpuClock::close() noexcept {
  if (page_ != nullptr) munmap(const_cast<void*>(page_), static_cast<std::size_t>(sysconf(_SC_PAGESIZE)));
  if (fd_ >= 0) ::close(fd_);
  page_ = nullptr;
  fd_ = -1;
  seq_ = 1;
}

std::uint64_t CpuClock::read() noexcept {
  ++reads_;
  std::uint64_t now = 0;
  if (page_ != nullptr && fork_generation_ != g_fork_generation.load(std::memory_order_relaxed)) close();
  if (page_ != nullptr) {
    const auto* pc = static_cast<const volatile perf_event_mmap_page*>(page_);
    const std::uint32_t before = pc->lock;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    const std::uint64_t mono = clock_ns();
    std::atomic_signal_fence(std::memory_order_seq_cst);
    const std::uint32_t after = pc->lock;
    if (before == seq_ && after == seq_ && (seq_ & 1U) == 0) {
      now = base_cpu_ + (mono - base_mono_);  // running without a break since the base was read
    } else {
      // The thread was scheduled in or out since the base (or there is none yet): read the base again, and the
      // sequence count before it, so that a switch during the read makes the next read a system call too.
      seq_ = pc->lock;
      std::atomic_signal_fence(std::memory_order_seq_cst);
      base_cpu_ = thread_cpu_ns();
      base_mono_ = clock_ns();
      ++syscalls_;
      now = base_cpu_;
    }
  } else {
    now = thread_cpu_ns();
    ++syscalls_;
  }
  // The wall clock also runs while the hypervisor steals the CPU; the system call's value can then be a little
  // lower than the last extrapolation. The metric never goes back.
  if (now < last_) now = last_;
  last_ = now;
  return now;
}

CounterProbe probe_counters(CountersRequest request) noexcept {
  CounterProbe out;
  try {
    switch (request) {
      case CountersRequest::None:
        out.setup = CounterSetup{};
        return out;
      case CountersRequest::CpuTime:
        out.setup = cputime_setup("");
        return out;
      case CountersRequest::Auto:
      case CountersRequest::Papi: {
#ifdef P3S_HAVE_PAPI
        CounterSetup papi;
        const std::string reason = try_papi(papi);
        if (reason.empty()) {
          out.setup = papi;
          return out;
        }
#else
        const std::string reason = "p3s was built without PAPI";
#endif
        out.setup = cputime_setup(reason + "; work is thread CPU time instead");
        if (request == CountersRequest::Papi) out.error = reason;
        return out;
      }
    }
  } catch (...) {
    out.setup = cputime_setup("counter detection failed; work is thread CPU time");
  }
  return out;
}

const char* work_metric_name(const CounterSetup& setup) noexcept {
  switch (setup.mode) {
    case CounterMode::Papi:
      return trace::metric::kInstructions;
    case CounterMode::CpuTime:
      return trace::metric::kCpuTime;
    case CounterMode::None:
      break;
  }
  return trace::metric::kNone;
}

bool CounterReader::start(const CounterSetup& setup) noexcept {
  mode_ = setup.mode;
  count_ = setup.count;
  if (mode_ == CounterMode::CpuTime) cpu_.open(cpu_clock_available());
#ifdef P3S_HAVE_PAPI
  if (mode_ == CounterMode::Papi) {
    static constexpr int kAll[kMaxMetrics] = {PAPI_TOT_INS, PAPI_TOT_CYC, PAPI_L3_TCM};
    static constexpr const char* kAllNames[kMaxMetrics] = {trace::metric::kInstructions, trace::metric::kCycles,
                                                           trace::metric::kLastLevelMisses};
    int set = PAPI_NULL;
    bool ok = PAPI_create_eventset(&set) == PAPI_OK;
    // Add exactly the presets the probe chose, in its order, so every thread reports the same columns.
    for (int i = 0; ok && i < count_; ++i) {
      int code = 0;
      for (int k = 0; k < kMaxMetrics; ++k) {
        if (setup.names[static_cast<std::size_t>(i)] == kAllNames[k]) code = kAll[k];
      }
      ok = code != 0 && PAPI_add_event(set, code) == PAPI_OK;
    }
    ok = ok && PAPI_start(set) == PAPI_OK;
    if (!ok) {
      mode_ = CounterMode::None;
      return false;
    }
    eventset_ = set;
  }
#else
  if (mode_ == CounterMode::Papi) {
    mode_ = CounterMode::None;
    return false;
  }
#endif
  return true;
}

void CounterReader::read(std::uint64_t* out) noexcept {
  switch (mode_) {
    case CounterMode::None:
      // A thread whose counters failed to start still writes the run's number of columns.
      for (int i = 0; i < count_; ++i) out[i] = 0;
      return;
    case CounterMode::CpuTime:
      out[0] = cpu_.read();
      return;
    case CounterMode::Papi: {
#ifdef P3S_HAVE_PAPI
      long long v[kMaxMetrics] = {};
      PAPI_read(eventset_, v);
      for (int i = 0; i < count_; ++i) out[i] = static_cast<std::uint64_t>(v[i]);
#endif
      return;
    }
  }
}

void CounterReader::stop() noexcept {
  cpu_.close();
#ifdef P3S_HAVE_PAPI
  if (mode_ == CounterMode::Papi && eventset_ != PAPI_NULL) {
    long long v[kMaxMetrics] = {};
    PAPI_stop(eventset_, v);
    PAPI_cleanup_eventset(eventset_);
    PAPI_destroy_eventset(&eventset_);
  }
#endif
  mode_ = CounterMode::None;
}

}  // namespace p3s::interpose
