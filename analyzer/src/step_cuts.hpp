// SPDX-License-Identifier: BSD-3-Clause
// A run of time steps that differ by their data, cut into the steps: the calls between two points where all ranks
// meet may hold several steps (an MD code checks whether to re-neighbour only every few steps, so the steps after a
// re-neighbouring hold no collective), and a step that re-neighbours or writes output makes other calls than the
// plain step. Each is still one step of the code: the program's time step is the phase, these its kinds.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

namespace p3s::analyzer {

/// Where `calls` are copies of the step `body` that differ by data: the offset at which each copy begins (the
/// first is 0), from the alignment of `calls` to one copy of `body` after another that leaves out the fewest calls
/// on either side (calls the copies do not hold, and calls of the body a copy does not make, count alike). A copy
/// is worth its place only where it makes more than half of the body's calls in their order, so the alignment finds
/// as many copies as the calls hold steps. Calls before the first copy's are its own (a step that re-neighbours
/// exchanges atoms first); calls between two copies end the first (output written at a step's end), so that where
/// the calls cannot tell two exchanges of a step apart (one neighbour at two ranks, the forward and the reverse
/// exchange alike) the extra exchanges of a step stay in it. Nothing where a copy makes at most half of the body's
/// calls (set-up, output that is no step), or where aligning would take more than `most_cells` cells.
[[nodiscard]] std::optional<std::vector<std::uint64_t>> step_cuts(std::span<const std::uint64_t> calls,
                                                                  std::span<const std::uint64_t> body,
                                                                  std::uint64_t most_cells = 1u << 22);

/// One location's occurrences as time steps: per occurrence (occurrence k spans calls [first[k], first[k + 1]), the
/// last up to `end`), the calls where each of its steps begins (step_cuts on `shape` of its calls), or nothing where
/// it is no step. The step is the body of the location's main repeat: among its phases (`phase[k]`: occurrence k's)
/// that hold at least a quarter as many calls as the one holding the most, the one that occurs most often, at least
/// twice (the step, not a longer stretch of steps that repeats too). An occurrence of the body is one step, and so
/// is one of a phase that occurs at least three times and makes more than half of the body's calls in their order,
/// whatever calls of its own it adds: the set-up occurs once. Where `partial` is given, it tells per occurrence
/// whether it is no step but a repeat (three times or more) whose calls are all the body's, in their order, fewer:
/// a step that skips what this location had no data for, which is one where another location makes the step.
///
/// Where `rest` is given, an occurrence of a phase that occurs once (the set-up, the calls between two runs, the
/// finish) that begins or ends with steps the location makes elsewhere, call for call (the body, or a repeat that is
/// one step), is those steps and the rest: the set-up's last steps, before the data moves, whose sizes differ from
/// every later step's; the last step of a run, before the next run's set-up. Its pieces begin where each of them
/// does, and `rest` tells per occurrence which piece is the rest (1 for the first; 0 where none is cut so).
[[nodiscard]] std::vector<std::vector<std::uint64_t>> location_steps(
    std::span<const std::uint64_t> phase, std::span<const std::uint64_t> first, std::uint64_t end,
    const std::function<std::uint64_t(std::uint64_t)>& shape, std::vector<std::uint8_t>* partial = nullptr,
    std::vector<std::uint64_t>* rest = nullptr);

}  // namespace p3s::analyzer
