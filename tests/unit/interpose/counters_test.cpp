// SPDX-License-Identifier: BSD-3-Clause
// Counter detection: the fallback to thread CPU time is explicit, and forced PAPI reports why it failed; the CPU
// time read through the perf_event page agrees with the system call's.
#include "p3s/interpose/counters.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmath>
#include <thread>

#include "p3s/trace/schema.hpp"

namespace p3s::interpose {
namespace {

TEST(Counters, NoneRecordsNothing) {
  const CounterProbe p = probe_counters(CountersRequest::None);
  EXPECT_EQ(p.setup.mode, CounterMode::None);
  EXPECT_EQ(p.setup.count, 0);
  EXPECT_STREQ(work_metric_name(p.setup), trace::metric::kNone);
}

TEST(Counters, CpuTimeIsMonotonicAndCountsWork) {
  const CounterProbe p = probe_counters(CountersRequest::CpuTime);
  ASSERT_EQ(p.setup.mode, CounterMode::CpuTime);
  ASSERT_EQ(p.setup.count, 1);
  EXPECT_EQ(p.setup.names[0], trace::metric::kCpuTime);
  CounterReader r;
  ASSERT_TRUE(r.start(p.setup));
  std::uint64_t a = 0;
  std::uint64_t b = 0;
  r.read(&a);
  volatile double x = 1.0;
  for (int i = 0; i < 2000000; ++i) x = x * 1.0000001 + 1e-9;
  r.read(&b);
  EXPECT_GT(b, a);
  r.stop();
}

TEST(Counters, PapiEitherWorksOrExplainsTheFallback) {
  // Machines without hardware counters (VMs) must fall back to CPU time and say why; machines with them
  // must count instructions first.
  const CounterProbe p = probe_counters(CountersRequest::Papi);
  if (p.error.empty()) {
    EXPECT_EQ(p.setup.mode, CounterMode::Papi);
    EXPECT_EQ(p.setup.names[0], trace::metric::kInstructions);
    EXPECT_STREQ(work_metric_name(p.setup), trace::metric::kInstructions);
  } else {
    EXPECT_EQ(p.setup.mode, CounterMode::CpuTime);
    EXPECT_NE(p.setup.note.find("thread CPU time"), std::string::npos) << p.setup.note;
  }
  const CounterProbe a = probe_counters(CountersRequest::Auto);
  EXPECT_TRUE(a.error.empty());
  EXPECT_EQ(a.setup.mode, p.setup.mode);
}

std::uint64_t syscall_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<std::uint64_t>(ts.tv_nsec);
}

double spin(int iterations) {
  volatile double x = 1.0;
  for (int i = 0; i < iterations; ++i) x = x * 1.0000001 + 1e-9;
  return x;
}

TEST(CpuClock, MappedReadsEqualTheSystemCallWithinOnePercentOnAComputeLoop) {
  CpuClock clock;
  if (!clock.open()) GTEST_SKIP() << "the kernel refuses perf_event_open here; every read is the system call";
  // Bursts of computation between reads, as between MPI calls, with sleeps that take the thread off the CPU.
  std::uint64_t first_mapped = clock.read();
  std::uint64_t first_syscall = syscall_cpu_ns();
  std::uint64_t previous = first_mapped;
  for (int burst = 0; burst < 400; ++burst) {
    spin(200000);
    if (burst % 50 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
    const std::uint64_t now = clock.read();
    EXPECT_GE(now, previous);
    previous = now;
  }
  const double mapped = static_cast<double>(clock.read() - first_mapped);
  const double truth = static_cast<double>(syscall_cpu_ns() - first_syscall);
  EXPECT_NEAR(mapped, truth, 0.01 * truth) << "mapped " << mapped << " ns, system call " << truth << " ns";
  // Most reads are the page's; a sleep (a switch) makes the next one a system call.
  EXPECT_LT(clock.syscalls(), clock.reads() / 2) << clock.syscalls() << " system calls in " << clock.reads();
  EXPECT_GE(clock.syscalls(), 8u);
  clock.close();
}

TEST(CpuClock, AForkedChildDoesNotReadItsParentsPage) {
  CpuClock clock;
  if (!clock.open()) GTEST_SKIP() << "the kernel refuses perf_event_open here";
  (void)clock.read();
  const pid_t child = fork();
  if (child == 0) {
    // The child's first read must be its own system call, and it must stop using the parent's page.
    const std::uint64_t before = clock.syscalls();
    (void)clock.read();
    _exit(clock.syscalls() == before + 1 && !clock.mapped() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(clock.mapped());  // the parent keeps its page
}

TEST(CpuClock, WithoutThePageEveryReadIsTheSystemCall) {
  CpuClock clock;
  EXPECT_FALSE(clock.open(false));
  const std::uint64_t a = clock.read();
  spin(2000000);
  const std::uint64_t b = clock.read();
  EXPECT_GT(b, a);
  EXPECT_EQ(clock.syscalls(), clock.reads());
}

TEST(CpuClock, TheArchiveNoteSaysWhichPathIsInUse) {
  const CounterProbe p = probe_counters(CountersRequest::CpuTime);
  std::string why;
  const bool mapped = cpu_clock_available(&why);
  EXPECT_NE(p.setup.note.find(mapped ? "perf_event page" : "system call at every MPI call"), std::string::npos)
      << p.setup.note;
  if (!mapped) {
    EXPECT_NE(why.find("perf_event_open"), std::string::npos);
  }
}

}  // namespace
}  // namespace p3s::interpose
