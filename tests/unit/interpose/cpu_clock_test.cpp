// SPDX-License-Identifier: BSD-3-Clause
// CpuClock: its values are thread CPU time (the system call's within 1 % over a compute loop), most reads need no
// system call, a descheduled thread gains no CPU time, and the value never goes back.
#include "p3s/interpose/cpu_clock.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>

#include <gtest/gtest.h>

#include "clock.hpp"

namespace p3s::interpose {
namespace {

constexpr std::uint64_t kWindow = 20000;

void compute(long iterations) {
  volatile double x = 1.0;
  for (long i = 0; i < iterations; ++i) x = x * 1.0000001 + 1e-9;
}

bool perf_here() { return task_clock_available(); }

class CpuClockModes : public ::testing::TestWithParam<bool> {};

/// One measurement of the compute loop below: our clock's and the system call's CPU time over it, and our first value
/// with the system call's then.
struct LoopTimes {
  double ours = 0;
  double reference = 0;
  std::uint64_t v0 = 0;
  std::uint64_t sys0 = 0;
};

LoopTimes time_compute_loop(bool task_clock) {
  CpuClock c;
  c.open(kWindow, task_clock);
  EXPECT_EQ(c.uses_task_clock(), task_clock);
  LoopTimes t;
  t.sys0 = thread_cpu_ns();
  t.v0 = c.read(clock_ns());
  // Bursts of a few us (extrapolated within the window) and of about 0.1 ms read between like MPI calls, then one
  // long burst: all must add up as the system call.
  for (int i = 0; i < 2000; ++i) {
    compute(500);
    (void)c.read(clock_ns());
  }
  for (int i = 0; i < 200; ++i) {
    compute(20000);
    (void)c.read(clock_ns());
  }
  compute(20000000);
  const std::uint64_t v1 = c.read(clock_ns());
  const std::uint64_t sys1 = thread_cpu_ns();
  t.ours = static_cast<double>(v1 - t.v0);
  t.reference = static_cast<double>(sys1 - t.sys0);
  return t;
}

TEST_P(CpuClockModes, ComputeLoopMatchesTheSystemCallWithinOnePercent) {
  if (GetParam() && !perf_here()) GTEST_SKIP() << "no perf task clock here";
  // A thread descheduled within a window gains the window's extrapolated time once: on a machine busy with other
  // work one measurement in a few can be off by more. A clock that is wrong is off every time, so the best of three
  // must be within 1 %.
  LoopTimes best;
  for (int attempt = 0; attempt < 3; ++attempt) {
    const LoopTimes t = time_compute_loop(GetParam());
    ASSERT_GT(t.reference, 5e6);
    if (attempt == 0 || std::abs(t.ours / t.reference - 1.0) < std::abs(best.ours / best.reference - 1.0)) best = t;
    if (std::abs(best.ours / best.reference - 1.0) <= 0.01) break;
  }
  EXPECT_NEAR(best.ours / best.reference, 1.0, 0.01) << best.ours << " ns against " << best.reference << " ns";
  // The values continue the thread's CPU time rather than start from 0.
  EXPECT_NEAR(static_cast<double>(best.v0), static_cast<double>(best.sys0), 1e6);
}

TEST_P(CpuClockModes, MostReadsNeedNoSystemCall) {
  if (GetParam() && !perf_here()) GTEST_SKIP() << "no perf task clock here";
  CpuClock c;
  c.open(kWindow, GetParam());
  for (int i = 0; i < 10000; ++i) (void)c.read(clock_ns());
  EXPECT_EQ(c.reads(), 10000U);
  // 10,000 back-to-back reads take a few hundred us: a system call every 20 us (and after switches) is a small
  // fraction of them.
  EXPECT_LT(c.syscalls(), c.reads() / 10) << c.syscalls() << " system calls";
}

TEST_P(CpuClockModes, AReadJustAfterTheSystemCallNeedsNoOther) {
  if (GetParam() && !perf_here()) GTEST_SKIP() << "no perf task clock here";
  // Like the leave of a short MPI call after its enter took the system call: the second read's clock may come
  // before the middle of the first read.
  // A switch between the two reads takes a second system call rightly: one attempt in five must do without.
  bool single = false;
  for (int attempt = 0; attempt < 5 && !single; ++attempt) {
    CpuClock c;
    c.open(kWindow, GetParam());
    const std::uint64_t t = clock_ns();
    const std::uint64_t a = c.read(t);
    const std::uint64_t b = c.read(t + 1);
    EXPECT_GE(b, a);
    single = c.syscalls() == 1;
  }
  EXPECT_TRUE(single);
}

TEST_P(CpuClockModes, WindowZeroReadsEveryTime) {
  if (GetParam() && !perf_here()) GTEST_SKIP() << "no perf task clock here";
  CpuClock c;
  c.open(0, GetParam());
  for (int i = 0; i < 100; ++i) (void)c.read(clock_ns());
  EXPECT_EQ(c.syscalls(), 100U);
}

TEST_P(CpuClockModes, SleepingGainsNoCpuTimeAndValuesNeverGoBack) {
  if (GetParam() && !perf_here()) GTEST_SKIP() << "no perf task clock here";
  CpuClock c;
  c.open(kWindow, GetParam());
  std::uint64_t last = c.read(clock_ns());
  int gained = 0;  // sleeps that gained more than a window plus the wake-up's own CPU time
  for (int i = 0; i < 20; ++i) {
    usleep(2000);
    const std::uint64_t v = c.read(clock_ns());
    EXPECT_GE(v, last);
    if (v - last >= 400000U) ++gained;
    last = v;
  }
  // A clock that counts sleeping gains 2 ms at every sleep; on a busy machine a wake-up now and then is slow.
  EXPECT_LE(gained, 2);
}

TEST_P(CpuClockModes, AReadBackStandsForItsTimeAndASleepAfterItIsNotCounted) {
  if (GetParam() && !perf_here()) GTEST_SKIP() << "no perf task clock here";
  CpuClock c;
  c.open(kWindow, GetParam());
  // Without a break, a read back is the extrapolation at its time, as a read then would have been (a switch
  // in between takes a system call rightly: one attempt in five must do without).
  bool at_its_time = false;
  for (int i = 0; i < 5 && !at_its_time; ++i) {
    const std::uint64_t t = clock_ns();
    const std::uint64_t a = c.read(t);
    const std::uint64_t b = c.read_back(t + 500);
    EXPECT_GE(b, a);
    at_its_time = b - a <= 500;
  }
  EXPECT_TRUE(at_its_time);
  // A leave 4 ms ago, read back after a sleep (a preempted recorder): the reads after it do not gain the sleep as
  // CPU time. Following switches, the read back is the system call, whose wall time is now: the read after it
  // needs none of its own (unless a switch came between them: one attempt in five must do without).
  bool extrapolated = false;
  int gained = 0;  // attempts whose read after the read back gained more than the wake-up's own CPU time
  for (int i = 0; i < 5; ++i) {
    const std::uint64_t leave = clock_ns();
    usleep(4000);
    const std::uint64_t back = c.read_back(leave);
    const std::uint64_t calls = c.syscalls();
    const std::uint64_t later = c.read(clock_ns());
    if (later - back >= 400000U) ++gained;
    extrapolated = extrapolated || c.syscalls() == calls;
  }
  // A read that counts the sleep gains 4 ms at every attempt; on a busy machine a wake-up now and then is slow.
  EXPECT_LE(gained, 2);
  if (c.follows_switches()) {
    EXPECT_TRUE(extrapolated);
  }
}

INSTANTIATE_TEST_SUITE_P(Source, CpuClockModes, ::testing::Values(false, true),
                         [](const auto& p) { return p.param ? "TaskClock" : "ClockGettime"; });

TEST(CpuClock, SwitchRecordsCatchASleepInsideAWindow) {
  if (!perf_here()) GTEST_SKIP() << "no perf task clock here";
  // A window far longer than the sleep: only the switch records can tell that the thread was off the CPU.
  CpuClock c;
  c.open(1000000000ULL, true);
  ASSERT_TRUE(c.follows_switches());
  const std::uint64_t before = c.read(clock_ns());
  usleep(20000);
  const std::uint64_t after = c.read(clock_ns());
  EXPECT_LT(after - before, 5000000U) << "a 20 ms sleep counted as CPU time";
  EXPECT_EQ(c.syscalls(), 2U);
}

TEST(CpuClock, ForkedChildStopsReadingItsParentsEvent) {
  if (!perf_here()) GTEST_SKIP() << "no perf task clock here";
  CpuClock c;
  c.open(kWindow, true);
  const std::uint64_t parent = c.read(clock_ns());
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::uint64_t a = c.read(clock_ns());
    compute(1000000);
    const std::uint64_t b = c.read(clock_ns());
    // The child's own computation counts, from where the parent's value was.
    _exit(!c.uses_task_clock() && a >= parent && b > a + 1000000 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(c.uses_task_clock());
}

TEST(CpuClock, DescriptionSaysHowItReads) {
  EXPECT_NE(cpu_clock_description(20000, true, "").find("every 20 us"), std::string::npos);
  EXPECT_NE(cpu_clock_description(20000, true, "").find("perf task clock"), std::string::npos);
  EXPECT_NE(cpu_clock_description(0, false, "").find("at every MPI call"), std::string::npos);
  EXPECT_NE(cpu_clock_description(20000, false, "refused").find("(refused)"), std::string::npos);
}

}  // namespace
}  // namespace p3s::interpose
