// SPDX-License-Identifier: BSD-3-Clause
// Exports of the logical trace: CSV (one row per MPI event) and OTF2 (timestamps = ticks, phase instances as
// regions, so Vampir shows the phases).
#pragma once

#include <filesystem>
#include <vector>

#include "extract.hpp"
#include "p3s/analyzer/signature.hpp"
#include "signature_builder.hpp"

namespace p3s::analyzer {

/// rank,thread,seq,call,action,peer,tag,bytes,tick,phase,instance — written whole to a temporary file first.
void write_logical_csv(const std::filesystem::path& path, const TraceDefinitions& defs, const Extracted& ex,
                       const std::vector<std::filesystem::path>& tick_files, const OccurrenceLabels& labels);

/// An OTF2 archive `dir/traces.otf2` whose time unit is the tick (1000 timer ticks per Lamport tick).
void write_logical_otf2(const std::filesystem::path& dir, const TraceDefinitions& defs, const Extracted& ex,
                        const std::vector<std::filesystem::path>& tick_files, const OccurrenceLabels& labels,
                        const Signature& sig);

}  // namespace p3s::analyzer
