// SPDX-License-Identifier: BSD-3-Clause
#include "phase_choice.hpp"

#include <cstdint>
#include <optional>
#include <string>

#include "p3s/analyzer/phase_finder.hpp"
#include "p3s/error.hpp"

namespace p3s::analyzer {
namespace {

/// How many times briefer the by-rank phases must describe a run for `auto` to keep them.
constexpr std::size_t kClearlyBriefer = 2;

/// The shortest description of a run by by-rank phases: every location's calls begin with MPI_Init, which no later
/// call repeats, so they begin with a one-off stretch (2 items: itself and its place in the order), then at least
/// one repeated phase (1) in a loop (its count and its body: 2).
constexpr std::size_t kBriefestByRank = 5;

/// The least share of a location's calls that the phases of a level that repeat must hold.
constexpr double kRepeatedShare = 0.5;

/// The share of the first location's calls (of `sizes` calls per location) in occurrences of phases that repeat, by
/// the by-rank phases' first operations.
double repeated_share(const RunPhases& rp, const std::vector<std::uint64_t>& sizes) {
  const std::vector<std::uint64_t> weight = phase_weights(rp);
  for (std::size_t l = 0; l < rp.first_op.size() && l < sizes.size(); ++l) {
    const std::vector<std::uint64_t>& first = rp.first_op[l];
    if (first.empty() || sizes[l] == 0) continue;
    std::uint64_t repeated = 0;
    for (std::size_t k = 0; k < first.size(); ++k) {
      const std::uint64_t end = k + 1 < first.size() ? first[k + 1] : sizes[l];
      if (weight[rp.occurrence_phase[k]] > 1) repeated += end - first[k];
    }
    return static_cast<double>(repeated) / static_cast<double>(sizes[l]);
  }
  return 0;
}

}  // namespace

std::size_t description_length(const RunPhases& rp, bool kinds_as_one) {
  // The time step's kinds at the program's level are one phase of the description: which kind a step is follows the
  // run's data. (Units are never cut into steps; their description stays what it was.)
  std::vector<std::uint32_t> phase_of(rp.phase_count);
  std::uint32_t step = rp.phase_count;
  for (std::uint32_t p = 0; p < rp.phase_count; ++p) {
    const bool kind = kinds_as_one && rp.level != PhaseLevel::Units && p < rp.step_kind.size() && rp.step_kind[p] != 0;
    if (kind && step == rp.phase_count) step = p;
    phase_of[p] = kind ? step : p;
  }
  std::vector<std::uint64_t> weight(rp.phase_count, 0);
  for (const std::uint32_t p : rp.occurrence_phase) ++weight[phase_of[p]];
  std::size_t repeated = 0;
  for (const std::uint64_t w : weight) repeated += w > 1 ? 1 : 0;
  // Phases that do not repeat describe nothing of the run's structure.
  if (repeated == 0) return SIZE_MAX;
  std::vector<TickSymbol> order;  // a repeated phase p as p + 1; a stretch of one-off phases as a symbol of its own
  std::size_t one_off_stretches = 0;
  for (std::size_t k = 0; k < rp.occurrence_phase.size(); ++k) {
    const std::uint32_t p = phase_of[rp.occurrence_phase[k]];
    const bool one_off = weight[p] == 1;
    if (one_off && k > 0 && weight[phase_of[rp.occurrence_phase[k - 1]]] == 1) continue;
    one_off_stretches += one_off ? 1 : 0;
    order.push_back(one_off ? (TickSymbol{1} << 63 | k) : TickSymbol{p} + 1);
  }
  const PhaseStructure folded = find_phases(order);
  std::size_t items = 0;
  for (const TopItem& t : folded.top) items += t.count == 0 ? t.ticks : 1;
  for (const LoopInfo& l : folded.loops) items += l.body_length;
  return repeated + one_off_stretches + items;
}

RunPhases find_run_phases(const std::vector<TickSymbol>& symbols, const std::vector<std::uint8_t>& syncs,
                          const std::function<std::vector<CallSequence>()>& read_calls, const AnalyzeOptions& options) {
  PhaseFinderOptions pf;
  pf.max_period = options.max_period;
  const PhaseMethod asked = options.signature.phase_method;
  std::string why_not;
  if (asked == PhaseMethod::ByRank) {
    std::optional<RunPhases> by_rank =
        phases_by_rank(read_calls(), pf, why_not, options.signature.phase_level, options.signature.without_sizes);
    if (!by_rank) throw InputError("the phases cannot be found rank by rank: " + why_not);
    return std::move(*by_rank);
  }
  const PhaseStructure structure = find_phases(symbols, pf);
  if (asked == PhaseMethod::GlobalTicks && options.signature.phase_level == PhaseLevel::Outermost) {
    return run_phases_at_top(structure, symbols, syncs);
  }
  RunPhases global = run_phases_from_ticks(structure);
  if (asked == PhaseMethod::GlobalTicks) return global;
  const std::size_t global_length = description_length(global);
  if (global_length <= kClearlyBriefer * kBriefestByRank) {
    global.method_note = "the run's ticks take " + std::to_string(global_length) +
                         " items: no by-rank phases could describe it twice as briefly";
    return global;
  }
  std::optional<RunPhases> by_rank = phases_by_rank(read_calls(), pf, why_not);
  if (!by_rank) {
    global.method_note = "not found by rank: " + why_not;
    return global;
  }
  const std::size_t rank_length = description_length(*by_rank);
  const auto length_name = [](std::size_t length) {
    return length == SIZE_MAX ? std::string("no repeated phase") : std::to_string(length) + " items";
  };
  const std::string lengths =
      " (" + length_name(rank_length) + " by rank, " + length_name(global_length) + " by the run's ticks)";
  if (rank_length < SIZE_MAX && kClearlyBriefer * rank_length < global_length) {
    by_rank->method_note += (by_rank->method_note.empty() ? "" : "; ") + std::string("clearly briefer") + lengths;
    return std::move(*by_rank);
  }
  // Steps whose computation is too brief to tell from the machine's delays (a small system on many ranks) have no
  // units of their own, and their kinds follow the data in an order no loop folds; the points where all processes
  // meet still end each step alike on every rank.
  // They describe the steps only where most calls are in phases that repeat: a code whose collectives of everyone
  // are all in its set-up would be one instance of its whole time loop, as brief as it is useless.
  if (by_rank->level != PhaseLevel::Collectives) {
    std::vector<CallSequence> calls = read_calls();
    std::vector<std::uint64_t> sizes;
    for (const CallSequence& c : calls) sizes.push_back(c.shapes().size());
    std::optional<RunPhases> coarse = phases_by_rank(std::move(calls), pf, why_not, PhaseLevel::Collectives);
    // Judged on its phases, its kinds apart: as one phase, the kinds of a step would make the calls between any
    // code's collectives brief, its whole loop one step, and the units are then the finer description.
    const std::size_t coarse_length = coarse ? description_length(*coarse, false) : SIZE_MAX;
    if (coarse && coarse->level == PhaseLevel::Collectives && coarse_length < rank_length &&
        kClearlyBriefer * coarse_length < global_length && repeated_share(*coarse, sizes) > kRepeatedShare) {
      coarse->method_note = "the calls between collectives of all processes: clearly briefer (" +
                            length_name(coarse_length) + " so, " + length_name(rank_length) + " by rank's units, " +
                            length_name(global_length) + " by the run's ticks)";
      return std::move(*coarse);
    }
  }
  global.method_note = "by rank not clearly briefer" + lengths;
  return global;
}

}  // namespace p3s::analyzer
