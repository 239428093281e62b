// SPDX-License-Identifier: BSD-3-Clause
// Real Score-P 8.4 archives of tests/data/scorep/phases.c: the reader must see exactly the known structure.
#include "p3s/analyzer/summary.hpp"
#include "p3s/analyzer/trace_reader.hpp"
#include "test_archive.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace p3s::analyzer {
namespace {
namespace fs = std::filesystem;
using testing::data_dir;

struct ScorepCase {
  const char* dir;
  std::int32_t ranks;
  bool user_regions;  ///< compiler instrumentation adds `main` and `work`
};

/// Every event, per location, plus per-kind totals.
class Collect final : public EventVisitor {
 public:
  void on_event(const Location& l, const Event& e) override {
    events[l.id].push_back(e);
    ++kinds[e.kind];
  }
  void on_location_end(const Location& l, std::uint64_t n) override { records[l.id] = n; }

  std::map<std::uint64_t, std::vector<Event>> events;
  std::map<EventKind, std::uint64_t> kinds;
  std::map<std::uint64_t, std::uint64_t> records;
};

// Readable test names in ctest (gtest would otherwise print the bytes of the struct).
void PrintTo(const ScorepCase& c, std::ostream* os) { *os << c.dir; }

class ScorepArchive : public ::testing::TestWithParam<ScorepCase> {
 protected:
  [[nodiscard]] fs::path path() const { return data_dir() / "scorep" / GetParam().dir; }
};

TEST_P(ScorepArchive, Definitions) {
  const ScorepCase& c = GetParam();
  const TraceReader reader(path());
  const TraceDefinitions& d = reader.definitions();
  EXPECT_EQ(d.anchor, fs::absolute(path() / "traces.otf2").lexically_normal());
  EXPECT_EQ(d.creator, "Score-P 8.4");
  EXPECT_FALSE(d.written_by_p3s());
  EXPECT_EQ(d.work_metric(), "unknown");
  EXPECT_TRUE(d.work_metric_member.empty());
  EXPECT_EQ(d.processes, c.ranks);
  EXPECT_TRUE(d.has_mpi);
  // TSC ticks, not nanoseconds.
  EXPECT_GT(d.clock.timer_resolution, 1000000000u);
  EXPECT_GT(d.clock.length_ns(), 100000000u);  // the runs took a few hundred milliseconds
  EXPECT_LT(d.clock.length_ns(), 10000000000u);

  ASSERT_EQ(d.locations.size(), static_cast<std::size_t>(c.ranks));
  for (std::int32_t r = 0; r < c.ranks; ++r) {
    const Location& l = d.locations[static_cast<std::size_t>(r)];
    EXPECT_EQ(l.rank, r);
    EXPECT_EQ(l.id, static_cast<std::uint64_t>(r));
    EXPECT_GT(l.declared_events, 0u);
  }

  std::map<std::string, const Region*> by_name;
  for (const Region& r : d.regions) by_name[r.name] = &r;
  ASSERT_TRUE(by_name.contains("MPI_Isend"));
  EXPECT_TRUE(by_name["MPI_Isend"]->is_mpi());
  EXPECT_EQ(by_name["MPI_Isend"]->role, RegionRole::PointToPoint);
  EXPECT_EQ(by_name["MPI_Allreduce"]->role, RegionRole::CollectiveAllToAll);
  EXPECT_EQ(by_name["MPI_Barrier"]->role, RegionRole::Barrier);
  EXPECT_EQ(by_name.contains("main"), c.user_regions);
  if (c.user_regions) {
    EXPECT_FALSE(by_name["work"]->is_mpi());
  }

  // MPI_COMM_WORLD resolves to the identity; MPI_COMM_SELF to the caller.
  const Communicator* world = nullptr;
  const Communicator* self = nullptr;
  for (const Communicator& comm : d.comms) {
    if (comm.name == "MPI_COMM_WORLD") world = &comm;
    if (comm.name == "MPI_COMM_SELF") self = &comm;
  }
  ASSERT_NE(world, nullptr);
  ASSERT_NE(self, nullptr);
  EXPECT_EQ(world->kind, CommKind::Group);
  ASSERT_EQ(world->world_ranks.size(), static_cast<std::size_t>(c.ranks));
  for (std::int32_t r = 0; r < c.ranks; ++r) EXPECT_EQ(world->world_ranks[static_cast<std::size_t>(r)], r);
  EXPECT_EQ(self->kind, CommKind::Self);
  EXPECT_EQ(d.world_rank(self->id, 0, 3), 3);
  EXPECT_EQ(d.world_rank(self->id, 1, 3), kUnresolvedRank);
}

TEST_P(ScorepArchive, EventsFollowThePhasesProgram) {
  const ScorepCase& c = GetParam();
  const std::int32_t n = c.ranks;
  TraceReader reader(path());
  const TraceDefinitions& d = reader.definitions();
  Collect all;
  reader.read_all(all);

  // Totals: per rank 60 Isend (+completions), 60 Irecv (+requests), 12 Sendrecv = one MPI_SEND and one MPI_RECV,
  // 45 collectives (Init, Bcast, 30 Allreduce, 12 Barrier, Finalize), MPI_COMM_WORLD + MPI_COMM_SELF created and
  // destroyed. (README: 240 MPI_ISEND ... 180 MPI_COLLECTIVE_BEGIN/END on np4.)
  const auto per_rank = [&](std::uint64_t k) { return k * static_cast<std::uint64_t>(n); };
  EXPECT_EQ(all.kinds[EventKind::MpiIsend], per_rank(60));
  EXPECT_EQ(all.kinds[EventKind::MpiIsendComplete], per_rank(60));
  EXPECT_EQ(all.kinds[EventKind::MpiIrecvRequest], per_rank(60));
  EXPECT_EQ(all.kinds[EventKind::MpiIrecv], per_rank(60));
  EXPECT_EQ(all.kinds[EventKind::MpiSend], per_rank(12));
  EXPECT_EQ(all.kinds[EventKind::MpiRecv], per_rank(12));
  EXPECT_EQ(all.kinds[EventKind::CollectiveBegin], per_rank(45));
  EXPECT_EQ(all.kinds[EventKind::CollectiveEnd], per_rank(45));
  EXPECT_EQ(all.kinds[EventKind::CommCreate], per_rank(2));
  EXPECT_EQ(all.kinds[EventKind::CommDestroy], per_rank(2));
  EXPECT_EQ(all.kinds[EventKind::NbCollectiveRequest], 0u);
  EXPECT_EQ(all.kinds[EventKind::Enter], all.kinds[EventKind::Leave]);
  // 209 MPI calls per rank (see the summary test), plus main and 42 work bursts with compiler instrumentation.
  EXPECT_EQ(all.kinds[EventKind::Enter], per_rank(c.user_regions ? 209 + 1 + 42 : 209));
  if (n == 4) {
    EXPECT_EQ(all.kinds[EventKind::MpiIsend], 240u);
    EXPECT_EQ(all.kinds[EventKind::MpiSend], 48u);
    EXPECT_EQ(all.kinds[EventKind::CollectiveEnd], 180u);
    EXPECT_EQ(all.kinds[EventKind::Enter], 1008u);
  }

  for (const Location& l : d.locations) {
    const std::int32_t r = l.rank;
    const std::vector<Event>& ev = all.events[l.id];
    // Every record of the location was read (PROGRAM_BEGIN/END included, which the reader skips).
    EXPECT_EQ(all.records[l.id], l.declared_events);
    std::uint64_t last = 0;
    std::vector<std::uint32_t> stack;
    std::set<std::uint64_t> open_isends;
    std::set<std::uint64_t> posted_irecvs;
    int bcasts = 0;
    for (const Event& e : ev) {
      EXPECT_GE(e.time_ns, last) << "rank " << r << " goes back in time";
      last = e.time_ns;
      EXPECT_LE(e.time_ns, d.clock.length_ns() + 1);
      const std::string inside = stack.empty() ? "" : d.region(stack.back())->name;
      switch (e.kind) {
        case EventKind::Enter:
          stack.push_back(e.region);
          break;
        case EventKind::Leave:
          ASSERT_FALSE(stack.empty());
          EXPECT_EQ(stack.back(), e.region);
          stack.pop_back();
          break;
        case EventKind::MpiIsend:
          // Mapping tables applied: Score-P's local communicator ids differ from the global ones.
          EXPECT_EQ(d.comm(e.comm)->name, "MPI_COMM_WORLD");
          EXPECT_EQ(inside, "MPI_Isend");
          EXPECT_EQ(e.bytes, 16384u);
          EXPECT_EQ(e.peer, e.tag == 1 ? (r + 1) % n : (r - 1 + n) % n);
          EXPECT_TRUE(open_isends.insert(e.request).second);
          break;
        case EventKind::MpiIsendComplete:
          EXPECT_EQ(open_isends.erase(e.request), 1u);
          EXPECT_EQ(inside, "MPI_Waitall");
          break;
        case EventKind::MpiIrecvRequest:
          EXPECT_TRUE(posted_irecvs.insert(e.request).second);
          break;
        case EventKind::MpiIrecv:
          EXPECT_EQ(posted_irecvs.erase(e.request), 1u);
          EXPECT_EQ(e.peer, e.tag == 1 ? (r - 1 + n) % n : (r + 1) % n);
          EXPECT_EQ(e.bytes, 16384u);
          break;
        case EventKind::MpiSend:
        case EventKind::MpiRecv:
          // Score-P writes MPI_Sendrecv as an MPI_SEND and an MPI_RECV inside one region.
          EXPECT_EQ(inside, "MPI_Sendrecv");
          EXPECT_EQ(e.peer, (r + n / 2) % n);
          EXPECT_EQ(e.tag, 3u);
          EXPECT_EQ(e.bytes, 4096u);
          break;
        case EventKind::CollectiveEnd:
          if (e.op == mpi::Collective::Bcast) {
            ++bcasts;
            EXPECT_EQ(e.root, 0);
            EXPECT_EQ(e.bytes_received, 256u);
          } else {
            EXPECT_EQ(e.root, kNoRank);
          }
          if (e.op == mpi::Collective::CreateHandle) {
            EXPECT_EQ(inside, "MPI_Init");
          }
          if (e.op == mpi::Collective::DestroyHandle) {
            EXPECT_EQ(inside, "MPI_Finalize");
          }
          break;
        default:
          break;
      }
    }
    EXPECT_TRUE(stack.empty());
    EXPECT_TRUE(open_isends.empty());
    EXPECT_TRUE(posted_irecvs.empty());
    EXPECT_EQ(bcasts, 1);
  }
}

TEST_P(ScorepArchive, SummaryMatchesTheProgram) {
  const ScorepCase& c = GetParam();
  const std::int32_t n = c.ranks;
  const Summary s = summarize(path());
  EXPECT_EQ(s.processes, n);
  EXPECT_EQ(s.work_metric, "unknown");
  EXPECT_EQ(s.recorded_by, "Score-P 8.4");
  EXPECT_TRUE(s.complete);
  EXPECT_EQ(s.archive, (fs::absolute(path()) / "traces.otf2").lexically_normal().string());
  ASSERT_EQ(s.ranks.size(), static_cast<std::size_t>(n));
  const TraceReader reader(path());
  for (std::int32_t r = 0; r < n; ++r) {
    const RankSummary& rs = s.ranks[static_cast<std::size_t>(r)];
    SCOPED_TRACE("rank " + std::to_string(r));
    EXPECT_EQ(rs.rank, r);
    EXPECT_EQ(rs.locations, 1u);
    EXPECT_EQ(rs.events, reader.definitions().locations[static_cast<std::size_t>(r)].declared_events);
    EXPECT_EQ(rs.unresolved_peers, 0u);
    const std::int32_t right = (r + 1) % n;
    const std::int32_t left = (r - 1 + n) % n;
    const std::int32_t far = (r + n / 2) % n;
    std::vector<MessageCount> expected = {
        {"recv", right, 2, 16384, 30}, {"recv", left, 1, 16384, 30}, {"recv", far, 3, 4096, 12},
        {"send", right, 1, 16384, 30}, {"send", left, 2, 16384, 30}, {"send", far, 3, 4096, 12},
    };
    std::sort(expected.begin(), expected.end(), [](const MessageCount& a, const MessageCount& b) {
      return std::tie(a.op, a.peer, a.tag, a.bytes) < std::tie(b.op, b.peer, b.tag, b.bytes);
    });
    EXPECT_EQ(rs.messages, expected);
    const std::map<std::string, std::uint64_t> collectives = {
        {"MPI_Allreduce", 30}, {"MPI_Barrier", 12}, {"MPI_Bcast", 1}, {"MPI_Finalize", 1}, {"MPI_Init", 1}};
    EXPECT_EQ(rs.collectives, collectives);
    const std::map<std::string, std::uint64_t> calls = {
        {"MPI_Allreduce", 30}, {"MPI_Barrier", 12},  {"MPI_Bcast", 1},   {"MPI_Comm_rank", 1},
        {"MPI_Comm_size", 1},  {"MPI_Finalize", 1},  {"MPI_Init", 1},    {"MPI_Irecv", 60},
        {"MPI_Isend", 60},     {"MPI_Sendrecv", 12}, {"MPI_Waitall", 30}};
    EXPECT_EQ(rs.calls, calls);
    EXPECT_EQ(rs.mpi_calls(), 209u);
    EXPECT_EQ(rs.bytes_sent(), 60u * 16384 + 12u * 4096);
    EXPECT_GT(rs.time_in_mpi_ns, 0u);
    EXPECT_LE(rs.time_in_mpi_ns, s.duration_ns);
  }
}

TEST_P(ScorepArchive, SummaryJsonFollowsTheSchema) {
  const Summary s = summarize(path());
  const std::string json = summary_json(s);
  EXPECT_NE(json.find("\"schema_version\": 1"), std::string::npos);
  EXPECT_NE(json.find("\"tool\": \"p3s "), std::string::npos);
  EXPECT_NE(json.find("\"work_metric\": \"unknown\""), std::string::npos);
  EXPECT_NE(json.find("\"MPI_Allreduce\": 30"), std::string::npos);
  EXPECT_NE(json.find("{\n          \"op\": \"recv\""), std::string::npos);
  const std::string text = summary_text(s);
  EXPECT_NE(text.find("Score-P 8.4"), std::string::npos);
  EXPECT_NE(text.find("time in MPI"), std::string::npos);
}

TEST_P(ScorepArchive, PullInterfaceAndInterleavedStreamsSeeTheSameEvents) {
  TraceReader reader(path());
  Collect all;
  reader.read_all(all);
  // One stream per location, all open at once and advanced round-robin, as a merging consumer would.
  std::vector<LocationStream> streams;
  for (const Location& l : reader.definitions().locations) streams.push_back(reader.open(l.id));
  std::map<std::uint64_t, std::size_t> seen;
  bool progress = true;
  while (progress) {
    progress = false;
    for (LocationStream& s : streams) {
      Event e;
      if (!s.next(e)) continue;
      progress = true;
      const std::uint64_t id = s.location().id;
      const std::vector<Event>& want = all.events[id];
      ASSERT_LT(seen[id], want.size());
      const Event& w = want[seen[id]++];
      EXPECT_EQ(e.kind, w.kind);
      EXPECT_EQ(e.time_ns, w.time_ns);
      EXPECT_EQ(e.peer, w.peer);
    }
  }
  for (LocationStream& s : streams) {
    EXPECT_TRUE(s.at_end());
    EXPECT_EQ(seen[s.location().id], all.events[s.location().id].size());
    EXPECT_EQ(s.records(), s.location().declared_events);
  }
}

TEST_P(ScorepArchive, SmallBatchesDeliverEverything) {
  TraceReader reader(path());
  const Location& l = reader.definitions().locations.back();
  LocationStream stream = reader.open(l.id);
  Collect c;
  std::uint64_t total = 0;
  while (const std::uint64_t n = stream.read(c, 7)) {
    EXPECT_LE(n, 7u);
    total += n;
  }
  EXPECT_TRUE(stream.at_end());
  EXPECT_EQ(total, l.declared_events);
  EXPECT_EQ(stream.read(c), 0u);
}

INSTANTIATE_TEST_SUITE_P(Phases, ScorepArchive,
                         ::testing::Values(ScorepCase{"phases-c-np4", 4, true}, ScorepCase{"phases-mpi-np8", 8, false}),
                         [](const ::testing::TestParamInfo<ScorepCase>& p) {
                           return p.param.ranks == 4 ? std::string("CNp4") : std::string("MpiNp8");
                         });

}  // namespace
}  // namespace p3s::analyzer
