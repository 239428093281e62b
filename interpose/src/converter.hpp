// SPDX-License-Identifier: BSD-3-Clause
// Raw logs -> OTF2: event conversion per location and the global definitions, shared by MPI_Finalize and
// `p3s recover`.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <otf2/otf2.h>

#include "definitions.hpp"
#include "p3s/interpose/counters.hpp"
#include "raw_reader.hpp"

namespace p3s::interpose {

/// Maps a rank's clock to rank 0's: offsets measured at init and (if it got there) at finalize,
/// interpolated linearly in between.
struct ClockModel {
  std::uint64_t init_local_ns = 0;
  std::int64_t init_offset_ns = 0;
  std::uint64_t end_local_ns = 0;
  std::int64_t end_offset_ns = 0;
  bool has_end = false;
  [[nodiscard]] std::uint64_t global(std::uint64_t local) const noexcept { return global(local, drift()); }
  /// The offset's change per local ns (0 without an end point); computed once for a stream of times.
  [[nodiscard]] double drift() const noexcept;
  [[nodiscard]] std::uint64_t global(std::uint64_t local, double drift) const noexcept;
};

/// The metric class of the work counters and the call-site attribute: the first of their kinds in every archive.
inline constexpr OTF2_MetricRef kMetricClass = 0;
inline constexpr OTF2_AttributeRef kCallsiteAttr = 0;

/// Location id of a thread of a rank (thread 0 keeps the rank number, as Score-P does).
[[nodiscard]] constexpr std::uint64_t location_id(std::int32_t rank, std::uint32_t thread) noexcept {
  return (static_cast<std::uint64_t>(thread) << 32) | static_cast<std::uint32_t>(rank);
}

/// What converting one location produced.
struct LocationStats {
  std::uint64_t location = 0;
  std::int32_t rank = 0;
  std::uint32_t thread = 0;
  std::uint64_t events = 0;
  std::uint64_t first_ns = UINT64_MAX;  ///< global time of the first event
  std::uint64_t last_ns = 0;
  std::uint8_t complete = 0;  ///< 1 when the log reached MPI_Finalize
  std::uint8_t torn = 0;      ///< 1 when the log ended in a partial record
  std::uint8_t reserved[6] = {};
};

/// How many event chunks a location converted after the run holds in memory at a time.
inline constexpr std::size_t kEventChunks = 4;

/// Writes one raw log's events straight into its location's event file in the archive being written at
/// `archive_dir` (event_chunks.hpp: the file OTF2's own writer would write), with global ids and times. Returns
/// false with `error` set when the file cannot be written.
bool convert_location(RawReader& reader, const std::string& archive_dir, const LocalMaps& maps, const ClockModel& clock,
                      LocationStats& stats, std::string& error);

/// `<archive_dir>/traces/<location>.evt`, the event file of a location in the archive being written there (its
/// directory made where OTF2 has not made it).
[[nodiscard]] std::string archive_event_file(const std::string& archive_dir, std::uint64_t location);

/// What the global definitions say of an event file written during the run: its events, and the times of the first
/// and the last on rank 0's clock. `complete` and `torn` are the caller's.
[[nodiscard]] LocationStats event_file_stats(std::int32_t rank, std::uint32_t thread, std::uint64_t events,
                                             std::uint64_t first_local_ns, std::uint64_t last_local_ns,
                                             const ClockModel& clock);

/// The local definitions of a location whose events were written during the run, with local ids and local times:
/// the tables that map its communicator and call-site ids to the archive's, and its clock offsets to rank 0's clock
/// (at MPI_Init and at MPI_Finalize, or at `last_local_ns` with the offset of MPI_Init where the run did not get
/// there). OTF2's readers apply both to every event.
bool write_local_mappings(OTF2_DefWriter* writer, const LocalMaps& maps, const ClockModel& clock,
                          std::uint64_t last_local_ns, std::string& error);

/// Puts an event file written during the run into the archive being written at `archive_dir`, as the events of
/// `location`: a hard link where the file system allows one (the raw logs stay whole until the archive is), else a
/// copy.
bool place_event_file(const std::string& event_file, const std::string& archive_dir, std::uint64_t location,
                      std::string& error);

/// Everything the global definitions need besides the unified definitions and the locations.
struct RunInfo {
  std::int32_t world_size = 0;
  CounterSetup counters;
  std::string counters_requested;
  std::string thread_level;
  std::string mpi_library;  ///< the MPI library's version line (empty where not known)
  std::string command;
  std::string date;
  std::vector<std::string> hosts;  ///< by rank ("" where unknown)
  bool complete = true;
  std::vector<std::int32_t> incomplete_ranks;
  bool callsites = false;
};

/// Writes the global definitions (rank 0 / the recovering process) and the archive properties.
bool write_global_definitions(OTF2_Archive* archive, const RunInfo& run, const Unified& unified,
                              std::span<const LocationStats> locations, std::string& error);

/// Provenance helpers shared by the finalize path and recovery.
[[nodiscard]] std::string thread_level_name(int level);

}  // namespace p3s::interpose
