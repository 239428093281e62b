// SPDX-License-Identifier: BSD-3-Clause
// Phase detection on the logical trace: the sequence of tick symbols is compressed into loops, and the
// innermost repeating units (and the non-repeating stretches between them) become the run's phases.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace p3s::analyzer {

/// One tick of the logical trace reduced to a symbol: equal symbols mean "the same events on the same ranks".
using TickSymbol = std::uint64_t;

/// Limits of the search.
struct PhaseFinderOptions {
  /// Longest loop body (in ticks, after inner loops were folded into one symbol each) that is searched for.
  std::uint32_t max_period = 4096;
  /// Fewest consecutive repetitions that make a loop; must be at least 2.
  std::uint32_t min_repetitions = 2;
};

/// A loop found in the sequence: `body` repeated `count` times (body items are ticks or inner loops).
struct LoopInfo {
  std::uint32_t id = 0;
  std::uint64_t count = 0;        ///< consecutive repetitions at one place
  std::uint32_t body_length = 0;  ///< items in the body (inner loops count as one)
  std::uint32_t depth = 0;        ///< 0 for loops containing no loop
  std::uint64_t ticks = 0;        ///< ticks of one instance (all `count` iterations, inner loops expanded)
  std::uint64_t instances = 0;    ///< instances of this loop in the whole run (a nested loop: once per outer iteration)
  bool flattened = false;         ///< read as part of the stretch around it (see find_phases with anchors)
};

/// One occurrence of a phase: a contiguous range of ticks (indices into the input sequence).
struct PhaseOccurrence {
  std::uint32_t phase = 0;
  std::uint64_t first_tick = 0;
  std::uint64_t ticks = 0;
};

/// One item of the folded sequence's top level: a stretch between loops, or an outermost loop instance.
struct TopItem {
  std::uint64_t first_tick = 0;
  std::uint64_t ticks = 0;
  std::uint64_t count = 0;  ///< the loop's iterations (each ticks / count long); 0 for a stretch between loops
};

/// The phases of a run.
struct PhaseStructure {
  /// Phase id -> its tick symbols (one instance). Identical stretches anywhere in the run are one phase.
  std::vector<std::vector<TickSymbol>> phases;
  /// Phase id -> number of occurrences in the run (its weight).
  std::vector<std::uint64_t> weights;
  /// Every occurrence in run order. Together they cover [0, n) exactly, without gaps or overlaps.
  std::vector<PhaseOccurrence> occurrences;
  /// The loops found (for reports), innermost first; `LoopInfo::id` is the index in this list.
  std::vector<LoopInfo> loops;
  /// The top level in run order: the outermost loops and the stretches between them; they cover [0, n).
  std::vector<TopItem> top;
};

/// Finds the phases of a tick sequence. Deterministic. Memory and time grow with the sequence length and
/// the length of the loop bodies, not with the number of repetitions of an already folded loop.
///
/// Definition of the result:
/// - loops are found innermost first (shortest period first, leftmost occurrence first); a loop's body that
///   contains no inner loop is one phase (an iteration of the innermost loop). A loop's identity is its body and
///   its count, so an outer loop folds only where its inner loops repeat the same number of times. The body starts
///   where the repetition starts: in `X B C A B C A B C` the loop is `(B C A) x 2` followed by the phase `B C`;
/// - a body is never itself a repetition of a shorter block: `A B A B` is `(A B) x 2`, not a loop of period 4;
/// - inside a body that contains inner loops, and at the top level, each maximal stretch of ticks between
///   loops is one phase (the "glue" of an outer iteration, or a non-repeating part such as initialisation);
/// - two stretches with identical symbols are the same phase wherever they occur; a phase's weight is its
///   number of occurrences in the whole run (so a nested loop's inner phase weighs inner x outer count).
///
/// @throws p3s::InputError if `options.min_repetitions` < 2 or the sequence has 2^31 ticks or more.
[[nodiscard]] PhaseStructure find_phases(std::span<const TickSymbol> ticks, const PhaseFinderOptions& options = {});

/// The same, where the units are the loops that hold computation: `anchors[t]` is non-zero where tick t follows
/// a compute burst. A loop fewer than half of whose iterations hold an anchor (an exchange unrolled into
/// repeated calls, a butterfly's or a halo's swaps, the retries of a polling loop) is no unit of its own: it is
/// read as part of the stretch around it, so the phase is the innermost loop whose iterations compute, as a
/// performance engineer names a code's steps. Empty `anchors`: every loop is a unit.
/// @throws p3s::Error if `anchors` is neither empty nor as long as `ticks`.
[[nodiscard]] PhaseStructure find_phases(std::span<const TickSymbol> ticks, std::span<const std::uint8_t> anchors,
                                         const PhaseFinderOptions& options = {});

/// Run-length encoding of the phase order: (phase, consecutive occurrences) pairs.
struct PhaseRun {
  std::uint32_t phase = 0;
  std::uint64_t count = 0;
};
[[nodiscard]] std::vector<PhaseRun> phase_order(const PhaseStructure& structure);

}  // namespace p3s::analyzer
