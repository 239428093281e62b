// SPDX-License-Identifier: BSD-3-Clause
// Emulating a burst for its predicted duration: spinning on the clock, or sleeping until the deadline less the
// machine's typical wake-up latency (measured once), so that bursts are not stretched by the timer on average;
// bursts too short to sleep are spun.
#pragma once

#include <cstdint>

#include "p3s/replay/replay.hpp"

namespace p3s::replay::detail {

/// Monotonic time in ns.
[[nodiscard]] std::int64_t now_ns() noexcept;

class BurstEmulator {
 public:
  explicit BurstEmulator(Compute mode);
  /// Returns once `ns` have passed since the call.
  void run(double ns) const;
  /// The measured wake-up latency of a sleep (0 when spinning).
  [[nodiscard]] std::int64_t wake_latency_ns() const noexcept { return latency_; }

 private:
  Compute mode_;
  std::int64_t latency_ = 0;
};

}  // namespace p3s::replay::detail
