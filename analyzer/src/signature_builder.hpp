// SPDX-License-Identifier: BSD-3-Clause
// Pass 3 of the analysis: the phase occurrences found on the tick sequence, applied to every location's
// operations, give phase times, the representative per-rank event lists (SiPT) and the phase order.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "extract.hpp"
#include "op_log.hpp"
#include "p3s/analyzer/phase_finder.hpp"
#include "p3s/analyzer/signature.hpp"
#include "tick_log.hpp"

namespace p3s::analyzer {

/// The final phase of every occurrence and its instance number within the phase, for exports.
struct OccurrenceLabels {
  std::vector<std::uint32_t> phase;
  std::vector<std::uint64_t> instance;
  std::vector<std::uint64_t> first_tick;  ///< first tick (1-based) of each occurrence, for lookups
};

/// Fills `sig.phases`, `sig.order`, times and coverage from the occurrences (ticks indexed from 0 = tick 1).
/// Instances of one structural phase whose total work differs by more than 1 - work_similarity become
/// separate phases; each phase's bursts at instance boundaries are attributed to the side they resemble.
OccurrenceLabels build_signature(const TraceDefinitions& defs, const Extracted& extracted,
                                 const std::vector<std::filesystem::path>& tick_files, const PhaseStructure& phases,
                                 Signature& sig);

/// Index of the occurrence holding `tick` (1-based), given occurrences' first ticks in increasing order.
[[nodiscard]] std::size_t occurrence_of(const std::vector<std::uint64_t>& first_tick, std::uint64_t tick,
                                        std::size_t hint) noexcept;

/// Reads a location's operations in order together with their ticks (from the Lamport pass's tick file) and
/// the occurrence each belongs to.
class OpSweep {
 public:
  OpSweep(const ExtractedLocation& l, const std::filesystem::path& ticks, const std::vector<std::uint64_t>& first_tick)
      : ops_(l.ops), ticks_(ticks), first_tick_(first_tick) {}
  bool next() {
    if (!ops_.next(op)) return false;
    ticks_.next(op.actions.size(), op_tick, action_ticks);
    occurrence = occurrence_of(first_tick_, op_tick, occurrence == kNoOccurrence ? 0 : occurrence);
    return true;
  }
  static constexpr std::size_t kNoOccurrence = static_cast<std::size_t>(-1);
  Op op;
  std::uint64_t op_tick = 0;
  std::vector<std::uint64_t> action_ticks;
  std::size_t occurrence = kNoOccurrence;  ///< before the first next()

 private:
  OpReader ops_;
  TickReader ticks_;
  const std::vector<std::uint64_t>& first_tick_;
};

}  // namespace p3s::analyzer
