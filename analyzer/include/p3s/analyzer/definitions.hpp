// SPDX-License-Identifier: BSD-3-Clause
// The global definitions of an OTF2 archive, resolved: clock, locations and their ranks, regions,
// communicators with every rank mapped to an MPI_COMM_WORLD rank, metrics and archive properties.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "p3s/mpi/vocabulary.hpp"

namespace p3s::analyzer {

/// A rank that is not there: no peer, no root (OTF2_COLLECTIVE_ROOT_NONE).
inline constexpr std::int32_t kNoRank = -1;
/// A rank the definitions cannot map to an MPI_COMM_WORLD rank (unknown communicator, rank out of range).
inline constexpr std::int32_t kUnresolvedRank = -2;
/// An undefined definition reference (OTF2_UNDEFINED_UINT32).
inline constexpr std::uint32_t kNoRef = 0xffffffffu;

/// Timer of the archive. Event times are delivered in nanoseconds since `global_offset`.
struct ClockProperties {
  std::uint64_t timer_resolution = 1000000000;  ///< ticks per second
  std::uint64_t global_offset = 0;              ///< tick of the trace start
  std::uint64_t trace_length = 0;               ///< ticks from the first to the last event

  /// Nanoseconds since the trace start of a (synchronised) timestamp in ticks; 0 for ticks before the start.
  [[nodiscard]] std::uint64_t to_ns(std::uint64_t ticks) const noexcept;
  /// The trace length in nanoseconds.
  [[nodiscard]] std::uint64_t length_ns() const noexcept;
};

/// Programming model a region or group belongs to (the OTF2 paradigms p3s cares about).
enum class Paradigm : std::uint8_t { Unknown, User, Compiler, OpenMp, Mpi, MeasurementSystem, Pthread, Other };

/// What a region does, coarsened from OTF2's region roles.
enum class RegionRole : std::uint8_t {
  Unknown,
  Function,
  PointToPoint,
  CollectiveOneToAll,
  CollectiveAllToOne,
  CollectiveAllToAll,
  CollectiveOther,
  Barrier,
  FileIo,
  Rma,
  Artificial,  ///< measurement artefacts (Score-P's MEASUREMENT OFF, TRACE BUFFER FLUSH, the program region)
  Other,
};

/// A code region (an MPI function, a user function).
struct Region {
  std::uint32_t id = kNoRef;
  std::string name;
  std::string canonical_name;
  std::string source_file;
  RegionRole role = RegionRole::Unknown;
  Paradigm paradigm = Paradigm::Unknown;
  /// The MPI function of an MPI region (Other for one outside the vocabulary, and for non-MPI regions).
  mpi::Function function = mpi::Function::Other;
  /// True for the regions of MPI functions (paradigm MPI).
  [[nodiscard]] bool is_mpi() const noexcept { return paradigm == Paradigm::Mpi; }
};

/// A process (OTF2 location group).
struct LocationGroup {
  std::uint32_t id = kNoRef;
  std::string name;
  bool is_process = false;
  std::int32_t rank = kUnresolvedRank;  ///< MPI_COMM_WORLD rank of the process
};

/// A thread of a process (OTF2 location): the unit whose events are read in order.
struct Location {
  std::uint64_t id = 0;
  std::string name;
  std::uint32_t group = kNoRef;         ///< its LocationGroup
  std::int32_t rank = kUnresolvedRank;  ///< MPI_COMM_WORLD rank of its process
  std::uint64_t declared_events = 0;    ///< number of event records the definitions announce
  bool is_cpu_thread = true;
};

/// How a communicator's ranks map to world ranks.
enum class CommKind : std::uint8_t {
  Group,       ///< ranks are `world_ranks[rank]`
  Self,        ///< MPI_COMM_SELF-like: rank 0 is the calling process itself
  Inter,       ///< inter-communicator: a peer rank indexes the group the caller is *not* in
  Unresolved,  ///< the group is missing or not a communicator group
};

/// A communicator with its ranks resolved to MPI_COMM_WORLD ranks, as Score-P / OTF2 define it:
/// the COMM_LOCATIONS group of a paradigm lists the locations by world rank, a COMM_GROUP lists indices into it.
struct Communicator {
  std::uint32_t id = kNoRef;
  std::string name;
  CommKind kind = CommKind::Unresolved;
  Paradigm paradigm = Paradigm::Unknown;
  std::vector<std::int32_t> world_ranks;         ///< per communicator rank (group A of an inter-communicator)
  std::vector<std::int32_t> remote_world_ranks;  ///< group B of an inter-communicator
  std::uint32_t parent = kNoRef;
};

/// How metric values are encoded (OTF2_Type of the member).
enum class MetricValueType : std::uint8_t { Uint64, Int64, Double };

/// One counter (OTF2 metric member), e.g. PAPI_TOT_INS or cputime_ns.
struct MetricMember {
  std::uint32_t id = kNoRef;
  std::string name;
  std::string description;
  std::string unit;
  MetricValueType value_type = MetricValueType::Uint64;
  bool accumulated = true;  ///< counts from a start point (differences are meaningful)
};

/// The counters recorded together in one Metric record.
struct MetricClass {
  std::uint32_t id = kNoRef;
  std::vector<std::uint32_t> members;  ///< MetricMember ids, in value order
  std::int32_t work_index = -1;        ///< position of the work metric among the values, -1 if absent
};

/// Everything the global definitions (and the anchor file) say, with references resolved. Tables are indexed
/// by definition id; undefined ids hold default entries whose `id` is kNoRef.
struct TraceDefinitions {
  std::filesystem::path anchor;  ///< absolute path of the .otf2 anchor file
  std::string creator;           ///< OTF2 creator, e.g. "p3s 0.1.0" or "Score-P 8.4"
  std::map<std::string, std::string, std::less<>> properties;
  ClockProperties clock;

  std::vector<std::string> strings;
  std::vector<Region> regions;
  std::vector<LocationGroup> location_groups;
  std::vector<Location> locations;                      ///< sorted by (rank, id); unresolved ranks last
  std::map<std::uint64_t, std::size_t> location_index;  ///< location id -> index into `locations`
  std::vector<Communicator> comms;
  std::vector<MetricMember> metric_members;
  std::vector<MetricClass> metric_classes;

  /// Number of MPI processes: size of the MPI COMM_LOCATIONS group (else the number of processes).
  std::int32_t processes = 0;
  /// The work metric member's name: P3S::WORK_METRIC, else PAPI_TOT_INS if the archive has it, else empty.
  std::string work_metric_member;
  /// Attribute id of P3S_CALLSITE (string attribute on Enter records), kNoRef if absent.
  std::uint32_t callsite_attribute = kNoRef;
  /// True when the definitions mention MPI at all (an MPI COMM_LOCATIONS group or an MPI region).
  bool has_mpi = false;

  /// The region `id`, nullptr if undefined.
  [[nodiscard]] const Region* region(std::uint32_t id) const noexcept;
  /// The communicator `id`, nullptr if undefined.
  [[nodiscard]] const Communicator* comm(std::uint32_t id) const noexcept;
  /// The location `id`, nullptr if undefined.
  [[nodiscard]] const Location* location(std::uint64_t id) const noexcept;
  /// The string `id`, empty if undefined.
  [[nodiscard]] std::string_view string(std::uint32_t id) const noexcept;
  /// An archive property, if set.
  [[nodiscard]] std::optional<std::string> property(std::string_view name) const;

  /// World rank of rank `rank_in_comm` of communicator `comm`, as seen by a process of world rank `caller`
  /// (needed for MPI_COMM_SELF and inter-communicators). kUnresolvedRank when the definitions cannot tell.
  [[nodiscard]] std::int32_t world_rank(std::uint32_t comm, std::uint32_t rank_in_comm,
                                        std::int32_t caller) const noexcept;

  /// True for archives written by `p3s record` (they carry P3S::TOOL).
  [[nodiscard]] bool written_by_p3s() const;
  /// P3S::WORK_METRIC, or "unknown" for archives that do not say (Score-P).
  [[nodiscard]] std::string work_metric() const;
};

/// Human-readable name of a paradigm ("MPI", "user", ...).
[[nodiscard]] std::string_view paradigm_name(Paradigm p) noexcept;
/// Whether the recorded run reached the end of MPI_Finalize on every rank: what the archive says where its recorder
/// wrote it down (P3S::COMPLETE), else whether every rank of `left_finalize` (indexed by world rank) got through
/// MPI_Finalize (Score-P does not say). The one definition `p3s summary` and `p3s analyze` share.
[[nodiscard]] bool run_complete(const TraceDefinitions& defs, const std::vector<bool>& left_finalize);
/// "group", "self", "inter", "unresolved": the stable names of communicator kinds.
[[nodiscard]] std::string_view comm_kind_name(CommKind k) noexcept;
/// The kind of a stable name; nullopt when it is not one.
[[nodiscard]] std::optional<CommKind> comm_kind_named(std::string_view name) noexcept;

}  // namespace p3s::analyzer
