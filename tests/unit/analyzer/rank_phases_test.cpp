// SPDX-License-Identifier: BSD-3-Clause
// The by-rank phase method's parts: which bursts are computation, and steps folded per location then joined.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <utility>

#include "burst_classes.hpp"
#include "call_sequences.hpp"
#include "rank_phases.hpp"

namespace p3s::analyzer {
namespace {

TEST(BurstClasses, TwoClassesFarApartGiveAThresholdBetweenThem) {
  BurstHistogram h;
  for (int i = 0; i < 300; ++i) h.add(2000 + 50 * (i % 7));        // packing between the calls of an exchange
  for (int i = 0; i < 100; ++i) h.add(3000000 + 90000 * (i % 5));  // the compute of a step
  const std::uint64_t t = h.compute_threshold();
  EXPECT_GT(t, 2300u);
  EXPECT_LT(t, 3000000u);
}

TEST(BurstClasses, OneClassOrRareOutliersGiveNoThreshold) {
  BurstHistogram one;
  for (int i = 0; i < 400; ++i) one.add(1000 + 97 * (i % 13));
  EXPECT_EQ(one.compute_threshold(), 0u);
  BurstHistogram outliers;  // 1 in 200 bursts delayed by the system: not a class
  for (int i = 0; i < 1000; ++i) outliers.add(i % 200 == 0 ? 5000000 : 1500);
  EXPECT_EQ(outliers.compute_threshold(), 0u);
}

TEST(BurstClasses, AMiddleClassOfShortBurstsDoesNotHideTheComputationAboveIt) {
  // LAMMPS at 16 ranks on 2 cores (one rank's bursts): short bursts of 0.12 us (40 %), others stretched to 0.4-0.9
  // us (53 %), and the computation at 8 us (7 %). Otsu's best split of all falls between the two short classes,
  // under 10x apart: no computation, before. The best split clearly apart is under the computation.
  BurstHistogram h;
  for (int i = 0; i < 3000; ++i) h.add(120);
  for (const std::uint64_t ns : {400, 500, 600, 700, 900}) {
    for (int i = 0; i < 800; ++i) h.add(ns);
  }
  for (int i = 0; i < 530; ++i) h.add(8000);
  const std::uint64_t t = h.compute_threshold();
  EXPECT_GT(t, 900u);
  EXPECT_LE(t, 8000u);
}

TEST(BurstClasses, ComputationIsTheClassHoldingMostOfTheWorkNotTheShortLoopsBetweenSwaps) {
  // An MD step: packing between swaps (2 us), integration (15 us), the force computation (500 us).
  BurstHistogram h;
  for (int i = 0; i < 600; ++i) h.add(2000 + 37 * (i % 11));
  for (int i = 0; i < 200; ++i) h.add(15000 + 400 * (i % 9));
  for (int i = 0; i < 100; ++i) h.add(500000 + 20000 * (i % 5));
  const std::uint64_t t = h.compute_threshold();
  EXPECT_GT(t, 20000u);
  EXPECT_LT(t, 500000u);
}

TEST(BurstClasses, ScatteredDelaysBetweenTheClassesAreNoClassOfComputation) {
  // LAMMPS at 16 ranks (one rank's bursts, in us): packing and integration (0.4-8 us, ~7,000), the force
  // computation (~65 us, 200), re-neighbouring (300-450 us, 10), and between them a few bursts per bin from 8 to
  // 50 us that together hold more than a tenth of the long bursts' work.
  BurstHistogram h;
  const auto add = [&h](double us, int count) {
    for (int i = 0; i < count; ++i) h.add(static_cast<std::uint64_t>(us * 1000));
  };
  add(0.45, 1500);
  add(0.6, 2400);
  add(0.75, 1200);
  add(1.2, 400);
  add(2.9, 90);
  add(4.1, 60);
  add(5.8, 27);
  for (double us = 8; us < 50; us *= 1.19) add(us, 5);
  add(55, 14);
  add(65, 147);
  add(78, 9);
  add(370, 8);
  add(440, 2);
  const std::uint64_t t = h.compute_threshold();
  EXPECT_GT(t, 10000u);  // not the delays from 8 us
  EXPECT_LT(t, 55000u);  // the force computation
}

TEST(BurstClasses, TheSpacingOfBackToBackCallsIsNoComputationEvenWhenOtsuCutsIt) {
  // LAMMPS at 16 ranks, all ranks' bursts by quarter octave (ns, count), recorded without a system call per MPI
  // call: the bursts between back-to-back calls fall in two heaps (30-120 ns and 0.3-1.3 us) that Otsu's split
  // separates. The upper heap holds two thirds of all bursts and a tenth of the long bursts' work; the force
  // computation (85 us) holds most of it.
  constexpr std::pair<std::uint64_t, int> kBins[] = {
      {29, 1125},   {41, 4287},   {49, 4352},   {59, 4500},   {70, 4562},   {83, 8442},    {99, 5345},    {117, 1448},
      {140, 1685},  {166, 755},   {197, 936},   {235, 1504},  {279, 3387},  {332, 5799},   {395, 3355},   {469, 3070},
      {558, 20447}, {664, 19380}, {789, 5457},  {939, 3432},  {1116, 5456}, {1327, 2504},  {1578, 1090},  {1877, 366},
      {2232, 598},  {2655, 673},  {3157, 1300}, {3754, 1233}, {4465, 726},  {5309, 308},   {6314, 369},   {7509, 210},
      {8929, 104},  {10619, 36},  {12628, 45},  {15017, 41},  {17859, 71},  {21238, 47},   {25256, 16},   {30034, 12},
      {35717, 18},  {42475, 24},  {50512, 45},  {60069, 67},  {71434, 367}, {84950, 2318}, {101023, 146}, {120138, 64},
      {142868, 32}, {202047, 8},  {240275, 23}, {285737, 13}, {339800, 23}, {404093, 130}, {480550, 41}};
  BurstHistogram h;
  for (const auto& [ns, count] : kBins) {
    for (int i = 0; i < count; ++i) h.add(ns);
  }
  const std::uint64_t t = h.compute_threshold();
  EXPECT_GT(t, 10000u);  // not the calls' spacing
  EXPECT_LT(t, 71434u);  // the force computation
}

TEST(BurstClasses, AnInnerLoopThatComputesIsNoSpacingEvenWithMostOfTheBursts) {
  // Calls 1 us apart, an inner loop of 15 us bursts holding three quarters of the bursts and 40 % of the work, and
  // an outer step of 1 ms: the inner loop computes, it is not the calls' spacing.
  BurstHistogram h;
  for (int i = 0; i < 300; ++i) h.add(1000 + 31 * (i % 5));
  for (int i = 0; i < 1000; ++i) h.add(15000 + 300 * (i % 7));
  for (int i = 0; i < 20; ++i) h.add(1000000);
  const std::uint64_t t = h.compute_threshold();
  EXPECT_GT(t, 1200u);
  EXPECT_LE(t, 15000u);
}

TEST(BurstClasses, NestedLoopsThatEachComputeAllCount) {
  // 400 us x 10, 60 us x 40, 15 us x 120: the three together hold the work.
  BurstHistogram h;
  for (int i = 0; i < 500; ++i) h.add(800 + 13 * (i % 7));
  for (int i = 0; i < 10; ++i) h.add(400000);
  for (int i = 0; i < 40; ++i) h.add(60000);
  for (int i = 0; i < 120; ++i) h.add(15000);
  const std::uint64_t t = h.compute_threshold();
  EXPECT_GT(t, 1000u);
  EXPECT_LE(t, 15000u);
}

/// A location whose program is: Init, `broadcasts` broadcasts each after computation, `iters` x (calls to
/// `peers`, compute, allreduce), a reduction, Finalize. In iteration `odd` (if any) the first call goes to another
/// peer; in iteration `extra` (if any) the location computes once more and sends to its first peer before its calls
/// (a step whose calls depend on the data).
CallSequence location(std::int32_t rank, int iters, const std::vector<std::int32_t>& peers, int start_shift,
                      int odd = -1, int extra = -1, int broadcasts = 0, std::uint64_t threshold = 1000000) {
  CallSequence s(rank, threshold);
  const auto call = [&](std::uint32_t region, std::int32_t peer, std::uint64_t burst) {
    add_call(s, region, peer, burst);
  };
  call(0, -1, 0);                                         // Init
  for (int i = 0; i < start_shift; ++i) call(5, -1, 10);  // set-up calls that some ranks make and others do not
  for (int i = 0; i < broadcasts; ++i) call(6, -1, 2000000);
  for (int it = 0; it < iters; ++it) {
    if (it == extra) call(4, peers[0], 2000000);
    for (std::size_t p = 0; p < peers.size(); ++p) call(1, peers[p] + (it == odd && p == 0 ? 1 : 0), 10);
    call(2, -1, 2000000);  // an allreduce after the compute burst
  }
  call(3, -1, 10);  // the final reduction, right after the last iteration's calls
  call(9, -1, 10);  // Finalize
  return s;
}

std::vector<std::uint64_t> sorted_weights(const RunPhases& rp) {
  std::vector<std::uint64_t> weight = phase_weights(rp);
  std::sort(weight.begin(), weight.end());
  return weight;
}

TEST(RankPhases, LocationsWithDifferentCallsJoinIntoOneLoopPerIteration) {
  // Rank 0 exchanges with one neighbour, rank 1 with two, rank 2 with two the same (an unrolled exchange).
  std::vector<CallSequence> steps;
  steps.push_back(location(0, 12, {1}, 0));
  steps.push_back(location(1, 12, {0, 2}, 2));
  steps.push_back(location(2, 12, {1, 1}, 1));
  std::string why;
  const auto rp = phases_by_rank(steps, PhaseFinderOptions{}, why);
  ASSERT_TRUE(rp.has_value()) << why;
  EXPECT_EQ(rp->method, PhaseMethod::ByRank);
  EXPECT_EQ(sorted_weights(*rp).back(), 12u) << "one phase per iteration, 12 iterations";
  ASSERT_EQ(rp->first_op.size(), 3u);
  for (const auto& starts : rp->first_op) EXPECT_EQ(starts.size(), rp->occurrence_phase.size());
}

TEST(RankPhases, AnIterationThatDiffersOnAFifthOfTheLocationsStaysInItsPhase) {
  // The loop is cut where its calls hold the most whole iterations (at its first call, not after the compute
  // burst, which would leave 11 whole ones and the pieces of the 12th at both ends): 12.
  std::vector<CallSequence> steps;
  for (std::int32_t r = 0; r < 5; ++r) steps.push_back(location(r, 12, {1}, 0, r == 3 ? 6 : -1));
  std::string why;
  const auto rp = phases_by_rank(steps, PhaseFinderOptions{}, why);
  ASSERT_TRUE(rp.has_value()) << why;
  EXPECT_EQ(sorted_weights(*rp).back(), 12u);
  // On two of five locations it is not the loop's phase.
  steps[4] = location(4, 12, {1}, 0, 6);
  const auto two = phases_by_rank(steps, PhaseFinderOptions{}, why);
  ASSERT_TRUE(two.has_value()) << why;
  EXPECT_LT(sorted_weights(*two).back(), 12u);
}

TEST(RankPhases, AnExtraStepOnOneLocationIsJoinedByLogicalTime) {
  // Location 1 computes twice in iteration 5: one unit more there; its units are joined at location 0's
  // boundaries in logical time, and the other iterations stay one phase.
  std::vector<CallSequence> steps;
  steps.push_back(location(0, 12, {1}, 0));
  steps.push_back(location(1, 12, {0}, 0, -1, 5));
  std::string why;
  const auto rp = phases_by_rank(steps, PhaseFinderOptions{}, why);
  ASSERT_TRUE(rp.has_value()) << why;
  EXPECT_NE(rp->method_note.find("logical time: rank 0"), std::string::npos) << rp->method_note;
  EXPECT_EQ(rp->first_op[0].size(), rp->first_op[1].size());
  EXPECT_GE(sorted_weights(*rp).back(), 9u);
}

TEST(RankPhases, OneOffStepsNextToEachOtherAreOneOccurrence) {
  // Init, then a step that computes once before the loop (a set-up's own computation): two one-off occurrences
  // in a row, which are one stretch before the loop, however many compute bursts the set-up has.
  std::vector<CallSequence> steps;
  steps.push_back(location(0, 12, {1}, 0, -1, 0));
  steps.push_back(location(1, 12, {0}, 0, -1, 0));
  std::string why;
  const auto rp = phases_by_rank(steps, PhaseFinderOptions{}, why);
  ASSERT_TRUE(rp.has_value()) << why;
  const std::vector<std::uint64_t> weight = phase_weights(*rp);
  for (std::size_t k = 1; k < rp->occurrence_phase.size(); ++k) {
    EXPECT_FALSE(weight[rp->occurrence_phase[k]] == 1 && weight[rp->occurrence_phase[k - 1]] == 1) << "at " << k;
  }
  ASSERT_GE(rp->first_op[0].size(), 2u);
  EXPECT_EQ(rp->first_op[0][0], 0u);
  EXPECT_EQ(rp->first_op[0][1], 2u) << "Init and the set-up's step, then the loop from its first call";
  EXPECT_EQ(rp->first_op[0].size(), rp->occurrence_phase.size());
}

TEST(RankPhases, APairOfLikeSetUpStepsIsPartOfTheSetUpStretch) {
  // Init, then two like steps that each compute before a broadcast (a code reading its input twice), then the
  // loop: the pair is a piece of the set-up (weight 2, in a row), not a phase of its own that splits it.
  std::vector<CallSequence> steps;
  for (std::int32_t rank = 0; rank < 2; ++rank) steps.push_back(location(rank, 12, {1 - rank}, 0, -1, -1, 2));
  std::string why;
  const auto rp = phases_by_rank(steps, PhaseFinderOptions{}, why);
  ASSERT_TRUE(rp.has_value()) << why;
  const std::vector<std::uint64_t> weight = phase_weights(*rp);
  EXPECT_EQ(weight[rp->occurrence_phase.front()], 1u);
  EXPECT_EQ(std::count(weight.begin(), weight.end(), 2u), 0) << "the broadcasts are no phase of their own";
  ASSERT_GE(rp->first_op[0].size(), 2u);
  EXPECT_EQ(rp->first_op[0][1], 3u) << "Init and both broadcasts, then the loop";
}

TEST(RankPhases, AMainLoopOfTwoIterationsStaysAPhase) {
  // Init, two iterations of (a message, compute, an allreduce), the end: the pair of iterations has more than one
  // call each, so it is the run's loop, not a piece of a stretch.
  std::vector<CallSequence> steps;
  steps.push_back(location(0, 2, {1}, 0));
  steps.push_back(location(1, 2, {0}, 0));
  std::string why;
  const auto rp = phases_by_rank(steps, PhaseFinderOptions{}, why);
  ASSERT_TRUE(rp.has_value()) << why;
  const std::vector<std::uint64_t> weight = phase_weights(*rp);
  EXPECT_EQ(std::count(weight.begin(), weight.end(), 2u), 1) << "the loop's phase";
}

/// A location of a code whose steps send what each rank's data holds: Init, `iters` x (a send of `bytes(it)` to its
/// neighbour, a second send of 64 bytes, compute, a receive), Finalize.
CallSequence data_sized_steps(std::int32_t rank, int iters, const std::function<std::uint64_t(int)>& bytes) {
  CallSequence s(rank, 1000000);
  const auto call = [&](std::uint32_t region, std::uint64_t size, std::uint64_t burst) {
    add_call(s, region, rank ^ 1, burst, size);
  };
  call(0, 0, 0);
  for (int it = 0; it < iters; ++it) {
    call(1, bytes(it), 10);
    call(1, 64, 10);
    call(2, 64, 2000000);
  }
  call(9, 0, 10);
  return s;
}

TEST(RankPhases, MessageSizesThatFollowEachRanksDataDoNotCutItsIterations) {
  // Every rank's first send of a step carries about 1000 bytes (the atoms that crossed); on ranks 1 and 3 every
  // fourth step carries 1040, another power of two: with their size classes, those ranks' steps are not one body.
  std::vector<CallSequence> steps;
  for (std::int32_t r = 0; r < 4; ++r) {
    steps.push_back(data_sized_steps(r, 12, [r](int it) -> std::uint64_t {
      return r % 2 == 1 && it % 4 == 1 ? 1040 : 1000 + static_cast<std::uint64_t>(it);
    }));
  }
  std::string why;
  const auto rp = phases_by_rank(steps, PhaseFinderOptions{}, why, PhaseLevel::Outermost);
  ASSERT_TRUE(rp.has_value()) << why;
  EXPECT_EQ(rp->level, PhaseLevel::Outermost) << rp->method_note;
  EXPECT_NE(rp->method_note.find("without their sizes"), std::string::npos) << rp->method_note;
  EXPECT_TRUE(rp->without_sizes);
  EXPECT_EQ(sorted_weights(*rp).back(), 12u);
  // Sizes that differ alike on every rank (a multigrid's levels) still tell the iterations apart.
  for (std::int32_t r = 0; r < 4; ++r) {
    steps[static_cast<std::size_t>(r)] =
        data_sized_steps(r, 12, [](int it) -> std::uint64_t { return it % 4 == 1 ? 1040 : 1000; });
  }
  const auto alike = phases_by_rank(steps, PhaseFinderOptions{}, why, PhaseLevel::Outermost);
  ASSERT_TRUE(alike.has_value()) << why;
  EXPECT_EQ(alike->level, PhaseLevel::Outermost) << alike->method_note;
  EXPECT_EQ(alike->method_note.find("without their sizes"), std::string::npos) << alike->method_note;
  EXPECT_FALSE(alike->without_sizes);
  EXPECT_LT(sorted_weights(*alike).back(), 12u) << "with their sizes, the steps of 1040 bytes are steps of their own";
  // A series where other runs needed it asks for the calls without their sizes: this run then cuts its steps as
  // they do, whatever sizes its ranks happened to agree on.
  const auto asked = phases_by_rank(steps, PhaseFinderOptions{}, why, PhaseLevel::Outermost, true);
  ASSERT_TRUE(asked.has_value()) << why;
  EXPECT_EQ(asked->level, PhaseLevel::Outermost) << asked->method_note;
  EXPECT_TRUE(asked->without_sizes);
  EXPECT_EQ(sorted_weights(*asked).back(), 12u);
}

/// A location of a code whose steps end where all processes meet: Init, `iters` x (two sends to its neighbour, compute,
/// an allreduce of everyone), Finalize. In every third step the data make it compute before its first send too.
CallSequence steps_to_a_reduction(std::int32_t rank, int iters) {
  CallSequence s(rank, 1000000);
  const auto call = [&](std::uint32_t region, std::int32_t peer, std::uint64_t burst, bool everyone = false) {
    add_call(s, region, peer, burst, 0, everyone);
  };
  call(0, -1, 0);
  for (int it = 0; it < iters; ++it) {
    call(1, rank ^ 1, it % 3 == 1 ? 5000000 : 10);
    call(1, rank ^ 1, 10);
    call(2, -1, 2000000, true);
  }
  call(9, -1, 10);
  return s;
}

TEST(RankPhases, BetweenCollectivesOfEveryoneTheCallsAloneTellAStepsKind) {
  // Which calls follow computation is the data's (and the machine's) doing; the steps between the reductions make
  // the same calls, so they are one phase however their computation falls.
  std::vector<CallSequence> steps;
  for (std::int32_t r = 0; r < 2; ++r) steps.push_back(steps_to_a_reduction(r, 12));
  std::string why;
  const auto rp = phases_by_rank(steps, PhaseFinderOptions{}, why, PhaseLevel::Collectives);
  ASSERT_TRUE(rp.has_value()) << why;
  EXPECT_EQ(rp->level, PhaseLevel::Collectives) << rp->method_note;
  EXPECT_EQ(sorted_weights(*rp).back(), 11u) << "every step after the first, which holds the set-up";
}

/// Every location of a run of n ranks for `steps` steps, each a permutation of the ranks: a message to the rank
/// `next[r]` and, where `back`, one to the rank before it (whose next it is), `next` = `moves[s % moves.size()]`,
/// then a reduction of everyone.
std::vector<CallSequence> steps_moving(std::int32_t n, int steps, const std::vector<std::vector<std::int32_t>>& moves,
                                       bool back = true) {
  std::vector<CallSequence> out;
  for (std::int32_t r = 0; r < n; ++r) {
    CallSequence s(r, 1000000);
    add_call(s, 0, -1, 0);
    for (int it = 0; it < steps; ++it) {
      const std::vector<std::int32_t>& next = moves[static_cast<std::size_t>(it) % moves.size()];
      const auto before = static_cast<std::int32_t>(std::find(next.begin(), next.end(), r) - next.begin());
      add_call(s, 1, next[static_cast<std::size_t>(r)], 2000000);
      if (back) add_call(s, 1, before, 10);
      add_call(s, 2, -1, 10, 0, true);
    }
    add_call(s, 9, -1, 10);
    out.push_back(std::move(s));
  }
  return out;
}

/// The move around a ring: each rank's next in `order`.
std::vector<std::int32_t> ring_move(const std::vector<std::int32_t>& order) {
  std::vector<std::int32_t> next(order.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    next[static_cast<std::size_t>(order[i])] = order[(i + 1) % order.size()];
  return next;
}

/// `count` rings of the ranks 0..n-1, each order drawn from the one before by a fixed generator.
std::vector<std::vector<std::int32_t>> drawn_rings(std::int32_t n, int count) {
  std::vector<std::vector<std::int32_t>> out;
  std::uint64_t state = 12345;
  std::vector<std::int32_t> order(static_cast<std::size_t>(n));
  for (std::int32_t i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
  for (int k = 0; k < count; ++k) {
    for (std::size_t i = order.size() - 1; i > 0; --i) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      std::swap(order[i], order[(state >> 33) % (i + 1)]);
    }
    out.push_back(ring_move(order));
  }
  return out;
}

TEST(RankPhases, BetweenCollectivesOfEveryoneStepsOnRingsDrawnAnewAreOnePhase) {
  // A network benchmark's rings: each step a ring of another random order of the ranks. Its peers are the step's
  // data; at 8 ranks, 10 rings, 3 steps on each: one phase of 30 steps (29 after the step holding the set-up).
  std::string why;
  const auto eight =
      phases_by_rank(steps_moving(8, 30, drawn_rings(8, 10)), PhaseFinderOptions{}, why, PhaseLevel::Collectives);
  ASSERT_TRUE(eight.has_value()) << why;
  EXPECT_EQ(sorted_weights(*eight).back(), 29u);
  // At 4 ranks there are 3 rings, and together their peers are every other rank.
  const std::vector<std::vector<std::int32_t>> four = {ring_move({0, 1, 2, 3}), ring_move({0, 2, 1, 3}),
                                                       ring_move({0, 1, 3, 2})};
  const auto small = phases_by_rank(steps_moving(4, 12, four), PhaseFinderOptions{}, why, PhaseLevel::Collectives);
  ASSERT_TRUE(small.has_value()) << why;
  EXPECT_EQ(sorted_weights(*small).back(), 11u);
}

TEST(RankPhases, BetweenCollectivesOfEveryoneAGridsStepPerDirectionStaysAPhaseEach) {
  // On a periodic 4 x 4 grid, a message along +x, +y, -x or -y in turn: four kinds of step, each a phase of its own
  // (the peers are the grid's, four neighbours of fifteen ranks).
  const auto shift = [](int dx, int dy) {
    std::vector<std::int32_t> next(16);
    for (int r = 0; r < 16; ++r) next[static_cast<std::size_t>(r)] = (r / 4 + dy + 4) % 4 * 4 + (r % 4 + dx + 4) % 4;
    return next;
  };
  std::string why;
  const auto rp = phases_by_rank(steps_moving(16, 24, {shift(1, 0), shift(0, 1), shift(-1, 0), shift(0, -1)}, false),
                                 PhaseFinderOptions{}, why, PhaseLevel::Collectives);
  ASSERT_TRUE(rp.has_value()) << why;
  EXPECT_EQ(sorted_weights(*rp).back(), 6u);
}

/// A run of n ranks where rank 0 plays ping-pong with each other rank in turn, `rounds` rounds with each, every
/// round ended by a broadcast of everyone (a network benchmark's latency test): the others only broadcast.
std::vector<CallSequence> ping_pong_in_turn(std::int32_t n, int rounds) {
  std::vector<CallSequence> out;
  for (std::int32_t r = 0; r < n; ++r) out.emplace_back(r, 1000000);
  for (CallSequence& s : out) add_call(s, 0, -1, 0);
  for (std::int32_t partner = 1; partner < n; ++partner) {
    for (int round = 0; round < rounds; ++round) {
      add_call(out[0], 3, partner, 2000000);  // region 3: a send, 4: a receive
      add_call(out[0], 4, partner, 10);
      add_call(out[static_cast<std::size_t>(partner)], 4, 0, 2000000);
      add_call(out[static_cast<std::size_t>(partner)], 3, 0, 10);
      for (CallSequence& s : out) add_call(s, 2, -1, 10, 0, true);
    }
  }
  for (CallSequence& s : out) add_call(s, 9, -1, 10);
  return out;
}

TEST(RankPhases, BetweenCollectivesOfEveryoneAPartThatPassesFromRankToRankIsOnePhase) {
  // At 8 ranks, 7 partners of 3 rounds: one phase of 21 rounds (20 after the one holding the set-up), not one per
  // partner; at 4 ranks likewise, 9 rounds.
  std::string why;
  const auto eight = phases_by_rank(ping_pong_in_turn(8, 3), PhaseFinderOptions{}, why, PhaseLevel::Collectives);
  ASSERT_TRUE(eight.has_value()) << why;
  EXPECT_EQ(sorted_weights(*eight).back(), 20u);
  const auto four = phases_by_rank(ping_pong_in_turn(4, 3), PhaseFinderOptions{}, why, PhaseLevel::Collectives);
  ASSERT_TRUE(four.has_value()) << why;
  EXPECT_EQ(sorted_weights(*four).back(), 8u);
}

TEST(RankPhases, NoCallsAnywhereIsRefusedWithTheReason) {
  std::vector<CallSequence> steps;
  steps.emplace_back(0, 1000);
  std::string why;
  EXPECT_FALSE(phases_by_rank(steps, PhaseFinderOptions{}, why).has_value());
  EXPECT_NE(why.find("no location"), std::string::npos) << why;
}

/// Two locations (too few to vote on marks) of 12 iterations: two sends, computation (2 ms), an allreduce. A burst
/// of 1.5 ms (the margin octave below the compute class; threshold 1 ms) comes before the second send of the
/// iterations in `delayed` and before the allreduce of those in `short_compute`; one of 2 ms before the second send
/// of those in `computed`.
std::vector<CallSequence> delayed_steps(const std::vector<int>& delayed, const std::vector<int>& short_compute,
                                        const std::vector<int>& computed = {}) {
  const auto in = [](const std::vector<int>& v, int it) { return std::find(v.begin(), v.end(), it) != v.end(); };
  std::vector<CallSequence> out;
  for (std::int32_t rank = 0; rank < 2; ++rank) {
    CallSequence s(rank, 1000000);
    const auto call = [&](std::uint32_t region, std::uint64_t burst) {
      Op op;
      op.header.region = region;
      op.header.burst_ns = burst;
      op.header.burst_work = burst;
      Action a;
      a.peer = region == 1 ? 1 - rank : -1;
      op.actions.push_back(a);
      s.add(op, s.ticks().size() + 1);
    };
    call(0, 0);
    for (int it = 0; it < 12; ++it) {
      call(1, 10);
      call(1, in(computed, it) ? 2000000 : in(delayed, it) ? 1500000 : 10);
      call(2, in(short_compute, it) ? 1500000 : 2000000);
    }
    call(9, 10);
    out.push_back(std::move(s));
  }
  return out;
}

/// Operation index of iteration `it`'s second send (+ 1: its allreduce) in delayed_steps.
std::uint64_t second_send(int it) { return 2 + 3 * static_cast<std::uint64_t>(it); }

TEST(RankPhases, ADelayBeforeACallThatNeverFollowsComputationCutsNoStep) {
  std::vector<CallSequence> calls = delayed_steps({3, 8}, {5});
  std::string why;
  const auto rp = phases_by_rank(calls, PhaseFinderOptions{}, why);
  ASSERT_TRUE(rp.has_value()) << why;
  EXPECT_EQ(sorted_weights(*rp).back(), 12u) << "the delays cut no step; the short computation still ends one";
  calls[0].drop_stray_marks();
  EXPECT_EQ(calls[0].anchors()[second_send(3)], 0);
  EXPECT_EQ(calls[0].anchors()[second_send(5) + 1], 1);
  // Where the second send follows a burst of the class once (iteration 10), it is a call where the program
  // computes: the margin bursts before it mark it too.
  std::vector<CallSequence> computed = delayed_steps({3, 8}, {}, {10});
  computed[0].drop_stray_marks();
  EXPECT_EQ(computed[0].anchors()[second_send(3)], 1);
  EXPECT_EQ(computed[0].anchors()[second_send(10)], 1);
  EXPECT_EQ(computed[0].anchors()[second_send(4)], 0);
}

TEST(AgreeOnAnchors, RanksThatMakeTheSameCallsOutvoteOneRanksStretchedBurst) {
  // Four ranks of one program; on rank 2 a loaded machine made a packing burst look like computation, on rank 3
  // it left the compute burst before an allreduce short.
  std::vector<CallSequence> calls;
  for (std::int32_t r = 0; r < 4; ++r) calls.push_back(location(r, 12, {(r + 1) % 4}, 0));
  const std::vector<std::uint8_t> program = calls[0].anchors();
  const std::vector<std::uint64_t> shapes = calls[2].shapes();
  const auto allreduce = static_cast<std::uint64_t>(std::find(program.begin() + 1, program.end(), 1) - program.begin());
  calls[2].set_anchor(1, true);
  calls[3].set_anchor(allreduce, false);
  EXPECT_NE(calls[2].shapes(), shapes);
  agree_on_anchors(calls);
  for (const CallSequence& c : calls) EXPECT_EQ(c.anchors(), program) << "rank " << c.rank();
  EXPECT_EQ(calls[2].shapes(), shapes);  // the shape carries the mark: it is restored too
  std::string why;
  calls[2].set_anchor(1, true);
  calls[3].set_anchor(allreduce, false);
  const auto rp = phases_by_rank(calls, PhaseFinderOptions{}, why);
  ASSERT_TRUE(rp.has_value()) << why;
  EXPECT_EQ(sorted_weights(*rp).back(), 12u);
}

TEST(AgreeOnAnchors, RanksThatToldNoComputationApartTakeTheMarksOfThoseThatDid) {
  // Five ranks of one program on an oversubscribed machine: three lost their compute class (threshold 0: every call
  // marked), two kept it. The two decide, whatever the three say.
  std::vector<CallSequence> calls;
  for (std::int32_t r = 0; r < 5; ++r)
    calls.push_back(location(r, 12, {(r + 1) % 5}, 0, -1, -1, 0, r < 3 ? 0 : 1000000));
  const std::vector<std::uint8_t> program = calls[4].anchors();
  ASSERT_NE(calls[0].anchors(), program);
  agree_on_anchors(calls);
  for (const CallSequence& c : calls) EXPECT_EQ(c.anchors(), program) << "rank " << c.rank();
  std::string why;
  const auto rp = phases_by_rank(calls, PhaseFinderOptions{}, why);
  ASSERT_TRUE(rp.has_value()) << why;
  EXPECT_EQ(sorted_weights(*rp).back(), 12u);
}

TEST(AgreeOnAnchors, TwoRanksOrDifferentCallsDoNotVote) {
  std::vector<CallSequence> two;
  for (std::int32_t r = 0; r < 2; ++r) two.push_back(location(r, 6, {1 - r}, 0));
  two[1].set_anchor(1, true);
  agree_on_anchors(two);
  EXPECT_EQ(two[1].anchors()[1], 1);  // one against one: each keeps its own
  std::vector<CallSequence> mixed;
  for (std::int32_t r = 0; r < 3; ++r) mixed.push_back(location(r, 6, {(r + 1) % 3}, r == 0 ? 1 : 0));
  mixed[1].set_anchor(1, true);
  agree_on_anchors(mixed);
  EXPECT_EQ(mixed[1].anchors()[1], 1);  // rank 0 makes another call in its set-up: two alike are too few
}

/// An MD code's steps on a ring of `n` ranks for `steps` steps: the forward exchange (to the next rank), the forces,
/// the reverse exchange (to the one before); every tenth step re-neighbours (an atom exchange first), and the four
/// steps after it skip the check whether to (a reduction of everyone at the step's end). A broadcast of everyone
/// ends the set-up.
std::vector<CallSequence> steps_that_re_neighbour(std::int32_t n, int steps) {
  std::vector<CallSequence> out;
  for (std::int32_t r = 0; r < n; ++r) {
    CallSequence s(r, 1000000);
    const std::int32_t next = (r + 1) % n;
    const std::int32_t before = (r + n - 1) % n;
    add_call(s, 0, -1, 0);
    add_call(s, 5, -1, 10, 0, true);
    for (int it = 0; it < steps; ++it) {
      if (it % 10 == 0) add_call(s, 4, next, 10);
      add_call(s, 1, next, 10);
      add_call(s, 3, before, 2000000);
      if (it % 10 >= 4) add_call(s, 2, -1, 10, 0, true);
    }
    add_call(s, 9, -1, 10);
    out.push_back(std::move(s));
  }
  return out;
}

/// The weights of the run's kinds of the time step (ascending) and of its other phases (in phase order).
std::pair<std::vector<std::uint64_t>, std::vector<std::uint64_t>> step_weights(const RunPhases& rp) {
  const std::vector<std::uint64_t> weight = phase_weights(rp);
  std::vector<std::uint64_t> kinds;
  std::vector<std::uint64_t> others;
  for (std::uint32_t p = 0; p < rp.phase_count; ++p) (rp.step_kind[p] != 0 ? kinds : others).push_back(weight[p]);
  std::sort(kinds.begin(), kinds.end());
  return {kinds, others};
}

/// The weights of the time step's kinds and of the other phases (step_weights) of `ranks` analysed by rank between
/// collectives of everyone.
void weights_between_collectives(const std::vector<CallSequence>& ranks,
                                 std::pair<std::vector<std::uint64_t>, std::vector<std::uint64_t>>& out) {
  std::string why;
  const auto rp = phases_by_rank(ranks, PhaseFinderOptions{}, why, PhaseLevel::Collectives);
  ASSERT_TRUE(rp.has_value()) << why;
  EXPECT_EQ(rp->level, PhaseLevel::Collectives) << rp->method_note;
  ASSERT_EQ(rp->step_kind.size(), rp->phase_count);
  out = step_weights(*rp);
}

TEST(RankPhases, BetweenCollectivesOfEveryoneEachTimeStepIsOneOccurrenceItsVariantsKindsOfTheStep) {
  // Between two checks lie five steps after a re-neighbouring: each is one step, the re-neighbouring one and those
  // without the check kinds of the time step, so that the step's kinds add up to the code's 60 steps.
  std::pair<std::vector<std::uint64_t>, std::vector<std::uint64_t>> weights;
  ASSERT_NO_FATAL_FAILURE(weights_between_collectives(steps_that_re_neighbour(4, 60), weights));
  const auto& [kinds, others] = weights;
  EXPECT_EQ(kinds, (std::vector<std::uint64_t>{6, 18, 36})) << "re-neighbouring, without the check, plain";
  EXPECT_EQ(others, (std::vector<std::uint64_t>{1, 1})) << "the set-up and the end are no steps";
}

TEST(RankPhases, AStepInWhichARankMakesAPartOfTheStepIsAKindOfIt) {
  // Four ranks exchange around a ring and check (a reduction of everyone) every step; for the first 12 of 30 steps
  // rank 3 holds nothing (particles still falling) and makes the check alone: those steps are a kind of the time
  // step too (other ranks make them whole), so that the kinds add up to the code's 30 steps.
  std::vector<CallSequence> ranks;
  for (std::int32_t r = 0; r < 4; ++r) {
    CallSequence s(r, 1000000);
    add_call(s, 0, -1, 0);
    add_call(s, 5, -1, 10, 0, true);
    for (int it = 0; it < 30; ++it) {
      if (r != 3 || it >= 12) {
        add_call(s, 1, (r + 1) % 4, 10);
        add_call(s, 3, (r + 3) % 4, 2000000);
      }
      add_call(s, 2, -1, 10, 0, true);
    }
    add_call(s, 9, -1, 10);
    ranks.push_back(std::move(s));
  }
  std::pair<std::vector<std::uint64_t>, std::vector<std::uint64_t>> weights;
  ASSERT_NO_FATAL_FAILURE(weights_between_collectives(ranks, weights));
  const auto& [kinds, others] = weights;
  EXPECT_EQ(kinds, (std::vector<std::uint64_t>{12, 18})) << "rank 3 holding nothing, then everyone";
  EXPECT_EQ(others, (std::vector<std::uint64_t>{1, 1})) << "the set-up and the end are no steps";
}

/// Rank r of four on a ring after Init and a set-up of `own` calls of its own to the next rank.
CallSequence ring_set_up(std::int32_t r, int own) {
  CallSequence s(r, 1000000);
  add_call(s, 0, -1, 0);
  for (int i = 0; i < own; ++i) add_call(s, 6, (r + 1) % 4, 10);
  return s;
}

TEST(RankPhases, TheStepsThatEndTheSetUpAreStepsTheRestOfItIsNot) {
  // Four ranks on a ring: a set-up of calls of its own, then the first three steps before any collective (the check
  // is made only at the third), which the calls up to the first collective hold with the set-up; then 30 steps that
  // skip the check two steps in five. The three are steps, as the same calls are later: 33 in all.
  std::vector<CallSequence> ranks;
  for (std::int32_t r = 0; r < 4; ++r) {
    CallSequence s = ring_set_up(r, 12);
    const std::int32_t next = (r + 1) % 4;
    const std::int32_t before = (r + 3) % 4;
    for (int it = 0; it < 33; ++it) {
      add_call(s, 1, next, 10);
      add_call(s, 3, before, 2000000);
      if (it == 2 || (it > 2 && it % 5 != 1 && it % 5 != 2)) add_call(s, 2, -1, 10, 0, true);
    }
    add_call(s, 9, -1, 10);
    ranks.push_back(std::move(s));
  }
  std::pair<std::vector<std::uint64_t>, std::vector<std::uint64_t>> weights;
  ASSERT_NO_FATAL_FAILURE(weights_between_collectives(ranks, weights));
  const auto& [kinds, others] = weights;
  std::uint64_t steps = 0;
  for (const std::uint64_t w : kinds) steps += w;
  EXPECT_EQ(steps, 33u);
  EXPECT_EQ(others, (std::vector<std::uint64_t>{1})) << "the set-up's own calls (the last call ends the last step)";
}

TEST(RankPhases, AFirstStepWithOutputOfItsOwnIsAKindOfTheStepNotPartOfTheSetUp) {
  // Four ranks on a ring, 40 steps of (the main computation, a reverse exchange, a forward exchange); the first step
  // also writes the initial state between its exchanges (three reductions), as a code cut after its computation
  // begins its loop in the set-up. The first step occurs once, right before the repeated steps: it is a kind of the
  // time step, not a piece of the set-up that the set-up's own calls before it join: 40 steps in all.
  constexpr int kSteps = 40;
  std::vector<CallSequence> ranks;
  for (std::int32_t r = 0; r < 4; ++r) {
    CallSequence s = ring_set_up(r, 4);
    const std::int32_t next = (r + 1) % 4;
    const std::int32_t before = (r + 3) % 4;
    for (int it = 0; it < kSteps; ++it) {
      add_call(s, 3, before, 2000000);
      if (it == 0) {
        for (int i = 0; i < 3; ++i) add_call(s, 7, -1, 10, 0, true);
      }
      add_call(s, 1, next, 10);
    }
    add_call(s, 9, -1, 2000000);
    ranks.push_back(std::move(s));
  }
  std::string why;
  const auto rp = phases_by_rank(ranks, PhaseFinderOptions{}, why, PhaseLevel::Units);
  ASSERT_TRUE(rp.has_value()) << why;
  EXPECT_EQ(rp->level, PhaseLevel::Units) << rp->method_note;
  ASSERT_EQ(rp->step_kind.size(), rp->phase_count);
  const auto [kinds, others] = step_weights(*rp);
  EXPECT_EQ(kinds, (std::vector<std::uint64_t>{1, kSteps - 1})) << "the first step, the others";
  EXPECT_EQ(others, (std::vector<std::uint64_t>{1, 1})) << "the set-up and the finish";
}

}  // namespace
}  // namespace p3s::analyzer
