// SPDX-License-Identifier: BSD-3-Clause
// The predicted run in SimGrid's time-independent trace format (`p3s predict --format tit`), for users who simulate
// it with SMPI themselves: `smpirun -np N -platform P -hostfile H -replay DIR/traces.txt`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "p3s/modeler/model.hpp"
#include "p3s/modeler/phase_check.hpp"

namespace p3s::modeler {

struct TitOptions {
  /// The speed of the platform's hosts (flop/s) the compute amounts are written for: a burst predicted to take t
  /// seconds computes t x flops, so that it takes t on hosts of this speed.
  double flops = 1e9;
};

/// What write_tit wrote.
struct TitTrace {
  PredictionCheck check;
  std::uint64_t actions = 0;
  /// What the format cannot say and how it was written instead (collectives on communicators other than the
  /// world as point-to-point messages, collectives the format lacks as the nearest one it has), once each.
  std::vector<std::string> notes;
};

/// Writes the predicted run at n into `dir`: one file per rank (`rank<r>.txt`, lines `<r> <action> <args>`, sizes
/// in bytes) and `traces.txt`, the list of the rank files (absolute paths) that smpirun -replay reads, written last.
/// The format has no communicators and matches a wait to its request by (source, destination, tag): tags are
/// renumbered per (communicator, tag) and message of an instance, alike at both ends, so that no two open requests
/// share a key. Collectives on the world are the format's own; on other communicators they become messages among
/// the members (binomial trees, pairwise exchanges). Phases are checked first (refused, or repaired with `policy`).
/// @throws p3s::InputError when the model has no compute-time laws; p3s::TraceError when a phase is inconsistent
/// and `policy` is Refuse; p3s::Error when a file cannot be written.
[[nodiscard]] TitTrace write_tit(const Model& model, std::int64_t n, const std::filesystem::path& dir,
                                 OnInconsistency policy, const TitOptions& options);

}  // namespace p3s::modeler
