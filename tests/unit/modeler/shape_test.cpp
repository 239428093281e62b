// SPDX-License-Identifier: BSD-3-Clause
// Loops in a rank's calls: a body of single calls repeated in a row is folded into one group per body call, and
// the merged shape knows which of its groups are made iteration by iteration.
#include "shape.hpp"

#include <gtest/gtest.h>

#include <array>
#include <optional>

#include "p3s/analyzer/signature.hpp"

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

TEST(FoldLoops, TagsThatCountTheIterationsFoldAsALoopCounter) {
  // A halving whose tag is the step counter (3, 2, 1), then an exchange with tag 1 that is no further step.
  std::vector<RankGroup> groups;
  std::uint32_t tag = 3;
  for (const std::int64_t partner : {1, 2, 4}) step(groups, partner, tag--);
  step(groups, 9, 1);
  // Tags alike only pair the last step with the exchange after it.
  const std::vector<RankGroup> alike = fold_loops(groups, {true, LoopTags::Equal, nullptr});
  ASSERT_EQ(alike.size(), 9U);
  EXPECT_EQ(alike[0].loop, 0U);
  EXPECT_EQ(alike[6].loop, 3U);
  const std::vector<RankGroup> folded = fold_loops(groups, {true, LoopTags::Counter, nullptr});
  ASSERT_EQ(folded.size(), 6U);
  EXPECT_EQ(folded[0].loop, 3U);
  ASSERT_EQ(folded[0].calls.size(), 3U);
  EXPECT_EQ(folded[0].calls[2].peers[0], 4);
  EXPECT_EQ(folded[3].calls.size(), 1U);
  EXPECT_EQ(folded[3].calls[0].peers[0], 9);
}

TEST(FoldLoops, ACounterNumbersEveryIterationOfTheBodyAlike) {
  // Any two iterations draw a line: a body of two steps, tags (3, 2) then (1, 1), steps by -2 at its first
  // call and by 0 at its second, so it is no loop; the steps of one exchange each, tags 3, 2, 1, are.
  std::vector<RankGroup> groups;
  for (const std::uint32_t tag : {3U, 2U, 1U, 1U}) step(groups, tag, tag);
  const std::vector<RankGroup> folded = fold_loops(groups, {true, LoopTags::Counter, nullptr});
  ASSERT_EQ(folded.size(), 6U);
  EXPECT_EQ(folded[0].loop, 3U);
  EXPECT_EQ(folded[0].calls.size(), 3U);
}

TEST(FoldLoops, OneCountedIterationAndAnExchangeTaggedAlikeAreNoLoop) {
  // Where the counted loop has one step (tag 1), the exchange after it with tag 1 is not a second one.
  std::vector<RankGroup> groups;
  step(groups, 1, 1);
  step(groups, 0, 1);
  EXPECT_EQ(fold_loops(groups, {true, LoopTags::Counter, nullptr}).size(), 6U);
  EXPECT_EQ(fold_loops(groups, {true, LoopTags::Equal, nullptr}).size(), 3U);  // tagged all alike, they would be
}

TEST(FoldLoops, ALoopStartsAfterTheCompletionOfTheExchangeBeforeIt) {
  // An exchange (tag 1), then steps tagged 1, 2 by their counter: the exchange's MPI_Wait followed by the steps'
  // MPI_Irecv and MPI_Send also repeats with a stepping tag, but a body begins where an iteration starts its
  // requests, and the loop one group later covers as much.
  std::vector<RankGroup> groups;
  step(groups, 5, 1);
  step(groups, 1, 1);
  step(groups, 2, 2);
  const std::vector<RankGroup> folded = fold_loops(groups, {true, LoopTags::Counter, nullptr});
  ASSERT_EQ(folded.size(), 6U);
  EXPECT_EQ(folded[2].loop, 0U);
  EXPECT_EQ(folded[2].function.function, mpi::Function::MPI_Wait);
  EXPECT_EQ(folded[2].calls.size(), 1U);
  EXPECT_EQ(folded[3].loop, 3U);
  ASSERT_EQ(folded[3].calls.size(), 2U);
  EXPECT_EQ(folded[3].calls[1].peers[0], 2);
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

/// One exchange of a V-cycle level: MPI_Send to `peer` of `bytes`, with the level's tag.
RankGroup send(std::int64_t peer, double bytes, std::uint32_t tag) {
  RankGroup g = group(mpi::Function::MPI_Send, Role::PointToPoint, peer, tag);
  g.calls.front().bytes[0] = bytes;
  g.calls.front().offset = peer;
  return g;
}

TEST(MergeShapes, ARankThatSkipsALevelIsAlignedByTheSizesOfItsRun) {
  // A V-cycle's levels 1, 2, 2, 1 (sizes 64, 16, 16, 64) on rank 0; rank 1 holds no data at level 2 and makes
  // levels 1, 1 only. Its two calls are alike in everything but their sizes: they go with the sizes of level 1,
  // not into the first two places a longest common subsequence would take.
  std::vector<std::vector<RankGroup>> ranks(2);
  for (const double b : {64.0, 16.0, 16.0, 64.0}) {
    ranks[0].push_back(send(1, b, 10));
    ranks[0].push_back(group(mpi::Function::MPI_Barrier, Role::Collective));
  }
  for (const double b : {64.0, 64.0}) {
    ranks[1].push_back(send(0, b, 10));
    ranks[1].push_back(group(mpi::Function::MPI_Barrier, Role::Collective));
  }
  const std::vector<const std::vector<RankGroup>*> seqs{&ranks[0], &ranks[1]};
  const std::vector<std::int64_t> runs{4, 4};
  const Shape shape = merge_shapes(seqs, Alignment::Function, runs);
  ASSERT_EQ(shape.groups.size(), 8U);
  EXPECT_EQ(shape.ranks[1][0].calls.size(), 1U);  // level 1 down
  EXPECT_TRUE(shape.ranks[1][2].calls.empty());   // level 2: none
  EXPECT_TRUE(shape.ranks[1][4].calls.empty());
  EXPECT_EQ(shape.ranks[1][6].calls.size(), 1U);  // level 1 up
  // Ranks of different runs pair regardless of their sizes: rank 1 at another n takes the first places.
  const std::vector<std::int64_t> other{4, 8};
  EXPECT_EQ(merge_shapes(seqs, Alignment::Function, other).ranks[1][2].calls.size(), 1U);
}

TEST(MergeShapes, CollectivesLineUpWhateverThePointToPointCallsAroundThem) {
  // Every rank makes the same collectives in order; around them the ranks' sends differ (a reduction by hand whose
  // boundary ranks send before the sum, the others after). Pairing the three sends alike would cost the pair of
  // the two MPI_Allreduce calls and give the shape two collectives that each rank makes alone.
  std::vector<std::vector<RankGroup>> ranks(2);
  for (int i = 0; i < 3; ++i) ranks[0].push_back(send(1, 8.0, 10));
  ranks[0].push_back(group(mpi::Function::MPI_Allreduce, Role::Collective));
  ranks[1].push_back(group(mpi::Function::MPI_Allreduce, Role::Collective));
  for (int i = 0; i < 3; ++i) ranks[1].push_back(send(0, 8.0, 10));
  const std::vector<const std::vector<RankGroup>*> seqs{&ranks[0], &ranks[1]};
  const std::vector<std::int64_t> runs{4, 4};
  const Shape shape = merge_shapes(seqs, Alignment::Function, runs);
  std::size_t collectives = 0;
  for (std::size_t g = 0; g < shape.groups.size(); ++g) {
    if (shape.groups[g].second != Role::Collective) continue;
    ++collectives;
    EXPECT_EQ(shape.ranks[0][g].calls.size(), 1U) << g;
    EXPECT_EQ(shape.ranks[1][g].calls.size(), 1U) << g;
  }
  EXPECT_EQ(collectives, 1U);
}

TEST(MergeShapes, TagsTellExchangesAlongDifferentAxesApart) {
  // Two visits of a level. At one count the grid has no z side (2 x 2 x 1): its exchanges along x and y (tags 10,
  // 12) must not take the places of those along z (tag 14) at another, where the functions alone pair them there.
  std::vector<std::vector<RankGroup>> ranks(2);
  for (int visit = 0; visit < 2; ++visit) {
    for (const std::uint32_t tag : {10U, 12U, 14U}) step(ranks[0], 1, tag);
    for (const std::uint32_t tag : {10U, 12U}) step(ranks[1], 1, tag);
  }
  const std::vector<const std::vector<RankGroup>*> seqs{&ranks[0], &ranks[1]};
  const std::vector<std::int64_t> runs{8, 4};
  const Shape by_tag = merge_shapes(seqs, Alignment::Tag, runs);
  ASSERT_EQ(by_tag.groups.size(), 18U);
  for (std::size_t g = 0; g < 18; ++g) EXPECT_EQ(by_tag.ranks[1][g].calls.size(), g % 9 < 6 ? 1U : 0U) << g;
  const Shape by_function = merge_shapes(seqs, Alignment::Function, runs);
  EXPECT_EQ(by_function.ranks[1][6].calls.size(), 1U);  // the second visit's x taken for the first's z
}

/// A call of `f` to `peer` (slot 0), receiving where `receives`.
Call to(std::int64_t peer, bool receives = false, std::uint32_t tag = 1) {
  Call c;
  c.peers[0] = peer;
  c.tags[0] = tag;
  c.receives[0] = receives;
  c.offset = peer;
  return c;
}

/// Appends a call to the rank's groups: to the last group where it is of the same function, else in a new one.
void add(std::vector<RankGroup>& groups, mpi::Function f, Role role, const Call& c) {
  if (groups.empty() || groups.back().function.function != f) {
    RankGroup g;
    g.function = {f, std::string(mpi::name(f))};
    g.role = role;
    groups.push_back(g);
  }
  groups.back().calls.push_back(c);
}

/// A wavefront's plane at a rank: a receive from each upstream neighbour it has, a send to each downstream one.
void plane(std::vector<RankGroup>& out, std::vector<std::int64_t> from, std::vector<std::int64_t> onto,
           std::uint32_t tag) {
  for (const std::int64_t p : from) add(out, mpi::Function::MPI_Recv, Role::PointToPoint, to(p, true, tag++));
  for (const std::int64_t p : onto) add(out, mpi::Function::MPI_Send, Role::PointToPoint, to(p, false, tag++));
}

TEST(FoldLoops, AWavefrontsPlanesFoldWhateverCallsTheRankSkips) {
  // An inner rank receives from north and west and sends south and east on each of 3 planes; a rank on the west
  // boundary receives from north only. Then both send a face, a call to the same function as the planes' last.
  for (const bool west : {true, false}) {
    std::vector<RankGroup> groups;
    for (int k = 0; k < 3; ++k)
      plane(groups, west ? std::vector<std::int64_t>{1, 4} : std::vector<std::int64_t>{1}, {9, 6}, 10);
    add(groups, mpi::Function::MPI_Send, Role::PointToPoint, to(9, false, 20));
    const std::vector<RankGroup> folded = fold_loops(groups);
    ASSERT_EQ(folded.size(), 3U);
    EXPECT_EQ(folded[0].loop, 2U);
    EXPECT_EQ(folded[0].iterations, 3U);
    EXPECT_EQ(folded[0].calls.size(), west ? 6U : 3U);
    EXPECT_EQ(folded[1].calls.size(), 6U);
    EXPECT_EQ(folded[1].calls[2].peers[0], 9);  // iteration by iteration
    EXPECT_EQ(folded[2].loop, 0U);              // the face's send is no plane's
    EXPECT_EQ(folded[2].calls.size(), 1U);
  }
}

TEST(FoldLoops, ASweepAndTheSweepBackOnASideOfTwoAreNoLoop) {
  // Along a periodic side of 2 a sweep sends to and receives from the one neighbour, and so does the sweep back:
  // a body that both sends to and receives from one rank is an exchange, not a stage that the next one repeats.
  std::vector<RankGroup> groups;
  for (int sweep = 0; sweep < 2; ++sweep) {
    add(groups, mpi::Function::MPI_Isend, Role::PointToPoint, to(1, false, sweep == 0 ? 7 : 8));
    add(groups, mpi::Function::MPI_Irecv, Role::PointToPoint, to(1, true, sweep == 0 ? 9 : 10));
    add(groups, mpi::Function::MPI_Wait, Role::Completion, to(-1));
  }
  EXPECT_EQ(fold_loops(groups).size(), 6U);
  EXPECT_TRUE(exchange_bodies(groups).empty());
}

/// An MPI_Waitall completing `requests` requests.
Call waitall(std::uint32_t requests) {
  Call c = to(-1);
  c.completes = requests;
  return c;
}

TEST(FoldLoops, TheStagesOfASweepAreLoopsOfTheirOwnAndTheExchangeBeforeThemIsNone) {
  // A face exchange completed by an MPI_Waitall of 12 requests, then a sweep forward (send on, receive from behind)
  // and one back, two stages each, one tag for all: each sweep is a loop of its stages; the exchange's MPI_Waitall,
  // a call to the stages' last function, is none of theirs, nor is one loop over both sweeps taken for theirs.
  std::vector<RankGroup> groups;
  add(groups, mpi::Function::MPI_Waitall, Role::Completion, waitall(12));
  for (const auto& [ahead, behind] : {std::pair{1, 2}, std::pair{2, 1}}) {
    for (int stage = 0; stage < 2; ++stage) {
      add(groups, mpi::Function::MPI_Isend, Role::PointToPoint, to(ahead, false, 0));
      add(groups, mpi::Function::MPI_Irecv, Role::PointToPoint, to(behind, true, 0));
      add(groups, mpi::Function::MPI_Waitall, Role::Completion, waitall(2));
    }
  }
  EXPECT_EQ(exchange_bodies(groups).size(), 1U);
  const std::vector<RankGroup> folded = fold_loops(groups);
  ASSERT_EQ(folded.size(), 7U);
  EXPECT_EQ(folded[0].calls.size(), 1U);
  EXPECT_EQ(folded[1].loop, 3U);
  EXPECT_EQ(folded[1].iterations, 2U);
  EXPECT_EQ(folded[4].loop, 3U);
  EXPECT_EQ(folded[4].calls.front().peers[0], 2);
}

TEST(MergeShapes, ALoopsGroupsEndWhereItEnds) {
  // The planes' sends and the face's send that follows them are two groups of the shape, whatever the ranks.
  std::vector<std::vector<RankGroup>> ranks(2);
  for (int k = 0; k < 3; ++k) plane(ranks[0], {1, 4}, {9, 6}, 10);
  for (int k = 0; k < 3; ++k) plane(ranks[1], {1}, {6}, 10);
  std::vector<const std::vector<RankGroup>*> seqs;
  for (auto& r : ranks) {
    add(r, mpi::Function::MPI_Send, Role::PointToPoint, to(9, false, 20));
    r = fold_loops(r);
    seqs.push_back(&r);
  }
  const Shape shape = merge_shapes(seqs, Alignment::Direction);
  ASSERT_EQ(shape.groups.size(), 3U);
  ASSERT_EQ(shape.loops.size(), 1U);
  EXPECT_EQ(shape.loops[0], (PhaseLoop{0, 2}));
  EXPECT_EQ(shape.loop_iterations[0], (std::vector<std::uint32_t>{3, 3}));
  EXPECT_EQ(shape.ranks[1][1].calls.size(), 3U);
  EXPECT_EQ(shape.ranks[1][2].calls.size(), 1U);
}

TEST(FoldLoops, OnlyLoopsOfTheExchangesGivenAreFolded) {
  // A rank that makes one exchange twice (a rank of a grid of one column makes the boundary exchanges of both its
  // ends) folds it only where the rules allow a body of those functions (one that repeats at other counts too).
  std::vector<RankGroup> groups;
  for (int end = 0; end < 2; ++end) {
    add(groups, mpi::Function::MPI_Irecv, Role::PointToPoint, to(1, true, 1));
    add(groups, mpi::Function::MPI_Wait, Role::Completion, waitall(1));
  }
  EXPECT_EQ(fold_loops(groups).size(), 2U);
  const std::set<BodyKey> none;
  EXPECT_EQ(fold_loops(groups, FoldRules{false, LoopTags::Equal, &none}).size(), 4U);
  const std::set<BodyKey> these = exchange_bodies(groups);
  EXPECT_EQ(fold_loops(groups, FoldRules{false, LoopTags::Equal, &these}).size(), 2U);
}

TEST(MergeShapes, AStepWhosePeersChangeDirectionIsOneGroupOrTheShapeSaysItSplit) {
  // The ranks of a 2 x 2 grid exchange along x, then y, then back along y and x, one MPI_Irecv, MPI_Send and
  // MPI_Wait per exchange, and fold that loop of steps. Aligned on the direction of their peers, the steps of a rank
  // whose x neighbour is below it and y neighbour above fall between those of the ranks whose neighbours are all
  // above or all below: no group holds its call of every iteration, which the shape says. Aligned on the function
  // only, each step is one group.
  std::vector<std::vector<RankGroup>> ranks(4);
  for (std::int64_t r = 0; r < 4; ++r) {
    const std::int64_t x = r % 2 == 0 ? 1 : -1;
    const std::int64_t y = r / 2 == 0 ? 2 : -2;
    for (const std::int64_t offset : {x, x, y, y, y, y, x, x}) {
      Call c = to(r + offset, true, 0);
      c.offset = offset;
      add(ranks[r], mpi::Function::MPI_Irecv, Role::PointToPoint, c);
      c.receives[0] = false;
      add(ranks[r], mpi::Function::MPI_Send, Role::PointToPoint, c);
      add(ranks[r], mpi::Function::MPI_Wait, Role::Completion, waitall(1));
    }
  }
  std::vector<const std::vector<RankGroup>*> seqs;
  for (auto& r : ranks) {
    r = fold_loops(r);
    ASSERT_EQ(r.size(), 3U);
    seqs.push_back(&r);
  }
  EXPECT_TRUE(merge_shapes(seqs, Alignment::Direction).steps_split);
  const Shape shape = merge_shapes(seqs, Alignment::Function);
  EXPECT_FALSE(shape.steps_split);
  ASSERT_EQ(shape.groups.size(), 3U);
  EXPECT_EQ(shape.loops[0], (PhaseLoop{0, 3}));
}

/// A signature event of `f`: a message to or from `peer` with `tag` where `action` is set, a completion's receive
/// where `f` completes.
analyzer::SigEvent event(mpi::Function f, std::optional<mpi::ActionKind> action = std::nullopt, std::int32_t peer = -1,
                         std::uint32_t tag = 0) {
  analyzer::SigEvent e;
  e.function = f;
  e.call = std::string(mpi::name(f));
  if (action) e.actions.push_back({.kind = *action, .peer = peer, .tag = tag, .bytes = 8});
  return e;
}

/// A rank's events: a full exchange with both neighbours (post both receives, send both ways, wait for both), or a
/// half one: the receives and their waits only (a coarse level's idle rank takes its neighbours' points), or the
/// other half: the sends only.
enum class Half : std::uint8_t { Full, Take, Give };

void exchange(analyzer::SigRank& r, Half half, std::uint32_t tag) {
  using mpi::ActionKind;
  using mpi::Function;
  if (half != Half::Give) {
    r.events.push_back(event(Function::MPI_Irecv, ActionKind::IrecvPost, 1, tag));
    r.events.push_back(event(Function::MPI_Irecv, ActionKind::IrecvPost, 3, tag + 1));
  }
  if (half != Half::Take) {
    r.events.push_back(event(Function::MPI_Send, ActionKind::Send, 1, tag + 1));
    r.events.push_back(event(Function::MPI_Send, ActionKind::Send, 3, tag));
  }
  if (half != Half::Give) {
    r.events.push_back(event(Function::MPI_Wait, ActionKind::Recv, 1, tag));
    r.events.push_back(event(Function::MPI_Wait, ActionKind::Recv, 3, tag + 1));
  }
}

std::vector<std::uint64_t> exchanges_of(const std::vector<RankGroup>& groups) {
  std::vector<std::uint64_t> out;
  for (const RankGroup& g : groups) {
    for (const Call& c : g.calls) out.push_back(c.exchange);
  }
  return out;
}

TEST(RankGroups, AnExchangeEndsWhereTheRequestsItStartedAreComplete) {
  analyzer::SigRank r;
  exchange(r, Half::Full, 10);
  exchange(r, Half::Take, 10);
  exchange(r, Half::Give, 10);
  exchange(r, Half::Full, 10);
  const std::vector<std::uint64_t> x = exchanges_of(rank_groups(r));
  ASSERT_EQ(x.size(), 18U);
  for (std::size_t k = 1; k < 6; ++k) EXPECT_EQ(x[k], x[0]) << k;   // one full exchange
  for (std::size_t k = 7; k < 10; ++k) EXPECT_EQ(x[k], x[6]) << k;  // one take
  EXPECT_NE(x[6], x[0]);                                            // of another kind
  EXPECT_NE(x[10], x[11]);                                          // each blocking send alone (its tag)
  EXPECT_NE(x[10], x[0]);
  for (std::size_t k = 12; k < 18; ++k) EXPECT_EQ(x[k], x[0]) << k;  // the same kind of exchange again
}

TEST(MergeShapes, HalfExchangesAreNotTakenForTheFullOnesOfOtherRuns) {
  // At 8 ranks every rank visits the coarsest level (two full exchanges); at 16 half the ranks are idle there and
  // take their neighbours' points instead, with the same tags. Pairing call by call puts the take's receives and
  // waits in the full exchange's groups (same function, same tags); pairing within a kind of exchange does not.
  analyzer::SigRank at8;
  analyzer::SigRank at16;
  for (analyzer::SigRank* r : {&at8, &at16}) exchange(*r, Half::Full, 20);
  exchange(at8, Half::Full, 30);
  exchange(at8, Half::Full, 30);
  exchange(at16, Half::Take, 30);
  for (analyzer::SigRank* r : {&at8, &at16}) exchange(*r, Half::Full, 20);
  const std::vector<RankGroup> a = rank_groups(at8);
  const std::vector<RankGroup> b = rank_groups(at16);
  const std::vector<const std::vector<RankGroup>*> seqs{&a, &b};
  const std::vector<std::int64_t> runs{8, 16};
  const auto shared = [](const Shape& s) {
    std::size_t both = 0;
    for (std::size_t g = 0; g < s.groups.size(); ++g) {
      both += !s.ranks[0][g].calls.empty() && !s.ranks[1][g].calls.empty() ? 1 : 0;
    }
    return both;
  };
  const Shape by_tag = merge_shapes(seqs, Alignment::Tag, runs);
  EXPECT_EQ(shared(by_tag), 8U);  // the two outer exchanges (3 groups each) and the take's Irecv and Wait
  const Shape by_exchange = merge_shapes(seqs, Alignment::TagExchange, runs);
  EXPECT_EQ(shared(by_exchange), 6U);         // the outer exchanges only
  EXPECT_EQ(by_exchange.groups.size(), 14U);  // 4 exchanges of 3 groups, and the take's 2
}

TEST(MergeShapes, AnExchangeNoRankMakesTwiceIsOneGroupWhateverOrderTheRanksCame) {
  // A coarse level along y then z: each rank takes along an axis (receives and waits) or gives (sends), never both;
  // the rank that gives along both held the coarser level before and exchanged there too, so it has the most calls and
  // is merged first. Rank by rank, the give along z then went once before the takes (as that rank made it) and once
  // after (a rank that took along y): one place holds every rank, in each rank's order.
  const std::array<std::array<Half, 2>, 4> kinds{
      {{Half::Give, Half::Give}, {Half::Take, Half::Take}, {Half::Take, Half::Give}, {Half::Give, Half::Take}}};
  std::vector<std::vector<RankGroup>> groups;
  for (const auto& [y, z] : kinds) {
    analyzer::SigRank r;
    if (y == Half::Give && z == Half::Give) exchange(r, Half::Full, 30);
    exchange(r, y, 10);
    exchange(r, z, 20);
    groups.push_back(rank_groups(r));
  }
  std::vector<const std::vector<RankGroup>*> seqs;
  for (const std::vector<RankGroup>& g : groups) seqs.push_back(&g);
  const std::vector<std::int64_t> runs(seqs.size(), 32);
  const Shape shape = merge_shapes(seqs, Alignment::TagExchange, runs);
  // Per axis the take's receives and waits and the give's two sends, and the next level's exchange.
  EXPECT_EQ(shape.groups.size(), 11U);
  for (std::size_t r = 0; r < seqs.size(); ++r) {
    std::size_t calls = 0;
    for (const RankGroup& g : shape.ranks[r]) calls += g.calls.size();
    const auto of = [](Half h) { return h == Half::Take ? 4U : 2U; };
    EXPECT_EQ(calls, of(kinds[r][0]) + of(kinds[r][1]) + (r == 0 ? 6U : 0U)) << r;
  }
}

}  // namespace
}  // namespace p3s::modeler::detail
