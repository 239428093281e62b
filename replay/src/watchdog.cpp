// SPDX-License-Identifier: BSD-3-Clause
#include "watchdog.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "p3s/mpi/vocabulary.hpp"

namespace p3s::replay::detail {

std::string stuck_text(int rank, double seconds, const Position& p) {
  const auto f = p.function.load();
  std::string call = f >= 0 ? std::string(mpi::name(static_cast<mpi::Function>(f))) : "a burst";
  if (const std::int64_t peer = p.peer.load(); peer >= 0) call += ", peer " + std::to_string(peer);
  char buf[128];
  std::snprintf(buf, sizeof buf, "%.0f", seconds);
  return "rank " + std::to_string(rank) + " has made no progress for " + buf + " s in phase " +
         std::to_string(p.phase.load()) + ", instance " + std::to_string(p.instance.load()) + ", call " +
         std::to_string(p.call.load()) + " (" + call + ")";
}

Watchdog::Watchdog(int rank, double seconds, const Position& position)
    : rank_(rank), seconds_(seconds), position_(position), thread_([this] { watch(); }) {}

Watchdog::~Watchdog() {
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Watchdog::watch() {
  using Clock = std::chrono::steady_clock;
  std::uint64_t last = position_.step.load();
  Clock::time_point since = Clock::now();
  // A look every twentieth of the limit (at most every 2 s): a thread that wakes often on each of many
  // oversubscribed ranks would take the cores from the replay it guards.
  const auto every = std::chrono::duration<double>(std::clamp(seconds_ / 20, 0.05, 2.0));
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, every, [this] { return stop_; })) {
    const std::uint64_t step = position_.step.load();
    if (step != last || position_.computing.load()) {
      last = step;
      since = Clock::now();
      continue;
    }
    // Every rank of a stuck job stops making progress at once: each reports a second after the rank below it (30 s
    // at most), and the first report ends the job, so that one line, the lowest rank's, says where.
    const double stagger = std::min(30.0, static_cast<double>(rank_));
    if (std::chrono::duration<double>(Clock::now() - since).count() < seconds_ + stagger) continue;
    std::fprintf(stderr, "p3s-replay: %s; stopping the replay\n", stuck_text(rank_, seconds_, position_).c_str());
    std::fflush(stderr);
    std::_Exit(3);
  }
}

}  // namespace p3s::replay::detail
