// SPDX-License-Identifier: BSD-3-Clause
// Recovery: raw logs of a run that died become a readable archive that says it is incomplete.
#include "p3s/interpose/recover.hpp"

#include <gtest/gtest.h>
#include <otf2/otf2.h>

#include <filesystem>
#include <map>

#include "archive_io.hpp"
#include "p3s/error.hpp"
#include "p3s/interpose/counters.hpp"
#include "p3s/interpose/record.hpp"
#include "p3s/trace/schema.hpp"
#include "regions.hpp"
#include "thread_log.hpp"

namespace p3s::interpose {
namespace {
namespace fs = std::filesystem;

raw::FileHeader header(int rank, int size) {
  raw::FileHeader h{};
  std::memcpy(h.magic, raw::kMagic, sizeof h.magic);
  h.version = raw::kVersion;
  h.header_bytes = sizeof h;
  h.rank = rank;
  h.world_size = size;
  h.metric_count = 1;
  h.counter_mode = static_cast<std::uint8_t>(CounterMode::CpuTime);
  std::strcpy(h.metric_names[0], trace::metric::kCpuTime);
  std::strcpy(h.host, "node0");
  return h;
}

void define_comms(ThreadLog& log, int rank) {
  raw::CommDefinition world{0, raw::kNoParent, raw::kWorldKey, 2, raw::kCommWorld, rank, 0};
  raw::CommDefinition self{1, raw::kNoParent, raw::kSelfKey, 1, raw::kCommSelf, 0, 0};
  // A communicator in which the world ranks are swapped: world rank 1 has rank 0 in it.
  raw::CommDefinition swapped{2, 0, (1ULL << 32) | 1, 2, 0, 1 - rank, 0};
  for (const auto& d : {world, self, swapped}) log.append(raw::Kind::CommDef, 0, 0, 0, &d, sizeof d);
}

void call(ThreadLog& log, Region region, std::uint64_t t, raw::Kind kind, const raw::Msg& m) {
  const std::uint64_t metric = t / 2;
  log.append(raw::Kind::Enter, 0, static_cast<std::uint16_t>(region), t, &metric, sizeof metric);
  log.append(kind, t + 1, m);
  log.append(raw::Kind::Leave, 0, static_cast<std::uint16_t>(region), t + 2, &metric, sizeof metric);
}

/// Rank 0 sends to rank 1 over the swapped communicator and finishes; rank 1 receives and dies.
std::string make_run(const std::string& name) {
  const fs::path dir = fs::path(P3S_TEST_TMP) / name;
  fs::remove_all(dir);
  fs::create_directories(raw_dir(dir.string()));
  std::string error;
  {
    auto log = ThreadLog::open(raw_log_path(dir.string(), 0, 0), 1 << 16, header(0, 2), error);
    define_comms(*log, 0);
    call(*log, Region::MPI_Send, 1000, raw::Kind::Send, raw::Msg{2, 0, 7, 0, 64, 0});
    const raw::ClockSyncAtEnd end{2000, 0};
    log->append(raw::Kind::Finalized, 2000, end);
  }
  {
    auto log = ThreadLog::open(raw_log_path(dir.string(), 1, 0), 1 << 16, header(1, 2), error);
    define_comms(*log, 1);
    call(*log, Region::MPI_Recv, 1005, raw::Kind::Recv, raw::Msg{2, 1, 7, 0, 64, 0});
  }
  return dir.string();
}

struct Definitions {
  std::map<OTF2_LocationRef, std::uint64_t> events;
  std::map<OTF2_GroupRef, std::vector<std::uint64_t>> groups;
  std::map<OTF2_CommRef, OTF2_GroupRef> comms;
};

Definitions read_definitions(const std::string& anchor) {
  Definitions d;
  OTF2_Reader* reader = OTF2_Reader_Open(anchor.c_str());
  EXPECT_NE(reader, nullptr);
  OTF2_Reader_SetSerialCollectiveCallbacks(reader);
  OTF2_GlobalDefReader* gdr = OTF2_Reader_GetGlobalDefReader(reader);
  OTF2_GlobalDefReaderCallbacks* cb = OTF2_GlobalDefReaderCallbacks_New();
  OTF2_GlobalDefReaderCallbacks_SetLocationCallback(
      cb, [](void* u, OTF2_LocationRef self, OTF2_StringRef, OTF2_LocationType, uint64_t n, OTF2_LocationGroupRef) {
        static_cast<Definitions*>(u)->events[self] = n;
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_GlobalDefReaderCallbacks_SetGroupCallback(
      cb, [](void* u, OTF2_GroupRef self, OTF2_StringRef, OTF2_GroupType, OTF2_Paradigm, OTF2_GroupFlag, uint32_t n,
             const uint64_t* members) {
        static_cast<Definitions*>(u)->groups[self].assign(members, members + n);
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_GlobalDefReaderCallbacks_SetCommCallback(
      cb, [](void* u, OTF2_CommRef self, OTF2_StringRef, OTF2_GroupRef group, OTF2_CommRef, OTF2_CommFlag) {
        static_cast<Definitions*>(u)->comms[self] = group;
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_Reader_RegisterGlobalDefCallbacks(reader, gdr, cb, &d);
  uint64_t n = 0;
  EXPECT_EQ(OTF2_Reader_ReadAllGlobalDefinitions(reader, gdr, &n), OTF2_SUCCESS);
  OTF2_GlobalDefReaderCallbacks_Delete(cb);
  OTF2_Reader_Close(reader);
  return d;
}

TEST(Recover, BuildsAnIncompleteArchiveFromRawLogs) {
  const std::string dir = make_run("killed");
  ASSERT_TRUE(has_raw_logs(dir));
  const RecoverReport r = recover(dir);
  EXPECT_EQ(r.world_size, 2);
  EXPECT_EQ(r.ranks_with_logs, 2);
  EXPECT_FALSE(r.complete);
  EXPECT_EQ(r.incomplete_ranks, (std::vector<std::int32_t>{1}));
  EXPECT_EQ(r.events, 8u);  // per rank: a metric record, Enter, message, Leave (no metric record before a Leave)
  ASSERT_TRUE(fs::exists(r.archive));
  EXPECT_FALSE(fs::exists(partial_dir(dir)));

  const auto props = archive_properties(dir);
  EXPECT_EQ(props.at(trace::property::kComplete), "false");
  EXPECT_EQ(props.at(trace::property::kIncompleteRanks), "1");
  EXPECT_EQ(props.at(trace::property::kWorkMetric), trace::metric::kCpuTime);
  EXPECT_EQ(props.at(trace::property::kProcesses), "2");

  const Definitions d = read_definitions(r.archive);
  EXPECT_EQ(d.events.at(0), 4u);
  EXPECT_EQ(d.events.at(1), 4u);
  // The swapped communicator's group lists world rank 1 first.
  ASSERT_EQ(d.comms.size(), 3u);
  EXPECT_EQ(d.groups.at(d.comms.at(2)), (std::vector<std::uint64_t>{1, 0}));
  EXPECT_EQ(d.groups.at(d.comms.at(0)), (std::vector<std::uint64_t>{0, 1}));
}

TEST(Recover, ReplacesAnOlderArchive) {
  const std::string dir = make_run("twice");
  (void)recover(dir);
  const RecoverReport again = recover(dir);
  EXPECT_EQ(again.events, 8u);
}

/// The values of location 0's Metric records, in order.
std::vector<std::uint64_t> metric_values(const std::string& anchor) {
  OTF2_Reader* reader = OTF2_Reader_Open(anchor.c_str());
  EXPECT_NE(reader, nullptr);
  OTF2_Reader_SetSerialCollectiveCallbacks(reader);
  OTF2_Reader_SelectLocation(reader, 0);
  OTF2_Reader_OpenEvtFiles(reader);
  OTF2_EvtReader* er = OTF2_Reader_GetEvtReader(reader, 0);
  std::vector<std::uint64_t> out;
  OTF2_EvtReaderCallbacks* cb = OTF2_EvtReaderCallbacks_New();
  OTF2_EvtReaderCallbacks_SetMetricCallback(
      cb, [](OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void* user, OTF2_AttributeList*, OTF2_MetricRef, uint8_t count,
             const OTF2_Type*, const OTF2_MetricValue* values) {
        if (count > 0) static_cast<std::vector<std::uint64_t>*>(user)->push_back(values[0].unsigned_int);
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_Reader_RegisterEvtCallbacks(reader, er, cb, &out);
  uint64_t n = 0;
  OTF2_Reader_ReadAllLocalEvents(reader, er, &n);
  OTF2_EvtReaderCallbacks_Delete(cb);
  OTF2_Reader_CloseEvtReader(reader, er);
  OTF2_Reader_CloseEvtFiles(reader);
  OTF2_Reader_Close(reader);
  return out;
}

TEST(Recover, MetricsComeBeforeEachEnterAndLeaveOutWhatTheCallsCounted) {
  // Three calls: the thread's CPU time at each Enter and Leave. The archive holds one value per call, the CPU time
  // outside the calls: each difference is the burst between two calls.
  const fs::path dir = fs::path(P3S_TEST_TMP) / "outside-calls";
  fs::remove_all(dir);
  fs::create_directories(raw_dir(dir.string()));
  std::string error;
  {
    auto log = ThreadLog::open(raw_log_path(dir.string(), 0, 0), 1 << 16, header(0, 1), error);
    ASSERT_TRUE(log) << error;
    const raw::CommDefinition world{0, raw::kNoParent, raw::kWorldKey, 1, raw::kCommWorld, 0, 0};
    const raw::CommDefinition self{1, raw::kNoParent, raw::kSelfKey, 1, raw::kCommSelf, 0, 0};
    for (const auto& d : {world, self}) log->append(raw::Kind::CommDef, 0, 0, 0, &d, sizeof d);
    const std::uint64_t cpu[][2] = {{100, 150}, {400, 420}, {1000, 1700}};
    std::uint64_t t = 1000;
    for (const auto& [enter, leave] : cpu) {
      log->append(raw::Kind::Enter, 0, static_cast<std::uint16_t>(Region::MPI_Barrier), t, &enter, sizeof enter);
      log->append(raw::Kind::Leave, 0, static_cast<std::uint16_t>(Region::MPI_Barrier), t + 10, &leave, sizeof leave);
      t += 100;
    }
    log->append(raw::Kind::Finalized, t, raw::ClockSyncAtEnd{t, 0});
  }
  const RecoverReport r = recover(dir.string());
  EXPECT_EQ(r.events, 9u);  // a metric record, Enter and Leave per call
  EXPECT_EQ(metric_values(r.archive), (std::vector<std::uint64_t>{100, 400 - 50, 1000 - 50 - 20}));
}

TEST(Recover, EmptyDirectoryIsAnInputError) {
  const fs::path dir = fs::path(P3S_TEST_TMP) / "empty";
  fs::create_directories(dir);
  try {
    (void)recover(dir.string());
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no raw logs"), std::string::npos) << e.what();
  }
}

TEST(Recover, LogsOfDifferentRunsAreRefused) {
  const std::string dir = make_run("mixed");
  std::string error;
  auto stale = ThreadLog::open(raw_log_path(dir, 3, 0), 4096, header(3, 8), error);
  ASSERT_TRUE(stale);
  stale->close();
  try {
    (void)recover(dir);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("another run"), std::string::npos) << e.what();
  }
}

TEST(Recover, DefinitionsOfAllThreadsArePlacedWhateverLogHoldsThem) {
  // A worker thread created 66,000 communicators, then the main thread one more: its index is far beyond what
  // the main thread's own log defines, yet it is no damage.
  const fs::path dir = fs::path(P3S_TEST_TMP) / "threads-defs";
  fs::remove_all(dir);
  fs::create_directories(raw_dir(dir.string()));
  constexpr std::uint32_t kWorkerComms = 66000;
  std::string error;
  {
    raw::FileHeader h = header(0, 1);
    h.thread_index = 1;
    auto log = ThreadLog::open(raw_log_path(dir.string(), 0, 1), 1 << 20, h, error);
    ASSERT_TRUE(log) << error;
    for (std::uint32_t i = 2; i < 2 + kWorkerComms; ++i) {
      const raw::CommDefinition d{i, 0, i, 1, 0, 0, 0};
      ASSERT_TRUE(log->append(raw::Kind::CommDef, 0, 0, 0, &d, sizeof d));
    }
  }
  {
    auto log = ThreadLog::open(raw_log_path(dir.string(), 0, 0), 1 << 16, header(0, 1), error);
    ASSERT_TRUE(log) << error;
    const raw::CommDefinition world{0, raw::kNoParent, raw::kWorldKey, 1, raw::kCommWorld, 0, 0};
    const raw::CommDefinition self{1, raw::kNoParent, raw::kSelfKey, 1, raw::kCommSelf, 0, 0};
    const raw::CommDefinition last{2 + kWorkerComms, 0, 2 + kWorkerComms, 1, 0, 0, 0};
    for (const auto& d : {world, self, last}) log->append(raw::Kind::CommDef, 0, 0, 0, &d, sizeof d);
    log->append(raw::Kind::Finalized, 2000, raw::ClockSyncAtEnd{2000, 0});
  }
  const RecoverReport r = recover(dir.string());
  EXPECT_EQ(read_definitions(r.archive).comms.size(), 2u + kWorkerComms + 1u);
}

}  // namespace
}  // namespace p3s::interpose
