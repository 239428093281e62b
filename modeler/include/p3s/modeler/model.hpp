// SPDX-License-Identifier: BSD-3-Clause
// An application model (`p3s model`): per phase, how its weight, its communications (peers, counts, volumes,
// collectives, communicators) and the work of its bursts change with the process count n — the method's SLT and
// the laws of its SCIC. This is what prediction reads; the fit that produced it is described in fit.hpp.
#pragma once

#include <array>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "p3s/modeler/block.hpp"
#include "p3s/modeler/dims.hpp"
#include "p3s/modeler/law.hpp"
#include "p3s/modeler/pattern.hpp"
#include "p3s/mpi/vocabulary.hpp"

namespace p3s::modeler {

/// Version 3 adds each burst's compute-time law and each work class's time fit and far point (a version 2 model
/// predicts no time); version 4 laws may count calls made where a grid's side is longer than 2 ("[dims3(n)[0] > 2]",
/// which earlier readers do not know), and a phase's grid_seen says which dimension's calls another's follow;
/// version 5 phases may keep their weight as measured at each fitted n (weight_measured, in place of the regression
/// that earlier readers would extrapolate); version 6 the time step's main kind may take the steps its other kinds
/// leave (step_total, which earlier readers would ignore). Readers take 2 to 6.
inline constexpr int kModelSchemaVersion = 6;
inline constexpr int kOldestModelSchemaVersion = 2;
/// The first version with compute-time laws.
inline constexpr int kFirstTimedModelSchemaVersion = 3;

/// What a group of consecutive calls to one MPI function does.
enum class Role : std::uint8_t {
  PointToPoint,  ///< sends and receives (blocking or started), one entry per call, peers by a pattern
  Completion,    ///< MPI_Wait*/MPI_Test*: completes requests started by earlier calls of the phase
  Collective,    ///< collectives (blocking, or a non-blocking start)
  Local,         ///< calls that move no data (MPI_Comm_rank, a probe, a wait on nothing)
};
/// "p2p", "completion", "collective", "local": the stable names of roles.
[[nodiscard]] std::string_view role_name(Role role) noexcept;
/// The role of a stable name; nullopt when it is not one.
[[nodiscard]] std::optional<Role> role_named(std::string_view name) noexcept;

/// How a communicator is formed from MPI_COMM_WORLD: the ranks that share r's colour, in rank order. A replay
/// builds it with MPI_Comm_split(MPI_COMM_WORLD, color(r, n), key(r, n)); `created_by` says which call the
/// application used (MPI_Comm_split, MPI_Cart_create, MPI_Comm_dup, ...; MPI_Init for the world).
struct CommModel {
  enum class Kind : std::uint8_t {
    World,    ///< every rank
    Self,     ///< r alone
    Block,    ///< color r / size(n): consecutive blocks of size(n) ranks (rows of a row-major grid)
    Strided,  ///< color r mod stride(n): every stride(n)-th rank (columns)
  };
  Kind kind = Kind::World;
  ExactLaw param;                                   ///< Block: size; Strided: stride
  mpi::Function created_by = mpi::Function::Other;  ///< Other when the runs do not say or disagree
  /// The world ranks of r's communicator at n.
  [[nodiscard]] std::vector<std::int64_t> members(std::int64_t r, std::int64_t n) const;
  /// How many ranks r's communicator has at n, and the world rank of its rank `index` (-1 when it has none):
  /// what members() gives, without listing them.
  [[nodiscard]] std::int64_t size_of(std::int64_t r, std::int64_t n) const;
  [[nodiscard]] std::int64_t member(std::int64_t r, std::int64_t n, std::int64_t index) const;
  /// MPI_Comm_split's colour and key for rank r at n (ranks keep their world order).
  [[nodiscard]] std::int64_t color(std::int64_t r, std::int64_t n) const;
  [[nodiscard]] std::int64_t key(std::int64_t r, std::int64_t n) const;
  /// r's rank in its communicator at n.
  [[nodiscard]] std::int64_t index_of(std::int64_t r, std::int64_t n) const;
  /// The colour and key as integer expressions in r (p3s::modeler::Expression syntax): at n when n > 0
  /// ("r / 8"), with the law of the parameter otherwise ("r / dims2(n)[1]", for reading only).
  [[nodiscard]] std::string color_rule(std::int64_t n = 0) const;
  [[nodiscard]] std::string key_rule() const;
  /// How many ranks a communicator has, as a law in n ("dims2(n)[1]", "ceil(n / 4)", "n", "1").
  [[nodiscard]] std::string size_rule() const;
  /// The readable form ("world", "blocks of dims2(n)[1] (color r / dims2(n)[1])").
  [[nodiscard]] std::string to_string() const;
  /// Equal kinds and parameters at n (the same communicator for a replay at n, whoever created it).
  [[nodiscard]] bool same_at(const CommModel& other, std::int64_t n) const;
  /// Checks that the communicator exists at n: a block size or stride that is a whole number >= 1.
  /// @throws p3s::ModelError naming the law when it is not.
  void check_at(std::int64_t n) const;
};

/// "world", "self", "block", "strided": the stable names of communicator kinds.
[[nodiscard]] std::string_view comm_kind_name(CommModel::Kind kind) noexcept;
/// The kind of a stable name; nullopt when it is not one.
[[nodiscard]] std::optional<CommModel::Kind> comm_kind_named(std::string_view name) noexcept;

/// A p2p term's traits, per slot: message size and tag.
struct TermTraits {
  /// Bytes per message; with a face axis, per point of the face (face_points(), which prediction multiplies in).
  std::array<RegressionLaw, 2> bytes;
  /// -1, or in a program with a grain (a coarse grid only some ranks hold), the dimension the step crosses: the
  /// message is then the holder's block's face across it, `bytes` per point (face_points()).
  std::array<int, 2> face_axis{-1, -1};
  /// With a face axis: the ghost layers the face carries along its two other dimensions, the lower first (a code
  /// that sends its face with the ghost rows of the dimensions it exchanged before: face_points()).
  std::array<std::array<int, 2>, 2> face_margins{};
  /// How far the sizes of one fitted run spread over its ranks (and repetitions, where they are all of one size):
  /// the largest (max - min) / mean over the runs (0: every rank sends the same; ghost atoms of a molecular dynamics
  /// code differ by up to 30 %). A law in n cannot follow it.
  std::array<double, 2> rank_spread{0, 0};
  /// Sizes within a repetition scale by this per step (1: all equal; 0.5: halving, as in recursive halving).
  std::array<double, 2> bytes_step_factor{1, 1};
  std::array<std::int64_t, 2> tag{0, 0};
  std::array<bool, 2> tag_varies{false, false};  ///< the tag differs between instances or ranks (e.g. a counter)
  /// Sizes that follow the blocks of data each rank holds (block.hpp), where no law in n reproduces them: each
  /// rank's size, which `bytes` gives the mean of.
  std::array<std::optional<BlockLaw>, 2> block;
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
  /// A scan whose ranks count no block of their own (MPI_Exscan, or an MPI_Scan in place): its last member sends
  /// nothing, its first receives nothing.
  bool exclusive = false;
  /// The laws evaluated at n on a communicator of `members` ranks, for the root or another rank.
  [[nodiscard]] double bytes_at(std::int64_t n, std::int64_t members, bool at_root) const;
  [[nodiscard]] double received_at(std::int64_t n, std::int64_t members, bool at_root) const;
};

/// What each peer slot of a point-to-point call does: a send, a blocking receive (Recv) or a posted one
/// (IrecvPost); nullopt for no slot.
using SlotKinds = std::array<std::optional<mpi::ActionKind>, 2>;

/// Of the items [first, last), in order of increasing process count `n_of(item)`, the one whose count is nearest n
/// (the larger on a tie): the fitted run that stands in at n where a law is kept as measured. `last` where none.
template <class It, class NOf>
[[nodiscard]] It nearest_by_n(It first, It last, std::int64_t n, NOf n_of) {
  It best = first;
  for (It it = first; it != last; ++it) {
    if (std::abs(n_of(*it) - n) <= std::abs(n_of(*best) - n)) best = it;
  }
  return best;
}

/// What a group did in each fitted run, kept when no law reproduces its peers or its number of calls: per run,
/// per rank, each call's peers per slot (-1: none). Exact at a fitted n; elsewhere an approximation that is not
/// extrapolated: the nearest fitted run's calls.
struct MeasuredCalls {
  using Calls = std::vector<std::array<std::int64_t, 2>>;
  struct Run {
    std::int64_t n = 0;
    std::vector<Calls> ranks;  ///< by rank
  };
  std::vector<Run> runs;  ///< by increasing n

  [[nodiscard]] bool empty() const noexcept { return runs.empty(); }
  /// "4 8 16": the process counts of the runs kept.
  [[nodiscard]] std::string fitted_n() const;
  /// The run standing in at n: n's own, else the nearest fitted one (the larger on a tie).
  [[nodiscard]] const Run& source(std::int64_t n) const;
  /// Rank r's calls at n: as measured at a fitted n; elsewhere those of the rank at r's relative place in the
  /// source run, each peer at the same offset from the rank as there (none outside 0..n-1).
  [[nodiscard]] Calls calls(std::int64_t r, std::int64_t n) const;
};

/// Consecutive calls to one MPI function in a phase (a group of the phase's shape).
struct GroupModel {
  mpi::Function function = mpi::Function::Other;
  std::string call;  ///< the function's name (for a function outside the vocabulary, the name the trace gave it)
  Role role = Role::Local;
  int slots = 1;                                   ///< peers per call (2 for MPI_Sendrecv)
  SlotKinds slot_kinds;                            ///< what each slot does
  bool starts_requests = false;                    ///< MPI_Isend, MPI_Irecv and the like
  Pattern pattern;                                 ///< PointToPoint: the peers of every call
  CommModel comm;                                  ///< PointToPoint: the communicator of the messages
  std::vector<std::vector<TermTraits>> traits;     ///< PointToPoint: [pattern case][term]
  ExactLaw count;                                  ///< other roles: calls per rank
  std::vector<std::vector<RequestRef>> completes;  ///< Completion: per call, the requests it completes
  /// Completion: one call per request that the terms it completes started at the rank (an MPI_Wait after each
  /// MPI_Irecv), so the number of calls follows the patterns rather than `count`: a rank with no neighbour along a
  /// side of 1 posts no receive and waits for none.
  bool per_request = false;
  /// Completion groups: one call wherever the terms it completes started requests at the rank, completing them
  /// all, and none elsewhere, whatever `count` says (an MPI_Waitall after an exchange along a side that is 1 at
  /// some n).
  bool per_batch = false;
  std::vector<CollectiveEntry> collectives;  ///< Collective: per call
  /// Not empty when no law reproduces the peers (PointToPoint: `pattern` has no case) or the number of calls
  /// (other roles: `count` is unused): what the group did in each fitted run, used instead.
  MeasuredCalls measured;
  /// In a loop whose iterations each make the same calls to the same peers (a wavefront's planes, a pipelined
  /// sweep's stages): the iterations at n. A point-to-point group's pattern (or measured calls) is then one
  /// iteration's, made this many times; other roles' `count` stays the calls of all iterations.
  std::optional<ExactLaw> iterations;

  /// PointToPoint: rank r's calls at n, from the pattern or, when measured, as one case of one term; in a loop
  /// (`iterations`), one iteration's calls repeated, each entry with its iteration.
  [[nodiscard]] std::vector<Entry> entries(std::int64_t r, std::int64_t n, std::size_t* which = nullptr) const;
  /// The index a message's size follows in a term: the loop's iteration in a loop (`iterations`), else the
  /// repetition index.
  [[nodiscard]] std::int64_t size_index(const Entry& e) const noexcept { return iterations ? e.iteration : e.index; }
  /// In a loop (`iterations`), the iterations at n (at least 1); 1 elsewhere.
  [[nodiscard]] std::int64_t iterations_at(std::int64_t n) const;
  /// Other roles: rank r's calls at n (the count law, rounded where it is no whole number, or as measured).
  [[nodiscard]] std::int64_t count_at(std::int64_t r, std::int64_t n) const;
  /// True when the group stands in at n for what no law gives: measured, and n is not a fitted n.
  [[nodiscard]] bool approximate_at(std::int64_t n) const;
  /// PointToPoint: the bytes of repetition `index` of slot `slot` of term `term` in pattern case `which` at n, as
  /// the laws give them (the size law, its step factor, the face's points): below zero where a law is, which
  /// prediction takes as 0. At rank r (r >= 0), a block law gives the rank's own size; without r, the mean law.
  [[nodiscard]] double message_bytes(std::size_t which, std::size_t term, std::size_t slot, std::int64_t n,
                                     std::int64_t index = 0, std::int64_t r = -1) const;
};

/// How one quantity of a burst position (its work, its wall-clock time) changes with n for a class of ranks.
struct BurstLaw {
  /// scaling: the class's total over the run (weight x ranks x value per rank) follows `law` and is shared by the
  /// class's ranks; constant: the value per rank and instance follows `law` (control code).
  bool scaling = true;
  /// scaling: the total is shared by all n processes rather than by the class's ranks (the class is all ranks
  /// but a few that do other work besides their share).
  bool shared_by_all = false;
  RegressionLaw law;
  /// The value per rank and instance at n for a class of `ranks` ranks in a phase weighing `weight` there (0 where
  /// the law falls below zero).
  [[nodiscard]] double at(std::int64_t n, std::int64_t ranks, std::int64_t weight) const;
};

/// One burst position of a phase for one class of ranks: its work (the method's SCIC) and its wall-clock time
/// in ns (the method's CRMi).
struct BurstModel {
  /// Where the burst is: before the calls of (group, pattern case, term), summed over a repetition's calls
  /// (PointToPoint), or before call `term` of the group (other roles); group -1 is the phase's tail.
  std::int32_t group = -1;
  std::uint32_t pattern_case = 0;
  std::uint32_t term = 0;
  BurstLaw work;
  /// The burst's duration; absent in a model written before compute time was modelled (schema 2).
  std::optional<BurstLaw> time;
};

/// A far point (the method's CRMc): a run of the same program with a reduced input at a larger process count.
/// Its work per rank is placed at the n where the class's predicted work per rank is the same; its measured time
/// there pins how the time per unit of work moves beyond the fitted runs, which those runs cannot show (the work
/// of each process starts to fit in a cache). The calibrated law is the fitted one times (n / from_n)^exponent
/// above from_n, the exponent taking it through the far point; at and below from_n the fitted law stands.
struct FarPoint {
  std::string signature;        ///< the far run's signature, as given
  std::int64_t run_n = 0;       ///< its process count
  std::uint32_t run_phase = 0;  ///< the phase of the far run related to this one
  double work_per_rank = 0;     ///< the class's work per rank and instance in the far run
  std::int64_t n = 0;           ///< the n whose predicted work per rank is closest to it
  double predicted_work = 0;    ///< the predicted work per rank at n
  double time_ns = 0;           ///< the far run's compute time per rank and instance: the point (n, time_ns)
  double fitted_ns = 0;         ///< what the fitted law gave at n
  std::int64_t from_n = 0;      ///< the largest fitted process count
  double exponent = 0;          ///< the correction's exponent
  /// The correction at n: 1 up to from_n, (n / from_n)^exponent above.
  [[nodiscard]] double factor(std::int64_t at) const;
};

/// Ranks whose bursts behave alike (the method's instruction groups): those that use the same pattern case in
/// every point-to-point group of the phase and whose work per instance is within 5 % of each other's.
struct WorkClass {
  std::vector<std::uint32_t> cases;  ///< the pattern case per PointToPoint group (0 for other groups)
  /// Ranks of those cases whose work differs from the others' (a rank that also does the I/O, a grid's first
  /// row) are a class of their own, given by a predicate that holds in every fitted run.
  RankPredicate when;
  std::vector<BurstModel> bursts;
  /// Ranks in the class in the largest fitted run that has the class: a rank that falls in no class at a new n
  /// takes the class with the most.
  std::int64_t largest_run_ranks = 0;
  /// The class's compute time over the run (weight x ranks x compute time per rank and instance, the sum of its
  /// bursts' times) fitted on the runs: the method's CRMi for the class, a constant under perfect strong scaling,
  /// rising where time per unit of work grows with n or a part does not shrink. Absent without time laws.
  std::optional<RegressionLaw> time_fit;
  /// `time_fit` is the total as if all n processes were of the class (weight x n x time per rank), the flatter of
  /// the two where the class's number of ranks follows a grid's sides rather than n.
  bool time_shared_by_all = false;
  /// The far point that calibrates the fit (the method's CRMc); absent without one.
  std::optional<FarPoint> far_point;
  /// The class's compute time per rank and instance at n, for `ranks` ranks and `weight` instances: the fitted
  /// law (calibrated by the far point where there is one), else the sum of the bursts' time laws; nullopt
  /// without time laws. Prediction scales the bursts' times to add up to it.
  [[nodiscard]] std::optional<double> time_at(std::int64_t n, std::int64_t ranks, std::int64_t weight) const;
};

/// Consecutive groups of a phase that are the steps of a loop (an MPI_Irecv, MPI_Send, MPI_Wait of each step of
/// a recursive halving): each group holds one call per iteration, and a rank makes them iteration by iteration,
/// the t-th call of each group in group order before the (t+1)-th.
struct PhaseLoop {
  std::uint32_t first = 0;   ///< the first group
  std::uint32_t groups = 0;  ///< how many groups, >= 2
  friend bool operator==(const PhaseLoop&, const PhaseLoop&) = default;
};

/// What the fitted runs showed of the process grid a phase's exchanges step along (the frame of its groups whose
/// peers step along one dimension): the longest side along each dimension, and along which a side longer than 2
/// made some rank call more in those groups than the sides of 2 did (a particle code's migration: a second exchange
/// each way).
struct GridSeen {
  Frame frame = Frame::Torus3;
  std::array<std::int64_t, 3> box{0, 0, 0};  ///< the box that cuts the grid (GridLayout::box), all 0 for MPI's
  std::array<std::int64_t, 3> longest{0, 0, 0};
  std::array<bool, 3> longer_adds_calls{false, false, false};
  /// Per dimension, -1, or the dimension whose longer sides' calls the exchanges along it were given (side_analogy):
  /// no fitted run had it longer than 2, and the calls a longer side adds there are inferred, not seen.
  std::array<int, 3> follows{-1, -1, -1};
};

/// The dimension a group's peers step along in its pattern's grid frame: the only dimension with a label law
/// other than 0 in every term and slot; nullopt for other groups.
[[nodiscard]] std::optional<std::size_t> step_axis(const GroupModel& g);

/// A phase's weight as its own laws give it (PhaseModel's weight fields): an exact law, else the weight measured at
/// the nearest fitted n where it is kept so, else a rounded regression (never below 0).
struct WeightLaw {
  ExactLaw exact_law;
  bool exact = true;
  RegressionLaw fit;
  std::map<std::int64_t, std::int64_t> measured;

  [[nodiscard]] std::int64_t at(std::int64_t n) const;
};

/// One phase's laws: its weight, its groups of calls and the work of its bursts, as functions of n.
struct PhaseModel {
  std::uint32_t id = 0;
  std::string calls;         ///< the MPI functions it calls ("MPI_Irecv MPI_Isend ...")
  bool relevant = false;     ///< relevant in some fitted run
  ExactLaw weight;           ///< instances per run
  bool weight_exact = true;  ///< false: no exact law fitted; `weight_fit` rounds a regression
  RegressionLaw weight_fit;
  /// Not empty where no exact law fitted and the fitted runs' weights differ by little (a count the run's data
  /// decides, not n): the weight of each fitted run, by n, which stands in at every n (the nearest fitted n's, the
  /// larger n on a tie) in place of `weight_fit`.
  std::map<std::int64_t, std::int64_t> weight_measured;
  std::vector<GroupModel> groups;
  std::vector<PhaseLoop> loops;  ///< in group order, disjoint
  std::vector<WorkClass> work;
  std::optional<GridSeen> grid_seen;  ///< the grid its exchanges step along, as the fitted runs showed it
  /// Not 0 for a phase whose instance holds more calls on some rank than the modeler aligns across ranks
  /// (kMostAlignedCalls; an iteration no loop folds): the most it holds. Such a phase is kept as its work and time
  /// only: it has no groups, and predictions leave its calls out and say so.
  std::uint64_t calls_left_out = 0;
  /// One time step of the code in every fitted run (analyzer::SigPhase::step): the time step is one phase whose
  /// kinds are the phases so marked, their weights added the code's steps.
  bool step = false;
  /// On the time step's main kind (its heaviest), where the step has other kinds and the code's steps (every kind's
  /// weight added) follow an exact law in n: that law. The main kind then takes the steps the other kinds leave at
  /// n, so that the kinds add up to the code's steps at every n, not at the fitted ones only (which kind a step is
  /// is the run's data: each other kind keeps its own weight law).
  std::optional<ExactLaw> step_total;
  /// With step_total: the other kinds' own weight laws (link_time_step() fills them from the model; not stored).
  std::vector<WeightLaw> other_kinds;

  /// The fitted n and weight of weight_measured standing in at n (its end where it is empty).
  [[nodiscard]] std::map<std::int64_t, std::int64_t>::const_iterator nearest_measured_weight(std::int64_t n) const {
    return nearest_by_n(weight_measured.begin(), weight_measured.end(), n, [](const auto& w) { return w.first; });
  }
  /// The weight fields as one law (what its own laws give, whatever the other kinds of a time step).
  [[nodiscard]] WeightLaw own_weight() const { return {weight, weight_exact, weight_fit, weight_measured}; }
  /// Instances at n (rounded when the weight law is a regression; the main kind of a time step takes the steps its
  /// other kinds leave).
  [[nodiscard]] std::int64_t weight_at(std::int64_t n) const;
  /// Whether group g is one of a loop's: its calls are iterations, and the bursts before them one position.
  [[nodiscard]] bool in_loop(std::size_t g) const;
  /// The groups that are approximate at n (GroupModel::approximate_at).
  [[nodiscard]] std::vector<std::uint32_t> approximate_groups(std::int64_t n) const;
  /// The point-to-point groups whose message sizes follow their law only approximately: it misses some fitted run
  /// by more than 0.5 % (sizes that vary from rank to rank or step to step, or depend on more than n).
  [[nodiscard]] std::vector<std::uint32_t> approximate_sizes() const;
  /// What the prediction at n cannot know, one sentence each: a weight no exact law gives, at an n no fitted run
  /// had; sizes no law reproduces; sizes whole at every n in
  /// `fitted_n` but not at n (data divided unevenly); a dimension longer at n than in every fitted run, where
  /// along another dimension a side longer than 2 added calls (naming the groups stepping along it).
  [[nodiscard]] std::vector<std::string> caveats(std::int64_t n, const std::vector<std::int64_t>& fitted_n) const;
};

/// A phase's weight law as printed: its exact law, "as measured at n = 2: 2693, ..." or a rounded regression.
[[nodiscard]] std::string weight_text(const PhaseModel& p);

/// Gives the time step's main kind (the phase with step_total) the other kinds' weight laws; throws InputError
/// where step_total is on more than one phase or on one that is no kind of the step.
void link_time_step(std::vector<PhaseModel>& phases);

/// The time step at n as one phase with kinds (PhaseModel::step): "phase 9 with kinds 8, 10: 5001 steps", its most
/// frequent kind at n first; empty where no phase is one.
[[nodiscard]] std::string time_step_text(const std::vector<PhaseModel>& phases, std::int64_t n);

/// What shaped a fit besides its inputs; recorded in the model so that the fit can be reproduced.
struct FitOptions {
  /// The expression search tried last for peers: bounded by a count of candidates, never by time, so the same
  /// signatures give the same model on a loaded machine.
  SearchOptions search;
  /// Process counts the model will be evaluated at (a held-out run's, a prediction's): exact laws that are whole
  /// numbers there are preferred to those that are not.
  std::vector<std::int64_t> evaluate_at = {};
};

/// What a model leaves out, written down where prediction reads it.
struct ModelLimits {
  /// Threads modelled per process: each process's first thread only (threads of one process are separate
  /// locations in a trace, without the causality between them that a model of several would need).
  int threads_per_process = 1;
  /// The share of the fitted runs' MPI calls that threads other than each process's first made (an
  /// MPI_THREAD_MULTIPLE application's), left out of the model: the most of any run, 0 for none.
  double other_threads_share = 0;
  /// The fitted run whose phase order the model keeps: the largest.
  std::int64_t order_from_n = 0;
  /// Phases that occur in several stretches of that order: each stretch keeps that run's count at every n (a
  /// phase in one stretch takes its weight at n).
  std::vector<std::uint32_t> fixed_count_phases;
};

/// One line on the calls of other threads a model leaves out, where it leaves some.
[[nodiscard]] std::optional<std::string> threads_note(const ModelLimits& limits);

/// The limits as the model file and the LT4NC write them.
[[nodiscard]] nlohmann::json limits_json(const ModelLimits& limits);

/// A stretch of the run: `count` instances of phase `phase` in a row (the phase order, in model phase ids).
struct PhaseRun {
  std::uint32_t phase = 0;
  std::uint64_t count = 0;
  friend bool operator==(const PhaseRun&, const PhaseRun&) = default;
};

/// An application model: what prediction reads (laws, order, communicators), as written to the model file. What
/// the fit measured and how well it predicted a held-out run is in its FitReport (p3s/modeler/fit.hpp).
struct Model {
  int schema_version = kModelSchemaVersion;
  std::string tool;
  std::string date;
  std::string work_metric;
  std::string application;  ///< the command without launcher and process count, when known
  std::string mpi_library;  ///< the runs' MPI library, as their signatures say (empty where none does)
  /// Whose MPI_Dims_create the grids follow: the runs' library's (Open MPI's where they do not say).
  DimsRule dims_rule = DimsRule::OpenMpi;
  struct Input {
    std::string path;
    std::int64_t n = 0;
    std::string command;
    std::string date;
  };
  std::vector<Input> inputs;  ///< the runs the model was fitted on
  /// The process counts of `inputs`, in their order.
  [[nodiscard]] std::vector<std::int64_t> fitted_counts() const {
    std::vector<std::int64_t> out;
    for (const Input& in : inputs) out.push_back(in.n);
    return out;
  }
  FitOptions options;
  std::vector<PhaseModel> phases;
  std::vector<PhaseRun> order;  ///< the largest run's phase order, in model phase ids
  ModelLimits limits;
};

/// Whether the model predicts how long bursts take: every work class has a compute-time law (schema 3 and later).
[[nodiscard]] bool has_time_laws(const Model& model);

/// Writes the model as JSON (temporary file renamed into place). @throws p3s::Error when it cannot.
void write_model(const Model& model, const std::filesystem::path& path);
/// Reads a model file. @throws p3s::InputError naming the file when it is not a p3s model of this schema.
[[nodiscard]] Model read_model(const std::filesystem::path& path);

}  // namespace p3s::modeler
