// SPDX-License-Identifier: BSD-3-Clause
// Loops in a rank's calls: a body of single calls repeated in a row is folded into one group per body call, and
// the merged shape knows which of its groups are made iteration by iteration.
#include "shape.hpp"

#include <gtest/gtest.h>

namespace p3s::modeler::detail {
namespace {

RankGroup group(mpi::Function f, Role role, std::int64_t peer = -1, std::uint32_t tag = 1) {
  RankGroup g;
  g.function = {f, std::string(mpi::name(f))};
  g.role = role;
  Call c;
  c.peers[0] = peer;
  c.tags[0] = tag;
  g.calls.push_back(c);
  return g;
}

/// One step of a recursive halving: MPI_Irecv and MPI_Send with the partner, MPI_Wait.
void step(std::vector<RankGroup>& out, std::int64_t partner, std::uint32_t tag) {
  out.push_back(group(mpi::Function::MPI_Irecv, Role::PointToPoint, partner, tag));
  out.push_back(group(mpi::Function::MPI_Send, Role::PointToPoint, partner, tag));
  out.push_back(group(mpi::Function::MPI_Wait, Role::Completion));
}

TEST(FoldLoops, RepeatedStepsBecomeOneGroupPerCallOfTheBody) {
  std::vector<RankGroup> groups;
  for (const std::int64_t partner : {4, 2, 1}) step(groups, partner, 1);
  step(groups, 9, 2);  // the transpose after it: another tag, not an iteration
  const std::vector<RankGroup> folded = fold_loops(groups);
  ASSERT_EQ(folded.size(), 6U);
  EXPECT_EQ(folded[0].loop, 3U);
  EXPECT_EQ(folded[1].loop, 0U);
  ASSERT_EQ(folded[0].calls.size(), 3U);
  EXPECT_EQ(folded[0].calls[2].peers[0], 1);
  EXPECT_EQ(folded[1].calls.size(), 3U);
  EXPECT_EQ(folded[2].calls.size(), 3U);
  EXPECT_EQ(folded[3].loop, 0U);
  EXPECT_EQ(folded[3].calls.size(), 1U);
  EXPECT_EQ(folded[3].calls[0].peers[0], 9);
}

TEST(FoldLoops, ASingleIterationOrDifferentCallsAreLeftAlone) {
  std::vector<RankGroup> groups;
  step(groups, 1, 1);
  step(groups, 3, 2);
  EXPECT_EQ(fold_loops(groups).size(), 6U);
  groups.push_back(group(mpi::Function::MPI_Allreduce, Role::Collective));
  EXPECT_EQ(fold_loops(groups).size(), 7U);
}

TEST(MergeShapes, LoopsOfDifferentLengthsAreOneLoopOfTheShape) {
  // Two iterations at one process count, three at another, one (nothing folded) at a third.
  std::vector<std::vector<RankGroup>> ranks(3);
  for (const std::int64_t p : {2, 1}) step(ranks[0], p, 1);
  for (const std::int64_t p : {4, 2, 1}) step(ranks[1], p, 1);
  step(ranks[2], 1, 1);
  std::vector<const std::vector<RankGroup>*> seqs;
  for (auto& r : ranks) {
    r = fold_loops(r);
    r.push_back(group(mpi::Function::MPI_Allreduce, Role::Collective));
    seqs.push_back(&r);
  }
  const Shape shape = merge_shapes(seqs, Alignment::Function);
  ASSERT_EQ(shape.groups.size(), 4U);
  ASSERT_EQ(shape.loops.size(), 1U);
  EXPECT_EQ(shape.loops[0], (PhaseLoop{0, 3}));
  EXPECT_EQ(shape.ranks[1][0].calls.size(), 3U);
  EXPECT_EQ(shape.ranks[2][2].calls.size(), 1U);
}

}  // namespace
}  // namespace p3s::modeler::detail
