// SPDX-License-Identifier: BSD-3-Clause
// A recorded run's time as a replay measures it: the phases' time, without the time spent inside MPI_Init and
// MPI_Finalize (the MPI library's start and end, which no replay makes again).
#pragma once

#include <cstdint>
#include <string>

#include "p3s/analyzer/signature.hpp"

namespace p3s::analyzer {

/// One phase over the run: weight x instance time less the time inside MPI_Init and MPI_Finalize, and that time.
struct PhaseRunTime {
  double apart_ns = 0;
  double excluded_ns = 0;
  bool init_or_finalize = false;  ///< the phase holds MPI_Init or MPI_Finalize (it is no part of the main loop)
};
[[nodiscard]] PhaseRunTime phase_run_time(const SigPhase& p, std::int64_t processes);

/// Compute time per instance of a phase: its bursts' time, mean over the ranks.
[[nodiscard]] double phase_compute_ns(const SigPhase& p, std::int64_t processes);
/// The same of the rank that computes most.
[[nodiscard]] double phase_compute_max_ns(const SigPhase& p);

/// The MPI functions a phase calls, sorted and joined by spaces ("MPI_Allreduce MPI_Irecv ..."): how phases of
/// runs at different n, and of a replay, are related.
[[nodiscard]] std::string phase_calls(const SigPhase& p);

/// The whole run: every phase's PhaseRunTime added up; `main_ns` over the phases that hold neither MPI_Init nor
/// MPI_Finalize (the main loop).
struct RunTime {
  double apart_ns = 0;
  double excluded_ns = 0;
  double main_ns = 0;
};
[[nodiscard]] RunTime run_time(const Signature& s);

}  // namespace p3s::analyzer
