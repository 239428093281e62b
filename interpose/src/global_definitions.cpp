// SPDX-License-Identifier: BSD-3-Clause
// The global definitions of a p3s archive, as Score-P writes them (strings, clock, system tree, locations,
// regions, communicator groups, metrics, the call-site attribute) and the archive's properties.
#include <algorithm>
#include <map>

#include "converter.hpp"
#include "p3s/interpose/archive_writer.hpp"
#include "p3s/trace/schema.hpp"
#include "p3s/version.hpp"
#include "regions.hpp"

namespace p3s::interpose {
namespace {

constexpr OTF2_GroupRef kLocationsGroup = 0;
constexpr OTF2_GroupRef kSelfGroup = 1;
constexpr OTF2_SystemTreeNodeRef kMachineNode = 0;

/// String definitions in order of first use; ids are dense from `first`.
class Strings {
 public:
  explicit Strings(OTF2_GlobalDefWriter* w, std::uint32_t first) : w_(w), next_(first) {}
  OTF2_StringRef operator()(const std::string& s, std::string& error) {
    const auto it = ids_.find(s);
    if (it != ids_.end()) return it->second;
    const OTF2_StringRef id = next_++;
    ids_.emplace(s, id);
    ok_ = try_otf2(OTF2_GlobalDefWriter_WriteString(w_, id, s.c_str()), "writing a string definition", error) && ok_;
    return id;
  }
  [[nodiscard]] bool ok() const { return ok_; }

 private:
  OTF2_GlobalDefWriter* w_;
  std::uint32_t next_;
  std::map<std::string, OTF2_StringRef> ids_;
  bool ok_ = true;
};

const char* metric_unit(const std::string& name) {
  if (name == trace::metric::kCpuTime) return "ns";
  if (name == trace::metric::kInstructions) return "instructions";
  if (name == trace::metric::kCycles) return "cycles";
  return "events";
}

const char* metric_description(const std::string& name) {
  if (name == trace::metric::kCpuTime) {
    return "CPU time of the calling thread outside MPI calls (how it was read: P3S::CPU_TIME_READ)";
  }
  if (name == trace::metric::kInstructions) return "Instructions completed outside MPI calls";
  if (name == trace::metric::kCycles) return "Total cycles outside MPI calls";
  return "Level 3 cache misses outside MPI calls";
}

/// Writes the definitions step by step; the first failure is kept in `error_` and later steps are skipped.
class GlobalDefinitions {
 public:
  GlobalDefinitions(OTF2_GlobalDefWriter* w, const RunInfo& run, const Unified& unified, std::string& error)
      : w_(w),
        run_(run),
        unified_(unified),
        error_(error),
        str_(w, static_cast<std::uint32_t>(unified.callsites.size())) {}

  bool write(OTF2_Archive* archive, std::span<const LocationStats> locations) {
    callsite_strings();
    clock(locations);
    ok_ = ok_ &&
          try_otf2(OTF2_GlobalDefWriter_WriteParadigm(w_, OTF2_PARADIGM_MPI, str("MPI"), OTF2_PARADIGM_CLASS_PROCESS),
                   "writing the MPI paradigm", error_);
    system_tree();
    locations_of_ranks(locations);
    regions();
    communicators();
    metrics();
    ok_ = ok_ && str_.ok();
    properties(archive);
    return ok_;
  }

 private:
  OTF2_StringRef str(const std::string& s) { return str_(s, error_); }

  /// Call-site texts take string ids 0..C-1: every rank's converter refers to them by unified index.
  void callsite_strings() {
    for (std::size_t i = 0; i < unified_.callsites.size(); ++i) {
      ok_ = ok_ && try_otf2(OTF2_GlobalDefWriter_WriteString(w_, static_cast<OTF2_StringRef>(i),
                                                             unified_.callsites[i].c_str()),
                            "writing a call-site string", error_);
    }
  }

  /// Nanoseconds, from the first to the last event of any location.
  void clock(std::span<const LocationStats> locations) {
    std::uint64_t first = UINT64_MAX;
    std::uint64_t last = 0;
    for (const LocationStats& l : locations) {
      if (l.events == 0) continue;
      first = std::min(first, l.first_ns);
      last = std::max(last, l.last_ns);
    }
    if (first == UINT64_MAX) first = last = 0;
    ok_ = ok_ && try_otf2(OTF2_GlobalDefWriter_WriteClockProperties(w_, 1000000000ULL, first, last - first + 1,
                                                                    OTF2_UNDEFINED_TIMESTAMP),
                          "writing the clock properties", error_);
  }

  /// One machine, one node per host, one process (location group) per rank.
  void system_tree() {
    ok_ = ok_ && try_otf2(OTF2_GlobalDefWriter_WriteSystemTreeNode(w_, kMachineNode, str("cluster"), str("machine"),
                                                                   OTF2_UNDEFINED_SYSTEM_TREE_NODE),
                          "writing the machine node", error_);
    std::map<std::string, OTF2_SystemTreeNodeRef> nodes;
    for (std::int32_t r = 0; r < run_.world_size; ++r) {
      const auto i = static_cast<std::size_t>(r);
      const std::string host = i < run_.hosts.size() && !run_.hosts[i].empty() ? run_.hosts[i] : "unknown";
      auto [it, inserted] = nodes.emplace(host, static_cast<OTF2_SystemTreeNodeRef>(nodes.size() + 1));
      if (inserted) {
        ok_ = ok_ &&
              try_otf2(OTF2_GlobalDefWriter_WriteSystemTreeNode(w_, it->second, str(host), str("node"), kMachineNode),
                       "writing a node", error_);
      }
      ok_ = ok_ && try_otf2(OTF2_GlobalDefWriter_WriteLocationGroup(
                                w_, static_cast<OTF2_LocationGroupRef>(r), str("MPI Rank " + std::to_string(r)),
                                OTF2_LOCATION_GROUP_TYPE_PROCESS, it->second, OTF2_UNDEFINED_LOCATION_GROUP),
                            "writing a location group", error_);
    }
  }

  /// Every rank gets its master location, even one whose log was lost, so peers always resolve.
  void locations_of_ranks(std::span<const LocationStats> locations) {
    std::map<std::uint64_t, const LocationStats*> by_id;
    for (const LocationStats& l : locations) by_id[l.location] = &l;
    for (std::int32_t r = 0; r < run_.world_size; ++r) by_id.try_emplace(location_id(r, 0), nullptr);
    for (const auto& [id, l] : by_id) {
      const auto thread = static_cast<std::uint32_t>(id >> 32);
      const auto rank = static_cast<OTF2_LocationGroupRef>(id & 0xffffffffu);
      const std::string name = thread == 0 ? "Master thread" : "Thread " + std::to_string(thread);
      ok_ = ok_ && try_otf2(OTF2_GlobalDefWriter_WriteLocation(w_, id, str(name), OTF2_LOCATION_TYPE_CPU_THREAD,
                                                               l != nullptr ? l->events : 0, rank),
                            "writing a location", error_);
    }
  }

  /// One region per function of the vocabulary, its id the function's value.
  void regions() {
    for (std::uint16_t i = 0; i < kRegionCount; ++i) {
      const OTF2_StringRef name = str(std::string(mpi::name(static_cast<Region>(i))));
      ok_ =
          ok_ && try_otf2(OTF2_GlobalDefWriter_WriteRegion(w_, i, name, name, str(""), kRegionRoles[i],
                                                           OTF2_PARADIGM_MPI, OTF2_REGION_FLAG_NONE, str("MPI"), 0, 0),
                          "writing a region", error_);
    }
  }

  /// Groups, as Score-P writes them: the locations of the world ranks, then each communicator's members as
  /// indices into that group (= world ranks); then the communicators.
  void communicators() {
    std::vector<std::uint64_t> world(static_cast<std::size_t>(run_.world_size));
    for (std::int32_t r = 0; r < run_.world_size; ++r) world[static_cast<std::size_t>(r)] = location_id(r, 0);
    ok_ = ok_ && try_otf2(OTF2_GlobalDefWriter_WriteGroup(w_, kLocationsGroup, str(""), OTF2_GROUP_TYPE_COMM_LOCATIONS,
                                                          OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                                          static_cast<std::uint32_t>(world.size()), world.data()),
                          "writing the COMM_LOCATIONS group", error_);
    ok_ = ok_ && try_otf2(OTF2_GlobalDefWriter_WriteGroup(w_, kSelfGroup, str(""), OTF2_GROUP_TYPE_COMM_SELF,
                                                          OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, 0, nullptr),
                          "writing the COMM_SELF group", error_);
    std::map<std::vector<std::int32_t>, OTF2_GroupRef> groups;
    std::vector<OTF2_GroupRef> comm_group(unified_.comms.size(), kSelfGroup);
    for (std::size_t g = 0; g < unified_.comms.size(); ++g) {
      if ((unified_.comms[g].flags & raw::kCommSelf) != 0) continue;
      const auto& members = unified_.comms[g].members;
      auto [it, inserted] = groups.emplace(members, static_cast<OTF2_GroupRef>(groups.size() + 2));
      if (inserted) {
        std::vector<std::uint64_t> m(members.size());
        // A member no log told about (killed rank) is written as an unresolvable rank: its index is the size.
        for (std::size_t i = 0; i < members.size(); ++i) {
          m[i] = members[i] >= 0 ? static_cast<std::uint64_t>(members[i]) : world.size();
        }
        ok_ = ok_ && try_otf2(OTF2_GlobalDefWriter_WriteGroup(w_, it->second, str(""), OTF2_GROUP_TYPE_COMM_GROUP,
                                                              OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                                              static_cast<std::uint32_t>(m.size()), m.data()),
                              "writing a communicator group", error_);
      }
      comm_group[g] = it->second;
    }
    for (std::size_t g = 0; g < unified_.comms.size(); ++g) {
      const std::string name = g == 0 ? "MPI_COMM_WORLD" : g == 1 ? "MPI_COMM_SELF" : "Comm " + std::to_string(g);
      ok_ = ok_ &&
            try_otf2(OTF2_GlobalDefWriter_WriteComm(w_, static_cast<OTF2_CommRef>(g), str(name), comm_group[g],
                                                    unified_.comms[g].parent, OTF2_COMM_FLAG_CREATE_DESTROY_EVENTS),
                     "writing a communicator", error_);
    }
  }

  /// The work counters' metric class, and the call-site attribute when call sites were recorded.
  void metrics() {
    if (run_.counters.count > 0) {
      OTF2_MetricMemberRef members[kMaxMetrics];
      for (int i = 0; i < run_.counters.count; ++i) {
        const std::string& name = run_.counters.names[static_cast<std::size_t>(i)];
        members[i] = static_cast<OTF2_MetricMemberRef>(i);
        const OTF2_MetricType type =
            run_.counters.mode == CounterMode::Papi ? OTF2_METRIC_TYPE_PAPI : OTF2_METRIC_TYPE_OTHER;
        ok_ = ok_ &&
              try_otf2(OTF2_GlobalDefWriter_WriteMetricMember(w_, members[i], str(name), str(metric_description(name)),
                                                              type, OTF2_METRIC_ACCUMULATED_START, OTF2_TYPE_UINT64,
                                                              OTF2_BASE_DECIMAL, 0, str(metric_unit(name))),
                       "writing a metric member", error_);
      }
      ok_ = ok_ && try_otf2(OTF2_GlobalDefWriter_WriteMetricClass(
                                w_, kMetricClass, static_cast<std::uint8_t>(run_.counters.count), members,
                                OTF2_METRIC_SYNCHRONOUS, OTF2_RECORDER_KIND_CPU),
                            "writing the metric class", error_);
    }
    if (run_.callsites) {
      ok_ = ok_ &&
            try_otf2(OTF2_GlobalDefWriter_WriteAttribute(w_, kCallsiteAttr, str(trace::kCallsiteAttribute),
                                                         str("calling location of the MPI call"), OTF2_TYPE_STRING),
                     "writing the call-site attribute", error_);
    }
  }

  /// Archive properties: what the archive holds and where it came from.
  void properties(OTF2_Archive* archive) {
    const auto prop = [&](const char* name, const std::string& value) {
      if (value.empty()) return;
      ok_ = ok_ && try_otf2(OTF2_Archive_SetProperty(archive, name, value.c_str(), true), name, error_);
    };
    prop(trace::property::kTool, std::string("p3s ") + kVersion);
    prop(trace::property::kSchemaVersion, std::string(trace::kSchemaVersion));
    prop(trace::property::kWorkMetric, work_metric_name(run_.counters));
    prop(trace::property::kCountersRequested, run_.counters_requested);
    prop(trace::property::kCountersNote, run_.counters.note);
    prop(trace::property::kCpuTimeRead, run_.counters.read_path);
    prop(trace::property::kProcesses, std::to_string(run_.world_size));
    prop(trace::property::kCommand, run_.command);
    prop(trace::property::kDate, run_.date);
    prop(trace::property::kThreadLevel, run_.thread_level);
    prop(trace::property::kMpiLibrary, run_.mpi_library);
    prop(trace::property::kComplete, run_.complete ? "true" : "false");
    std::string missing;
    for (std::int32_t r : run_.incomplete_ranks) missing += (missing.empty() ? "" : ",") + std::to_string(r);
    prop(trace::property::kIncompleteRanks, missing);
    ok_ = ok_ && try_otf2(OTF2_Archive_SetCreator(archive, (std::string("p3s ") + kVersion).c_str()),
                          "setting the creator", error_);
  }

  OTF2_GlobalDefWriter* w_;
  const RunInfo& run_;
  const Unified& unified_;
  std::string& error_;
  Strings str_;
  bool ok_ = true;
};

}  // namespace

bool write_global_definitions(OTF2_Archive* archive, const RunInfo& run, const Unified& unified,
                              std::span<const LocationStats> locations, std::string& error) {
  OTF2_GlobalDefWriter* w = OTF2_Archive_GetGlobalDefWriter(archive);
  if (w == nullptr) {
    if (error.empty()) error = "cannot open the global definition writer";
    return false;
  }
  const bool ok = GlobalDefinitions(w, run, unified, error).write(archive, locations);
  return try_otf2(OTF2_Archive_CloseGlobalDefWriter(archive, w), "closing the global definitions", error) && ok;
}

}  // namespace p3s::interpose
