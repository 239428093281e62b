// SPDX-License-Identifier: BSD-3-Clause
// Phase finder throughput (ticks per second) on the tick sequences the analyzer meets: long loops, no loops,
// nested loops, loops with irregular inner counts, many kinds of loops, and random symbols over a small alphabet.
#include "p3s/analyzer/phase_finder.hpp"

#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

namespace {

using p3s::analyzer::TickSymbol;
using Ticks = std::vector<TickSymbol>;

void append(Ticks& out, const Ticks& block, std::size_t times) {
  for (std::size_t i = 0; i < times; ++i) out.insert(out.end(), block.begin(), block.end());
}

Ticks distinct(TickSymbol first, std::size_t length) {
  Ticks t(length);
  for (std::size_t i = 0; i < length; ++i) t[i] = first + i;
  return t;
}

/// One loop with a body of `period` distinct ticks, repeated up to `n` ticks.
Ticks loop(std::size_t n, std::size_t period) {
  Ticks out;
  out.reserve(n);
  append(out, distinct(1, period), n / period);
  return out;
}

/// `n` random 64-bit symbols: no repetition at all.
Ticks random_symbols(std::size_t n, std::uint64_t alphabet) {
  std::mt19937_64 rng(12345);
  Ticks out(n);
  for (TickSymbol& t : out) t = alphabet == 0 ? rng() : 1 + rng() % alphabet;
  return out;
}

/// Three levels: ((inner x8, 3 glue) x6, 5 glue) x N; the inner body has 4 ticks; 215 ticks per outer iteration.
Ticks nested(std::size_t n) {
  Ticks middle;
  append(middle, distinct(1, 4), 8);
  append(middle, distinct(100, 3), 1);
  Ticks outer;
  append(outer, middle, 6);
  append(outer, distinct(200, 5), 1);
  Ticks out;
  out.reserve(n);
  append(out, distinct(300, 7), 1);  // initialisation
  append(out, outer, n / outer.size());
  return out;
}

/// An outer loop whose inner loop runs a varying number of times (a convergence loop): the outer loop never
/// folds, so the folded sequence keeps one inner loop and one glue stretch per outer iteration.
Ticks irregular(std::size_t n) {
  std::mt19937_64 rng(7);
  Ticks inner = distinct(1, 6), glue = distinct(100, 4);
  Ticks out;
  out.reserve(n + 64);
  while (out.size() < n) {
    append(out, inner, 3 + rng() % 7);
    append(out, glue, 1);
  }
  return out;
}

/// An initialisation with 300 short loops of periods 1..300 (3 iterations each), then a main loop of period 500:
/// the search folds at 300 different periods before it reaches the main loop, which must not be moved each time.
Ticks many_loop_kinds(std::size_t n) {
  Ticks out;
  out.reserve(n);
  TickSymbol next = 1;
  for (std::size_t period = 1; period <= 300; ++period) {
    append(out, distinct(next, period), 3);
    next += period;
  }
  append(out, distinct(next, 500), (n - out.size()) / 500);
  return out;
}

void run(benchmark::State& state, const Ticks& ticks) {
  std::size_t phases = 0;
  for (auto _ : state) {
    p3s::analyzer::PhaseStructure s = p3s::analyzer::find_phases(ticks);
    phases = s.phases.size();
    benchmark::DoNotOptimize(s.occurrences.data());
  }
  state.counters["ticks"] = static_cast<double>(ticks.size());
  state.counters["phases"] = static_cast<double>(phases);
  state.counters["ticks/s"] =
      benchmark::Counter(static_cast<double>(ticks.size()), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Loop(benchmark::State& state) {
  static const Ticks ticks = loop(10'000'000, 50);
  run(state, ticks);
}
void BM_RandomDistinct(benchmark::State& state) {
  static const Ticks ticks = random_symbols(1'000'000, 0);
  run(state, ticks);
}
void BM_Nested3(benchmark::State& state) {
  static const Ticks ticks = nested(10'000'000);
  run(state, ticks);
}
void BM_IrregularInner(benchmark::State& state) {
  static const Ticks ticks = irregular(10'000'000);
  run(state, ticks);
}
void BM_ManyLoopKinds(benchmark::State& state) {
  static const Ticks ticks = many_loop_kinds(10'000'000);
  run(state, ticks);
}
void BM_RandomSmallAlphabet(benchmark::State& state) {
  const Ticks ticks = random_symbols(static_cast<std::size_t>(state.range(0)), 8);
  run(state, ticks);
}

BENCHMARK(BM_Loop)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_RandomDistinct)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Nested3)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_IrregularInner)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ManyLoopKinds)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_RandomSmallAlphabet)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
