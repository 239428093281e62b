// SPDX-License-Identifier: BSD-3-Clause
// The predicted run in SimGrid's time-independent trace format (`p3s predict --format tit`), for users who simulate
// it with SMPI themselves: `smpirun -np N -platform P -hostfile H -replay DIR/traces.txt`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "p3s/modeler/model.hpp"
#include "p3s/modeler/phase_check.hpp"
#include "p3s/modeler/predict.hpp"
#include "p3s/modeler/st4np.hpp"

namespace p3s::modeler {

struct TitOptions {
  /// The speed of the platform's hosts (flop/s) the compute amounts are written for: a burst predicted to take t
  /// seconds computes t x flops, so that it takes t on hosts of this speed.
  double flops = 1e9;
};

/// What write_tit wrote.
struct TitTrace {
  PredictionCheck check;  ///< write_tit's (a TitWriter's writes leave it empty: TitWriter::check() has it)
  std::uint64_t actions = 0;
  /// What the format cannot say and how it was written instead (collectives on communicators other than the
  /// world as point-to-point messages, collectives the format lacks as the nearest one it has), once each.
  std::vector<std::string> notes;
};

/// One phase's instance as written, over ranks: what a simulation's result reports beside its time.
struct TitPhaseStats {
  bool written = false;
  bool main_loop = true;      ///< holds neither MPI_Init nor MPI_Finalize (rank 0's calls)
  bool repaired = false;      ///< written repaired (its calls as predicted did not match)
  double compute_ns = 0;      ///< predicted burst time per instance, mean over ranks
  double compute_max_ns = 0;  ///< the same of the rank that computes most
  double calls = 0;           ///< MPI calls per instance, mean over ranks
  double messages = 0;        ///< messages all ranks send in one instance
  double bytes = 0;           ///< their bytes
};

/// A run at n written as any number of time-independent traces: the whole run, or a few instances of one phase at a
/// time (as `p3s simulate` runs them). The run is a model's prediction, checked once (refused, or repaired with
/// `policy`), or an executable trace (ST4NP) as `p3s predict` wrote it or a user wrote it by hand.
class TitWriter {
 public:
  /// @throws p3s::InputError when the model has no compute-time laws; p3s::TraceError when a phase is inconsistent
  /// and `policy` is Refuse.
  TitWriter(const Model& model, std::int64_t n, OnInconsistency policy, const TitOptions& options);
  /// Each rank's lines read when written (one rank's at a time); the trace must outlive the writer.
  TitWriter(const St4np& trace, const TitOptions& options);
  TitWriter(St4np&& trace, const TitOptions& options) = delete;  ///< it keeps a reference: the trace must live
  /// The model's prediction's check (empty for an ST4NP, checked when it was written).
  [[nodiscard]] const PredictionCheck& check() const noexcept;
  /// Writes into `dir` one file per rank (`rank<r>.txt`, lines `<r> <action> <args>`, sizes in bytes) running the
  /// phases of `order` (indices into the model's phases), and `traces.txt`, the list of the rank files (absolute
  /// paths) that smpirun -replay reads, written last. The format has no communicators and matches a wait to its
  /// request by (source, destination, tag): tags are renumbered per (communicator, tag) and message of an instance,
  /// alike at both ends, so that no two open requests share a key. Collectives on the world are the format's own;
  /// on other communicators they become messages among the members (binomial trees, pairwise exchanges).
  /// @throws p3s::Error when a file cannot be written.
  TitTrace write(const std::filesystem::path& dir, const std::vector<PhaseRun>& order);
  /// Per phase (index in the model or the trace): its instance as written, once some write held it.
  [[nodiscard]] const std::vector<TitPhaseStats>& stats() const noexcept { return stats_; }

 private:
  std::int64_t n_;
  DimsRule dims_rule_;
  TitOptions options_;
  std::shared_ptr<CheckedPrediction> checked_;  ///< a model's prediction; null for an ST4NP
  std::function<PredictedRank(std::size_t phase, std::int64_t rank)> rank_;
  std::vector<TitPhaseStats> stats_;
};

/// The whole predicted run at n (TitWriter::write with the predicted order).
[[nodiscard]] TitTrace write_tit(const Model& model, std::int64_t n, const std::filesystem::path& dir,
                                 OnInconsistency policy, const TitOptions& options);
/// An executable trace (ST4NP) as a whole run in the time-independent format (its own order of phases).
[[nodiscard]] TitTrace write_tit(const St4np& trace, const std::filesystem::path& dir, const TitOptions& options);

}  // namespace p3s::modeler
