// SPDX-License-Identifier: BSD-3-Clause
// The one level at which every run of a series analysed by rank takes its instances (units, the program's
// iterations, or the calls between collectives of all processes): phases cut at two levels have no counterparts.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "p3s/analyzer/analyze.hpp"

namespace p3s::analyzer::detail {

/// Run `run` analysed again by rank at `level`; the signature says by its phase_level whether it could be.
using AnalyzeAt = std::function<Signature(std::size_t run, PhaseLevel level, AnalyzeStats& stats)>;

/// Where every run was analysed by rank, gives them one level: the one most of them took alone (a tie: the
/// coarser), else, where some run cannot take it (not every location has as many instances there), the next level
/// some run took by votes that every run can take; where none can, the most voted where it can be taken. Each run
/// moved says so in its phase_method_note.
void same_level(std::vector<Signature>& sigs, std::vector<AnalyzeStats>& stats, const AnalyzeAt& again);

}  // namespace p3s::analyzer::detail
