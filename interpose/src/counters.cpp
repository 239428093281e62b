// SPDX-License-Identifier: BSD-3-Clause
// PAPI and thread-CPU-time work counters, with detection of machines that have no hardware counters.
#include "p3s/interpose/counters.hpp"

#include <pthread.h>
#include <time.h>

#include "clock.hpp"

#include "p3s/trace/schema.hpp"

#ifdef P3S_HAVE_PAPI
#include <papi.h>
#endif

namespace p3s::interpose {
namespace {

CounterSetup cputime_setup(std::string note, std::uint64_t window_ns) {
  CounterSetup s;
  s.mode = CounterMode::CpuTime;
  s.count = 1;
  s.names[0] = trace::metric::kCpuTime;
  s.note = std::move(note);
  s.cpu_window_ns = window_ns;
  std::string why;
  s.cpu_perf = task_clock_available(&why);
  s.read_path = cpu_clock_description(window_ns, s.cpu_perf, why);
  return s;
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

CounterProbe probe_counters(CountersRequest request, std::uint64_t cpu_window_ns) noexcept {
  CounterProbe out;
  try {
    switch (request) {
      case CountersRequest::None:
        out.setup = CounterSetup{};
        return out;
      case CountersRequest::CpuTime:
        out.setup = cputime_setup("", cpu_window_ns);
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
        out.setup = cputime_setup(reason + "; work is thread CPU time instead", cpu_window_ns);
        if (request == CountersRequest::Papi) out.error = reason;
        return out;
      }
    }
  } catch (...) {
    out.setup = cputime_setup("counter detection failed; work is thread CPU time", cpu_window_ns);
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
  if (mode_ == CounterMode::CpuTime) cpu_.open(setup.cpu_window_ns, setup.cpu_perf);
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

std::uint64_t CounterReader::read_then_clock(std::uint64_t* out) noexcept {
  if (mode_ == CounterMode::CpuTime) {
    const std::uint64_t now = clock_ns();
    out[0] = cpu_.read(now);
    return now;
  }
  read(out);
  return clock_ns();
}

void CounterReader::read_at_leave(std::uint64_t* out, std::uint64_t leave_ns) noexcept {
  if (mode_ == CounterMode::CpuTime) {
    out[0] = cpu_.read_back(leave_ns);
    return;
  }
  read(out);
}

void CounterReader::read(std::uint64_t* out) noexcept {
  switch (mode_) {
    case CounterMode::None:
      // A thread whose counters failed to start still writes the run's number of columns.
      for (int i = 0; i < count_; ++i) out[i] = 0;
      return;
    case CounterMode::CpuTime:
      out[0] = cpu_.read(clock_ns());
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
#ifdef P3S_HAVE_PAPI
  if (mode_ == CounterMode::Papi && eventset_ != PAPI_NULL) {
    long long v[kMaxMetrics] = {};
    PAPI_stop(eventset_, v);
    PAPI_cleanup_eventset(eventset_);
    PAPI_destroy_eventset(&eventset_);
  }
#endif
  cpu_.close();
  mode_ = CounterMode::None;
}

}  // namespace p3s::interpose
