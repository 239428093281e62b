// SPDX-License-Identifier: BSD-3-Clause
// Phase finder: hand-built tick sequences with known loops, random loop programs, and a literal reference.
#include "p3s/analyzer/phase_finder.hpp"

#include "p3s/error.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

namespace p3s::analyzer {
namespace {

using Ticks = std::vector<TickSymbol>;

Ticks cat(std::initializer_list<Ticks> parts) {
  Ticks out;
  for (const Ticks& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

Ticks rep(const Ticks& body, std::size_t times) {
  Ticks out;
  for (std::size_t i = 0; i < times; ++i) out.insert(out.end(), body.begin(), body.end());
  return out;
}

/// The invariants every result must satisfy, whatever the input.
void expect_consistent(const Ticks& ticks, const PhaseStructure& s) {
  ASSERT_EQ(s.phases.size(), s.weights.size());
  std::uint64_t tick = 0;
  std::vector<std::uint64_t> seen(s.phases.size(), 0);
  std::uint32_t next_new = 0;  // phase ids are numbered in order of first occurrence
  for (const PhaseOccurrence& o : s.occurrences) {
    ASSERT_LT(o.phase, s.phases.size());
    ASSERT_EQ(o.first_tick, tick) << "occurrences must be contiguous";
    ASSERT_GT(o.ticks, 0u);
    const Ticks& phase = s.phases[o.phase];
    ASSERT_EQ(o.ticks, phase.size());
    ASSERT_LE(o.first_tick + o.ticks, ticks.size());
    ASSERT_TRUE(std::equal(phase.begin(), phase.end(), ticks.begin() + static_cast<std::ptrdiff_t>(o.first_tick)))
        << "occurrence at tick " << o.first_tick << " differs from phase " << o.phase;
    if (seen[o.phase]++ == 0) {
      ASSERT_EQ(o.phase, next_new++);
    }
    tick += o.ticks;
  }
  EXPECT_EQ(tick, ticks.size()) << "occurrences must cover the whole sequence";
  EXPECT_EQ(seen, s.weights);
  std::vector<Ticks> sorted = s.phases;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end()) << "equal stretches must be one phase";

  std::uint64_t runs_total = 0;
  std::vector<PhaseRun> order = phase_order(s);
  for (std::size_t i = 0; i < order.size(); ++i) {
    EXPECT_GT(order[i].count, 0u);
    if (i > 0) {
      EXPECT_NE(order[i].phase, order[i - 1].phase);
    }
    for (std::uint64_t c = 0; c < order[i].count; ++c) {
      ASSERT_LT(runs_total + c, s.occurrences.size());
      EXPECT_EQ(s.occurrences[runs_total + c].phase, order[i].phase);
    }
    runs_total += order[i].count;
  }
  EXPECT_EQ(runs_total, s.occurrences.size());

  for (std::size_t i = 0; i < s.loops.size(); ++i) {
    EXPECT_EQ(s.loops[i].id, i);
    EXPECT_GE(s.loops[i].count, 2u);
    EXPECT_GE(s.loops[i].instances, 1u);
  }
}

// ---- A literal implementation of the definition in phase_finder.cpp: O(n^2) per scan, for small inputs. ----

constexpr TickSymbol kRefLoop = TickSymbol{1} << 62;  // tick symbols of the reference tests stay below this

struct RefLoop {
  Ticks body;
  std::uint64_t count = 0;
};

bool ref_primitive(const Ticks& body) {
  for (std::size_t q = 1; q < body.size(); ++q) {
    if (body.size() % q != 0) continue;
    bool power = true;
    for (std::size_t t = 0; t < body.size() && power; ++t) power = body[t] == body[t % q];
    if (power) return false;
  }
  return true;
}

PhaseStructure reference(const Ticks& ticks, const PhaseFinderOptions& options) {
  const std::size_t r = options.min_repetitions;
  std::vector<RefLoop> loops;
  Ticks s = ticks;
  std::size_t p = 1;
  while (p <= options.max_period && r * p <= s.size()) {
    bool folded = false;
    for (std::size_t i = 0; i + r * p <= s.size(); ++i) {
      bool repeats = true;
      for (std::size_t t = 0; t < (r - 1) * p && repeats; ++t) repeats = s[i + t] == s[i + t + p];
      Ticks body(s.begin() + static_cast<std::ptrdiff_t>(i), s.begin() + static_cast<std::ptrdiff_t>(i + p));
      if (!repeats || !ref_primitive(body)) continue;
      std::size_t end = i + r * p;
      while (end < s.size() && s[end] == s[end - p]) ++end;
      std::uint64_t count = (end - i) / p;
      std::size_t id = 0;
      while (id < loops.size() && !(loops[id].body == body && loops[id].count == count)) ++id;
      if (id == loops.size()) loops.push_back({body, count});
      s.erase(s.begin() + static_cast<std::ptrdiff_t>(i + 1), s.begin() + static_cast<std::ptrdiff_t>(i + count * p));
      s[i] = kRefLoop + id;
      folded = true;
    }
    p = folded ? 1 : p + 1;
  }

  PhaseStructure out;
  std::map<Ticks, std::uint32_t> ids;
  std::uint64_t tick = 0;
  auto emit = [&](const Ticks& phase) {
    auto [it, inserted] = ids.emplace(phase, static_cast<std::uint32_t>(out.phases.size()));
    if (inserted) {
      out.phases.push_back(phase);
      out.weights.push_back(0);
    }
    ++out.weights[it->second];
    out.occurrences.push_back({.phase = it->second, .first_tick = tick, .ticks = phase.size()});
    tick += phase.size();
  };
  auto expand = [&](auto&& self, const Ticks& items) -> void {
    Ticks stretch;
    for (TickSymbol item : items) {
      if (item < kRefLoop) {
        stretch.push_back(item);
        continue;
      }
      if (!stretch.empty()) emit(stretch);
      stretch.clear();
      const RefLoop& l = loops[item - kRefLoop];
      for (std::uint64_t c = 0; c < l.count; ++c) self(self, l.body);
    }
    if (!stretch.empty()) emit(stretch);
  };
  expand(expand, s);
  return out;
}

/// Consistency, plus equality with the reference (loops are compared by count only: the reference keeps no ids).
PhaseStructure check(const Ticks& ticks, const PhaseFinderOptions& options = {}) {
  PhaseStructure s = find_phases(ticks, options);
  expect_consistent(ticks, s);
  if (ticks.size() <= 2000) {
    PhaseStructure ref = reference(ticks, options);
    EXPECT_EQ(s.phases, ref.phases);
    EXPECT_EQ(s.weights, ref.weights);
    EXPECT_EQ(s.occurrences.size(), ref.occurrences.size());
    for (std::size_t i = 0; i < std::min(s.occurrences.size(), ref.occurrences.size()); ++i) {
      EXPECT_EQ(s.occurrences[i].phase, ref.occurrences[i].phase) << "occurrence " << i;
      EXPECT_EQ(s.occurrences[i].first_tick, ref.occurrences[i].first_tick) << "occurrence " << i;
    }
  }
  return s;
}

std::uint32_t phase_id(const PhaseStructure& s, const Ticks& phase) {
  auto it = std::find(s.phases.begin(), s.phases.end(), phase);
  EXPECT_NE(it, s.phases.end()) << "phase not found";
  return static_cast<std::uint32_t>(it - s.phases.begin());
}

std::uint64_t weight(const PhaseStructure& s, const Ticks& phase) {
  auto it = std::find(s.phases.begin(), s.phases.end(), phase);
  return it == s.phases.end() ? 0 : s.weights[static_cast<std::size_t>(it - s.phases.begin())];
}

std::vector<std::pair<std::uint32_t, std::uint64_t>> runs(const PhaseStructure& s) {
  std::vector<std::pair<std::uint32_t, std::uint64_t>> out;
  for (const PhaseRun& r : phase_order(s)) out.emplace_back(r.phase, r.count);
  return out;
}

using Runs = std::vector<std::pair<std::uint32_t, std::uint64_t>>;

// ---- Hand-built sequences ----

/// Anchors: 1 where the tick is `anchored`.
std::vector<std::uint8_t> anchors_at(const Ticks& ticks, TickSymbol anchored) {
  std::vector<std::uint8_t> out;
  for (TickSymbol t : ticks) out.push_back(t == anchored ? 1 : 0);
  return out;
}

TEST(PhaseFinderAnchors, ALoopThatDoesNotComputeIsPartOfTheUnitAroundIt) {
  // 12 steps of: compute, then three swaps that look alike (C S S S). Without anchors the swaps are the unit.
  const Ticks ticks = cat({{1}, rep(cat({{2}, rep({3}, 3)}), 12), {4}});
  const PhaseStructure plain = find_phases(ticks);
  EXPECT_NE(std::find(plain.weights.begin(), plain.weights.end(), 36u), plain.weights.end());
  const PhaseStructure s = find_phases(ticks, anchors_at(ticks, 2));
  expect_consistent(ticks, s);
  std::vector<std::uint64_t> w = s.weights;
  std::sort(w.begin(), w.end());
  EXPECT_EQ(w, (std::vector<std::uint64_t>{1, 1, 12}));
  const auto unit = std::find(s.weights.begin(), s.weights.end(), 12u) - s.weights.begin();
  EXPECT_EQ(s.phases[static_cast<std::size_t>(unit)], (Ticks{2, 3, 3, 3}));
  const auto flat = std::count_if(s.loops.begin(), s.loops.end(), [](const LoopInfo& l) { return l.flattened; });
  EXPECT_EQ(flat, 1);
}

TEST(PhaseFinderAnchors, LoopsThatComputeAtEveryLevelStayUnits) {
  // outer 10 x (A B, 4 x (C D, 3 x (E F))) with computation before A, C and E: the three levels as without anchors.
  const Ticks inner = rep({5, 6}, 3);
  const Ticks middle = rep(cat({{3, 4}, inner}), 4);
  const Ticks ticks = cat({{9}, rep(cat({{1, 2}, middle}), 10), {9}});
  std::vector<std::uint8_t> anchors;
  for (TickSymbol t : ticks) anchors.push_back(t == 1 || t == 3 || t == 5 ? 1 : 0);
  const PhaseStructure with = find_phases(ticks, anchors);
  const PhaseStructure without = find_phases(ticks);
  expect_consistent(ticks, with);
  EXPECT_EQ(with.weights, without.weights);
  EXPECT_EQ(with.phases, without.phases);
}

TEST(PhaseFinderAnchors, AnchorsOfAnotherLengthAreAnInternalError) {
  const Ticks ticks = rep({1, 2}, 4);
  EXPECT_THROW((void)find_phases(ticks, std::vector<std::uint8_t>(3, 1)), std::logic_error);
}

TEST(PhaseFinder, EmptyInput) {
  PhaseStructure s = check({});
  EXPECT_TRUE(s.phases.empty());
  EXPECT_TRUE(s.weights.empty());
  EXPECT_TRUE(s.occurrences.empty());
  EXPECT_TRUE(s.loops.empty());
  EXPECT_TRUE(phase_order(s).empty());
}

TEST(PhaseFinder, NoRepetitionIsOnePhaseOfWeightOne) {
  std::mt19937_64 rng(7);
  Ticks ticks(5000);
  for (TickSymbol& t : ticks) t = rng();  // 64-bit symbols: no two equal in practice
  PhaseStructure s = check(ticks);
  ASSERT_EQ(s.phases.size(), 1u);
  EXPECT_EQ(s.phases[0], ticks);
  EXPECT_EQ(s.weights, std::vector<std::uint64_t>{1});
  ASSERT_EQ(s.occurrences.size(), 1u);
  EXPECT_EQ(s.occurrences[0].ticks, ticks.size());
  EXPECT_TRUE(s.loops.empty());

  PhaseStructure single = check({42});
  EXPECT_EQ(single.phases, std::vector<Ticks>{{42}});
}

TEST(PhaseFinder, SimpleLoop) {
  Ticks body{1, 2, 3, 4, 5};
  PhaseStructure s = check(rep(body, 100));
  EXPECT_EQ(s.phases, std::vector<Ticks>{body});
  EXPECT_EQ(s.weights, std::vector<std::uint64_t>{100});
  EXPECT_EQ(s.occurrences.size(), 100u);
  ASSERT_EQ(s.loops.size(), 1u);
  EXPECT_EQ(s.loops[0].count, 100u);
  EXPECT_EQ(s.loops[0].body_length, 5u);
  EXPECT_EQ(s.loops[0].depth, 0u);
  EXPECT_EQ(s.loops[0].ticks, 500u);
  EXPECT_EQ(s.loops[0].instances, 1u);
  EXPECT_EQ(runs(s), (Runs{{0, 100}}));
}

TEST(PhaseFinder, LoopWithPrefixAndSuffixGivesInitAndFinalisePhases) {
  Ticks init{90, 91}, body{1, 2, 3}, fini{95, 96, 97};
  PhaseStructure s = check(cat({init, rep(body, 50), fini}));
  EXPECT_EQ(s.phases, (std::vector<Ticks>{init, body, fini}));
  EXPECT_EQ(s.weights, (std::vector<std::uint64_t>{1, 50, 1}));
  EXPECT_EQ(runs(s), (Runs{{0, 1}, {1, 50}, {2, 1}}));
  EXPECT_EQ(s.occurrences[1].first_tick, 2u);
  EXPECT_EQ(s.occurrences.back().first_tick, 152u);
}

TEST(PhaseFinder, NestedLoopsMultiplyTheInnerWeight) {
  Ticks inner{1, 2, 3}, glue{8, 9};
  Ticks outer_body = cat({rep(inner, 4), glue});
  PhaseStructure s = check(cat({{100}, rep(outer_body, 7), {101}}));
  EXPECT_EQ(weight(s, inner), 28u);
  EXPECT_EQ(weight(s, glue), 7u);
  EXPECT_EQ(weight(s, {100}), 1u);
  EXPECT_EQ(weight(s, {101}), 1u);
  EXPECT_EQ(s.phases.size(), 4u);
  ASSERT_EQ(s.loops.size(), 2u);
  EXPECT_EQ(s.loops[0].count, 4u);
  EXPECT_EQ(s.loops[0].depth, 0u);
  EXPECT_EQ(s.loops[0].instances, 7u);
  EXPECT_EQ(s.loops[1].count, 7u);
  EXPECT_EQ(s.loops[1].body_length, 3u);  // the inner loop and the two glue ticks
  EXPECT_EQ(s.loops[1].depth, 1u);
  EXPECT_EQ(s.loops[1].ticks, 7u * 14u);
  EXPECT_EQ(s.loops[1].instances, 1u);
  Runs expected{{0, 1}};
  for (int i = 0; i < 7; ++i) {
    expected.emplace_back(1, 4);
    expected.emplace_back(2, 1);
  }
  expected.emplace_back(3, 1);
  EXPECT_EQ(runs(s), expected);
}

TEST(PhaseFinder, ThreeLevelNestingMultipliesAllCounts) {
  Ticks a{1, 2}, b{3}, c{4, 5, 6};
  Ticks middle = cat({rep(a, 3), b});
  Ticks outer = cat({rep(middle, 5), c});
  PhaseStructure s = check(rep(outer, 4));
  EXPECT_EQ(weight(s, a), 60u);
  EXPECT_EQ(weight(s, b), 20u);
  EXPECT_EQ(weight(s, c), 4u);
  ASSERT_EQ(s.loops.size(), 3u);
  EXPECT_EQ(s.loops[2].depth, 2u);
  EXPECT_EQ(s.loops[2].ticks, 4u * 38u);  // (5 x (3 x 2 + 1) + 3) ticks per outer iteration
  EXPECT_EQ(s.loops[0].instances, 20u);
}

TEST(PhaseFinder, TwoAlternatingPhases) {
  Ticks a{1, 2, 3}, b{4, 5};
  PhaseStructure s = check(rep(cat({rep(a, 3), rep(b, 2)}), 10));
  EXPECT_EQ(s.phases, (std::vector<Ticks>{a, b}));
  EXPECT_EQ(s.weights, (std::vector<std::uint64_t>{30, 20}));
  Runs expected;
  for (int i = 0; i < 10; ++i) {
    expected.emplace_back(0, 3);
    expected.emplace_back(1, 2);
  }
  EXPECT_EQ(runs(s), expected);
  ASSERT_EQ(s.loops.size(), 3u);
  EXPECT_EQ(s.loops[2].count, 10u);
  EXPECT_EQ(s.loops[2].body_length, 2u);
}

TEST(PhaseFinder, IrregularInnerCountsStillGiveTheInnerPhase) {
  Ticks a{1, 2, 3}, g{7, 8};
  PhaseStructure s = check(cat({rep(a, 5), g, rep(a, 7), g, rep(a, 6), g}));
  EXPECT_EQ(s.phases, (std::vector<Ticks>{a, g}));
  EXPECT_EQ(s.weights, (std::vector<std::uint64_t>{18, 3}));
  EXPECT_EQ(runs(s), (Runs{{0, 5}, {1, 1}, {0, 7}, {1, 1}, {0, 6}, {1, 1}}));
  // Three inner loops (counts differ), no outer loop.
  ASSERT_EQ(s.loops.size(), 3u);
  for (const LoopInfo& l : s.loops) EXPECT_EQ(l.depth, 0u);

  // Single-tick version, as in the brief: (A x5 G)(A x7 G)(A x6 G).
  PhaseStructure t = check(cat({rep({1}, 5), {2}, rep({1}, 7), {2}, rep({1}, 6), {2}}));
  EXPECT_EQ(t.weights, (std::vector<std::uint64_t>{18, 3}));
}

TEST(PhaseFinder, EqualInnerCountsLetTheOuterLoopFold) {
  Ticks a{1, 2, 3}, g{7, 8};
  Ticks iteration = cat({rep(a, 5), g});
  PhaseStructure s = check(cat({iteration, iteration, rep(a, 7), g, iteration}));
  EXPECT_EQ(s.weights, (std::vector<std::uint64_t>{22, 4}));
  // (A x5, G) x2 is one loop; the x7 iteration breaks it.
  // Loops are numbered innermost first: A x5 and A x7 (period 3), then the outer loop.
  ASSERT_EQ(s.loops.size(), 3u);
  EXPECT_EQ(s.loops[2].count, 2u);
  EXPECT_EQ(s.loops[2].depth, 1u);
}

TEST(PhaseFinder, BodyContainingASymbolTwice) {
  PhaseStructure s = check(cat({{50}, rep({1, 2, 1, 3}, 10), {51}}));
  EXPECT_EQ(weight(s, {1, 2, 1, 3}), 10u);
  EXPECT_EQ(s.phases.size(), 3u);

  // A longer body whose first tick recurs inside: no shorter repeat may cut it.
  Ticks body{1, 2, 3, 1, 2, 4, 1, 5};
  PhaseStructure t = check(rep(body, 20));
  EXPECT_EQ(t.phases, std::vector<Ticks>{body});
  EXPECT_EQ(t.weights, std::vector<std::uint64_t>{20});
}

TEST(PhaseFinder, PeriodOneLoop) {
  PhaseStructure s = check(cat({{5}, rep({9}, 1000), {6}}));
  EXPECT_EQ(s.phases, (std::vector<Ticks>{{5}, {9}, {6}}));
  EXPECT_EQ(s.weights, (std::vector<std::uint64_t>{1, 1000, 1}));
  ASSERT_EQ(s.loops.size(), 1u);
  EXPECT_EQ(s.loops[0].body_length, 1u);

  // Innermost first: a repeated tick inside a body is an inner loop.
  PhaseStructure t = check(rep({1, 1, 1, 2}, 4));
  EXPECT_EQ(t.phases, (std::vector<Ticks>{{1}, {2}}));
  EXPECT_EQ(t.weights, (std::vector<std::uint64_t>{12, 4}));
}

TEST(PhaseFinder, SeparateLoopsOfTheSameBodyAreOnePhase) {
  Ticks body{1, 2, 3};
  PhaseStructure s = check(cat({rep(body, 10), {20, 21}, rep(body, 20), {22}, rep(body, 5), {23}, rep(body, 10)}));
  EXPECT_EQ(s.phases.size(), 4u);
  EXPECT_EQ(phase_id(s, body), 0u);
  EXPECT_EQ(weight(s, body), 45u);
  EXPECT_EQ(weight(s, {20, 21}), 1u);
  // Equal body and count are one loop symbol: counts 10, 20, 5.
  EXPECT_EQ(s.loops.size(), 3u);
  EXPECT_EQ(s.loops[0].instances, 2u);
}

TEST(PhaseFinder, GlueEqualToALoopBodyIsThatPhase) {
  Ticks body{1, 2, 3};
  PhaseStructure s = check(cat({rep({4, 5}, 3), body, rep({6}, 2), {9}, rep(body, 4)}));
  EXPECT_EQ(weight(s, body), 5u);
  EXPECT_EQ(s.phases, (std::vector<Ticks>{{4, 5}, body, {6}, {9}}));
}

TEST(PhaseFinder, BodyStartsWhereTheRepetitionStarts) {
  // The loop is A B C in the program, but the run starts at B: the body is its rotation B C A, and the partial
  // copy B C left after the last whole copy is a phase of its own.
  PhaseStructure s = check({9, 2, 3, 1, 2, 3, 1, 2, 3});
  EXPECT_EQ(s.phases, (std::vector<Ticks>{{9}, {2, 3, 1}, {2, 3}}));
  EXPECT_EQ(s.weights, (std::vector<std::uint64_t>{1, 2, 1}));
}

TEST(PhaseFinder, ShorterRepeatInsideABodyIsFoldedFirst) {
  // (A B A B C) x3: A B repeats inside the body, so it is the innermost loop.
  PhaseStructure s = check(rep({1, 2, 1, 2, 3}, 3));
  EXPECT_EQ(s.phases, (std::vector<Ticks>{{1, 2}, {3}}));
  EXPECT_EQ(s.weights, (std::vector<std::uint64_t>{6, 3}));
}

TEST(PhaseFinder, BodyIsNeverARepetitionOfAShorterBlock) {
  PhaseStructure s = check(rep({1, 2}, 8));
  ASSERT_EQ(s.loops.size(), 1u);
  EXPECT_EQ(s.loops[0].body_length, 2u);
  EXPECT_EQ(s.loops[0].count, 8u);

  // With three repetitions required, (A B) x2 is not a loop, and (A B) x6 is one loop of period 2, not 4.
  PhaseFinderOptions three{.max_period = 4096, .min_repetitions = 3};
  EXPECT_TRUE(check(rep({1, 2}, 2), three).loops.empty());
  PhaseStructure t = check(rep({1, 2}, 6), three);
  ASSERT_EQ(t.loops.size(), 1u);
  EXPECT_EQ(t.loops[0].body_length, 2u);
}

TEST(PhaseFinder, MaxPeriodBoundsTheBody) {
  Ticks body{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  Ticks ticks = rep(body, 5);
  PhaseStructure short_search = check(ticks, {.max_period = 9, .min_repetitions = 2});
  EXPECT_TRUE(short_search.loops.empty());
  EXPECT_EQ(short_search.phases, std::vector<Ticks>{ticks});
  PhaseStructure exact = check(ticks, {.max_period = 10, .min_repetitions = 2});
  EXPECT_EQ(exact.phases, std::vector<Ticks>{body});
  EXPECT_TRUE(check(ticks, {.max_period = 0, .min_repetitions = 2}).loops.empty());
}

TEST(PhaseFinder, MinRepetitions) {
  PhaseFinderOptions three{.max_period = 4096, .min_repetitions = 3};
  PhaseStructure two = check(cat({{1, 2, 1, 2}, {3}}), three);
  EXPECT_EQ(two.phases.size(), 1u);
  PhaseStructure four = check(cat({rep({1, 2}, 4), {3}}), three);
  EXPECT_EQ(four.phases, (std::vector<Ticks>{{1, 2}, {3}}));
  EXPECT_EQ(four.weights, (std::vector<std::uint64_t>{4, 1}));
  EXPECT_THROW((void)find_phases(Ticks{1, 1}, {.max_period = 4096, .min_repetitions = 1}), InputError);
}

TEST(PhaseFinder, PhaseOrderIsTheRunLengthEncodingOfTheOccurrences) {
  PhaseStructure s = check(cat({{1}, rep({2, 3}, 4), rep({4}, 3), rep({2, 3}, 2), {1}}));
  EXPECT_EQ(runs(s), (Runs{{0, 1}, {1, 4}, {2, 3}, {1, 2}, {0, 1}}));
}

TEST(PhaseFinder, IrregularOuterLoopWithAccidentalRepeats) {
  // An outer loop whose inner loop runs 2 or 3 times: equal neighbouring counts repeat by accident, and those
  // repeats fold into outer loops of their own without changing the phases.
  std::mt19937_64 rng(5);
  Ticks a{1, 2, 3}, g{7, 8};
  Ticks ticks;
  std::uint64_t inner = 0;
  for (int i = 0; i < 120; ++i) {
    std::uint64_t c = 2 + rng() % 2;
    inner += c;
    ticks = cat({ticks, rep(a, c), g});
  }
  PhaseStructure s = check(ticks);
  EXPECT_EQ(s.phases, (std::vector<Ticks>{a, g}));
  EXPECT_EQ(s.weights, (std::vector<std::uint64_t>{inner, 120}));
}

TEST(PhaseFinder, ManyLoopKindsAroundTheMainLoop) {
  // Loops of periods 1..12 before and after a main loop: one fold per period, on both sides of a long stretch.
  Ticks ticks;
  TickSymbol next = 1;
  auto small_loops = [&] {
    for (std::size_t period = 1; period <= 12; ++period) {
      Ticks body(period);
      for (TickSymbol& t : body) t = next++;
      ticks = cat({ticks, rep(body, 2 + period % 3)});
    }
  };
  small_loops();
  Ticks main_body(30);
  for (TickSymbol& t : main_body) t = next++;
  ticks = cat({ticks, rep(main_body, 40)});
  small_loops();
  PhaseStructure s = check(ticks);
  EXPECT_EQ(s.phases.size(), 25u);
  EXPECT_EQ(weight(s, main_body), 40u);
  EXPECT_EQ(s.loops.size(), 25u);
}

// ---- Random loop programs ----

/// Generates random programs: stretches of ticks, loops (possibly nested), and irregular loops whose iterations
/// run an inner loop a varying number of times. Innermost bodies made of fresh symbols are remembered with the
/// number of copies the expansion contains.
class ProgramGenerator {
 public:
  ProgramGenerator(std::uint64_t seed, TickSymbol alphabet) : rng_(seed), alphabet_(alphabet) {}

  Ticks program(int max_depth) {
    unique_bodies_.clear();
    return block(0, max_depth, 1, 1 + pick(5));
  }
  /// (body, expected weight) of every fresh-symbol innermost body in the last program.
  [[nodiscard]] const std::vector<std::pair<Ticks, std::uint64_t>>& unique_bodies() const { return unique_bodies_; }

 private:
  std::uint64_t pick(std::uint64_t n) { return std::uniform_int_distribution<std::uint64_t>(0, n - 1)(rng_); }

  Ticks stretch() {
    Ticks t(1 + pick(3));
    for (TickSymbol& s : t) s = 1 + pick(alphabet_);
    return t;
  }

  /// An innermost body: fresh distinct symbols (recorded) or symbols of the small alphabet.
  Ticks innermost(std::uint64_t copies) {
    if (pick(2) == 0) return stretch();
    Ticks t(1 + pick(5));
    for (TickSymbol& s : t) s = fresh_++;
    unique_bodies_.emplace_back(t, copies);
    return t;
  }

  Ticks block(int depth, int max_depth, std::uint64_t multiplicity, std::uint64_t elements) {
    Ticks out;
    for (std::uint64_t e = 0; e < elements; ++e) {
      std::uint64_t kind = depth < max_depth ? pick(4) : 0;
      if (kind == 0) {
        Ticks t = stretch();
        out.insert(out.end(), t.begin(), t.end());
      } else if (kind == 3 && depth + 1 < max_depth) {
        // Irregular: each iteration runs the inner loop a different number of times, then some glue.
        std::uint64_t iterations = 2 + pick(3);
        std::vector<std::uint64_t> counts(iterations);
        std::uint64_t total = 0;
        for (std::uint64_t& c : counts) total += c = 2 + pick(4);
        Ticks body = innermost(total * multiplicity);
        Ticks glue = stretch();
        for (std::uint64_t c : counts) {
          Ticks t = cat({rep(body, c), glue});
          out.insert(out.end(), t.begin(), t.end());
        }
      } else {
        std::uint64_t count = 2 + pick(4);
        bool inner = depth + 1 < max_depth && pick(2) == 0;
        Ticks body =
            inner ? block(depth + 1, max_depth, multiplicity * count, 1 + pick(3)) : innermost(count * multiplicity);
        Ticks t = rep(body, count);
        out.insert(out.end(), t.begin(), t.end());
      }
    }
    return out;
  }

  std::mt19937_64 rng_;
  TickSymbol alphabet_;
  TickSymbol fresh_ = 1000;
  std::vector<std::pair<Ticks, std::uint64_t>> unique_bodies_;
};

TEST(PhaseFinder, RandomNestedProgramsAreConsistentAndFindTheirInnermostBodies) {
  ProgramGenerator gen(2024, 6);
  int programs = 0;
  int bodies_checked = 0;
  while (programs < 3000) {
    Ticks ticks = gen.program(3);
    if (ticks.size() > 4000) continue;
    ++programs;
    PhaseStructure s = find_phases(ticks);
    expect_consistent(ticks, s);
    for (const auto& [body, copies] : gen.unique_bodies()) {
      // Fresh symbols repeat only with the body's own period, so every copy is an iteration of a loop.
      EXPECT_EQ(weight(s, body), copies) << "program " << programs;
      ++bodies_checked;
    }
    if (testing::Test::HasFailure()) break;
  }
  EXPECT_GT(bodies_checked, 1000);
}

TEST(PhaseFinder, MatchesTheReferenceOnRandomPrograms) {
  // Small alphabets make many accidental repeats, folds that overlap and loops created by folding.
  const std::vector<PhaseFinderOptions> options{
      {.max_period = 4096, .min_repetitions = 2}, {.max_period = 4096, .min_repetitions = 3},
      {.max_period = 3, .min_repetitions = 2},    {.max_period = 6, .min_repetitions = 2},
      {.max_period = 5, .min_repetitions = 3},
  };
  for (std::uint64_t seed = 0; seed < 1500; ++seed) {
    ProgramGenerator gen(seed, 2 + seed % 3);
    Ticks ticks = gen.program(2 + static_cast<int>(seed % 2));
    if (ticks.size() > 250) ticks.resize(250);
    (void)check(ticks, options[seed % options.size()]);
    if (testing::Test::HasFailure()) {
      ADD_FAILURE() << "seed " << seed << ", " << ticks.size() << " ticks";
      break;
    }
  }
}

TEST(PhaseFinder, MatchesTheReferenceOnRandomSequences) {
  std::mt19937_64 rng(99);
  for (int i = 0; i < 1500; ++i) {
    Ticks ticks(std::uniform_int_distribution<std::size_t>(0, 120)(rng));
    TickSymbol alphabet = 1 + i % 4;
    for (TickSymbol& t : ticks) t = 1 + rng() % alphabet;
    (void)check(ticks, {.max_period = 4096, .min_repetitions = 2 + static_cast<std::uint32_t>(i % 2)});
    if (testing::Test::HasFailure()) {
      ADD_FAILURE() << "sequence " << i;
      break;
    }
  }
}

}  // namespace
}  // namespace p3s::analyzer
