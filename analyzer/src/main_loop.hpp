// SPDX-License-Identifier: BSD-3-Clause
// The program's iterations in a folded sequence (the run's ticks, or one location's calls): the iterations of its
// main loops, wherever else their body runs whole, and the stretches between them. This is the level at which a
// time step is one phase whatever its inner loops: a pipeline's stages, a multi-partition sweep's q - 1 steps, a
// multigrid's levels, whose trip counts follow the process count.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "p3s/analyzer/phase_finder.hpp"

namespace p3s::analyzer {

/// Items [begin, end) of a sequence: one iteration of a main loop, or the stretch between iterations.
struct Piece {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  bool iteration = false;
};

/// The start of the least rotation of `body` (Booth's algorithm, O(length)): rotations of one body have the
/// same least rotation.
[[nodiscard]] std::size_t least_rotation(std::span<const std::uint64_t> body);

/// Where a main loop's iterations begin, among the places that give it the most whole iterations: the cost of an
/// iteration that spans items [begin, end) (the lowest wins; ties: the earliest).
using StartCost = std::function<double(std::uint64_t begin, std::uint64_t end)>;

/// The pieces of `symbols`, folded into `structure` (find_phases on the same symbols), in order; together they
/// cover the sequence. A main loop is an outermost loop holding at least a quarter as many items as the largest
/// one (loops whose bodies are rotations of one another count together, as the loop a different iteration
/// interrupts). A main body begins where its largest loop, extended over the items around it that continue its
/// period, holds the most whole iterations, at the start of least `cost` among those; every place it occurs whole
/// is an iteration (its loops, a warm-up iteration before the set-up's end, one after an iteration that differs).
/// Everything else, set-up loops included, is stretches. Empty when no outermost loop exists.
[[nodiscard]] std::vector<Piece> main_loop_pieces(std::span<const std::uint64_t> symbols,
                                                  const PhaseStructure& structure, const StartCost& cost);

/// A start cost that prefers an iteration ending with an item where all processes meet (`syncs[i]` non-zero: a
/// collective of all of them), as a convergence test or a residual norm closes a time step.
[[nodiscard]] StartCost after_syncs(std::span<const std::uint8_t> syncs);

}  // namespace p3s::analyzer
