// SPDX-License-Identifier: BSD-3-Clause
// Pass 1 of the analysis: each location's OTF2 events -> its MPI operations (calls with their bursts and
// actions) in a scratch file, one location at a time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "p3s/analyzer/trace_reader.hpp"

namespace p3s::analyzer {

struct ExtractedLocation {
  std::uint64_t id = 0;  ///< OTF2 location id
  std::int32_t rank = -1;
  std::uint32_t thread = 0;   ///< 0 for a rank's first location
  std::filesystem::path ops;  ///< operation file
  std::uint64_t operations = 0;
  std::uint64_t first_ns = 0;  ///< enter of the first MPI call
  std::uint64_t last_ns = 0;   ///< leave of the last MPI call
  bool left_finalize = false;  ///< it got through MPI_Finalize
  /// Bursts with at least this much work (the burst metric: CPU time or instructions, not wall time, which a
  /// loaded machine stretches at random) are computation that separates the steps of the program (0: none).
  std::uint64_t compute_burst_work = 0;
};

struct Extracted {
  std::vector<ExtractedLocation> locations;  ///< MPI locations, by (rank, thread)
  std::vector<std::uint64_t> volumes;        ///< distinct message and collective sizes, sorted
  std::uint64_t records = 0;                 ///< OTF2 records read
  std::uint64_t stray_records = 0;           ///< MPI records outside any MPI call (ignored)
  bool has_work_metric = false;              ///< bursts carry the archive's work metric (else wall time)
  /// The call that created each communicator, by id, as the CommCreate records inside the calls tell.
  std::map<std::uint32_t, mpi::Function> created_by;
};

/// Reads every location of `reader` into operation files under `scratch`.
/// @throws TraceError for damaged archives, InputError when no location holds an MPI call.
[[nodiscard]] Extracted extract_operations(TraceReader& reader, const std::filesystem::path& scratch);

}  // namespace p3s::analyzer
