// SPDX-License-Identifier: BSD-3-Clause
#include "run_phases.hpp"

#include <algorithm>
#include <array>
#include <unordered_map>

#include "main_loop.hpp"
#include "p3s/hash.hpp"

#include "p3s/stable_name.hpp"

namespace p3s::analyzer {
namespace {

const std::vector<std::uint64_t> kNoStarts;

}  // namespace

constexpr NameTable<PhaseMethod, 3> kPhaseMethodNames{
    {{{PhaseMethod::GlobalTicks, "global-ticks"}, {PhaseMethod::ByRank, "by-rank"}, {PhaseMethod::Auto, "auto"}}}};

std::string_view phase_method_name(PhaseMethod m) noexcept { return kPhaseMethodNames.name(m, "global-ticks"); }

std::optional<PhaseMethod> phase_method_named(std::string_view name) noexcept { return kPhaseMethodNames.value(name); }

constexpr NameTable<PhaseLevel, 3> kPhaseLevelNames{{{{PhaseLevel::Units, "units"},
                                                      {PhaseLevel::Outermost, "outermost-loops"},
                                                      {PhaseLevel::Collectives, "collectives"}}}};

std::string_view phase_level_name(PhaseLevel l) noexcept { return kPhaseLevelNames.name(l, "units"); }

std::optional<PhaseLevel> phase_level_named(std::string_view name) noexcept { return kPhaseLevelNames.value(name); }

std::vector<std::uint64_t> phase_weights(const RunPhases& phases) {
  std::vector<std::uint64_t> weight(phases.phase_count, 0);
  for (const std::uint32_t p : phases.occurrence_phase) ++weight[p];
  return weight;
}

RunPhases run_phases_from_ticks(const PhaseStructure& structure) {
  RunPhases out;
  out.method = PhaseMethod::GlobalTicks;
  out.phase_count = static_cast<std::uint32_t>(structure.phases.size());
  for (const PhaseOccurrence& o : structure.occurrences) {
    out.occurrence_phase.push_back(o.phase);
    out.first_tick.push_back(o.first_tick + 1);
    out.occurrence_ticks.push_back(o.ticks);
  }
  return out;
}

RunPhases run_phases_at_top(const PhaseStructure& structure, std::span<const TickSymbol> symbols,
                            std::span<const std::uint8_t> syncs) {
  RunPhases out;
  out.method = PhaseMethod::GlobalTicks;
  out.level = PhaseLevel::Outermost;
  std::unordered_map<std::uint64_t, std::uint32_t> ids;  // the hash of an occurrence's ticks -> its phase
  std::vector<Piece> pieces = main_loop_pieces(symbols, structure, after_syncs(syncs));
  if (pieces.empty()) pieces.push_back({0, symbols.size(), false});
  for (const Piece& piece : pieces) {
    const std::uint64_t ticks = piece.end - piece.begin;
    std::uint64_t h = mix64(ticks);
    for (std::uint64_t t = piece.begin; t < piece.end; ++t) h = mix64(h ^ symbols[t]);
    const auto [it, added] = ids.emplace(h, out.phase_count);
    if (added) ++out.phase_count;
    out.occurrence_phase.push_back(it->second);
    out.first_tick.push_back(piece.begin + 1);
    out.occurrence_ticks.push_back(ticks);
  }
  return out;
}

OccurrenceLocator::OccurrenceLocator(const RunPhases& phases, std::size_t location) noexcept
    : starts_(!phases.first_op.empty() ? (location < phases.first_op.size() ? phases.first_op[location] : kNoStarts)
                                       : phases.first_tick),
      by_op_(!phases.first_op.empty()) {}

std::size_t OccurrenceLocator::at(std::uint64_t op_index, std::uint64_t op_tick) noexcept {
  if (starts_.empty()) return 0;
  const std::uint64_t key = by_op_ ? op_index : op_tick;
  // Keys of one location only grow: walk forward from the last answer, and search only when far away.
  if (starts_[current_] > key) current_ = 0;
  for (int step = 0; step < 8 && current_ + 1 < starts_.size() && starts_[current_ + 1] <= key; ++step) ++current_;
  if (current_ + 1 < starts_.size() && starts_[current_ + 1] <= key) {
    current_ = static_cast<std::size_t>(std::upper_bound(starts_.begin(), starts_.end(), key) - starts_.begin()) - 1;
  }
  return current_;
}

}  // namespace p3s::analyzer
