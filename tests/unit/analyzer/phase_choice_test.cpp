// SPDX-License-Identifier: BSD-3-Clause
// How `auto` chooses between the run's ticks and each rank's calls, and between the ranks' units and the calls
// between the collectives of all processes.
#include "phase_choice.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "call_sequences.hpp"

namespace p3s::analyzer {
namespace {

/// A pseudo-random bit per step, the same on every rank and in every run (a step's data).
bool coin(std::uint64_t step, std::uint64_t salt) { return ((step * 0x9E3779B97F4A7C15ULL + salt) >> 61) % 2 == 1; }

/// A location of a code whose steps end where all processes meet: Init, `steps` x (two sends to its neighbour and an
/// allreduce of everyone), Finalize. The bursts before the calls are all a few microseconds, and which of them the
/// classes call computation follows the step's data (as in a small system on many ranks).
CallSequence brief_steps(std::int32_t rank, std::uint64_t steps) {
  CallSequence s(rank, 4000);
  const auto call = [&](std::uint32_t region, std::int32_t peer, std::uint64_t burst, bool everyone = false) {
    add_call(s, region, peer, burst, 0, everyone);
  };
  call(0, -1, 0);
  for (std::uint64_t k = 0; k < steps; ++k) {
    call(1, rank ^ 1, coin(k, 1) ? 9000 : 1000);
    call(1, rank ^ 1, coin(k, 2) ? 9000 : 1000);
    call(2, -1, coin(k, 3) ? 9000 : 1000, true);
  }
  call(9, -1, 10);
  return s;
}

/// The same steps with no collective of everyone among them: `reductions` of them in the set-up, one at the end.
CallSequence steps_after_reductions(std::int32_t rank, std::uint64_t steps, int reductions) {
  CallSequence s(rank, 4000);
  add_call(s, 0, -1, 0);
  for (int k = 0; k < reductions; ++k) add_call(s, 2, -1, 10, 0, true);
  for (std::uint64_t k = 0; k < steps; ++k) {
    add_call(s, 1, rank ^ 1, coin(k, 1) ? 9000 : 1000);
    add_call(s, 1, rank ^ 1, coin(k, 2) ? 9000 : 1000);
  }
  add_call(s, 2, -1, 10, 0, true);
  add_call(s, 9, -1, 10);
  return s;
}

/// The run's ticks for those steps: each step's ticks in one of two orders of its messages (which rank's send is
/// matched first follows the machine), then the reduction.
std::vector<TickSymbol> brief_ticks(std::uint64_t steps, std::vector<std::uint8_t>& syncs) {
  std::vector<TickSymbol> out{100};
  for (std::uint64_t k = 0; k < steps; ++k) {
    const bool swapped = coin(k, 4);
    out.insert(out.end(), {swapped ? TickSymbol{2} : TickSymbol{1}, swapped ? TickSymbol{1} : TickSymbol{2}, 3});
  }
  out.push_back(200);
  syncs.assign(out.size(), 0);
  for (std::size_t t = 0; t < out.size(); ++t) syncs[t] = out[t] == 3 ? 1 : 0;
  return out;
}

TEST(PhaseChoice, StepsTooBriefForUnitsAreTheCallsBetweenCollectivesOfEveryone) {
  constexpr std::uint64_t kSteps = 120;
  std::vector<std::uint8_t> syncs;
  const std::vector<TickSymbol> ticks = brief_ticks(kSteps, syncs);
  const auto calls = [] { return std::vector<CallSequence>{brief_steps(0, kSteps), brief_steps(1, kSteps)}; };
  const RunPhases rp = find_run_phases(ticks, syncs, calls, AnalyzeOptions{});
  EXPECT_EQ(rp.method, PhaseMethod::ByRank) << rp.method_note;
  EXPECT_EQ(rp.level, PhaseLevel::Collectives) << rp.method_note;
  EXPECT_NE(rp.method_note.find("clearly briefer"), std::string::npos) << rp.method_note;
  std::vector<std::uint64_t> weight = phase_weights(rp);
  std::sort(weight.begin(), weight.end());
  EXPECT_EQ(weight.back(), kSteps - 1) << "every step but the first, which holds Init";
}

TEST(PhaseChoice, CollectivesOfEveryoneOnlyInTheSetUpDescribeNoStep) {
  // Between the set-up's reductions and the last one, the whole time loop would be one instance: brief, and useless.
  constexpr std::uint64_t kSteps = 120;
  std::vector<std::uint8_t> syncs;
  const std::vector<TickSymbol> ticks = brief_ticks(kSteps, syncs);
  const auto calls = [] {
    return std::vector<CallSequence>{steps_after_reductions(0, kSteps, 6), steps_after_reductions(1, kSteps, 6)};
  };
  const RunPhases rp = find_run_phases(ticks, syncs, calls, AnalyzeOptions{});
  EXPECT_NE(rp.level, PhaseLevel::Collectives) << rp.method_note;
}

TEST(PhaseChoice, TicksThatFoldBrieflyStay) {
  // The same steps with their messages always matched in one order: the ticks fold into one loop.
  constexpr std::uint64_t kSteps = 120;
  std::vector<std::uint8_t> syncs;
  std::vector<TickSymbol> ticks = brief_ticks(kSteps, syncs);
  for (std::size_t t = 1; t + 1 < ticks.size(); t += 3) {
    ticks[t] = 1;
    ticks[t + 1] = 2;
  }
  const auto calls = [] { return std::vector<CallSequence>{brief_steps(0, kSteps), brief_steps(1, kSteps)}; };
  const RunPhases rp = find_run_phases(ticks, syncs, calls, AnalyzeOptions{});
  EXPECT_EQ(rp.method, PhaseMethod::GlobalTicks) << rp.method_note;
}

}  // namespace
}  // namespace p3s::analyzer
