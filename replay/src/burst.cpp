// SPDX-License-Identifier: BSD-3-Clause
#include "burst.hpp"

#include <sys/prctl.h>

#include <algorithm>
#include <ctime>
#include <vector>

namespace p3s::replay::detail {
namespace {

void sleep_until(std::int64_t deadline) {
  timespec ts{static_cast<time_t>(deadline / 1000000000), static_cast<long>(deadline % 1000000000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) != 0) {
  }
}

void spin_until(std::int64_t deadline) {
  while (now_ns() < deadline) {
  }
}

}  // namespace

std::int64_t now_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

BurstEmulator::BurstEmulator(Compute mode) : mode_(mode) {
  if (mode_ != Compute::Sleep) return;
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);  // wake as close to the deadline as the kernel can
  std::vector<std::int64_t> late;
  for (int i = 0; i < 21; ++i) {
    const std::int64_t deadline = now_ns() + 100000;
    sleep_until(deadline);
    late.push_back(now_ns() - deadline);
  }
  std::nth_element(late.begin(), late.begin() + 10, late.end());
  latency_ = std::max<std::int64_t>(0, late[10]);
}

void BurstEmulator::run(double ns) const {
  if (!(ns > 0)) return;
  const std::int64_t deadline = now_ns() + static_cast<std::int64_t>(ns);
  if (mode_ == Compute::Sleep && static_cast<std::int64_t>(ns) > 2 * latency_) {
    // Woken a typical latency early, the burst ends about on time, late by as much as the machine makes a sleeping
    // process late: the jitter a sleeping application's ranks have, which their collectives wait for.
    sleep_until(deadline - latency_);
    return;
  }
  spin_until(deadline);
}

}  // namespace p3s::replay::detail
