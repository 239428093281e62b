// SPDX-License-Identifier: BSD-3-Clause
// Phases found per location first (the by-rank method): each location's operations are grouped into steps,
// each location's step sequence is folded on its own, and the locations' occurrences are then joined by their
// position, so that instances skewed in time across ranks (pipelines, ranks that enter late) stay one phase.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "op_log.hpp"
#include "p3s/analyzer/phase_finder.hpp"
#include "run_phases.hpp"

namespace p3s::analyzer {

/// What one action does, seen from its location: kind, call, peer and root relative to `rank`, communicator and
/// collective operation (no tag, no size). Both phase methods build their symbols from it.
[[nodiscard]] std::uint64_t action_shape(std::int32_t rank, const Op& op, const Action& a) noexcept;

/// What an operation does, for the by-rank search: the call and, per action, its kind, peer (relative to the
/// location's rank), communicator, collective operation and root. Tags and sizes are left out: codes that number
/// messages by iteration, or whose volumes drift from step to step (particles crossing between domains),
/// still repeat.
[[nodiscard]] std::uint64_t operation_shape(std::int32_t rank, const Op& op) noexcept;

/// One location's operations grouped into steps. A step begins at an operation that follows a compute burst
/// (one with at least `compute_burst_work` of work; see BurstHistogram) and holds the calls up to the next one, so that
/// an exchange unrolled into repeated calls (two swaps with the same neighbour) stays inside its step and the
/// steps of a program loop are what repeats. With no compute class (0), every operation is a step.
class StepSequence {
 public:
  StepSequence(std::int32_t rank, std::uint64_t compute_burst_work) : rank_(rank), threshold_(compute_burst_work) {}
  /// Operations in program order; `index` counts from 0. A call `alone` (MPI_Init, MPI_Finalize) is a step of its
  /// own: the program's first and last steps do not change the steps next to them.
  void add(std::uint64_t index, const Op& op, bool alone);
  void finish();
  [[nodiscard]] const std::vector<TickSymbol>& symbols() const noexcept { return symbols_; }
  [[nodiscard]] const std::vector<std::uint64_t>& first_op() const noexcept { return first_op_; }
  /// Every operation's shape (operation_shape), in program order.
  [[nodiscard]] const std::vector<std::uint64_t>& shapes() const noexcept { return shapes_; }

 private:
  std::int32_t rank_;
  std::uint64_t threshold_;
  std::uint64_t current_ = 0;
  bool open_ = false;
  bool closed_ = false;  ///< the step holds a call that is alone
  std::vector<TickSymbol> symbols_;
  std::vector<std::uint64_t> first_op_;
  std::vector<std::uint64_t> shapes_;
};

/// The by-rank phases, or nothing (with the reason in `why_not`) when the locations do not have the same
/// number of occurrences. Occurrence k of the run is the k-th occurrence of every location; its phase is the
/// combination of the locations' own phases, and a combination that differs from a more frequent one on at
/// most a fifth of the locations is that one (DESIGN: 80 % of the events alike make one phase).
[[nodiscard]] std::optional<RunPhases> phases_by_rank(const std::vector<StepSequence>& steps,
                                                      const std::vector<std::int32_t>& ranks,
                                                      const PhaseFinderOptions& options, std::string& why_not);

}  // namespace p3s::analyzer
