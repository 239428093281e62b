// SPDX-License-Identifier: BSD-3-Clause
// Fitting a model (`p3s model`), and the report of the fit: what it measured per phase (the SCIC's measured
// rows, the spread of each phase's total work, notes on what could not be modelled) and how well a fit predicted
// a run it had not seen. The report is written beside the model; prediction never reads it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "p3s/modeler/model.hpp"
#include "p3s/modeler/series.hpp"

namespace p3s::modeler {

inline constexpr int kFitReportSchemaVersion = 1;

/// A measured row of a phase's SCIC: in one fitted run, the ranks of a work class, their work per rank and
/// instance, and the class's total work over the run.
struct ScicRow {
  std::int64_t n = 0;
  std::int64_t ranks = 0;
  double work_per_rank = 0;
  double total = 0;
  /// The class's compute time per rank and instance (ns): the bursts' wall-clock time, which the time laws fit.
  double time_per_rank = 0;
};

/// How closely one regression law of a phase fits its runs, and how far it can be trusted beyond them.
struct LawFit {
  std::string law;  ///< which: "work class 0, before [1] MPI_Isend term 2", "bytes of [1] MPI_Isend case 0 term 0"
  std::string equation;
  double max_rel_error = 0;
  std::optional<double> loo_rel_error = std::nullopt;  ///< leave-one-out (RegressionLaw::loo_rel_error)
};

/// What the fit saw of one phase.
struct PhaseReport {
  std::uint32_t id = 0;  ///< the model's phase id
  std::string calls;
  bool relevant = false;
  double share = 0;                            ///< of the largest fitted run's time
  double total_work_spread = 0;                ///< of weight x work across the fitted runs (strong scaling: small)
  std::vector<std::vector<ScicRow>> measured;  ///< per work class of the model's phase, per fitted run
  std::vector<std::string> notes;              ///< what could not be modelled exactly
  std::vector<LawFit> laws;                    ///< the phase's work and size laws with their errors
  /// Groups kept as measured (no law reproduces them): exact at the fitted n, approximate elsewhere.
  std::vector<std::uint32_t> approximate_groups;
};

/// The comparison of a model's predictions with a real run at the same n.
struct PhaseCheck {
  std::uint32_t phase = 0;
  /// The run's phase it is compared with (its listed id), none where the run has no such phase, and whether that
  /// one is relevant in the run (1 % of its time or more: what the accuracy figures are taken over).
  std::optional<std::uint32_t> run_phase;
  bool relevant = false;
  /// Why the model could not be evaluated at the run's n (a law that is no whole number there); empty when it
  /// was. Such a phase is reported, not fatal: the model is still written.
  std::string error;
  bool pattern_exact = true;
  std::string first_mismatch;  ///< "rank 5, call 3: expected MPI_Isend send 6, predicted MPI_Isend send 7"
  std::int64_t comms_predicted = 0;
  std::int64_t comms_actual = 0;
  std::int64_t weight_predicted = 0;
  std::int64_t weight_actual = 0;
  double volume_error_mean = 0;  ///< over the messages and collectives that match one to one
  double volume_error_max = 0;
  /// Of the phase's volume per instance (the bytes of every message and collective, all ranks): sizes that follow
  /// each rank's data miss one by one, but their sum is what the network carries.
  double volume_error_total = 0;
  double work_error_mean = 0;  ///< over the ranks: each rank's work per instance
  double work_error_max = 0;
  double work_error_total = 0;  ///< of the phase's work per instance summed over all ranks
  /// Groups the model could only approximate at this n (kept as measured at other n).
  std::vector<std::uint32_t> approximate_groups;
  /// Groups whose message sizes follow their law only approximately (PhaseModel::approximate_sizes()).
  std::vector<std::uint32_t> approximate_sizes;
  /// What the prediction at this n could not know (PhaseModel::caveats()).
  std::vector<std::string> caveats;
};

/// The model's kinds of the time step (PhaseModel::step) with their weights at n.
[[nodiscard]] std::vector<analyzer::StepKind> step_kinds(const std::vector<PhaseModel>& phases, std::int64_t n);

/// The time step at a real run's n: the model's kinds and their weights added against the steps the run's analysis
/// marks (its phases that are one time step each, added).
struct StepCheck {
  std::vector<std::uint32_t> kinds;  ///< the model's phases that are kinds of the step
  std::int64_t predicted = 0;
  std::int64_t actual = 0;
};

/// A model's prediction at a real run's n against that run.
struct Validation {
  std::int64_t n = 0;
  std::string signature;                ///< the run compared with
  std::vector<std::int64_t> fitted_on;  ///< the runs of the model that was compared (not always the one written)
  std::vector<PhaseCheck> phases;
  std::vector<std::string> unrelated;  ///< phases of the real run the model does not have
  std::optional<StepCheck> time_step;  ///< where the model has a time step
};

/// The report of a fit, written beside its model.
struct FitReport {
  int schema_version = kFitReportSchemaVersion;
  std::string tool;
  std::string date;
  std::string model;                    ///< the model file it describes
  std::vector<std::int64_t> fitted_on;  ///< the runs of that model
  std::vector<PhaseReport> phases;      ///< in the model's phase order
  std::vector<std::string> unrelated;   ///< phases of some run that could not be related to the others
  /// Phases of some run merged into another of that run as a kind of it (merge_phase_kinds), one line each.
  std::vector<std::string> kinds_merged;
  /// The largest run held out and predicted by a model fitted on the others (before it was folded into the model
  /// written), or a run given to validate against.
  std::optional<Validation> validation;
};

/// A model and the report of its fit.
struct Fit {
  Model model;
  FitReport report;
};

struct ModelOptions {
  /// Hold the largest run out to validate a model fitted on the others, then fold it in (the method's way).
  bool hold_out_largest = true;
  /// Validate against this signature instead (all inputs are fitted).
  std::optional<std::filesystem::path> validate_with;
  /// A run of the same program with a reduced input at a larger n, to calibrate compute time (the method's CRMc).
  std::optional<std::filesystem::path> far_point;
  /// Model a series even where a phase of at least the relevance threshold of a run's time has no counterpart in
  /// another run (it is left out, and said so in the report); else that is an error naming the phase.
  bool allow_missing = false;
  FitOptions fit;
};

/// Fits a model to the signatures, and validates it as `options` say. @throws p3s::InputError for unusable inputs.
[[nodiscard]] Fit build_model(std::span<const std::filesystem::path> signatures, const ModelOptions& options);
/// Fits a model to loaded runs (no validation).
[[nodiscard]] Fit fit_model(std::span<const Run> runs, const FitOptions& options = {});

/// For each model phase, the run's phase doing the same calls in the same order of first occurrence.
[[nodiscard]] std::vector<std::optional<std::uint32_t>> relate_model_phases(const Model& model,
                                                                            const analyzer::Signature& run);
/// The run with the kinds of the phases related to the model's merged into them (merge_phase_kinds): what the
/// model's phases are compared with.
[[nodiscard]] Run merged_for(const Model& model, Run run);

/// Calibrates every work class's compute time with a far point (the method's CRMc): the far run's work per rank
/// and instance is placed at the n where the class's predicted work per rank is the same, and its compute time
/// there pins the class's time law beyond the fitted runs (WorkClass::far_point). A phase or class that cannot be
/// placed keeps its fit and gets a note in the report.
/// @throws p3s::InputError when the run is of another program or metric, unfinished, or calibrates no phase.
void calibrate_with_far_point(Fit& fit, const Run& far);

/// Compares the model's prediction at the run's n with the run.
[[nodiscard]] Validation compare_with(const Model& model, const Run& run);

/// The fit report's file beside a model file: `app.model` -> `app.model.report.json`.
[[nodiscard]] std::filesystem::path fit_report_path(const std::filesystem::path& model);
/// Writes the report as JSON (temporary file renamed into place). @throws p3s::Error when it cannot.
void write_fit_report(const FitReport& report, const std::filesystem::path& path);
/// Reads a fit report. @throws p3s::InputError naming the file when it is not one of this schema.
[[nodiscard]] FitReport read_fit_report(const std::filesystem::path& path);

/// The work laws (per class and burst) and message-size laws of a phase, with their errors.
[[nodiscard]] std::vector<LawFit> law_fits(const PhaseModel& phase);

/// The equations per phase in readable form with each phase's SCIC table (`p3s model --report`).
[[nodiscard]] std::string model_report(const Model& model, const FitReport& report);
/// The validation table.
[[nodiscard]] std::string validation_report(const Validation& v);

}  // namespace p3s::modeler
