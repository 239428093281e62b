// SPDX-License-Identifier: BSD-3-Clause
// Writing a prediction at n as the LT4NC (share/doc/lt4nc-format.md): checked phase by phase first, then streamed
// rank by rank.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>

#include "p3s/modeler/model.hpp"
#include "p3s/modeler/phase_check.hpp"

namespace p3s::modeler {

/// Version 3 adds each collective's `block`, each communicator's `param`, the `kind` (lt4nc or st4np) and the rank
/// index; a tail is written wherever its work or its time is not zero. Version 4 is checked for consistency before
/// it is written (`consistency`, each phase's `repair`) and names wildcard receives. Readers refuse a later version.
inline constexpr int kLt4ncSchemaVersion = 4;
/// The first version that can be an ST4NP (`kind` st4np: burst times a replay runs).
inline constexpr int kFirstSt4npSchemaVersion = 3;
/// The first version checked for consistency before it was written: an earlier trace could hang a replay.
inline constexpr int kFirstCheckedLt4ncSchemaVersion = 4;

/// Writes the LT4NC for n ranks into dir: lt4nc.json (provenance, phases with weights and the phase order),
/// ranks.jsonl (one line per rank and phase with its calls, streamed) and ranks.index (where each rank's lines
/// begin, so that a replay rank reads its own). Written under temporary names and renamed, the header last.
/// `executable`: the ST4NP, which needs every burst's predicted duration (`kind` st4np). Every phase is checked first
/// (check_prediction), before anything is written; a phase repaired under OnInconsistency::Repair is written
/// repaired, and the header says what the repair changed. Returns the check.
/// @throws p3s::InputError when `executable` and the model has no compute-time laws; p3s::TraceError when a phase is
/// inconsistent and `policy` is Refuse; p3s::Error when the directory cannot be written, or its disk has no room for
/// the trace's estimated size. `announce`, when given, hears that estimate (bytes) before anything is written.
PredictionCheck write_lt4nc(const Model& model, std::int64_t n, const std::filesystem::path& dir,
                            bool executable = false, OnInconsistency policy = OnInconsistency::Refuse,
                            const std::function<void(double)>& announce = {});

}  // namespace p3s::modeler
