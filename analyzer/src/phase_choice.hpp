// SPDX-License-Identifier: BSD-3-Clause
// Which phases describe a run, where the method or the level is `auto`: the run's ticks folded, or each rank's calls
// (their units, or the calls between the collectives of all processes), whichever describes the run clearly more
// briefly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "p3s/analyzer/analyze.hpp"
#include "rank_phases.hpp"
#include "run_phases.hpp"

namespace p3s::analyzer {

/// How briefly phases describe the run: the repeated phases, each once, the stretches of phases that occur once
/// (the set-up's pieces, the run's end, which the two methods cut into different numbers of pieces), and the
/// order folded into loops as the ticks are (a stretch's items each, a loop one item, each loop body's items
/// once), so that an iteration of two alternating phases costs as much as one phase per iteration; at the
/// program's level and where `kinds_as_one`, the time step's kinds (RunPhases::step_kind) as one phase, which kind a
/// step is being the run's data. SIZE_MAX where no phase repeats.
[[nodiscard]] std::size_t description_length(const RunPhases& rp, bool kinds_as_one = true);

/// The run's phases by the method asked for. `auto` finds them both ways and keeps the by-rank phases where they
/// describe the run clearly more briefly: a pipeline, or steps whose ranks drift apart, cut the run's ticks into
/// many phases of fill and drain that the ranks' own loops do not have; and where the units do not, the calls
/// between the collectives of all processes where those do (steps whose computation is too brief to tell from
/// the machine's delays). Otherwise the run's ticks decide: their phases do not depend on which bursts the
/// machine's load made look like computation. Where the ticks already describe the run so briefly that nothing
/// could be twice as brief, the calls are never read by rank. `symbols` and `syncs`: the run's tick sequence and
/// where every process meets in it; `read_calls`: every location's calls.
[[nodiscard]] RunPhases find_run_phases(const std::vector<TickSymbol>& symbols, const std::vector<std::uint8_t>& syncs,
                                        const std::function<std::vector<CallSequence>()>& read_calls,
                                        const AnalyzeOptions& options);

}  // namespace p3s::analyzer
