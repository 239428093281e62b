// SPDX-License-Identifier: BSD-3-Clause
// OTF2 archive writer for tests (see test_archive.hpp).
#include "test_archive.hpp"

#include "p3s/trace/schema.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>

namespace p3s::analyzer::testing {
namespace fs = std::filesystem;
namespace {

OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }
OTF2_TimeStamp post_flush(void*, OTF2_FileType, OTF2_LocationRef) { return 0; }
const OTF2_FlushCallbacks kFlush = {pre_flush, post_flush};

void ok(OTF2_ErrorCode rc, const char* what) { ASSERT_EQ(rc, OTF2_SUCCESS) << what << ": " << OTF2_Error_GetName(rc); }

std::uint64_t location_id(std::int32_t rank, std::uint32_t thread) {
  return (static_cast<std::uint64_t>(thread) << 32) | static_cast<std::uint32_t>(rank);
}

}  // namespace

fs::path data_dir() { return fs::path(P3S_TEST_DATA); }

fs::path scratch_dir(const std::string& name) {
  // ctest runs every test case as its own process, in parallel with -j: each needs its own directory.
  const fs::path dir = fs::path(P3S_TEST_TMP) / (name + "." + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

fs::path copy_archive(const fs::path& from, const std::string& name) {
  const fs::path to = scratch_dir(name);
  fs::copy(from, to, fs::copy_options::recursive);
  // The committed data may be read-only in a source checkout; the copy must be damageable.
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(to)) {
    fs::permissions(e.path(), fs::perms::owner_write, fs::perm_options::add);
  }
  return to;
}

void enter(OTF2_EvtWriter* w, std::uint64_t t, std::uint32_t region, std::uint64_t counter) {
  const OTF2_Type type = OTF2_TYPE_UINT64;
  OTF2_MetricValue v;
  v.unsigned_int = counter;
  ok(OTF2_EvtWriter_Metric(w, nullptr, t, 0, 1, &type, &v), "Metric");
  ok(OTF2_EvtWriter_Enter(w, nullptr, t, region), "Enter");
}

void leave(OTF2_EvtWriter* w, std::uint64_t t, std::uint32_t region, std::uint64_t counter) {
  const OTF2_Type type = OTF2_TYPE_UINT64;
  OTF2_MetricValue v;
  v.unsigned_int = counter;
  ok(OTF2_EvtWriter_Metric(w, nullptr, t, 0, 1, &type, &v), "Metric");
  ok(OTF2_EvtWriter_Leave(w, nullptr, t, region), "Leave");
}

void write_archive(const fs::path& dir, const ArchiveSpec& spec) {
  OTF2_Archive* a = OTF2_Archive_Open(dir.c_str(), std::string(trace::kArchiveName).c_str(), OTF2_FILEMODE_WRITE,
                                      OTF2_CHUNK_SIZE_EVENTS_DEFAULT, OTF2_CHUNK_SIZE_DEFINITIONS_DEFAULT,
                                      OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  ASSERT_NE(a, nullptr);
  ok(OTF2_Archive_SetFlushCallbacks(a, &kFlush, nullptr), "flush callbacks");
  ok(OTF2_Archive_SetSerialCollectiveCallbacks(a), "collective callbacks");

  struct Loc {
    std::uint64_t id;
    std::int32_t rank;
    std::uint32_t thread;
    std::uint64_t events;
  };
  std::vector<Loc> locs;
  for (std::int32_t r = 0; r < spec.ranks; ++r) {
    const std::uint32_t threads = r == 0 ? spec.threads_on_rank0 : 1;
    for (std::uint32_t t = 0; t < threads; ++t) locs.push_back({location_id(r, t), r, t, 0});
  }

  ok(OTF2_Archive_OpenEvtFiles(a), "open event files");
  for (Loc& l : locs) {
    OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(a, l.id);
    ASSERT_NE(w, nullptr);
    if (spec.events) spec.events(w, l.rank, l.thread);
    ok(OTF2_EvtWriter_GetNumberOfEvents(w, &l.events), "event count");
    ok(OTF2_Archive_CloseEvtWriter(a, w), "close event writer");
  }
  ok(OTF2_Archive_CloseEvtFiles(a), "close event files");
  ok(OTF2_Archive_OpenDefFiles(a), "open local definition files");
  for (const Loc& l : locs) {
    OTF2_DefWriter* dw = OTF2_Archive_GetDefWriter(a, l.id);
    ASSERT_NE(dw, nullptr);
    ok(OTF2_Archive_CloseDefWriter(a, dw), "close local definitions");
  }
  ok(OTF2_Archive_CloseDefFiles(a), "close local definition files");

  OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(a);
  ASSERT_NE(g, nullptr);
  std::uint32_t next_string = 0;
  std::map<std::string, OTF2_StringRef> ids;
  auto str = [&](const std::string& s) {
    const auto it = ids.find(s);
    if (it != ids.end()) return it->second;
    const OTF2_StringRef id = next_string++;
    ids.emplace(s, id);
    ok(OTF2_GlobalDefWriter_WriteString(g, id, s.c_str()), "string");
    return id;
  };
  for (const std::string& s : spec.strings) {
    const OTF2_StringRef id = next_string++;
    ok(OTF2_GlobalDefWriter_WriteString(g, id, s.c_str()), "string");
  }
  ok(OTF2_GlobalDefWriter_WriteClockProperties(g, spec.timer_resolution, spec.global_offset, spec.trace_length,
                                               OTF2_UNDEFINED_TIMESTAMP),
     "clock");
  ok(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, str("test"), str("machine"), OTF2_UNDEFINED_SYSTEM_TREE_NODE),
     "node");
  for (std::int32_t r = 0; r < spec.ranks; ++r) {
    ok(OTF2_GlobalDefWriter_WriteLocationGroup(g, static_cast<OTF2_LocationGroupRef>(r),
                                               str("MPI Rank " + std::to_string(r)), OTF2_LOCATION_GROUP_TYPE_PROCESS,
                                               0, OTF2_UNDEFINED_LOCATION_GROUP),
       "location group");
  }
  for (const Loc& l : locs) {
    ok(OTF2_GlobalDefWriter_WriteLocation(g, l.id, str(l.thread == 0 ? "Master thread" : "Thread"),
                                          OTF2_LOCATION_TYPE_CPU_THREAD, l.events,
                                          static_cast<OTF2_LocationGroupRef>(l.rank)),
       "location");
  }
  for (std::size_t i = 0; i < spec.regions.size(); ++i) {
    const RegionSpec& r = spec.regions[i];
    ok(OTF2_GlobalDefWriter_WriteRegion(g, static_cast<OTF2_RegionRef>(i), str(r.name), str(r.name), str(""), r.role,
                                        r.paradigm, OTF2_REGION_FLAG_NONE, str(""), 0, 0),
       "region");
  }
  if (spec.mpi_groups) {
    // Group 0: the world ranks' master locations; group 1: COMM_SELF; then one COMM_GROUP per group of members.
    std::vector<std::uint64_t> world;
    for (std::int32_t r = 0; r < spec.ranks; ++r) world.push_back(location_id(r, 0));
    ok(OTF2_GlobalDefWriter_WriteGroup(g, 0, str(""), OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                       OTF2_GROUP_FLAG_NONE, static_cast<std::uint32_t>(world.size()), world.data()),
       "COMM_LOCATIONS");
    ok(OTF2_GlobalDefWriter_WriteGroup(g, 1, str(""), OTF2_GROUP_TYPE_COMM_SELF, OTF2_PARADIGM_MPI,
                                       OTF2_GROUP_FLAG_NONE, 0, nullptr),
       "COMM_SELF");
    OTF2_GroupRef next_group = 2;
    auto group = [&](const std::vector<std::int64_t>& members) {
      std::vector<std::uint64_t> m;
      for (std::int64_t x : members) m.push_back(x < 0 ? world.size() : static_cast<std::uint64_t>(x));
      ok(OTF2_GlobalDefWriter_WriteGroup(g, next_group, str(""), OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                         OTF2_GROUP_FLAG_NONE, static_cast<std::uint32_t>(m.size()), m.data()),
         "COMM_GROUP");
      return next_group++;
    };
    for (std::size_t i = 0; i < spec.comms.size(); ++i) {
      const CommSpec& c = spec.comms[i];
      const auto id = static_cast<OTF2_CommRef>(i);
      if (!c.remote.empty()) {
        const OTF2_GroupRef ga = group(c.members);
        const OTF2_GroupRef gb = group(c.remote);
        ok(OTF2_GlobalDefWriter_WriteInterComm(g, id, str(c.name), ga, gb, 0, OTF2_COMM_FLAG_NONE), "inter comm");
      } else {
        const OTF2_GroupRef gr = c.self ? 1 : group(c.members);
        ok(OTF2_GlobalDefWriter_WriteComm(g, id, str(c.name), gr, OTF2_UNDEFINED_COMM,
                                          OTF2_COMM_FLAG_CREATE_DESTROY_EVENTS),
           "comm");
      }
    }
  }
  if (!spec.metrics.empty()) {
    std::vector<OTF2_MetricMemberRef> members;
    for (std::size_t i = 0; i < spec.metrics.size(); ++i) {
      members.push_back(static_cast<OTF2_MetricMemberRef>(i));
      ok(OTF2_GlobalDefWriter_WriteMetricMember(g, members.back(), str(spec.metrics[i]), str(""),
                                                OTF2_METRIC_TYPE_OTHER, OTF2_METRIC_ACCUMULATED_START, OTF2_TYPE_UINT64,
                                                OTF2_BASE_DECIMAL, 0, str("ns")),
         "metric member");
    }
    ok(OTF2_GlobalDefWriter_WriteMetricClass(g, 0, static_cast<std::uint8_t>(members.size()), members.data(),
                                             OTF2_METRIC_SYNCHRONOUS_STRICT, OTF2_RECORDER_KIND_CPU),
       "metric class");
  }
  if (spec.callsite_attribute) {
    ok(OTF2_GlobalDefWriter_WriteAttribute(g, 0, str(trace::kCallsiteAttribute), str(""), OTF2_TYPE_STRING),
       "attribute");
  }
  for (const auto& [name, value] : spec.properties) {
    ok(OTF2_Archive_SetProperty(a, name.c_str(), value.c_str(), true), "property");
  }
  ok(OTF2_Archive_SetCreator(a, spec.creator.c_str()), "creator");
  ok(OTF2_Archive_CloseGlobalDefWriter(a, g), "close global definitions");
  ok(OTF2_Archive_Close(a), "close archive");
}

}  // namespace p3s::analyzer::testing
