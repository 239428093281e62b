// SPDX-License-Identifier: BSD-3-Clause
// Writes small OTF2 archives for the reader tests with the OTF2 writer API, following the conventions of
// `p3s record` (and Score-P): COMM_LOCATIONS + COMM_GROUP + COMM_SELF groups, metrics before Enter/Leave.
#pragma once

#include <otf2/otf2.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace p3s::analyzer::testing {

/// A region; its id is its index in ArchiveSpec::regions.
struct RegionSpec {
  std::string name;
  OTF2_RegionRole role = OTF2_REGION_ROLE_FUNCTION;
  OTF2_Paradigm paradigm = OTF2_PARADIGM_MPI;
};

/// A communicator; its id is its index in ArchiveSpec::comms.
struct CommSpec {
  CommSpec(std::string name_, std::vector<std::int64_t> members_, bool self_ = false,
           std::vector<std::int64_t> remote_ = {})
      : name(std::move(name_)), members(std::move(members_)), self(self_), remote(std::move(remote_)) {}
  std::string name;
  std::vector<std::int64_t> members;  ///< world rank per communicator rank; -1 = a member nobody knows
  bool self = false;                  ///< MPI_COMM_SELF (a COMM_SELF group)
  std::vector<std::int64_t> remote;   ///< non-empty: an inter-communicator with this remote group
};

/// Writes the events of one location (rank, thread).
using EventScript = std::function<void(OTF2_EvtWriter* writer, std::int32_t rank, std::uint32_t thread)>;

struct ArchiveSpec {
  std::int32_t ranks = 2;
  std::uint32_t threads_on_rank0 = 1;  ///< extra threads get location ids (thread << 32) | rank, as p3s does
  std::uint64_t timer_resolution = 1000000000;
  std::uint64_t global_offset = 0;
  std::uint64_t trace_length = 1000;
  bool mpi_groups = true;            ///< write the MPI COMM_LOCATIONS group (and the comms' groups)
  std::vector<std::string> strings;  ///< string ids 0..n-1 (call-site texts)
  std::vector<RegionSpec> regions;
  std::vector<CommSpec> comms;
  std::vector<std::string> metrics;  ///< members of metric class 0 (UINT64)
  bool callsite_attribute = false;   ///< attribute 0 = P3S_CALLSITE (STRING)
  std::map<std::string, std::string> properties;
  std::string creator = "p3s-test";
  EventScript events;
};

/// A fresh, empty directory `name` under the test's scratch directory.
[[nodiscard]] std::filesystem::path scratch_dir(const std::string& name);

/// Writes `<dir>/traces.otf2` from `spec`. Fails the current test on an OTF2 error.
void write_archive(const std::filesystem::path& dir, const ArchiveSpec& spec);

/// p3s's way of writing an Enter/Leave with one counter: a Metric record of class 0 at the same time first.
void enter(OTF2_EvtWriter* w, std::uint64_t t, std::uint32_t region, std::uint64_t counter);
void leave(OTF2_EvtWriter* w, std::uint64_t t, std::uint32_t region, std::uint64_t counter);

/// Copies a committed archive into the scratch directory (to damage it).
[[nodiscard]] std::filesystem::path copy_archive(const std::filesystem::path& from, const std::string& name);

/// tests/data in the source tree.
[[nodiscard]] std::filesystem::path data_dir();

}  // namespace p3s::analyzer::testing
