// SPDX-License-Identifier: BSD-3-Clause
// An application model (`p3s model`): per phase, how its weight, its communications (peers, counts, volumes,
// collectives, communicators) and the work of its bursts change with the process count n — the method's SLT
// and SCIC — learnt from the signatures of a few runs and checked against a held-out one.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "p3s/modeler/law.hpp"
#include "p3s/modeler/pattern.hpp"
#include "p3s/modeler/series.hpp"
#include "p3s/mpi/vocabulary.hpp"

namespace p3s::modeler {

inline constexpr int kModelSchemaVersion = 1;

/// What a group of consecutive calls to one MPI function does.
enum class Role : std::uint8_t {
  PointToPoint,  ///< sends and receives (blocking or started), one entry per call, peers by a pattern
  Completion,    ///< MPI_Wait*/MPI_Test*: completes requests started by earlier calls of the phase
  Collective,    ///< collectives (blocking, or a non-blocking start)
  Local,         ///< calls that move no data (MPI_Comm_rank, a probe, a wait on nothing)
};
[[nodiscard]] std::string_view role_name(Role role) noexcept;

/// How a communicator is formed from MPI_COMM_WORLD: the ranks that share r's color, in rank order.
struct CommModel {
  enum class Kind : std::uint8_t {
    World,    ///< every rank
    Self,     ///< r alone
    Block,    ///< color r / size(n): consecutive blocks of size(n) ranks (rows of a row-major grid)
    Strided,  ///< color r mod stride(n): every stride(n)-th rank (columns)
  };
  Kind kind = Kind::World;
  ExactLaw param;  ///< Block: size; Strided: stride
  /// The world ranks of r's communicator at n.
  [[nodiscard]] std::vector<std::int64_t> members(std::int64_t r, std::int64_t n) const;
  [[nodiscard]] std::string to_string() const;
};

/// A p2p term's traits, per slot: message size and tag.
struct TermTraits {
  std::array<RegressionLaw, 2> bytes;
  /// Sizes within a repetition scale by this per step (1: all equal; 0.5: halving, as in recursive halving).
  std::array<double, 2> bytes_step_factor{1, 1};
  std::array<std::int64_t, 2> tag{0, 0};
  std::array<bool, 2> tag_varies{false, false};  ///< the tag differs between instances or ranks (e.g. a counter)
};

/// A completion's reference to the requests started in another group: those of one term of the pattern
/// case that rank uses there, all of them (index -1) or one repetition.
struct RequestRef {
  std::uint32_t group = 0;
  std::uint32_t pattern_case = 0;
  std::uint32_t term = 0;
  std::int64_t index = -1;
};

/// One collective call of a group.
struct CollectiveEntry {
  mpi::Collective op = mpi::Collective::Unknown;
  CommModel comm;
  std::optional<ExactLaw> root;  ///< root as a rank of the communicator, when the collective has one
  RegressionLaw bytes_root;      ///< bytes sent by the root (by every rank when there is no root)
  RegressionLaw bytes_other;     ///< bytes sent by a non-root rank
  RegressionLaw received_root;
  RegressionLaw received_other;
  /// Per law (bytes_root, bytes_other, received_root, received_other): the law gives bytes per member of the
  /// communicator, to be multiplied by its size.
  std::array<bool, 4> per_member{false, false, false, false};
  /// The laws evaluated at n on a communicator of `members` ranks, for the root or another rank.
  [[nodiscard]] double bytes_at(std::int64_t n, std::int64_t members, bool at_root) const;
  [[nodiscard]] double received_at(std::int64_t n, std::int64_t members, bool at_root) const;
};

/// What each peer slot of a point-to-point call does: a send, a blocking receive (Recv) or a posted one
/// (IrecvPost); nullopt for no slot.
using SlotKinds = std::array<std::optional<mpi::ActionKind>, 2>;

/// Consecutive calls to one MPI function in a phase (a group of the phase's shape).
struct GroupModel {
  mpi::Function function = mpi::Function::Other;
  std::string call;  ///< the function's name (for a function outside the vocabulary, the name the trace gave it)
  Role role = Role::Local;
  int slots = 1;                                   ///< peers per call (2 for MPI_Sendrecv)
  SlotKinds slot_kinds;                            ///< what each slot does
  bool starts_requests = false;                    ///< MPI_Isend, MPI_Irecv and the like
  Pattern pattern;                                 ///< PointToPoint: the peers of every call
  std::vector<std::vector<TermTraits>> traits;     ///< PointToPoint: [pattern case][term]
  ExactLaw count;                                  ///< other roles: calls per rank
  std::vector<std::vector<RequestRef>> completes;  ///< Completion: per call, the requests it completes
  std::vector<CollectiveEntry> collectives;        ///< Collective: per call
};

/// The work of one burst position of a phase for one class of ranks.
struct BurstModel {
  /// Where the burst is: before the calls of (group, pattern case, term), summed over a repetition's calls
  /// (PointToPoint), or before call `term` of the group (other roles); group -1 is the phase's tail.
  std::int32_t group = -1;
  std::uint32_t pattern_case = 0;
  std::uint32_t term = 0;
  /// scaling: the class's total work over the run (weight x ranks x work per rank) follows `law` and is shared
  /// by the class's ranks; constant: the work per rank and instance follows `law` (control code).
  bool scaling = true;
  /// scaling: the total is shared by all n processes rather than by the class's ranks (the class is all ranks
  /// but a few that do other work besides their share).
  bool shared_by_all = false;
  RegressionLaw law;
};

/// Ranks whose bursts behave alike (the method's instruction groups): those that use the same pattern case in
/// every point-to-point group of the phase and whose work per instance is within 5 % of each other's.
struct WorkClass {
  std::vector<std::uint32_t> cases;  ///< the pattern case per PointToPoint group (0 for other groups)
  /// Ranks of those cases whose work differs from the others' (a rank that also does the I/O, a grid's first
  /// row) are a class of their own, given by a predicate that holds in every fitted run.
  RankPredicate when;
  std::vector<BurstModel> bursts;
  /// Measured rows of the SCIC: per fitted run, ranks in the class, work per rank and instance, total work.
  struct Row {
    std::int64_t n = 0;
    std::int64_t ranks = 0;
    double work_per_rank = 0;
    double total = 0;
  };
  std::vector<Row> measured;
};

struct PhaseModel {
  std::uint32_t id = 0;
  std::string calls;
  bool relevant = false;
  double share = 0;          ///< of the largest fitted run's time
  ExactLaw weight;           ///< instances per run
  bool weight_exact = true;  ///< false: no exact law fitted; `weight_fit` rounds a regression
  RegressionLaw weight_fit;
  std::vector<GroupModel> groups;
  std::vector<WorkClass> work;
  double total_work_spread = 0;    ///< of weight x work across the fitted runs (strong scaling: small)
  std::vector<std::string> notes;  ///< what could not be modelled exactly

  /// Instances at n (rounded when the weight law is a regression).
  [[nodiscard]] std::int64_t weight_at(std::int64_t n) const;
};

/// The comparison of a model's predictions with a real run at the same n.
struct PhaseCheck {
  std::uint32_t phase = 0;
  bool pattern_exact = true;
  std::string first_mismatch;  ///< "rank 5, call 3: expected MPI_Isend to 6, got MPI_Isend to 7"
  std::int64_t comms_predicted = 0;
  std::int64_t comms_actual = 0;
  std::int64_t weight_predicted = 0;
  std::int64_t weight_actual = 0;
  double volume_error_mean = 0;
  double volume_error_max = 0;
  double work_error_mean = 0;  ///< over the ranks: each rank's work per instance
  double work_error_max = 0;
  double work_error_total = 0;  ///< of the phase's work per instance summed over all ranks
};

struct Validation {
  std::int64_t n = 0;
  std::string signature;
  std::vector<PhaseCheck> phases;
  std::vector<std::string> unrelated;  ///< phases of the real run the model does not have
};

/// What shaped a fit besides its inputs; recorded in the model so that the fit can be reproduced.
struct FitOptions {
  /// The expression search tried last for peers: bounded by a count of candidates, never by time, so the same
  /// signatures give the same model on a loaded machine.
  SearchOptions search;
};

struct Model {
  int schema_version = kModelSchemaVersion;
  std::string tool;
  std::string date;
  std::string work_metric;
  std::string application;  ///< the command without launcher and process count, when known
  struct Input {
    std::string path;
    std::int64_t n = 0;
    std::string command;
    std::string date;
  };
  std::vector<Input> inputs;  ///< the runs the final model was fitted on
  FitOptions options;
  std::vector<PhaseModel> phases;
  std::vector<std::string> unrelated;          ///< phases of some run that could not be related
  std::vector<analyzer::PhaseRunEntry> order;  ///< the largest run's phase order, in model phase ids
  std::optional<Validation> validation;        ///< the held-out run, predicted from the others
};

struct ModelOptions {
  /// Hold the largest run out to validate a model fitted on the others, then fold it in (the method's way).
  bool hold_out_largest = true;
  /// Validate against this signature instead (all inputs are fitted).
  std::optional<std::filesystem::path> validate_with;
  FitOptions fit;
};

/// Fits a model to the signatures. @throws p3s::InputError for unusable inputs.
[[nodiscard]] Model build_model(std::span<const std::filesystem::path> signatures, const ModelOptions& options);
/// Fits a model to loaded runs (no validation).
[[nodiscard]] Model fit_model(std::span<const Run> runs, const FitOptions& options = {});

/// Compares the model's prediction at the run's n with the run.
[[nodiscard]] Validation compare_with(const Model& model, const Run& run);

/// Writes the model as JSON (temporary file renamed into place). @throws p3s::Error when it cannot.
void write_model(const Model& model, const std::filesystem::path& path);
/// Reads a model file. @throws p3s::InputError naming the file when it is not a p3s model of this schema.
[[nodiscard]] Model read_model(const std::filesystem::path& path);

/// The equations per phase in readable form (`p3s model --report`).
[[nodiscard]] std::string model_report(const Model& model);
/// The validation table.
[[nodiscard]] std::string validation_report(const Validation& v);

}  // namespace p3s::modeler
