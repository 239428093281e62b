// SPDX-License-Identifier: BSD-3-Clause
// Archives written here the way `p3s record` writes them (properties, metrics before Enter/Leave as schema 1 had
// them, call-site attribute, split communicators, MPI_COMM_SELF, threads; schema 2: schema2_spec), read back
// through the reader, the extraction and the summary.
#include "extract.hpp"
#include "op_log.hpp"
#include "p3s/analyzer/summary.hpp"
#include "p3s/analyzer/trace_reader.hpp"
#include "p3s/error.hpp"
#include "p3s/trace/schema.hpp"
#include "test_archive.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace p3s::analyzer {
namespace {
namespace fs = std::filesystem;
using testing::ArchiveSpec;
using testing::enter;
using testing::leave;

enum Region : std::uint32_t {
  kInit,
  kFinalize,
  kSend,
  kRecv,
  kIsend,
  kIrecv,
  kWait,
  kSplit,
  kReduce,
  kIallreduce,
  kCompute,
};
enum Comm : std::uint32_t { kWorld, kSelf, kEven, kOdd, kBroken };

constexpr std::uint64_t kOffset = 5000;
/// Two ticks per nanosecond after the global offset.
constexpr std::uint64_t tick(std::uint64_t ns) { return kOffset + 2 * ns; }

void ok(OTF2_ErrorCode rc) { ASSERT_EQ(rc, OTF2_SUCCESS) << OTF2_Error_GetName(rc); }

/// Four ranks. Comm kEven = {2, 0} and kOdd = {3, 1} (MPI_Comm_split with key -rank), kBroken = {1, ?} with a
/// member no log told about. Rank 0 has a second thread.
ArchiveSpec p3s_spec() {
  ArchiveSpec spec;
  spec.ranks = 4;
  spec.threads_on_rank0 = 2;
  spec.timer_resolution = 2000000000;
  spec.global_offset = kOffset;
  spec.trace_length = 2 * 200;
  spec.strings = {"main+0x10 [app+0x1234]"};
  spec.regions = {{"MPI_Init"},
                  {"MPI_Finalize"},
                  {"MPI_Send", OTF2_REGION_ROLE_POINT2POINT},
                  {"MPI_Recv", OTF2_REGION_ROLE_POINT2POINT},
                  {"MPI_Isend", OTF2_REGION_ROLE_POINT2POINT},
                  {"MPI_Irecv", OTF2_REGION_ROLE_POINT2POINT},
                  {"MPI_Wait"},
                  {"MPI_Comm_split"},
                  {"MPI_Reduce", OTF2_REGION_ROLE_COLL_ALL2ONE},
                  {"MPI_Iallreduce", OTF2_REGION_ROLE_COLL_ALL2ALL},
                  {"compute", OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER}};
  spec.comms = {{"MPI_COMM_WORLD", {0, 1, 2, 3}},
                {"MPI_COMM_SELF", {}, true},
                {"Comm 2", {2, 0}},
                {"Comm 3", {3, 1}},
                {"Comm 4", {1, -1}}};
  spec.metrics = {trace::metric::kCpuTime};
  spec.callsite_attribute = true;
  spec.creator = "p3s 0.1.0";
  spec.properties = {{trace::property::kTool, "p3s 0.1.0"},
                     {trace::property::kSchemaVersion, "1"},
                     {trace::property::kWorkMetric, trace::metric::kCpuTime},
                     {trace::property::kProcesses, "4"},
                     {trace::property::kComplete, "true"}};
  spec.events = [](OTF2_EvtWriter* w, std::int32_t r, std::uint32_t thread) {
    if (thread == 1) {
      enter(w, tick(5), kCompute, 1);
      leave(w, tick(6), kCompute, 2);
      return;
    }
    const auto rank = static_cast<std::uint32_t>(r);
    std::uint64_t work = 100;
    // MPI_Init, with its call site, as a CREATE_HANDLE collective.
    OTF2_AttributeList* attrs = OTF2_AttributeList_New();
    ok(OTF2_AttributeList_AddStringRef(attrs, 0, 0));
    const OTF2_Type type = OTF2_TYPE_UINT64;
    OTF2_MetricValue v;
    v.unsigned_int = work;
    ok(OTF2_EvtWriter_Metric(w, nullptr, tick(0), 0, 1, &type, &v));
    ok(OTF2_EvtWriter_Enter(w, attrs, tick(0), kInit));
    OTF2_AttributeList_Delete(attrs);
    ok(OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, tick(0)));
    ok(OTF2_EvtWriter_CommCreate(w, nullptr, tick(10), kWorld));
    ok(OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, tick(10), OTF2_COLLECTIVE_OP_CREATE_HANDLE, kWorld,
                                       OTF2_COLLECTIVE_ROOT_NONE, 0, 0));
    leave(w, tick(10), kInit, work += 50);
    // Records the analyzer does not use are skipped.
    ok(OTF2_EvtWriter_ParameterInt(w, nullptr, tick(11), 0, 42));
    ok(OTF2_EvtWriter_MeasurementOnOff(w, nullptr, tick(12), OTF2_MEASUREMENT_ON));
    // Ring on MPI_COMM_WORLD: Isend right, Irecv left, Wait.
    enter(w, tick(20), kIsend, work += 10);
    ok(OTF2_EvtWriter_MpiIsend(w, nullptr, tick(20), (rank + 1) % 4, kWorld, 5, 100, 1));
    leave(w, tick(21), kIsend, work += 1);
    enter(w, tick(22), kIrecv, work += 1);
    ok(OTF2_EvtWriter_MpiIrecvRequest(w, nullptr, tick(22), 2));
    leave(w, tick(23), kIrecv, work += 1);
    enter(w, tick(24), kWait, work += 1);
    ok(OTF2_EvtWriter_MpiIrecv(w, nullptr, tick(29), (rank + 3) % 4, kWorld, 5, 100, 2));
    ok(OTF2_EvtWriter_MpiIsendComplete(w, nullptr, tick(29), 1));
    leave(w, tick(30), kWait, work += 1);
    enter(w, tick(31), kCompute, work += 1);
    leave(w, tick(39), kCompute, work += 500);
    // Split: even ranks into kEven = {2, 0}, odd into kOdd = {3, 1}.
    const Comm sub = r % 2 == 0 ? kEven : kOdd;
    enter(w, tick(40), kSplit, work += 1);
    ok(OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, tick(40)));
    ok(OTF2_EvtWriter_CommCreate(w, nullptr, tick(44), sub));
    ok(OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, tick(44), OTF2_COLLECTIVE_OP_CREATE_HANDLE, kWorld,
                                       OTF2_COLLECTIVE_ROOT_NONE, 0, 0));
    leave(w, tick(45), kSplit, work += 1);
    // Sub rank 0 (world 2 or 3) sends to sub rank 1 (world 0 or 1).
    const bool sub_root = r >= 2;
    enter(w, tick(46), sub_root ? kSend : kRecv, work += 1);
    if (sub_root)
      ok(OTF2_EvtWriter_MpiSend(w, nullptr, tick(46), 1, sub, 7, 8));
    else
      ok(OTF2_EvtWriter_MpiRecv(w, nullptr, tick(47), 0, sub, 7, 8));
    leave(w, tick(48), sub_root ? kSend : kRecv, work += 1);
    // Reduce to sub rank 1.
    enter(w, tick(50), kReduce, work += 1);
    ok(OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, tick(50)));
    ok(OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, tick(52), OTF2_COLLECTIVE_OP_REDUCE, sub, 1, 8, sub_root ? 0 : 16));
    leave(w, tick(52), kReduce, work += 1);
    // Non-blocking allreduce, completed in MPI_Wait.
    enter(w, tick(60), kIallreduce, work += 1);
    ok(OTF2_EvtWriter_NonBlockingCollectiveRequest(w, nullptr, tick(60), 9));
    leave(w, tick(61), kIallreduce, work += 1);
    enter(w, tick(62), kWait, work += 1);
    ok(OTF2_EvtWriter_NonBlockingCollectiveComplete(w, nullptr, tick(65), OTF2_COLLECTIVE_OP_ALLREDUCE, kWorld,
                                                    OTF2_COLLECTIVE_ROOT_NONE, 32, 32, 9));
    leave(w, tick(66), kWait, work += 1);
    // To itself on MPI_COMM_SELF.
    enter(w, tick(70), kSend, work += 1);
    ok(OTF2_EvtWriter_MpiSend(w, nullptr, tick(70), 0, kSelf, 9, 4));
    leave(w, tick(71), kSend, work += 1);
    enter(w, tick(72), kRecv, work += 1);
    ok(OTF2_EvtWriter_MpiRecv(w, nullptr, tick(73), 0, kSelf, 9, 4));
    leave(w, tick(74), kRecv, work += 1);
    // Rank 1 sends to the member of kBroken that no log told about.
    if (r == 1) {
      enter(w, tick(80), kSend, work += 1);
      ok(OTF2_EvtWriter_MpiSend(w, nullptr, tick(80), 1, kBroken, 3, 1));
      leave(w, tick(81), kSend, work += 1);
    }
    enter(w, tick(100), kFinalize, work += 1);
    leave(w, tick(101), kFinalize, work += 1);
  };
  return spec;
}

class P3sArchive : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = testing::scratch_dir("p3s-archive");
    testing::write_archive(dir_, p3s_spec());
  }
  static fs::path dir_;
};
fs::path P3sArchive::dir_;

class Collect final : public EventVisitor {
 public:
  void on_event(const Location& l, const Event& e) override { events[l.id].push_back(e); }
  std::map<std::uint64_t, std::vector<Event>> events;
};

TEST_F(P3sArchive, DefinitionsAndProperties) {
  const TraceReader reader(dir_);
  const TraceDefinitions& d = reader.definitions();
  EXPECT_TRUE(d.written_by_p3s());
  EXPECT_EQ(d.work_metric(), "cputime_ns");
  EXPECT_EQ(d.work_metric_member, "cputime_ns");
  EXPECT_EQ(d.property(trace::property::kComplete), "true");
  EXPECT_FALSE(d.property("P3S::NOT_THERE").has_value());
  EXPECT_EQ(d.processes, 4);
  EXPECT_EQ(d.clock.timer_resolution, 2000000000u);
  EXPECT_EQ(d.clock.length_ns(), 200u);
  ASSERT_NE(d.callsite_attribute, kNoRef);
  ASSERT_EQ(d.metric_classes.size(), 1u);
  EXPECT_EQ(d.metric_classes[0].work_index, 0);
  EXPECT_EQ(d.metric_members[0].unit, "ns");

  // Five locations: the thread of rank 0 is sorted next to its master and inherits rank 0.
  ASSERT_EQ(d.locations.size(), 5u);
  EXPECT_EQ(d.locations[0].id, 0u);
  EXPECT_EQ(d.locations[1].id, 1ull << 32);
  EXPECT_EQ(d.locations[1].rank, 0);
  EXPECT_EQ(d.locations[4].rank, 3);
  EXPECT_EQ(d.location(1ull << 32)->rank, 0);
  EXPECT_EQ(d.location(77), nullptr);

  // Communicator ranks -> world ranks.
  EXPECT_EQ(d.comm(kEven)->world_ranks, (std::vector<std::int32_t>{2, 0}));
  EXPECT_EQ(d.comm(kOdd)->world_ranks, (std::vector<std::int32_t>{3, 1}));
  EXPECT_EQ(d.comm(kBroken)->world_ranks, (std::vector<std::int32_t>{1, kUnresolvedRank}));
  EXPECT_EQ(d.comm(kSelf)->kind, CommKind::Self);
  EXPECT_EQ(d.world_rank(kSelf, 0, 2), 2);
  EXPECT_EQ(d.world_rank(kEven, 1, 3), 0);
  EXPECT_EQ(d.world_rank(kEven, 2, 3), kUnresolvedRank);
  EXPECT_EQ(d.world_rank(99, 0, 0), kUnresolvedRank);
  EXPECT_EQ(d.region(kCompute)->paradigm, Paradigm::User);
  EXPECT_EQ(d.region(kReduce)->role, RegionRole::CollectiveAllToOne);
  EXPECT_EQ(d.region(1000), nullptr);
}

TEST_F(P3sArchive, EventsCarryMetricsCallsitesAndWorldRanks) {
  TraceReader reader(dir_);
  const TraceDefinitions& d = reader.definitions();
  Collect c;
  reader.read_all(c);
  for (std::int32_t r = 0; r < 4; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    const std::vector<Event>& ev = c.events[static_cast<std::uint64_t>(r)];
    ASSERT_GE(ev.size(), 5u);
    // MPI_Init: enter at the trace start with counter 100 and the call site; leave 10 ns later with 150.
    EXPECT_EQ(ev[0].kind, EventKind::Enter);
    EXPECT_EQ(ev[0].region, kInit);
    EXPECT_EQ(ev[0].time_ns, 0u);
    EXPECT_EQ(ev[0].work, 100u);
    EXPECT_EQ(ev[0].metric_count, 1u);
    EXPECT_EQ(ev[0].metric_values[0], 100u);
    EXPECT_EQ(ev[0].metric_class, 0u);
    EXPECT_EQ(d.string(ev[0].callsite), "main+0x10 [app+0x1234]");
    EXPECT_EQ(ev[1].kind, EventKind::CollectiveBegin);
    EXPECT_FALSE(ev[1].work.has_value());
    EXPECT_EQ(ev[2].kind, EventKind::CommCreate);
    EXPECT_EQ(ev[2].comm, kWorld);
    EXPECT_EQ(ev[3].kind, EventKind::CollectiveEnd);
    EXPECT_EQ(ev[3].op, mpi::Collective::CreateHandle);
    EXPECT_EQ(ev[3].root, kNoRank);
    EXPECT_EQ(ev[4].kind, EventKind::Leave);
    EXPECT_EQ(ev[4].time_ns, 10u);
    EXPECT_EQ(ev[4].work, 150u);
    EXPECT_EQ(ev[4].callsite, kNoRef);

    const bool sub_root = r >= 2;
    const std::int32_t sub_partner = r >= 2 ? r - 2 : r + 2;
    int checked = 0;
    for (const Event& e : ev) {
      switch (e.kind) {
        case EventKind::MpiIsend:
          EXPECT_EQ(e.peer, (r + 1) % 4);
          EXPECT_EQ(e.request, 1u);
          EXPECT_EQ(e.time_ns, 20u);
          ++checked;
          break;
        case EventKind::MpiIrecv:
          EXPECT_EQ(e.peer, (r + 3) % 4);
          ++checked;
          break;
        case EventKind::MpiSend:
          if (e.comm == kEven || e.comm == kOdd) {
            EXPECT_TRUE(sub_root);
            EXPECT_EQ(e.rank_in_comm, 1u);
            EXPECT_EQ(e.peer, sub_partner);
          } else if (e.comm == kSelf) {
            EXPECT_EQ(e.peer, r);
          } else {
            EXPECT_EQ(e.comm, kBroken);
            EXPECT_EQ(e.peer, kUnresolvedRank);
          }
          ++checked;
          break;
        case EventKind::MpiRecv:
          EXPECT_EQ(e.peer, e.comm == kSelf ? r : sub_partner);
          ++checked;
          break;
        case EventKind::CollectiveEnd:
          if (e.op == mpi::Collective::Reduce) {
            EXPECT_EQ(e.root, r % 2);  // sub rank 1 is world rank 0 (even) or 1 (odd)
            EXPECT_EQ(e.bytes, 8u);
            EXPECT_EQ(e.bytes_received, sub_root ? 0u : 16u);
            ++checked;
          }
          break;
        case EventKind::NbCollectiveComplete:
          EXPECT_EQ(e.request, 9u);
          EXPECT_EQ(e.op, mpi::Collective::Allreduce);
          ++checked;
          break;
        default:
          break;
      }
    }
    EXPECT_EQ(checked, r == 1 ? 8 : 7);
  }
  // The second thread of rank 0 has its own stream.
  const std::vector<Event>& thread = c.events[1ull << 32];
  ASSERT_EQ(thread.size(), 2u);
  EXPECT_EQ(thread[0].region, kCompute);
  EXPECT_EQ(thread[1].work, 2u);
}

TEST_F(P3sArchive, Summary) {
  const Summary s = summarize(dir_ / "traces.otf2");
  EXPECT_EQ(s.processes, 4);
  EXPECT_EQ(s.work_metric, "cputime_ns");
  EXPECT_EQ(s.recorded_by, "p3s 0.1.0");
  EXPECT_TRUE(s.complete);
  EXPECT_EQ(s.duration_ns, 200u);
  ASSERT_EQ(s.ranks.size(), 4u);
  const TraceReader reader(dir_);
  for (std::int32_t r = 0; r < 4; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    const RankSummary& rs = s.ranks[static_cast<std::size_t>(r)];
    EXPECT_EQ(rs.locations, r == 0 ? 2u : 1u);
    std::uint64_t declared = 0;
    for (const Location& l : reader.definitions().locations) declared += l.rank == r ? l.declared_events : 0;
    EXPECT_EQ(rs.events, declared);
    const std::int32_t partner = r >= 2 ? r - 2 : r + 2;
    std::vector<MessageCount> expected = {{"recv", (r + 3) % 4, 5, 100, 1}, {"send", (r + 1) % 4, 5, 100, 1}};
    expected.push_back({r >= 2 ? "send" : "recv", partner, 7, 8, 1});
    expected.push_back({"recv", r, 9, 4, 1});
    expected.push_back({"send", r, 9, 4, 1});
    std::sort(expected.begin(), expected.end(), [](const MessageCount& a, const MessageCount& b) {
      return std::tie(a.op, a.peer, a.tag, a.bytes) < std::tie(b.op, b.peer, b.tag, b.bytes);
    });
    EXPECT_EQ(rs.messages, expected);
    EXPECT_EQ(rs.unresolved_peers, r == 1 ? 1u : 0u);
    const std::map<std::string, std::uint64_t> collectives = {
        {"MPI_Comm_split", 1}, {"MPI_Iallreduce", 1}, {"MPI_Init", 1}, {"MPI_Reduce", 1}};
    EXPECT_EQ(rs.collectives, collectives);
    EXPECT_EQ(rs.calls.at("MPI_Wait"), 2u);
    EXPECT_EQ(rs.calls.at("MPI_Send"), r >= 2 ? 2u : (r == 1 ? 2u : 1u));
    EXPECT_FALSE(rs.calls.contains("compute"));
    // Outermost MPI regions: Init 10, Isend 1, Irecv 1, Wait 6, Split 5, Send/Recv 2, Reduce 2, Iallreduce 1,
    // Wait 4, self Send 1 + Recv 2, Finalize 1 (+1 for rank 1's extra send).
    EXPECT_EQ(rs.time_in_mpi_ns, 36u + (r == 1 ? 1u : 0u));
  }
  const std::string json = summary_json(s);
  EXPECT_NE(json.find("\"work_metric\": \"cputime_ns\""), std::string::npos);
  EXPECT_NE(json.find("\"unresolved_peers\": 1"), std::string::npos);
}

TEST_F(P3sArchive, IncompleteRunIsReportedFromTheProperty) {
  const fs::path dir = testing::scratch_dir("p3s-incomplete");
  ArchiveSpec spec = p3s_spec();
  spec.properties[trace::property::kComplete] = "false";
  testing::write_archive(dir, spec);
  EXPECT_FALSE(summarize(dir).complete);
}

TEST_F(P3sArchive, BytesThatAreNotUtf8AreWrittenAsReplacementCharacters) {
  // A directory named in another encoding (Latin-1 "\xe9t\xe9"), and a command line of such bytes.
  const fs::path dir = testing::scratch_dir("p3s-\xe9t\xe9");
  ArchiveSpec spec = p3s_spec();
  spec.properties[trace::property::kCommand] = "./app \xff\xfe";
  testing::write_archive(dir, spec);
  std::string json;
  ASSERT_NO_THROW(json = summary_json(summarize(dir)));
  EXPECT_NE(json.find("p3s-\xEF\xBF\xBDt\xEF\xBF\xBD"), std::string::npos) << json;
}

/// Two ranks that each call MPI_Init, three MPI_Barriers and MPI_Finalize, with their metric (CPU time outside MPI
/// calls) before each Enter only, as p3s writes from schema 2; the last call's counter went back to 0 (MPI_Abort's
/// Enter carries zero counters).
ArchiveSpec schema2_spec(const std::string& schema) {
  ArchiveSpec spec;
  spec.regions = {{"MPI_Init"}, {"MPI_Barrier", OTF2_REGION_ROLE_BARRIER}, {"MPI_Finalize"}};
  spec.comms = {{"MPI_COMM_WORLD", {0, 1}}, {"MPI_COMM_SELF", {}, true}};
  spec.metrics = {trace::metric::kCpuTime};
  spec.properties = {{trace::property::kTool, "p3s 0.1.0"},
                     {trace::property::kSchemaVersion, schema},
                     {trace::property::kWorkMetric, trace::metric::kCpuTime},
                     {trace::property::kComplete, "true"}};
  spec.events = [](OTF2_EvtWriter* w, std::int32_t, std::uint32_t) {
    const OTF2_Type type = OTF2_TYPE_UINT64;
    const auto call = [&](std::uint64_t t, std::uint32_t region, std::uint64_t counter) {
      OTF2_MetricValue v;
      v.unsigned_int = counter;
      ok(OTF2_EvtWriter_Metric(w, nullptr, t, 0, 1, &type, &v));
      ok(OTF2_EvtWriter_Enter(w, nullptr, t, region));
      ok(OTF2_EvtWriter_Leave(w, nullptr, t + 5, region));
    };
    call(0, 0, 100);
    call(100, 1, 350);
    call(200, 1, 930);
    call(300, 1, 940);
    call(400, 2, 0);
  };
  return spec;
}

TEST(Schema2Archive, BurstsAreTheDifferencesOfTheMetricsBeforeEachEnter) {
  const fs::path dir = testing::scratch_dir("schema2");
  testing::write_archive(dir, schema2_spec("2"));
  TraceReader reader(dir);
  const fs::path scratch = testing::scratch_dir("schema2-ops");
  const Extracted x = extract_operations(reader, scratch);
  ASSERT_TRUE(x.has_work_metric);
  ASSERT_EQ(x.locations.size(), 2u);
  OpReader ops(x.locations[0].ops);
  Op op;
  std::vector<std::uint64_t> bursts;
  std::vector<std::uint64_t> calls;
  while (ops.next(op)) {
    bursts.push_back(op.header.burst_work);
    calls.push_back(op.header.call_work);
  }
  // The first call has no burst before it; the counter that went back gives none, not a wrapped-around one.
  EXPECT_EQ(bursts, (std::vector<std::uint64_t>{0, 250, 580, 10, 0}));
  EXPECT_EQ(calls, (std::vector<std::uint64_t>(5, 0)));  // the Leave carries no counters: unknown, not time
}

TEST(Schema2Archive, ANewerOrUnrecognisedSchemaIsRefused) {
  for (const auto& [schema, says] : std::vector<std::pair<std::string, std::string>>{
           {"3", "written in p3s trace schema 3; this p3s reads schemas 1 to 2"},
           {"2.0", "unrecognised P3S::SCHEMA_VERSION '2.0'"},
           {"0", "unrecognised P3S::SCHEMA_VERSION '0'"}}) {
    const fs::path dir = testing::scratch_dir("schema-" + schema);
    testing::write_archive(dir, schema2_spec(schema));
    try {
      TraceReader reader(dir);
      ADD_FAILURE() << "read an archive of schema " << schema;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  }
}

TEST(ForeignArchive, CompleteMeansEveryRankLeftMpiFinalize) {
  const fs::path dir = testing::scratch_dir("foreign-incomplete");
  ArchiveSpec spec = p3s_spec();
  spec.properties.clear();
  spec.creator = "another tracer";
  const auto events = spec.events;
  // Rank 3 stops inside MPI_Finalize.
  spec.events = [events](OTF2_EvtWriter* w, std::int32_t r, std::uint32_t t) {
    if (r != 3) return events(w, r, t);
    enter(w, tick(0), kInit, 1);
    leave(w, tick(1), kInit, 2);
    enter(w, tick(2), kFinalize, 3);
  };
  testing::write_archive(dir, spec);
  const Summary s = summarize(dir);
  EXPECT_EQ(s.work_metric, "unknown");
  EXPECT_EQ(s.recorded_by, "another tracer");
  EXPECT_FALSE(s.complete);
}

TEST(InterCommunicator, PeersIndexTheRemoteGroup) {
  const fs::path dir = testing::scratch_dir("intercomm");
  ArchiveSpec spec;
  spec.ranks = 4;
  spec.regions = {{"MPI_Send", OTF2_REGION_ROLE_POINT2POINT}, {"MPI_Recv", OTF2_REGION_ROLE_POINT2POINT}};
  spec.comms = {{"MPI_COMM_WORLD", {0, 1, 2, 3}}, {"inter", {0, 1}, false, {2, 3}}};
  spec.events = [](OTF2_EvtWriter* w, std::int32_t r, std::uint32_t) {
    // Local rank i of each side talks to remote rank i: 0 <-> 2, 1 <-> 3.
    const auto local = static_cast<std::uint32_t>(r % 2);
    ok(OTF2_EvtWriter_Enter(w, nullptr, 1, r < 2 ? 0 : 1));
    if (r < 2)
      ok(OTF2_EvtWriter_MpiSend(w, nullptr, 2, local, 1, 0, 8));
    else
      ok(OTF2_EvtWriter_MpiRecv(w, nullptr, 2, local, 1, 0, 8));
    ok(OTF2_EvtWriter_Leave(w, nullptr, 3, r < 2 ? 0 : 1));
  };
  testing::write_archive(dir, spec);
  const Summary s = summarize(dir);
  ASSERT_EQ(s.ranks.size(), 4u);
  EXPECT_EQ(s.ranks[0].messages, (std::vector<MessageCount>{{"send", 2, 0, 8, 1}}));
  EXPECT_EQ(s.ranks[1].messages, (std::vector<MessageCount>{{"send", 3, 0, 8, 1}}));
  EXPECT_EQ(s.ranks[2].messages, (std::vector<MessageCount>{{"recv", 0, 0, 8, 1}}));
  EXPECT_EQ(s.ranks[3].messages, (std::vector<MessageCount>{{"recv", 1, 0, 8, 1}}));
  EXPECT_FALSE(s.complete);  // no MPI_Finalize in this archive
}

TEST_F(P3sArchive, VisitorExceptionsPropagateAndStopTheStream) {
  class Throw final : public EventVisitor {
   public:
    void on_event(const Location&, const Event& e) override {
      if (e.kind == EventKind::MpiIsend) throw std::runtime_error("visitor says no");
    }
  };
  TraceReader reader(dir_);
  LocationStream stream = reader.open(0);
  Throw visitor;
  EXPECT_THROW(
      {
        while (stream.read(visitor) > 0) {
        }
      },
      std::runtime_error);
  EXPECT_THROW(stream.read(visitor), TraceError);
  EXPECT_THROW((void)reader.open(12345), InputError);
}

TEST_F(P3sArchive, StreamOutlivingItsReaderFailsCleanly) {
  auto reader = std::make_unique<TraceReader>(dir_);
  LocationStream stream = reader->open(0);
  reader.reset();
  Collect c;
  EXPECT_THROW(stream.read(c), std::logic_error);
}

}  // namespace
}  // namespace p3s::analyzer
