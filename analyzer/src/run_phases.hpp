// SPDX-License-Identifier: BSD-3-Clause
// The phases of a run as the signature passes read them: every occurrence in run order, its phase, and which
// operations of each location belong to it. Two methods produce it (see rank_phases.hpp and phase_finder.hpp).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "p3s/analyzer/phase_finder.hpp"
#include "p3s/analyzer/signature.hpp"

namespace p3s::analyzer {

struct RunPhases {
  PhaseMethod method = PhaseMethod::GlobalTicks;
  std::string method_note;  ///< the level the method used, and why `auto` chose it, where either needs saying
  PhaseLevel level = PhaseLevel::Units;  ///< ByRank: the level the occurrences are
  bool without_sizes = false;            ///< ByRank, Outermost: the iterations were found on the calls alone
  std::uint32_t phase_count = 0;
  std::vector<std::uint32_t> occurrence_phase;  ///< phase of every occurrence, in run order
  /// GlobalTicks: every occurrence's ticks (empty ones included). ByRank: empty; an occurrence's logical length
  /// is then the ticks from its first call's to its last call's.
  std::vector<std::uint64_t> occurrence_ticks;
  /// GlobalTicks: the first tick (1-based) of every occurrence; the ticks up to the next one belong to it.
  std::vector<std::uint64_t> first_tick;
  /// ByRank, and GlobalTicks at its outermost level: per location, the index of the first operation of every
  /// occurrence (the same number of occurrences on every location that has operations; empty for the others).
  /// Where it is set, operations belong to occurrences by it rather than by their ticks.
  std::vector<std::vector<std::uint64_t>> first_op;
  /// ByRank at the program's level (its iterations, or its calls between collectives of all processes): per phase,
  /// 1 where every occurrence is one time step of the code, as the most frequent of its main repeats is, or a step
  /// that differs by its data (step_cuts.hpp); empty where the level has no steps.
  std::vector<std::uint8_t> step_kind;
};

/// Every phase's weight: its occurrences in the run.
[[nodiscard]] std::vector<std::uint64_t> phase_weights(const RunPhases& phases);

/// The global method's result as RunPhases.
[[nodiscard]] RunPhases run_phases_from_ticks(const PhaseStructure& structure);

/// The global method's result at its outermost level (PhaseLevel::Outermost): the program's iterations
/// (main_loop.hpp) in `symbols`, the sequence `structure` was found in, and the stretches between them;
/// occurrences with the same ticks are one phase. `syncs[t]` is non-zero where every process has an event at tick
/// t (an iteration begins after such a tick where it can). Where the innermost loops differ from one process count
/// to the next (a pipeline through q cells: one stage per sweep at q = 2, q - 1 at q), the program's iteration is
/// the phase they share.
[[nodiscard]] RunPhases run_phases_at_top(const PhaseStructure& structure, std::span<const TickSymbol> symbols,
                                          std::span<const std::uint8_t> syncs);

/// Which occurrence an operation of one location belongs to; operations must be asked in program order.
class OccurrenceLocator {
 public:
  OccurrenceLocator(const RunPhases& phases, std::size_t location) noexcept;
  [[nodiscard]] std::size_t at(std::uint64_t op_index, std::uint64_t op_tick) noexcept;

 private:
  const std::vector<std::uint64_t>& starts_;
  bool by_op_ = false;
  std::size_t current_ = 0;
};

}  // namespace p3s::analyzer
