// SPDX-License-Identifier: BSD-3-Clause
// A replay never hangs: a thread watches the rank's progress and, when it has made none for a while, names the
// phase, instance and call the rank is stuck in, and ends the process (the launcher then ends the job).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace p3s::replay::detail {

/// Where a rank is: written by the replay before every call, read by the watchdog.
struct Position {
  std::atomic<std::uint64_t> step{0};  ///< bumped at every call
  std::atomic<std::uint32_t> phase{0};
  std::atomic<std::uint32_t> instance{0};
  std::atomic<std::uint32_t> call{0};
  std::atomic<std::int32_t> function{-1};  ///< p3s::mpi::Function
  std::atomic<std::int64_t> peer{-1};      ///< the first peer of the call, -1 for none
  /// In a burst: computing as predicted, however long, is progress (a burst ends by itself).
  std::atomic<bool> computing{false};
};

class Watchdog {
 public:
  Watchdog(int rank, double seconds, const Position& position);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  void watch();
  int rank_;
  double seconds_;
  const Position& position_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

/// "rank 3 has made no progress for 60 s in phase 2, instance 1, call 4 (MPI_Recv, peer 5)".
[[nodiscard]] std::string stuck_text(int rank, double seconds, const Position& p);

}  // namespace p3s::replay::detail
