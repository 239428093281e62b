// SPDX-License-Identifier: BSD-3-Clause
// Checking a predicted phase before it is written or replayed: every message has its two ends, every collective all
// the members of its communicator in one order, every request its completion. A replay makes the calls as real MPI
// calls, so a phase that breaks MPI's matching rules would hang it; the check says where, or repairs it on request.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "p3s/modeler/predict.hpp"

namespace p3s::modeler {

/// How a replay makes a predicted call: its point-to-point actions (sends, receives, posted receives), the
/// completions of requests started earlier in the instance, its collectives, or a probe that never blocks.
enum class CallPath : std::uint8_t { PointToPoint, Completion, Collective, Probe };
[[nodiscard]] CallPath path_of(mpi::Function f) noexcept;
/// Whether the sends of a point-to-point call start requests that a completion must finish (MPI_Isend, a persistent
/// start, a function outside the vocabulary); a posted receive always starts one.
[[nodiscard]] bool starts_requests(mpi::Function f) noexcept;
/// The bytes a replay sends for a message predicted at `bytes` (rounded to whole bytes).
[[nodiscard]] std::int64_t message_count(double bytes) noexcept;
/// `h` with one collective more: what every member of its communicator must agree on (operation, root, block in
/// whole bytes), in order. The check of a prediction and the replay's agreement hash alike.
[[nodiscard]] std::uint64_t add_collective(std::uint64_t h, mpi::Collective op, std::int64_t root,
                                           std::int64_t block) noexcept;
/// The bytes a replay lets a receive predicted at `bytes` take: the two ends' laws can differ a little, so a receive
/// takes twice its size or 64 KiB more, whichever is larger. A message larger than that would be truncated.
[[nodiscard]] std::int64_t receive_room(double bytes) noexcept;

/// What is wrong in a predicted phase, one kind per rule.
enum class Flaw : std::uint8_t {
  UnmatchedSend,      ///< a message that no receive of the phase takes
  UnmatchedReceive,   ///< a receive that no message of the phase reaches
  Truncated,          ///< a message larger than the room of the receive that takes it
  PeerOutside,        ///< a peer outside the run or outside the communicator of the call
  CollectiveMissing,  ///< a collective that some member of its communicator does not make
  CollectiveDiffers,  ///< members of a communicator make different collectives (operation, root, size) in one place
  NotCompleted,       ///< a request that no call of the phase completes
  CompletesNothing,   ///< a completion of a call that has no request left to complete
  Blocked,            ///< a call that waits for ever: the ranks it waits for wait for it, or for others that do
};
inline constexpr std::size_t kFlawKinds = 9;
/// "unmatched_send", "unmatched_receive", ...: stable names, as the LT4NC writes them.
[[nodiscard]] std::string_view flaw_name(Flaw f) noexcept;

/// One flaw, where it is: the rank and the call (index in the rank's calls of the instance) it names, in words.
struct Finding {
  Flaw flaw = Flaw::UnmatchedSend;
  std::int64_t rank = 0;
  std::int32_t call = 0;
  std::string what;  ///< "rank 4, call 57 (MPI_Sendrecv) waits for a message from rank 0 ..."
};

/// A change a repair makes to one rank's calls of an instance. Calls are never removed, so call indices (and the
/// completions' `started`) stay valid.
struct Fix {
  enum class Kind : std::uint8_t {
    Drop,           ///< the action goes (the call stays, as a null communication or a call that moves no data)
    Enlarge,        ///< the receive takes `bytes`, the size of the message it receives
    CompleteAtEnd,  ///< a completion of the request the action started is made at the end of the instance
  };
  Kind kind = Kind::Drop;
  std::int64_t rank = 0;
  std::int32_t call = 0;
  std::int32_t action = 0;
  double bytes = 0;
  /// A change that follows another: the completion of a request whose start is dropped or enlarged.
  bool follows = false;
  friend bool operator<(const Fix& a, const Fix& b) noexcept {
    return std::tie(a.rank, a.call, a.action, a.kind) < std::tie(b.rank, b.call, b.action, b.kind);
  }
};

/// What a matched receive takes: the size of the message that reaches it (MPI reports the sender's count), where
/// the receive's own law gave another (a posted receive's law is its buffer's room; a message's own law, the
/// sender's, is what arrives).
struct Received {
  std::int32_t rank = 0;
  std::int32_t call = 0;
  std::int32_t action = 0;           ///< the Recv action: a blocking receive's own, or the completion of a posted one
  std::optional<double> bytes;       ///< the message's size (none for where a receive was posted)
  std::optional<std::uint32_t> tag;  ///< the message's tag, for a receive that takes it (tag_from_send)
  friend bool operator<(const Received& a, const Received& b) noexcept {
    return std::tie(a.rank, a.call, a.action) < std::tie(b.rank, b.call, b.action);
  }
};

/// The check of one phase at n: how many flaws of each kind, the first ones in words, and what a repair changes.
struct PhaseConsistency {
  std::uint32_t phase = 0;  ///< the phase id
  std::int64_t n = 0;
  std::array<std::uint64_t, kFlawKinds> flaws{};
  std::vector<Finding> first;  ///< the first findings (at most kKeptFindings), rank by rank then message by message
  std::vector<Fix> fixes;      ///< sorted by rank, call and action
  /// Receives whose size differs from the message they take, and receives that take their message's tag (where
  /// they were posted and where they complete), sorted by rank, call and action (settle()).
  std::vector<Received> received;
  /// False when the fixes do not make the phase consistent (calls still waiting for each other after the rounds a
  /// repair may take): such a phase is refused even when a repair was asked for.
  bool repairable = true;
  static constexpr std::size_t kKeptFindings = 4;

  [[nodiscard]] std::uint64_t count() const noexcept;
  [[nodiscard]] bool consistent() const noexcept { return count() == 0; }
  /// "24 receives without a send, 24 sends without a receive": every kind found, with its count.
  [[nodiscard]] std::string summary() const;
  /// What is wrong, in one line: the phase and n, the first finding, and the count of each kind.
  [[nodiscard]] std::string diagnosis() const;
  /// The one line that refuses the phase: the diagnosis, and what to do.
  [[nodiscard]] std::string refusal() const;
  /// How many actions a repair drops, receives it enlarges and completions it adds.
  [[nodiscard]] std::array<std::uint64_t, 3> changes() const noexcept;
  /// What a repair did, in one line: "phase 1 repaired at n = 16: 24 receives without a send, ...; 48 actions
  /// dropped". Empty for a consistent phase.
  [[nodiscard]] std::string repair_note() const;
  /// Gives each matched receive of `rank.rank` the size of the message it takes (`received`): what MPI reports
  /// when the receive completes. No flaw: a replay's receive has room for the message either way. A receive that
  /// takes its message's tag (tag_from_send) gets it where it completes and where it was posted.
  void settle(PredictedRank& rank) const;
  /// Applies this phase's fixes of `rank.rank` to its calls (after settle(), which it makes first): unmatched actions
  /// dropped (with the completions of their requests), receives enlarged to their messages, requests left open
  /// completed by an MPI_Waitall at the end of the instance (which takes over the tail's burst, where the replay would
  /// have waited for them anyway).
  void repair(PredictedRank& rank) const;
};

namespace detail {
struct PhaseState;
}  // namespace detail

/// Checks one instance of a phase, rank by rank: each rank's calls are added once (in any order), then finish()
/// matches them. Point-to-point messages are matched as MPI does, FIFO per (communicator, source, destination, tag):
/// the k-th send of a key with its k-th receive, which must have room for it; receives from MPI_ANY_SOURCE or with
/// MPI_ANY_TAG take, in the order they are posted, the messages no specific receive takes (the first such message
/// from the lowest source): whether a wildcard takes a message a later specific receive needed depends on timing,
/// which no trace fixes. MPI_PROC_NULL peers match nothing. Every member of a communicator must make the same
/// collectives (operation, root and block size) in the same order; every request must be completed in the instance,
/// and no completion may name a call without a request left. Then every rank must be able to make all its calls:
/// matched messages can still wait for each other (a receive whose send comes after the sender's own receive, round
/// a ring), which would hang a replay as surely; standard sends are taken as buffered, as MPI may buffer them, and
/// collectives as synchronising. Memory: one record per message end, collective and call of the phase.
class PhaseChecker {
 public:
  PhaseChecker(std::uint32_t phase, std::int64_t n);
  ~PhaseChecker();
  PhaseChecker(PhaseChecker&&) noexcept;
  PhaseChecker& operator=(PhaseChecker&&) noexcept;
  PhaseChecker(const PhaseChecker&) = delete;
  PhaseChecker& operator=(const PhaseChecker&) = delete;

  /// Rank `rank.rank`'s calls in one instance. @throws p3s::TraceError when the rank is outside 0..n-1 or added twice.
  void add(const PredictedRank& rank);
  /// The verdict, once every rank was added. @throws p3s::TraceError when some rank was not.
  [[nodiscard]] PhaseConsistency finish();

 private:
  std::unique_ptr<detail::PhaseState> s_;
};

/// Checks one phase at n, generating every rank (each once).
[[nodiscard]] PhaseConsistency check_phase(const PhasePredictor& predictor, std::uint32_t phase, std::int64_t n);

/// What to do with a prediction whose phases are inconsistent (below): a message without its other end, a
/// collective without all its members, a request without its completion. The tools repair by default (DESIGN: a
/// valid series is never refused; a repaired phase says so) and refuse only when asked to be strict.
enum class OnInconsistency : std::uint8_t {
  Refuse,  ///< throw, naming the first inconsistent phase, ranks and call: nothing is written or replayed
  Repair,  ///< drop what does not match, enlarge what does not fit, complete what is left open; and say so
};

/// The tools' policy: repair, unless a user asked them to be strict (--strict).
[[nodiscard]] constexpr OnInconsistency on_inconsistency(bool strict) noexcept {
  return strict ? OnInconsistency::Refuse : OnInconsistency::Repair;
}

/// The check of a whole prediction at n: one PhaseConsistency per phase, in the model's order.
struct PredictionCheck {
  std::int64_t n = 0;
  std::vector<PhaseConsistency> phases;
  [[nodiscard]] bool repaired() const noexcept;
  /// One line per repaired phase (PhaseConsistency::repair_note).
  [[nodiscard]] std::vector<std::string> notes() const;
};

/// Checks every phase of the model at n (phase by phase, so memory is bounded by one phase). `predictors` are the
/// phases evaluated at n, in the model's order. With Repair, every repaired phase is checked again once repaired.
/// @throws p3s::TraceError with PhaseConsistency::refusal() of the first inconsistent phase when `policy` is Refuse (or
/// when a repair would leave a phase inconsistent, which is a bug).
[[nodiscard]] PredictionCheck check_prediction(const Model& model, const std::vector<PhasePredictor>& predictors,
                                               std::int64_t n, OnInconsistency policy);

/// Every phase of a model with compute-time laws evaluated at n, and their check (check_prediction): what a writer
/// of a timed prediction starts from. @throws p3s::InputError when the model has no compute-time laws; as
/// check_prediction otherwise.
struct CheckedPrediction {
  std::vector<PhasePredictor> phases;
  PredictionCheck check;
};
[[nodiscard]] CheckedPrediction checked_timed_prediction(const Model& model, std::int64_t n, OnInconsistency policy);

}  // namespace p3s::modeler
