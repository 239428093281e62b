// SPDX-License-Identifier: BSD-3-Clause
// What a model cannot know and says so: a dimension longer at n than in every fitted run, where another dimension
// took more calls once it was longer than 2 (LAMMPS's atom migration), sizes no law in n reproduces, and sizes
// that are whole elements at every fitted n but not at the new one.
#include "grid_seen.hpp"

#include <gtest/gtest.h>

namespace p3s::modeler::detail {
namespace {

/// A point-to-point group of MPI_Sendrecv stepping along `axis` of the 3-D torus numbered x fastest.
GroupModel stepping(std::size_t axis, double size_error = 0) {
  GroupModel g;
  g.call = "MPI_Sendrecv";
  g.role = Role::PointToPoint;
  g.slots = 1;
  Program p;
  p.frame = Frame::Torus3C;
  Term t;
  std::vector<IndexedLaw> label(3, IndexedLaw::constant(0));
  label[axis] = IndexedLaw::constant(1);
  t.slots.push_back(label);
  p.terms.push_back(t);
  g.pattern.cases.push_back({RankPredicate{}, p});
  TermTraits tt;
  tt.bytes[0].offset = 100;
  tt.bytes[0].max_rel_error = size_error;
  tt.rank_spread[0] = size_error * 2;
  g.traits = {{tt}};
  return g;
}

TEST(GridSeen, ADimensionLongerThanEverFittedWhereAnotherAddedCallsIsACaveat) {
  PhaseModel phase;
  phase.groups = {stepping(0), stepping(1), stepping(2)};
  // MPI_Dims_create(n, 3): 2 -> 2x1x1, 4 -> 2x2x1, 8 -> 2x2x2, 16 -> 4x2x2; along x a side of 4 makes two calls.
  std::vector<RankCalls> ranks;
  for (const std::int64_t n : {2, 4, 8, 16}) {
    const std::size_t x = n == 16 ? 2 : 1;
    const std::size_t y = n >= 4 ? 1 : 0;
    const std::size_t z = n >= 8 ? 1 : 0;
    ranks.push_back({n, {x, y, z}});
  }
  phase.grid_seen = grid_seen(phase.groups, ranks, {2, 4, 8, 16});
  ASSERT_TRUE(phase.grid_seen.has_value());
  EXPECT_EQ(phase.grid_seen->frame, Frame::Torus3C);
  EXPECT_EQ(phase.grid_seen->longest, (std::array<std::int64_t, 3>{4, 2, 2}));
  EXPECT_EQ(phase.grid_seen->longer_adds_calls, (std::array<bool, 3>{true, false, false}));
  EXPECT_TRUE(phase.caveats(16, {}).empty());
  const auto unknown_calls = [&phase](std::int64_t n) {
    std::vector<std::string> out;
    for (const std::string& c : phase.caveats(n, {})) {
      if (c.find("may make calls the model does not predict") != std::string::npos) out.push_back(c);
    }
    return out;
  };
  // At 32 (4x4x2) y is 4 long, never more than 2 before: its group may make calls the model does not know.
  const std::vector<std::string> at32 = unknown_calls(32);
  ASSERT_EQ(at32.size(), 1U);
  EXPECT_NE(at32[0].find("along dimension 1"), std::string::npos) << at32[0];
  EXPECT_NE(at32[0].find("[1] MPI_Sendrecv"), std::string::npos) << at32[0];
  EXPECT_EQ(at32[0].find("[0] MPI_Sendrecv"), std::string::npos) << at32[0];
  // At 64 (4x4x4) z too.
  EXPECT_EQ(unknown_calls(64).size(), 2U);
  // Where no dimension added calls as it grew (a halo of the same calls at every side), no call is unknown.
  for (RankCalls& r : ranks) r.calls[0] = 1;
  phase.grid_seen = grid_seen(phase.groups, ranks, {2, 4, 8, 16});
  EXPECT_TRUE(unknown_calls(64).empty());
}

TEST(GridSeen, TheDirectionOfStepsAlongASideLongerThanEverFittedIsNamed) {
  // Along a periodic side of 2 a step forward and a step back reach the same rank: at 32 (4x4x2) the direction of
  // the steps along y is taken from x's, 4 long at 16; fitted on 2, 4 and 8 only, no side ever was longer than 2.
  PhaseModel phase;
  phase.groups = {stepping(0), stepping(1), stepping(2)};
  std::vector<RankCalls> ranks;
  for (const std::int64_t n : {2, 4, 8, 16}) ranks.push_back({n, {1, n >= 4 ? 1U : 0U, n >= 8 ? 1U : 0U}});
  phase.grid_seen = grid_seen(phase.groups, ranks, {2, 4, 8, 16});
  const std::vector<std::string> at32 = phase.caveats(32, {});
  ASSERT_EQ(at32.size(), 1U);
  EXPECT_NE(at32[0].find("along dimension 1"), std::string::npos) << at32[0];
  EXPECT_NE(at32[0].find("[1] MPI_Sendrecv"), std::string::npos) << at32[0];
  EXPECT_NE(at32[0].find("its longer sides"), std::string::npos) << at32[0];
  ranks.pop_back();
  phase.grid_seen = grid_seen(phase.groups, ranks, {2, 4, 8});
  const std::vector<std::string> at16 = phase.caveats(16, {});
  ASSERT_EQ(at16.size(), 1U);
  EXPECT_NE(at16[0].find("along dimension 0"), std::string::npos) << at16[0];
  EXPECT_NE(at16[0].find("the fit chose"), std::string::npos) << at16[0];
  // A grid that is no torus has no such ambiguity: a step back along a side of 2 reaches no rank forward.
  for (GroupModel& g : phase.groups) g.pattern.cases.front().program.frame = Frame::Grid3C;
  phase.grid_seen = grid_seen(phase.groups, ranks, {2, 4, 8});
  EXPECT_TRUE(phase.caveats(16, {}).empty());
}

TEST(GridSeen, SizesNoLawReproducesAreNamedWithTheirSpread) {
  PhaseModel phase;
  phase.groups = {stepping(0), stepping(1, 0.04)};
  EXPECT_EQ(phase.approximate_sizes(), (std::vector<std::uint32_t>{1}));
  const std::vector<std::string> caveats = phase.caveats(8, {});
  ASSERT_EQ(caveats.size(), 1U);
  EXPECT_NE(caveats[0].find("[1] MPI_Sendrecv"), std::string::npos) << caveats[0];
  EXPECT_NE(caveats[0].find("4.0 %"), std::string::npos) << caveats[0];
  EXPECT_NE(caveats[0].find("each rank's data"), std::string::npos) << caveats[0];
}

/// A phase of one group of `call` sending messages of offset + coefficient (x or /) g(n) bytes.
PhaseModel sending(const char* call, RegressionForm form, Basis basis, double offset, double coefficient) {
  PhaseModel phase;
  phase.groups = {stepping(0)};
  GroupModel& g = phase.groups[0];
  g.call = call;
  g.slot_kinds[0] = mpi::ActionKind::Send;
  RegressionLaw& bytes = g.traits[0][0].bytes[0];
  bytes.form = form;
  bytes.basis = basis;
  bytes.offset = offset;
  bytes.coefficient = coefficient;
  return phase;
}

TEST(GridSeen, SizesWholeAtEveryFittedNButAFractionAtNAreNamed) {
  // BT's multi-partition on q x q ranks: a face of N^2 / q points of 5 doubles, N = 60. Whole at q = 2 .. 6; at
  // q = 7 the 60 points of a side divide unevenly, and the law's 20571.4 bytes is no message any rank sends.
  PhaseModel phase = sending("MPI_Isend", RegressionForm::Inverse, Basis::Sqrt, 0, 60.0 * 60 * 5 * 8);
  GroupModel& g = phase.groups[0];
  RegressionLaw& bytes = g.traits[0][0].bytes[0];
  const std::vector<std::int64_t> fitted{4, 9, 16, 25};
  EXPECT_TRUE(phase.caveats(36, fitted).empty());
  const std::vector<std::string> at49 = phase.caveats(49, fitted);
  ASSERT_EQ(at49.size(), 1U);
  EXPECT_NE(at49[0].find("[0] MPI_Isend"), std::string::npos) << at49[0];
  EXPECT_NE(at49[0].find("20571.4 bytes"), std::string::npos) << at49[0];
  EXPECT_NE(at49[0].find("8-byte elements"), std::string::npos) << at49[0];
  EXPECT_NE(at49[0].find("unevenly"), std::string::npos) << at49[0];
  // A slot that sends nothing (no kind) and a law already approximate at a fitted n say nothing.
  g.slot_kinds[0].reset();
  EXPECT_TRUE(phase.caveats(49, fitted).empty());
  g.slot_kinds[0] = mpi::ActionKind::Send;
  bytes.coefficient += 0.5;
  EXPECT_TRUE(phase.caveats(49, fitted).empty());
}

TEST(GridSeen, LawsBelowZeroAtNAreNamed) {
  // A size fitted as 1000 - 40 n on 4 .. 16 ranks is negative from n = 26 on; prediction takes it as 0, and says so.
  const PhaseModel phase = sending("MPI_Send", RegressionForm::Linear, Basis::N, 1000, -40);
  EXPECT_TRUE(phase.caveats(24, {}).empty());
  const std::vector<std::string> at32 = phase.caveats(32, {});
  ASSERT_EQ(at32.size(), 1U);
  EXPECT_NE(at32[0].find("[0] MPI_Send"), std::string::npos) << at32[0];
  EXPECT_NE(at32[0].find("below zero (down to -280)"), std::string::npos) << at32[0];
}

}  // namespace
}  // namespace p3s::modeler::detail
