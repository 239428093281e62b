// SPDX-License-Identifier: BSD-3-Clause
// Emulating a burst for its predicted duration: spinning on the clock, or sleeping until the deadline less how late
// this process's sleeps wake (a running estimate), so that bursts are not stretched by the timer on average; bursts
// too short to sleep are spun.
#pragma once

#include <cstdint>

#include "p3s/replay/replay.hpp"

namespace p3s::replay::detail {

/// Monotonic time in ns.
[[nodiscard]] std::int64_t now_ns() noexcept;
/// Sleeps until now_ns() reaches `deadline` (returns at once, without a system call, where it has).
void sleep_until(std::int64_t deadline) noexcept;

class BurstEmulator {
 public:
  explicit BurstEmulator(Compute mode);
  /// Returns about `ns` after the call: spinning, exactly; sleeping, on average over bursts.
  void run(double ns);

 private:
  /// A sleep shorter than this after the early wake is spun instead.
  static constexpr std::int64_t kShortestSleepNs = 50000;
  Compute mode_;
  std::int64_t latency_ = 0;  ///< how late this process's sleeps wake, as now estimated
};

}  // namespace p3s::replay::detail
