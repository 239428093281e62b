// SPDX-License-Identifier: BSD-3-Clause
// The signatures of one application at several process counts (the method's signature tree), checked to
// belong together, with their phases related across runs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "p3s/analyzer/signature.hpp"

namespace p3s::modeler {

/// One run: its signature and where it was read from.
struct Run {
  std::filesystem::path path;
  analyzer::Signature signature;
  [[nodiscard]] std::int64_t n() const noexcept { return signature.processes; }
};

/// How many leading words of a command are an MPI launcher (mpirun, mpiexec, srun, ...) and its options; 0 where
/// the command does not begin with one.
[[nodiscard]] std::size_t launcher_words(const std::vector<std::string>& words);

/// The application's command line without the launcher and its process count ("./halo2d 2000"), or empty when
/// the run did not record its command (Score-P archives).
[[nodiscard]] std::string application_command(const std::string& command);

/// Reads the signatures (files, or directories holding signature.json), sorted by process count, and checks
/// that they can be modelled together: the same work metric, the same application and input (when the commands
/// are known), distinct process counts, and at least `min_runs` of them.
/// @throws p3s::InputError naming the offending file and what to do.
[[nodiscard]] std::vector<Run> load_runs(std::span<const std::filesystem::path> inputs, std::size_t min_runs);

/// The MPI library the runs of a series used: the one their signatures name (a signature that names none, such as
/// one of a Score-P archive, agrees with any), or empty.
/// @throws p3s::InputError when two runs name libraries whose MPI_Dims_create differ (Open MPI and MPICH).
[[nodiscard]] std::string series_mpi_library(std::span<const Run> runs);

/// Whether the MPI functions of `a` (analyzer::phase_calls: names separated by spaces) include every one of `b`'s.
[[nodiscard]] bool calls_include(const std::string& a, const std::string& b);

/// For each phase of `ref`, given by the MPI functions it calls (analyzer::phase_calls), the phase of `other` it
/// relates to: the same calls at the same place in the order of first occurrence (a longest common subsequence of the
/// two lists), or nullopt. Where, between two related phases (or an end of the lists), one phase of each list is
/// left and the functions one calls include all those the other calls, they are related too: the same place in the
/// program, whose calls change with n (an algorithm that takes another path at 2 processes, a finalisation that
/// polls only beyond).
/// Used across the runs of a series and between a model and a run.
[[nodiscard]] std::vector<std::optional<std::uint32_t>> relate_phase_lists(std::span<const std::string> ref,
                                                                           std::span<const std::string> other);

/// A phase as a relation sees it: the MPI functions it calls (analyzer::phase_calls) and whether it is a kind of
/// the time step (analyzer::SigPhase::step, PhaseModel::step).
struct PhaseKey {
  std::string calls;
  bool step = false;
};

/// The phase keys of a signature's phases, in order.
[[nodiscard]] std::vector<PhaseKey> phase_keys(const analyzer::Signature& s);

/// relate_phase_lists on phases that may be kinds of the time step: where both lists mark kinds of it, the kinds
/// are related among the kinds and the other phases among the others (which kind of a step comes first, before or
/// after a phase between two runs of steps, is the run's data, as is which kinds a run makes), then what is left
/// on both sides is related as relate_phase_lists relates it (a kind at one n, no kind at another). Where either
/// list marks none, relate_phase_lists of their calls.
[[nodiscard]] std::vector<std::optional<std::uint32_t>> relate_phase_keys(std::span<const PhaseKey> ref,
                                                                          std::span<const PhaseKey> other);

/// A phase followed across runs: its id in each run (the method's functional similarity: same place in the
/// phase order, same MPI calls).
struct RelatedPhase {
  std::vector<std::uint32_t> ids;  ///< per run, in the order of the runs
  std::string calls;               ///< the MPI functions it calls, for reports ("MPI_Irecv MPI_Isend ...")
  /// weight x mean instance work over all ranks, per run: nearly constant under strong scaling.
  std::vector<double> total_work;
  [[nodiscard]] double total_work_spread() const;  ///< (max - min) / max of total_work
};

/// A phase of one run that some other run of the series has no counterpart of: the model leaves it out.
struct UnrelatedPhase {
  std::int64_t n = 0;       ///< the run it is a phase of
  std::uint32_t phase = 0;  ///< its id there
  double share = 0;         ///< its share of that run's time
  std::string line;         ///< what it is and where it has no counterpart, in one line
};

struct PhaseRelation {
  std::vector<RelatedPhase> phases;      ///< in the order of the first run's phase ids
  std::vector<std::string> unrelated;    ///< one line per phase that has no partner in some run
  std::vector<UnrelatedPhase> left_out;  ///< the same phases, with their shares of their runs' time
  std::vector<std::string> kinds;        ///< one line per phase merged as a kind of another (merge_phase_kinds)
};

/// The phases left out whose share of their run's time is at least `relevance` (the series' relevance threshold).
[[nodiscard]] std::vector<UnrelatedPhase> relevant_left_out(const PhaseRelation& rel, double relevance);

/// Relates the phases of the runs: by id when every run has the same phases in the same order of first
/// occurrence (the usual case), else by aligning the runs' phase lists on their MPI calls.
[[nodiscard]] PhaseRelation relate_phases(std::span<const Run> runs);

/// Merges the kinds of a phase into it: each phase of `s` that is not related (related[j] false, or past its
/// end) and calls the same MPI functions as a related phase of `s` is the same program point, whose calls followed
/// the data (a neighbour with nothing to send skips its message, so a step of a run that fills with particles
/// calls in other orders as it fills): it is merged into the nearest such related phase before it, else after it.
/// A kind of the time step (SigPhase::step) with no such phase is merged into the heaviest related kind of the
/// time step whose MPI functions include its own: which kind a step is, and where a stretch of steps was cut, is
/// the run's data, and the code's steps are counted in full at every n.
/// The merged phase's instances are all of theirs (weight, time and work added up, share and relevance anew), its
/// representative stays the related phase's, each rank's bursts scaled to the rank's mean over every instance; the
/// phases are numbered anew in their order, and the run's order names the merged ones by the phase they joined.
/// Returns one line per phase merged, naming it by its id in the signature file, its run, its share of the
/// run's time and the phase it joined (empty: none was).
std::vector<std::string> merge_phase_kinds(analyzer::Signature& s, const std::vector<bool>& related);

/// relate_phase_keys(ref, the phases of `s`) after merging in `s` the kinds of its phases related to `ref`
/// (merge_phase_kinds), again until no more merge: a run as a model's (or a plan's) phases see it.
std::vector<std::optional<std::uint32_t>> relate_merging_kinds(std::span<const PhaseKey> ref, analyzer::Signature& s);

/// Relates the phases of the runs after merging in every run the kinds of its related phases (merge_phase_kinds),
/// again until no more merge: the same program point at every n, however its calls followed the data.
PhaseRelation relate_phases_merging_kinds(std::vector<Run>& runs);

}  // namespace p3s::modeler
