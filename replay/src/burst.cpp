// SPDX-License-Identifier: BSD-3-Clause
#include "burst.hpp"

#include <sys/prctl.h>

#include <algorithm>
#include <ctime>

namespace p3s::replay::detail {
namespace {

void spin_until(std::int64_t deadline) {
  while (now_ns() < deadline) {
  }
}

}  // namespace

void sleep_until(std::int64_t deadline) noexcept {
  // A deadline already passed returns without a system call: on an oversubscribed node the call may give the core
  // away (a receive's due time is 0 wherever no black hole answers it, in every full replay).
  if (deadline <= now_ns()) return;
  timespec ts{static_cast<time_t>(deadline / 1000000000), static_cast<long>(deadline % 1000000000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) != 0) {
  }
}

std::int64_t now_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

BurstEmulator::BurstEmulator(Compute mode) : mode_(mode) {
  if (mode_ == Compute::Sleep) prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);  // wake as close to the deadline as it can
}

void BurstEmulator::run(double ns) {
  if (!(ns > 0)) return;
  const auto length = static_cast<std::int64_t>(ns);
  const std::int64_t deadline = now_ns() + length;
  if (mode_ == Compute::Sleep && length > latency_ + kShortestSleepNs) {
    // Woken as early as this process's sleeps are late, the burst ends on time on average, each one late or early
    // by the jitter a sleeping application's ranks have, which their collectives wait for. How late a sleep wakes
    // grows with the machine's load (the ranks that spin in MPI calls on an oversubscribed node), so the estimate
    // follows it: a running mean over the last few sleeps.
    const std::int64_t wake = deadline - latency_;
    sleep_until(wake);
    latency_ += (std::max<std::int64_t>(0, now_ns() - wake) - latency_) / 8;
    return;
  }
  // Too short to sleep: spun, as the application computes its short bursts. A burst spun only because of the
  // estimate lets it decay, so that one very late wake cannot leave every later burst spun.
  spin_until(deadline);
  if (length > kShortestSleepNs) latency_ -= latency_ / 8;
}

}  // namespace p3s::replay::detail
