// SPDX-License-Identifier: BSD-3-Clause
// The program's iterations: main loops cut where their largest loop holds the most whole iterations, every
// whole copy of their body an iteration, set-up loops part of the stretches.
#include "main_loop.hpp"

#include <gtest/gtest.h>

namespace p3s::analyzer {
namespace {

/// The pieces as (begin, end, iteration) triples, for readable failures.
std::vector<std::tuple<std::uint64_t, std::uint64_t, bool>> pieces_of(const std::vector<std::uint64_t>& s,
                                                                      const StartCost& cost = {}) {
  std::vector<std::tuple<std::uint64_t, std::uint64_t, bool>> out;
  for (const Piece& p : main_loop_pieces(s, find_phases(s), cost)) out.emplace_back(p.begin, p.end, p.iteration);
  return out;
}

using Pieces = std::vector<std::tuple<std::uint64_t, std::uint64_t, bool>>;

TEST(MainLoop, InnerLoopsStayInsideTheIteration) {
  // Set-up 9, then (1 2 2 3) x 3, then the end 7: the inner loop (2 x 2) is part of each iteration.
  const std::vector<std::uint64_t> s = {9, 1, 2, 2, 3, 1, 2, 2, 3, 1, 2, 2, 3, 7};
  EXPECT_EQ(pieces_of(s), (Pieces{{0, 1, false}, {1, 5, true}, {5, 9, true}, {9, 13, true}, {13, 14, false}}));
}

TEST(MainLoop, AWarmUpIterationBeforeTheSetUpEndsIsAnIteration) {
  // 9, a warm-up iteration (1 2 3), more set-up 8, then (1 2 3) x 4 and the end 7.
  const std::vector<std::uint64_t> s = {9, 1, 2, 3, 8, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 7};
  EXPECT_EQ(pieces_of(s), (Pieces{{0, 1, false},
                                  {1, 4, true},
                                  {4, 5, false},
                                  {5, 8, true},
                                  {8, 11, true},
                                  {11, 14, true},
                                  {14, 17, true},
                                  {17, 18, false}}));
}

TEST(MainLoop, SetUpLoopsAreStretches) {
  // A set-up loop (5 x 3) far smaller than the main loop (1 2 3 4 x 4) stays in the stretch before it.
  const std::vector<std::uint64_t> s = {9, 5, 5, 5, 8, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4, 7};
  EXPECT_EQ(pieces_of(s),
            (Pieces{{0, 5, false}, {5, 9, true}, {9, 13, true}, {13, 17, true}, {17, 21, true}, {21, 22, false}}));
}

TEST(MainLoop, AnIterationEndsAtACollectiveOfAllProcessesWhereItCan) {
  // 6 is where all processes meet (the residual's Allreduce); the set-up also ends with one. (6 1 2) and (1 2 6)
  // both give three whole iterations; the time step is the one that ends with the collective.
  const std::vector<std::uint64_t> s = {9, 6, 1, 2, 6, 1, 2, 6, 1, 2, 6, 7};
  std::vector<std::uint8_t> syncs(s.size(), 0);
  for (std::size_t i = 0; i < s.size(); ++i) syncs[i] = s[i] == 6 ? 1 : 0;
  EXPECT_EQ(pieces_of(s), (Pieces{{0, 1, false}, {1, 4, true}, {4, 7, true}, {7, 10, true}, {10, 12, false}}));
  EXPECT_EQ(pieces_of(s, after_syncs(syncs)),
            (Pieces{{0, 2, false}, {2, 5, true}, {5, 8, true}, {8, 11, true}, {11, 12, false}}));
}

TEST(MainLoop, ALoopInterruptedByAnotherIterationIsCutAlike) {
  // (1 2 3) x 3, a different iteration 1 8 3, then (1 2 3) x 2: one main body, cut at 1 everywhere.
  const std::vector<std::uint64_t> s = {9, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 8, 3, 1, 2, 3, 1, 2, 3, 7};
  EXPECT_EQ(pieces_of(s), (Pieces{{0, 1, false},
                                  {1, 4, true},
                                  {4, 7, true},
                                  {7, 10, true},
                                  {10, 13, false},
                                  {13, 16, true},
                                  {16, 19, true},
                                  {19, 20, false}}));
}

TEST(MainLoop, NoLoopNoIterations) {
  const std::vector<std::uint64_t> s = {1, 2, 3, 4};
  EXPECT_TRUE(pieces_of(s).empty());
}

TEST(MainLoop, LeastRotationIsSharedByRotations) {
  const std::vector<std::uint64_t> a = {3, 1, 2, 1, 5};
  const std::vector<std::uint64_t> b = {1, 5, 3, 1, 2};
  EXPECT_EQ(least_rotation(a), 1U);  // 1 2 1 5 3
  EXPECT_EQ(least_rotation(b), 3U);
}

}  // namespace
}  // namespace p3s::analyzer
