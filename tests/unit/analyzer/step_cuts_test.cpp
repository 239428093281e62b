// SPDX-License-Identifier: BSD-3-Clause
// A stretch of time steps that differ by their data, cut into its steps by aligning it to copies of the step.
#include "step_cuts.hpp"

#include <gtest/gtest.h>

namespace p3s::analyzer {
namespace {

using Calls = std::vector<std::uint64_t>;

/// Calls: f1 f2 f3 (the forward exchange), r1 r2 r3 (the reverse one), 9 (the check where all ranks meet).
const Calls kBody = {1, 2, 3, 4, 5, 6, 9};

Calls joined(std::initializer_list<Calls> parts) {
  Calls out;
  for (const Calls& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

TEST(StepCuts, StepsWithoutTheCheckAreOneStepEach) {
  // Four steps that skip the check (the steps right after a re-neighbouring), then a whole step.
  const Calls fr = {1, 2, 3, 4, 5, 6};
  const Calls s = joined({fr, fr, fr, fr, kBody});
  EXPECT_EQ(step_cuts(s, kBody), (std::vector<std::uint64_t>{0, 6, 12, 18, 24}));
}

TEST(StepCuts, AStepThatReNeighboursBeginsWithItsOwnCalls) {
  // A step that re-neighbours: counts first (7 7), its forward exchange with other calls between (8), the reverse
  // one; then two plain steps without the check.
  const Calls renb = {7, 7, 1, 8, 2, 8, 3, 4, 5, 6};
  const Calls fr = {1, 2, 3, 4, 5, 6};
  EXPECT_EQ(step_cuts(joined({renb, fr, fr}), kBody), (std::vector<std::uint64_t>{0, 10, 16}));
}

TEST(StepCuts, ACallBetweenTwoStepsEndsTheFirst) {
  // An output call (8) between two steps belongs to the step before it.
  const Calls s = joined({kBody, {8}, kBody});
  EXPECT_EQ(step_cuts(s, kBody), (std::vector<std::uint64_t>{0, 8}));
}

TEST(StepCuts, AStepWithAnExtraCallIsOneStep) {
  // One step with a second check: the extra call is no step of its own.
  const Calls s = joined({kBody, {9}});
  EXPECT_EQ(step_cuts(s, kBody), (std::vector<std::uint64_t>{0}));
}

TEST(StepCuts, CallsThatMakeAtMostHalfTheStepAreNoStep) {
  // The set-up: other calls, and a few of the step's.
  EXPECT_EQ(step_cuts(Calls{7, 8, 1, 2, 8, 7, 8, 7}, kBody), std::nullopt);
  // Half a step at the end of two whole ones.
  EXPECT_EQ(step_cuts(joined({kBody, kBody, {1, 2, 3}}), kBody), (std::vector<std::uint64_t>{0, 7}));
  // A set-up much longer than the step, that makes the step's calls once among its own.
  EXPECT_EQ(step_cuts(joined({{7, 8, 7, 8, 7, 8, 7, 8, 7, 8, 7, 8, 7, 8}, kBody}), kBody), std::nullopt);
}

TEST(StepCuts, WhereTheCallsCannotTellTheExchangesApartAStepKeepsItsExtraOnes) {
  // Two ranks, one neighbour: every exchange is the same calls (1). The step: forward, reverse, the check (9). A step
  // that re-neighbours exchanges atoms and borders (7 1 each) before its reverse exchange: its third exchange is
  // part of it, not the start of the step after it, which would shift every step after it by one exchange.
  const Calls body = {1, 1, 9};
  const Calls renb = {7, 1, 7, 1, 1};
  const Calls s = joined({renb, {1, 1}, {1, 1}, body});
  EXPECT_EQ(step_cuts(s, body), (std::vector<std::uint64_t>{0, 5, 7, 9}));
}

TEST(StepCuts, ARepeatThatMakesTheStepsCallsAmongItsOwnIsAStepTheSetUpIsNot) {
  // A rank that holds no particles makes the check alone (9), most steps; one that holds some exchanges them first
  // (1 1 1 1 9), a step too, with more calls of its own than of the step's. The set-up makes the check once.
  const Calls calls = {7, 8, 7, 8, 9, 9, 9, 1, 1, 1, 1, 9, 9, 1, 1, 1, 1, 9, 9, 1, 1, 1, 1, 9};
  const std::vector<std::uint64_t> first = {0, 5, 6, 7, 12, 13, 18, 19};
  const std::vector<std::uint64_t> phase = {1, 2, 2, 3, 2, 3, 2, 3};
  const auto steps = location_steps(phase, first, calls.size(), [&](std::uint64_t i) { return calls[i]; });
  ASSERT_EQ(steps.size(), first.size());
  EXPECT_TRUE(steps[0].empty()) << "the set-up";
  for (std::size_t k = 1; k < first.size(); ++k) EXPECT_EQ(steps[k], std::vector<std::uint64_t>{first[k]}) << k;
}

TEST(StepCuts, ARepeatOfSomeOfTheStepsCallsIsPartOfAStepNotAStep) {
  // A rank whose step exchanges (1 1 1 1) and checks (9) spends some steps holding nothing: the check alone, a part
  // of the step (its calls all the step's, fewer), which is a step where another rank makes it whole. The set-up
  // makes the check once: no part of a step. A repeat of calls the step does not make is neither.
  const Calls calls = {7, 9, 1, 1, 1, 1, 9, 9, 1, 1, 1, 1, 9, 9, 1, 1, 1, 1, 9, 9, 5, 5, 5};
  const std::vector<std::uint64_t> first = {0, 2, 7, 8, 13, 14, 19, 20, 21, 22};
  const std::vector<std::uint64_t> phase = {1, 2, 3, 2, 3, 2, 3, 4, 4, 4};
  std::vector<std::uint8_t> partial;
  const auto steps = location_steps(
      phase, first, calls.size(), [&](std::uint64_t i) { return calls[i]; }, &partial);
  ASSERT_EQ(steps.size(), first.size());
  EXPECT_EQ(partial, (std::vector<std::uint8_t>{0, 0, 1, 0, 1, 0, 1, 0, 0, 0}));
  EXPECT_EQ(steps[1], std::vector<std::uint64_t>{2});
  EXPECT_TRUE(steps[2].empty()) << "no step on its own";
  EXPECT_TRUE(steps[0].empty() && steps[7].empty()) << "the set-up, and a repeat of other calls";
}

/// Where each occurrence of `parts` begins, the parts joined.
std::vector<std::uint64_t> starts_of(std::initializer_list<Calls> parts) {
  std::vector<std::uint64_t> out;
  std::uint64_t at = 0;
  for (const Calls& p : parts) {
    out.push_back(at);
    at += p.size();
  }
  return out;
}

TEST(StepCuts, TheStepsAtTheEdgesOfAStretchThatOccursOnceAreSteps) {
  // The step (kBody) and the step that skips the check (fr) repeat. The set-up (7 8 ...) ends with two steps whose
  // sizes differ from every later one's (told apart at the level of sizes, the same calls); the stretch between two
  // runs (9 9 5 ...) begins with the first run's last step; the finish (8 8) holds none. Each is too long for
  // step_cuts() to take it whole as a step with calls of its own.
  const Calls fr = {1, 2, 3, 4, 5, 6};
  const Calls own = {7, 8, 7, 8, 7, 8, 7, 8, 7, 8, 7, 8, 7, 8};
  const Calls setup = joined({own, fr, kBody});
  const Calls between = joined({kBody, {9, 9}, own});
  const Calls finish = {8, 8};
  const Calls calls = joined({setup, kBody, fr, kBody, fr, kBody, fr, between, kBody, fr, kBody, finish});
  const std::vector<std::uint64_t> first =
      starts_of({setup, kBody, fr, kBody, fr, kBody, fr, between, kBody, fr, kBody, finish});
  const std::vector<std::uint64_t> phase = {1, 2, 3, 2, 3, 2, 3, 4, 2, 3, 2, 5};
  std::vector<std::uint64_t> rest;
  const auto steps = location_steps(
      phase, first, calls.size(), [&](std::uint64_t i) { return calls[i]; }, nullptr, &rest);
  ASSERT_EQ(steps.size(), first.size());
  // The set-up: its own calls first (the rest, the first piece), then the two steps.
  EXPECT_EQ(steps[0], (std::vector<std::uint64_t>{0, own.size(), own.size() + fr.size()}));
  // Between the runs: the step first, then the rest (the second piece).
  EXPECT_EQ(steps[7], (std::vector<std::uint64_t>{first[7], first[7] + kBody.size()}));
  EXPECT_TRUE(steps[11].empty()) << "the finish holds no step";
  EXPECT_EQ(rest, (std::vector<std::uint64_t>{1, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0}));
  // Without `rest`, as before: a stretch that occurs once is no step.
  EXPECT_TRUE(location_steps(phase, first, calls.size(), [&](std::uint64_t i) { return calls[i]; })[0].empty());
}

TEST(StepCuts, OnlyTheStepsCallForCallEndAStretchThatOccursOnce) {
  // The set-up ends with the step's calls and one of its own between them (8): the step with other calls is no step
  // the location makes elsewhere, so the set-up stays whole.
  const Calls setup = {7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 1, 2, 3, 8, 4, 5, 6, 9};
  const Calls calls = joined({setup, kBody, kBody, kBody});
  const std::vector<std::uint64_t> first = starts_of({setup, kBody, kBody, kBody});
  std::vector<std::uint64_t> rest;
  const auto steps = location_steps(
      std::vector<std::uint64_t>{1, 2, 2, 2}, first, calls.size(), [&](std::uint64_t i) { return calls[i]; }, nullptr,
      &rest);
  EXPECT_TRUE(steps[0].empty());
  EXPECT_EQ(rest, (std::vector<std::uint64_t>{0, 0, 0, 0}));
}

TEST(StepCuts, AnAlignmentBeyondItsCellsIsNotTried) {
  const Calls s = joined({kBody, kBody});
  EXPECT_EQ(step_cuts(s, kBody, 8 * 15 - 1), std::nullopt);
  EXPECT_EQ(step_cuts(s, kBody, 8 * 15), (std::vector<std::uint64_t>{0, 7}));
  EXPECT_EQ(step_cuts(Calls{}, kBody), std::nullopt);
}

}  // namespace
}  // namespace p3s::analyzer
