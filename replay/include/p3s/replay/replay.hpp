// SPDX-License-Identifier: BSD-3-Clause
// Replaying a model's predicted trace at n with real MPI (the method's stage 5, full mode): every rank runs the
// phases in the predicted order, emulates each burst for its predicted duration and makes every communication as
// a real MPI call of the recorded kind, and the phases' times give the predicted execution time (PET).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "p3s/error.hpp"
#include "p3s/modeler/dims.hpp"
#include "p3s/modeler/model.hpp"
#include "p3s/modeler/phase_check.hpp"
#include "p3s/modeler/predict.hpp"

namespace p3s::replay {

/// How a burst is emulated.
enum class Compute : std::uint8_t {
  Spin,   ///< keep the core busy for the burst's time, as the application does
  Sleep,  ///< sleep it (oversubscribed machines, and applications that sleep their work)
};
/// "spin", "sleep".
[[nodiscard]] std::string_view compute_name(Compute c) noexcept;
[[nodiscard]] std::optional<Compute> compute_named(std::string_view name) noexcept;

struct ReplayOptions {
  Compute compute = Compute::Spin;
  /// Instances of a repeated phase that are measured at least, after `warmup` that are not; consecutive, without
  /// barriers between them, so that a pipeline's instances overlap as in the application.
  int instances = 5;
  int warmup = 2;
  /// More instances are measured, up to the phase's weight, until the measured ones last this long together (0: the
  /// minimum only).
  double min_time_s = 0.1;
  /// Seconds without progress after which a rank names where it is stuck and the replay stops.
  double watchdog_s = 120;
  /// A range replay's passes over its steps: the black holes of each answer a receive no earlier than its sender sent
  /// it in the steps measured before, so a second pass sees the send times of ranges the first measured later (the
  /// passes before the last measure one warm-up and two instances of each phase: they give send times only).
  int range_passes = 2;
};

/// What the replay measured of one phase, over ranks (each rank's instance times tile its own time, as the
/// analyzer's phase times do, so their mean over ranks is the phase time).
struct PhaseTime {
  std::uint32_t id = 0;
  std::string calls;
  std::int64_t weight = 0;  ///< instances at n
  bool main_loop = true;    ///< holds neither MPI_Init nor MPI_Finalize
  bool repaired = false;    ///< replayed repaired: its calls as predicted did not match
  bool replayed = false;    ///< false for a phase that does not occur at n (weight 0)
  int instances = 0;        ///< instances measured
  double time_ns = 0;       ///< mean over ranks of each rank's mean instance time
  double time_min_ns = 0;   ///< the smallest and largest ranks' mean instance times
  double time_max_ns = 0;
  double time_stddev_ns = 0;         ///< over every rank's every measured instance
  double compute_ns = 0;             ///< emulated burst time per instance (mean over ranks)
  double compute_max_ns = 0;         ///< the same of the rank that computes most
  double predicted_compute_ns = 0;   ///< the predicted burst time per instance (mean over ranks)
  double mpi_ns = 0;                 ///< time in MPI calls per instance (mean over ranks)
  double calls_per_instance = 0;     ///< MPI calls per instance (mean over ranks)
  double messages_per_instance = 0;  ///< messages sent per instance, all ranks together
  double bytes_per_instance = 0;     ///< their bytes
};

struct ReplayResult {
  std::int64_t processes = 0;
  std::vector<PhaseTime> phases;
  /// Predicted execution time: the sum over the phases of weight x time, without the time inside MPI_Init and
  /// MPI_Finalize (the MPI library's start and end, which a replay does not make again).
  double pet_ns = 0;
  /// The main loop: the same over the phases that hold neither MPI_Init nor MPI_Finalize (a set-up phase ending
  /// with MPI_Init also waits for the ranks that leave MPI_Init last, which no model of the application predicts).
  double main_ns = 0;
  double replay_wall_ns = 0;       ///< the replay's own wall time (the slowest rank's)
  std::vector<std::string> notes;  ///< what the replay could not emulate
  /// A range replay: the job's ranks, and its schedule as JSON text (p3s::replay::schedule_json); 0 and empty in
  /// full mode.
  std::int64_t job_ranks = 0;
  double noise_messages = 0;  ///< a range replay's: the messages its noise ranks sent (last pass and before)
  std::string range_schedule;
};

/// One phase as a rank replays it.
struct PlannedPhase {
  std::uint32_t id = 0;
  std::string calls;            ///< its MPI functions ("MPI_Irecv MPI_Isend ..."), to relate it to a real run's
  bool main_loop = true;        ///< holds neither MPI_Init nor MPI_Finalize
  std::int64_t weight = 0;      ///< instances at n
  modeler::PredictedRank rank;  ///< this rank's calls in one instance
  bool repaired = false;        ///< its calls as predicted did not match: what did not is dropped
};

/// What one rank replays: its calls in every phase at n, the phase order at n, the communicators, and what the
/// replay cannot emulate. Made before any MPI communication, so that an input that cannot be replayed fails on
/// every rank alike. The actions' communicators point into the model, or into `owned` for an ST4NP.
struct ReplayPlan {
  std::int64_t processes = 0;
  std::string source;  ///< the model file or ST4NP directory
  std::string application;
  std::string work_metric;
  modeler::DimsRule dims_rule = modeler::DimsRule::OpenMpi;
  std::vector<PlannedPhase> phases;
  std::vector<modeler::PhaseRun> order;  ///< phase = index in `phases`
  /// Every communicator the actions name, in an order every rank shares (each is built collectively).
  std::vector<const modeler::CommModel*> comms;
  std::vector<std::unique_ptr<modeler::CommModel>> owned;
  std::vector<std::string> notes;
};

/// The plan of rank `rank` of n from a model: each rank evaluates its own calls (nothing it reads grows with n),
/// once every phase was checked as `p3s predict` checks it (modeler::check_prediction: every rank generates every
/// rank's calls of one phase at a time, and refuses or repairs alike). A repaired phase is named in the notes.
/// @throws p3s::InputError when the model has no compute-time laws; p3s::ModelError when it cannot be evaluated at
/// n; p3s::TraceError when a phase is inconsistent and `policy` is Refuse. The model must outlive the plan.
[[nodiscard]] ReplayPlan plan_from_model(const modeler::Model& model, const std::string& path, std::int64_t n,
                                         std::int64_t rank,
                                         modeler::OnInconsistency policy = modeler::OnInconsistency::Refuse);
/// The plan of rank `rank` of n from an ST4NP directory (`p3s predict -o DIR`): the header, and this rank's own
/// lines, found through the rank index. `p3s predict` checked the trace when it wrote it; the phases it repaired are
/// named in the notes. @throws p3s::InputError when DIR is not a whole ST4NP for n ranks, or was written by a p3s
/// that did not check it (schema 3).
[[nodiscard]] ReplayPlan plan_from_st4np(const std::filesystem::path& dir, std::int64_t n, std::int64_t rank);

/// A plan the ranks refuse together before any phase runs, thrown on every rank: the message on one of them (the
/// others' is empty), so that it is printed once.
class RefusedPlan : public InputError {
 public:
  using InputError::InputError;
};

/// Replays the plan at the size of MPI_COMM_WORLD (the n it was made for). Collective over MPI_COMM_WORLD; every
/// rank gets the result. @throws RefusedPlan on every rank when the ranks disagree on a collective;
/// p3s::Error when an MPI call fails (on that rank only).
[[nodiscard]] ReplayResult run_replay(const ReplayPlan& plan, const ReplayOptions& options);

/// A replay next to a real run at the same n: per phase, predicted and real time over the run (weight x instance
/// time) and compute time per instance.
struct PhaseComparison {
  std::uint32_t id = 0;
  std::optional<std::uint32_t> run_phase;  ///< the run's related phase, nullopt when it has none
  bool replayed = false;
  bool main_loop = true;
  double predicted_ns = 0;  ///< weight x phase time
  double real_ns = 0;
  double predicted_compute_ns = 0;  ///< per instance, mean over ranks
  double real_compute_ns = 0;
};

struct Comparison {
  std::string signature;
  std::int64_t processes = 0;
  std::vector<PhaseComparison> phases;
  double predicted_ns = 0;       ///< PET
  double real_ns = 0;            ///< the run's time in its phases, MPI_Init and MPI_Finalize apart
  double real_excluded_ns = 0;   ///< the run's time inside MPI_Init and MPI_Finalize
  double predicted_main_ns = 0;  ///< the main loop (ReplayResult::main_ns)
  double real_main_ns = 0;       ///< the run's time in the same phases
  [[nodiscard]] double error() const { return real_ns > 0 ? (predicted_ns - real_ns) / real_ns : 0; }
  [[nodiscard]] double main_error() const {
    return real_main_ns > 0 ? (predicted_main_ns - real_main_ns) / real_main_ns : 0;
  }
};

/// Compares a replay with the signature of a real run at the same n (phases related by their calls and place).
/// @throws p3s::InputError when the run is at another n.
[[nodiscard]] Comparison compare_with_run(const ReplayPlan& plan, const ReplayResult& result,
                                          const std::filesystem::path& signature);

/// Provenance of a result file.
struct ResultInputs {
  std::string command;
  ReplayOptions options;
};

/// Writes result.json (share/doc/replay-format.md), whole or not at all. @throws p3s::Error when it cannot.
void write_result(const ReplayResult& result, const ReplayPlan& plan, const ResultInputs& inputs,
                  const std::optional<Comparison>& comparison, const std::filesystem::path& path);
/// The readable summary: phases with weight, time per instance and its spread, compute and MPI time, PET.
[[nodiscard]] std::string result_summary(const ReplayResult& result);
/// The comparison table.
[[nodiscard]] std::string comparison_summary(const Comparison& c);

}  // namespace p3s::replay
