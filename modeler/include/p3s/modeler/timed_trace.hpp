// SPDX-License-Identifier: BSD-3-Clause
// The predicted run as a timed trace (`p3s predict --format otf2`): every rank's calls at n, each phase instance
// lasting what a replay of the prediction measured, so that a trace viewer shows the predicted run beside a
// recorded one.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "p3s/modeler/model.hpp"
#include "p3s/modeler/phase_check.hpp"
#include "p3s/modeler/predict.hpp"

namespace p3s::modeler {

/// One call of a rank's instance in time, in ns from the instance's start.
struct CallTiming {
  double start_ns = 0;
  double duration_ns = 0;
};

/// A rank's instance of a phase laid out in `instance_ns`: each burst takes its predicted time and the calls share
/// the rest. A call that only starts or posts (a send, a posted receive, a test) takes a nominal time (at most
/// kNominalCallNs); the calls that can wait (receives, waits, collectives, probes) take the remainder in equal parts,
/// which is where a replay finds a rank's MPI time (all calls share it where none can wait). Bursts predicted longer
/// than the instance leaves them are shortened in proportion (`squeezed`).
struct InstanceLayout {
  std::vector<CallTiming> calls;
  double tail_ns = 0;  ///< the burst after the last call
  bool squeezed = false;
};
inline constexpr double kNominalCallNs = 500;
[[nodiscard]] InstanceLayout lay_out(const PredictedRank& rank, double instance_ns);

/// Each phase's time per instance at n (the phase id's), as a replay measured it; `source` names where from.
struct PhaseTimes {
  std::map<std::uint32_t, double> instance_ns;
  std::string source;
};

/// What write_timed_otf2 wrote.
struct TimedTrace {
  PredictionCheck check;
  std::uint64_t events = 0;
  double run_ns = 0;                     ///< the trace's length: the phases' weight x time
  std::uint64_t squeezed_instances = 0;  ///< rank instances whose bursts were shortened to fit
  std::vector<std::uint32_t> untimed;    ///< phases at n that `times` has no time for (left out of the trace)
};

/// Writes the predicted run at n as an OTF2 archive `dir/traces.otf2` (clock in ns): one location per rank, the
/// MPI calls as regions with their messages, collectives and requests, each phase instance a region "phase N", the
/// phases in the predicted order. The phases are checked as `p3s predict` checks them (refused, or repaired with
/// `policy`). The archive is written beside `dir` and moved in whole; an archive already there is replaced.
/// @throws p3s::InputError when the model has no compute-time laws or `times` has no phase of the model;
/// p3s::TraceError when a phase is inconsistent and `policy` is Refuse; p3s::Error when it cannot be written.
[[nodiscard]] TimedTrace write_timed_otf2(const Model& model, std::int64_t n, const PhaseTimes& times,
                                          const std::filesystem::path& dir, OnInconsistency policy,
                                          const std::string& model_path);

}  // namespace p3s::modeler
