// SPDX-License-Identifier: BSD-3-Clause
// Pass 3 of the analysis: the phase occurrences found on the tick sequence, applied to every location's
// operations, give phase times, the representative per-rank event lists (SiPT) and the phase order.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "extract.hpp"
#include "op_log.hpp"
#include "p3s/analyzer/signature.hpp"
#include "run_phases.hpp"
#include "tick_log.hpp"

namespace p3s::analyzer {

/// The final phase of every occurrence and its instance number within the phase, for exports.
struct OccurrenceLabels {
  const RunPhases* occurrences = nullptr;  ///< which operations belong to which occurrence
  std::vector<std::uint32_t> phase;
  std::vector<std::uint64_t> instance;
};

/// Fills `sig.phases`, `sig.order`, times and coverage from the occurrences.
/// Instances of one structural phase whose total work differs by more than 1 - work_similarity become
/// separate phases; each phase's bursts at instance boundaries are attributed to the side they resemble.
OccurrenceLabels build_signature(const TraceDefinitions& defs, const Extracted& extracted,
                                 const std::vector<std::filesystem::path>& tick_files, const RunPhases& phases,
                                 Signature& sig);

/// Reads a location's operations in order together with their ticks (from the Lamport pass's tick file) and
/// the occurrence each belongs to.
class OpSweep {
 public:
  OpSweep(const ExtractedLocation& l, std::size_t location, const std::filesystem::path& ticks, const RunPhases& phases)
      : ops_(l.ops), ticks_(ticks), locator_(phases, location) {}
  bool next() {
    if (!ops_.next(op)) return false;
    ticks_.next(op.actions.size(), op_tick, action_ticks);
    index = occurrence == kNoOccurrence ? 0 : index + 1;
    occurrence = locator_.at(index, op_tick);
    return true;
  }
  static constexpr std::size_t kNoOccurrence = static_cast<std::size_t>(-1);
  Op op;
  std::uint64_t index = 0;  ///< of the operation in its location
  std::uint64_t op_tick = 0;
  std::vector<std::uint64_t> action_ticks;
  std::size_t occurrence = kNoOccurrence;  ///< before the first next()

 private:
  OpReader ops_;
  TickReader ticks_;
  OccurrenceLocator locator_;
};

}  // namespace p3s::analyzer
