// SPDX-License-Identifier: BSD-3-Clause
// A phase's grid: the peers of each of its point-to-point groups learnt as patterns, each in the grid frame (and the
// box an application cuts) that the phase's other groups use, where that describes it no less briefly.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "p3s/modeler/pattern.hpp"
#include "p3s/modeler/series.hpp"
#include "rank_data.hpp"

namespace p3s::modeler::detail {

/// A grid frame and the box that cuts its grid (all 0: MPI_Dims_create's).
using PhaseBox = std::pair<Frame, std::array<std::int64_t, 3>>;

/// The grids an application may cut for a box, as the peers of all a phase's point-to-point calls show them rank by
/// rank at each n (one group's alone leave the grid open: steps along z at 16 and 32 ranks only); the same for every
/// alignment of the phase's calls, so found once per phase.
[[nodiscard]] std::vector<PhaseBox> phase_boxes(std::span<const Run> runs, const RelatedPhase& rel);

/// A point-to-point group's peers as a pattern, or why none reproduces them.
struct LearntPeers {
  std::optional<Pattern> pattern;
  std::string why;
};

/// The peers of every point-to-point group of a shape, each group's in the frame the phase's other groups use most
/// where another frame describes it no more briefly (at 4 to 32 ranks a 3-D grid's exchange along x is also a
/// constant step on the 2-D grid, 2x2x1 .. 4x4x2 against 2x2 .. 8x4, but not at 64, 4x4x4 against 8x8), or where
/// that frame has constant labels for it and the other only laws in n (its steps along z, which a side of 1
/// leaves out at 2x2x1, are also a repetition counted in dims3(n)[2] on a 2-D grid).
[[nodiscard]] std::vector<LearntPeers> learn_phase_peers(const std::vector<RankData>& ranks, const Shape& shape,
                                                         const std::vector<std::optional<ExactLaw>>& iterations,
                                                         std::span<const PhaseBox> boxes, const SearchOptions& search,
                                                         const WholeAt& whole);

}  // namespace p3s::modeler::detail
