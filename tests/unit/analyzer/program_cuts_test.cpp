// SPDX-License-Identifier: BSD-3-Clause
// The outermost level of the tick phases: an occurrence per iteration of the outermost loops, and cuts moved to
// program points, so that an iteration's closing Wait stays in it on ranks whose clock runs late.
#include "program_cuts.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include "tick_log.hpp"

namespace p3s::analyzer {
namespace {

namespace fs = std::filesystem;

TEST(RunPhasesAtTop, EveryIterationOfAnOutermostLoopIsOneOccurrence) {
  // set-up S, then (A B B C) x 3, then the end E: the innermost loop (B x 2) is no phase of its own here.
  const std::vector<TickSymbol> ticks = {9, 1, 2, 2, 3, 1, 2, 2, 3, 1, 2, 2, 3, 7};
  const PhaseStructure structure = find_phases(ticks);
  const RunPhases top = run_phases_at_top(structure, ticks, std::vector<std::uint8_t>(ticks.size(), 0));
  EXPECT_EQ(top.level, PhaseLevel::Outermost);
  EXPECT_EQ(top.occurrence_phase, (std::vector<std::uint32_t>{0, 1, 1, 1, 2}));
  EXPECT_EQ(top.first_tick, (std::vector<std::uint64_t>{1, 2, 6, 10, 14}));
  EXPECT_EQ(top.occurrence_ticks, (std::vector<std::uint64_t>{1, 4, 4, 4, 1}));
  EXPECT_EQ(phase_weights(top), (std::vector<std::uint64_t>{1, 3, 1}));
  // At the units' level the inner loop's body is a phase of its own.
  EXPECT_GT(run_phases_from_ticks(structure).phase_count, top.phase_count);
}

/// One location's operations and ticks, written as the analysis passes write them.
class Location {
 public:
  explicit Location(const std::string& name)
      : dir_(fs::path(P3S_TEST_TMP) / ("program_cuts." + name + "." + std::to_string(::getpid()))) {
    fs::create_directories(dir_);
    ops_ = std::make_unique<OpWriter>(dir_ / "ops");
    ticks_ = std::make_unique<TickWriter>(dir_ / "ticks");
  }
  ~Location() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  /// An operation at `tick` with one action of `kind` on `request` (0: none).
  void add(std::uint64_t tick, mpi::ActionKind kind, std::uint64_t request) {
    Action a;
    a.kind = kind;
    a.request = request;
    a.peer = 1;
    OpHeader h;
    h.actions = 1;
    ops_->append(h, &a, 1);
    const std::uint64_t action_tick = tick;
    ticks_->write(tick, {&action_tick, 1});
  }
  LocationFiles files() {
    ops_->finish();
    ticks_->finish();
    return {dir_ / "ops", dir_ / "ticks"};
  }

 private:
  fs::path dir_;
  std::unique_ptr<OpWriter> ops_;
  std::unique_ptr<TickWriter> ticks_;
};

/// Occurrences of outermost loops found on the run's ticks: their phases, first ticks and lengths in ticks.
RunPhases occurrences(std::uint32_t phases, std::vector<std::uint32_t> phase, std::vector<std::uint64_t> first_tick,
                      std::vector<std::uint64_t> ticks) {
  RunPhases rp;
  rp.method = PhaseMethod::GlobalTicks;
  rp.level = PhaseLevel::Outermost;
  rp.phase_count = phases;
  rp.occurrence_phase = std::move(phase);
  rp.first_tick = std::move(first_tick);
  rp.occurrence_ticks = std::move(ticks);
  return rp;
}

/// Two occurrences of 4 ticks from tick 1 and 5, and the end from tick 9.
RunPhases three_occurrences() { return occurrences(2, {0, 0, 1}, {1, 5, 9}, {4, 4, 1}); }

TEST(ProgramCuts, AWaitOnARequestOfTheIterationBeforeStaysInIt) {
  using K = mpi::ActionKind;
  // Each iteration: Isend (request r), Recv, then the Wait on r; the late clock puts the Wait at the next
  // iteration's first tick.
  Location late("late");
  late.add(2, K::Send, 11);
  late.add(4, K::Recv, 0);
  late.add(5, K::IsendComplete, 11);
  late.add(6, K::Send, 12);
  late.add(8, K::Recv, 0);
  late.add(9, K::IsendComplete, 12);
  late.add(10, K::Recv, 0);  // the end
  RunPhases rp = three_occurrences();
  cut_at_program_points(rp, {late.files()});
  ASSERT_EQ(rp.first_op.size(), 1u);
  EXPECT_EQ(rp.first_op[0], (std::vector<std::uint64_t>{0, 3, 6}));
  OccurrenceLocator at(rp, 0);
  EXPECT_EQ(at.at(2, 5), 0u);  // the first Wait: iteration 0, whatever its tick
  EXPECT_EQ(at.at(3, 6), 1u);
  EXPECT_EQ(at.at(5, 9), 1u);
  EXPECT_EQ(at.at(6, 10), 2u);
}

TEST(ProgramCuts, ACompletionOfARequestStartedInTheSameIterationIsNotMoved) {
  using K = mpi::ActionKind;
  // A rank that posts a receive and waits on it in the next iteration's first tick: the receive was posted after
  // the cut (in that iteration), so the Wait stays; a blocking receive never moves.
  Location early("early");
  early.add(5, K::IrecvPost, 21);
  early.add(5, K::Recv, 21);
  early.add(9, K::Recv, 0);
  RunPhases rp = three_occurrences();
  cut_at_program_points(rp, {early.files()});
  EXPECT_EQ(rp.first_op[0], (std::vector<std::uint64_t>{0, 0, 2}));
}

TEST(ProgramCuts, ACompletionPastSeveralCutsAtOnceStaysWithItsRequest) {
  using K = mpi::ActionKind;
  // A rank whose clock jumps past two occurrences at once (it has no operation in the middle one): its Wait on the
  // Isend of occurrence 0 still belongs to occurrence 0, and both cuts move past it.
  Location jump("jump");
  jump.add(2, K::Send, 31);
  jump.add(25, K::IsendComplete, 31);
  jump.add(26, K::Recv, 0);
  RunPhases rp = occurrences(1, {0, 0, 0}, {1, 10, 20}, {9, 10, 10});
  cut_at_program_points(rp, {jump.files()});
  EXPECT_EQ(rp.first_op[0], (std::vector<std::uint64_t>{0, 2, 2}));
}

}  // namespace
}  // namespace p3s::analyzer
