// SPDX-License-Identifier: BSD-3-Clause
// The signature of one run: its phases, their weights and times, one representative per-rank event list per
// phase (the SiPT), and the order in which phases occurred. Written as signature.json
// (share/doc/signature-format.md) and read back by the modeler.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "p3s/analyzer/definitions.hpp"
#include "p3s/mpi/vocabulary.hpp"

namespace p3s::analyzer {

/// Version 2 adds each communicator's creating call and parent and drops the unused event_similarity option;
/// version 3 folds the phase order's repeated stretches into loops (phase_order.hpp). Readers take versions 1 to 3.
inline constexpr int kSignatureSchemaVersion = 3;
inline constexpr int kOldestSignatureSchemaVersion = 1;

/// Summary of samples (times in ns, work in the run's work metric).
struct Stat {
  std::uint64_t n = 0;
  double mean = 0;
  double stddev = 0;
  double min = 0;
  double max = 0;
  /// Adds a sample (Welford). `stddev` is brought up to date by finish().
  void add(double x);
  /// Computes `stddev` from the samples added.
  void finish();
  /// Relative spread (stddev / mean), 0 when the mean is 0.
  [[nodiscard]] double cv() const noexcept { return mean != 0 ? stddev / mean : 0; }

  double m2 = 0;  ///< running sum of squared deviations (not serialised)
};
/// The statistics of the samples of both (Chan et al.'s pooled mean and variance), finished.
[[nodiscard]] Stat pooled(const Stat& a, const Stat& b);

/// A communication action inside an MPI call.
struct SigAction {
  mpi::ActionKind kind = mpi::ActionKind::Send;
  std::int32_t peer = -1;   ///< world rank of the other side (messages), -1 otherwise
  std::int32_t offset = 0;  ///< peer - rank (messages)
  std::uint32_t tag = 0;
  std::uint32_t comm = 0;  ///< communicator id in the archive
  std::uint32_t comm_size = 0;
  mpi::Collective collective = mpi::Collective::None;  ///< the operation of a collective
  std::int32_t root = -1;                              ///< world rank of a collective's root, -1 when none
  double bytes = 0;  ///< mean over the phase's instances (messages: length; collectives: bytes sent)
  double bytes_min = 0;
  double bytes_max = 0;
  double bytes_received = 0;  ///< collectives
  /// The action starts or completes a request (Isend, Irecv, a non-blocking collective, and their completions).
  bool request = false;
  /// For a completion: the event of the same instance (index in the rank's event list) that started the request,
  /// -1 when it began before the instance. A posted receive (kind irecv) carries the peer, tag and size of the
  /// message that completed it, when that was seen.
  std::int32_t started = -1;
};

/// One MPI call of the representative instance, averaged over the phase's instances.
struct SigEvent {
  mpi::Function function = mpi::Function::Other;
  std::string call;      ///< the MPI function's name, for reports (also for functions outside the vocabulary)
  std::string callsite;  ///< when recorded
  std::vector<SigAction> actions;
  Stat burst_work;  ///< work of the burst before the call
  Stat burst_ns;    ///< wall time of that burst
  Stat call_ns;     ///< time inside the call
  /// The MPI calls the event stands for, over the instances: 1, or more where consecutive polls or completions of
  /// one exchange are one event (MPI_Testany polling, an MPI_Waitsome loop); n == 0 where never counted (older
  /// signatures: one call).
  Stat calls;
};

/// The events of one rank (thread) in one phase instance.
struct SigRank {
  std::int32_t rank = 0;
  std::uint32_t thread = 0;
  std::vector<SigEvent> events;
  Stat tail_work;  ///< burst after the last call that belongs to the phase (trailing attribution)
  Stat tail_ns;
  std::uint64_t mismatched_instances = 0;  ///< instances whose calls on this rank differ from the representative
};

struct SigPhase {
  std::uint32_t id = 0;
  std::uint64_t weight = 0;  ///< occurrences in the run
  std::uint64_t ticks = 0;   ///< logical length
  /// Instance time: the mean over the run's locations of the bursts and calls each spends in the instance (0 on a
  /// location without calls in it). Every location's time from its first call to its last is tiled by the
  /// instances, so that the instance times add up to the mean location's span however instances overlap.
  Stat time_ns;
  Stat work;         ///< total burst work of an instance over all ranks
  double share = 0;  ///< weight x mean time / accounted time
  bool relevant = false;
  std::string attribution;                 ///< leading (a burst belongs to the call after it) or trailing
  std::uint32_t split_from = 0xffffffffu;  ///< the structural phase it was split from by work, if any
  /// One time step of the code, where the phases are the program's iterations: the most frequent of its main repeats,
  /// or a step that differs from it by its data (re-neighbours, writes output, skips a check). The time step is one
  /// phase with these as its kinds: their weights add up to the code's steps.
  bool step = false;
  /// The phase finder's number of its structure (this analysis only, not written): what SignatureOptions::unsplit
  /// names when the same archive is analysed again by the same method.
  std::uint32_t structure = 0;
  /// Its id in the signature file where a reader renumbered the phases (a model merging a phase's kinds,
  /// modeler::merge_phase_kinds; not written), kNoRef where `id` is it.
  std::uint32_t listed = kNoRef;
  std::vector<SigRank> ranks;
  /// The id by which the signature file knows the phase.
  [[nodiscard]] std::uint32_t listed_id() const noexcept { return listed != kNoRef ? listed : id; }
};

/// A communicator that the phases use, with its members as MPI_COMM_WORLD ranks (rank i of the communicator is
/// `ranks[i]`), so that a model can learn how communicators are formed.
struct SigComm {
  std::uint32_t id = 0;                  ///< id in the archive, as in SigAction::comm
  CommKind kind = CommKind::Unresolved;  ///< group, self, inter (ranks: the local group), unresolved (no ranks)
  std::vector<std::int32_t> ranks;
  /// The call that created it (MPI_Comm_split, MPI_Cart_create, ...; MPI_Init for the world and self), Other when
  /// the archive does not say.
  mpi::Function created_by = mpi::Function::Other;
  std::uint32_t parent = kNoRef;  ///< the communicator it was derived from, kNoRef for none or unknown
};

struct PhaseRunEntry {
  std::uint32_t phase = 0;
  std::uint64_t count = 0;
  friend bool operator==(const PhaseRunEntry&, const PhaseRunEntry&) = default;
};

/// Options that shaped the signature (echoed in the file).
/// How phases are found (signature-format.md, "How phases are found").
enum class PhaseMethod : std::uint8_t {
  GlobalTicks,  ///< the run's tick sequence folded as a whole; an occurrence is a range of ticks
  ByRank,       ///< every location's own sequence folded, occurrences joined by their position
  Auto,         ///< only as asked for: both, and by rank where that describes the run clearly more briefly
};
/// Stable names: global-ticks, by-rank, auto.
[[nodiscard]] std::string_view phase_method_name(PhaseMethod m) noexcept;
[[nodiscard]] std::optional<PhaseMethod> phase_method_named(std::string_view name) noexcept;

/// Which units a by-rank analysis takes as instances: each location's units (its loops' bodies and the stretches
/// between them), or, where the units are pipelined, the outermost loops' iterations or the calls between the
/// collectives of all processes.
enum class PhaseLevel : std::uint8_t { Units, Outermost, Collectives };
/// Stable names: units, outermost-loops, collectives.
[[nodiscard]] std::string_view phase_level_name(PhaseLevel l) noexcept;
[[nodiscard]] std::optional<PhaseLevel> phase_level_named(std::string_view name) noexcept;

struct SignatureOptions {
  double relevance = 0.01;
  double volume_tolerance = 0.05;
  double work_similarity = 0.90;
  bool partial = false;
  PhaseMethod phase_method = PhaseMethod::Auto;  ///< as asked for
  /// By rank: the level to take where it gives every location as many instances, whether or not the units are
  /// pipelined (a series takes the level most of its runs take); nullopt: the analysis decides.
  std::optional<PhaseLevel> phase_level;
  /// By rank, at the outermost level: the iterations are found on the calls without their sizes (a series where
  /// another run needed it: sizes that follow each rank's data are the code's, at every count; not written).
  bool without_sizes = false;
  /// Structures (SigPhase::structure) whose instances stay one phase whatever their work: a series merges the
  /// work variants that only some of its runs show (not written).
  std::vector<std::uint32_t> unsplit;
};

struct Signature {
  int schema_version = kSignatureSchemaVersion;
  std::string tool;         ///< "p3s <version>"
  std::string archive;      ///< absolute path of the analysed anchor file
  std::string recorded_by;  ///< the archive's creator / P3S::TOOL
  std::string command;      ///< P3S::COMMAND when known
  std::string mpi_library;  ///< P3S::MPI_LIBRARY when known ("MPICH Version: 4.0.2"): whose MPI_Dims_create
  std::string date;         ///< when the analysis ran (UTC)
  std::int32_t processes = 0;
  std::uint32_t locations = 0;
  std::string work_metric;  ///< PAPI_TOT_INS, cputime_ns, or wall_ns when the archive has no counters
  bool complete = true;     ///< the recorded run reached MPI_Finalize
  SignatureOptions options;

  PhaseMethod phase_method = PhaseMethod::GlobalTicks;  ///< the method that found the phases (never Auto)
  std::string phase_method_note;                        ///< levels or the method not used, and why, when one was not
  PhaseLevel phase_level = PhaseLevel::Units;           ///< by rank: the level the instances are
  bool without_sizes = false;  ///< by rank, outermost: the iterations were found on the calls without their sizes
  double run_time_ns = 0;      ///< wall time from the first MPI call's enter to the last one's leave
  double accounted_ns = 0;     ///< sum over instances of their time (see SigPhase::time_ns)
  double outside_ns = 0;       ///< the run's time outside phases: run_time_ns - accounted_ns when it partitions
  double coverage = 0;         ///< relevant phases' share of accounted_ns
  std::uint64_t operations = 0;
  std::uint64_t events = 0;  ///< tick-carrying actions
  std::uint64_t ticks = 0;
  std::uint64_t messages = 0;
  std::uint64_t unmatched_sends = 0;
  std::uint64_t unmatched_receives = 0;
  std::vector<std::string> warnings;

  std::vector<SigPhase> phases;
  std::vector<PhaseRunEntry> order;
  std::vector<SigComm> communicators;  ///< every communicator an action of a phase names, by id
};

/// Writes the signature as JSON (to a temporary file renamed into place: never half-written).
/// @throws Error when the file cannot be written.
void write_signature(const Signature& s, const std::filesystem::path& path);
/// Reads a signature.json. @throws InputError naming the file when it is not a p3s signature of this schema.
[[nodiscard]] Signature read_signature(const std::filesystem::path& path);

/// The readable summary printed by `p3s analyze` (phases, weights, times, shares, operations, offsets).
[[nodiscard]] std::string signature_report(const Signature& s);
/// Per relevant phase and rank: the calls with their peers (as offsets), sizes, bursts and call sites.
[[nodiscard]] std::string signature_details(const Signature& s);

/// A kind of the time step (SigPhase::step): the phase and its weight.
struct StepKind {
  std::uint32_t id = 0;
  std::int64_t weight = 0;
};
/// The signature's phases that are one time step each (SigPhase::step), with their weights.
[[nodiscard]] std::vector<StepKind> step_kinds(const Signature& s);
/// The time step as one phase with kinds: "phase 9 with kinds 8, 10: 5001 steps", its most frequent kind first (the
/// first listed on a tie), the others in their order, the weights added (the code's steps); empty where none.
[[nodiscard]] std::string time_step_text(std::span<const StepKind> kinds);

}  // namespace p3s::analyzer
