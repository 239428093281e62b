// SPDX-License-Identifier: BSD-3-Clause
// Exports of the logical trace: CSV (one row per MPI event) and OTF2 (timestamps = ticks, phase instances as
// regions, so Vampir shows the phases).
#pragma once

#include <filesystem>
#include <span>
#include <vector>

#include "extract.hpp"
#include "op_log.hpp"
#include "p3s/analyzer/signature.hpp"
#include "signature_builder.hpp"
#include "tick_log.hpp"

namespace p3s::analyzer {

/// Calls f(op, op_tick, action_ticks, occurrence) for every operation of one location, in order, with its
/// ticks (from the Lamport pass's tick file) and the phase occurrence it belongs to (an index into `labels`).
template <class F>
void walk_logical(const ExtractedLocation& loc, const std::filesystem::path& tick_file, const OccurrenceLabels& labels,
                  F&& f) {
  OpReader ops(loc.ops);
  TickReader ticks(tick_file);
  Op op;
  std::uint64_t op_tick = 0;
  std::vector<std::uint64_t> action_ticks;
  std::size_t occ = 0;
  while (ops.next(op)) {
    ticks.next(op.actions.size(), op_tick, action_ticks);
    occ = occurrence_of(labels.first_tick, op_tick, occ);
    f(op, op_tick, std::span<const std::uint64_t>(action_ticks), occ);
  }
}

/// rank,thread,seq,call,action,peer,tag,bytes,tick,phase,instance — written whole to a temporary file first.
void write_logical_csv(const std::filesystem::path& path, const TraceDefinitions& defs, const Extracted& ex,
                       const std::vector<std::filesystem::path>& tick_files, const OccurrenceLabels& labels);

/// An OTF2 archive `dir/traces.otf2` whose time unit is the tick (1000 timer ticks per Lamport tick).
void write_logical_otf2(const std::filesystem::path& dir, const TraceDefinitions& defs, const Extracted& ex,
                        const std::vector<std::filesystem::path>& tick_files, const OccurrenceLabels& labels,
                        const Signature& sig);

}  // namespace p3s::analyzer
