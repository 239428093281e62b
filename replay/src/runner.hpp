// SPDX-License-Identifier: BSD-3-Clause
// A rank's run of its plan's phases, on the ranks of a layout (the whole job, or a range replay step's measured
// ranges), and the phase times made from what the ranks measured.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "collective_cost.hpp"
#include "communicators.hpp"
#include "noise.hpp"
#include "p3s/replay/replay.hpp"
#include "pacing.hpp"

namespace p3s::replay::detail {

/// What one rank measured of one phase.
struct Measured {
  std::vector<double> instances;  ///< the measured instances' times
  double compute_ns = 0;          ///< emulated over the measured instances
  double predicted_ns = 0;        ///< predicted over the measured instances
  double mpi_ns = 0;
  double calls = 0;
  double messages = 0;  ///< sent to a rank (not MPI_PROC_NULL), over the measured instances
  double bytes = 0;     ///< of those messages
};

/// What one rank measured of every phase, which phases the order ran, and its wall time.
struct RankMeasure {
  std::vector<Measured> phases;
  std::vector<bool> done;
  std::int64_t wall_ns = 0;
};

/// What a range replay step adds to a measured rank's run.
struct RangeHooks {
  /// Records the sends between ranges of the measured instances where `timed` (the rank's range is timed in this
  /// step), and holds back receives from black holes until their senders sent.
  Pacing* pacing = nullptr;
  bool timed = false;
  NoiseCue noise;  ///< cued at the start of each instance (no comm: none)
  /// What collectives cost at more ranks than the step has (null, or none calibrated: log2 of the members' ratio
  /// times the call's own time).
  const CollectiveCosts* costs = nullptr;
};

/// Runs the plan's phase order on the layout's base (collective over it): warm-up, measured and trailing instances
/// of each phase, bursts emulated, every call made; `hooks` in a range replay step.
[[nodiscard]] RankMeasure run_phases(const ReplayPlan& plan, const ReplayOptions& options, std::int64_t rank,
                                     const Layout& layout, const RangeHooks& hooks = {});

/// What ranks measured of one phase, summed over them (reduced as an array of doubles).
struct RankSums {
  double time_ns = 0;       ///< the ranks' mean instance times
  double squares = 0;       ///< of their instance times
  double compute_ns = 0;    ///< emulated, per instance
  double predicted_ns = 0;  ///< predicted compute, per instance
  double mpi_ns = 0;        ///< per instance
  double calls = 0;         ///< per instance
  double instances = 0;     ///< measured
  double messages = 0;      ///< sent, per instance
  double bytes = 0;         ///< of those, per instance
};
inline constexpr int kRankSumsDoubles = 9;
static_assert(sizeof(RankSums) == kRankSumsDoubles * sizeof(double), "RankSums is reduced as an array of doubles");

/// Per phase, the sums over the ranks added so far, the least and most of their mean instance times, and the most
/// compute time per instance of a rank.
struct PhaseAccum {
  explicit PhaseAccum(std::size_t phases);
  /// Adds one rank's measurements.
  void add(const std::vector<Measured>& measured);
  std::vector<RankSums> sums;
  std::vector<double> lo;
  std::vector<double> hi;
  std::vector<double> compute_hi;
};

/// Each phase's time over `n` ranks, from what the ranks of `comm` accumulated (four reductions for all phases).
[[nodiscard]] std::vector<PhaseTime> phase_times(const ReplayPlan& plan, PhaseAccum accum,
                                                 const std::vector<bool>& done, std::int64_t n, MPI_Comm comm);

/// The result's PET and main-loop time from its phase times.
void add_pet(ReplayResult& result);

}  // namespace p3s::replay::detail
