// SPDX-License-Identifier: BSD-3-Clause
// Events written during the run keep the thread's local communicator ids and the rank's own clock; the local
// definitions map both, and an OTF2 reader sees the archive's ids and rank 0's clock, as the conversion after the
// run wrote them (ClockModel).
#include <gtest/gtest.h>
#include <otf2/otf2.h>

#include <filesystem>
#include <vector>

#include "converter.hpp"
#include "event_chunks.hpp"
#include "p3s/interpose/archive_writer.hpp"
#include "p3s/trace/schema.hpp"

namespace p3s::interpose {
namespace {
namespace fs = std::filesystem;

struct Seen {
  std::vector<std::uint64_t> times;
  std::vector<OTF2_CommRef> comms;
};

/// Every event of `location` as an OTF2 reader gives it, the local definitions applied (OTF2's default).
Seen read_location(const fs::path& anchor, std::uint64_t location) {
  Seen seen;
  OTF2_Reader* r = OTF2_Reader_Open(anchor.c_str());
  EXPECT_NE(r, nullptr);
  OTF2_Reader_SetSerialCollectiveCallbacks(r);
  OTF2_Reader_SelectLocation(r, location);
  EXPECT_EQ(OTF2_Reader_OpenDefFiles(r), OTF2_SUCCESS);
  OTF2_DefReader* dr = OTF2_Reader_GetDefReader(r, location);
  uint64_t n = 0;
  EXPECT_EQ(OTF2_Reader_ReadAllLocalDefinitions(r, dr, &n), OTF2_SUCCESS);
  OTF2_Reader_CloseDefReader(r, dr);
  OTF2_Reader_CloseDefFiles(r);
  EXPECT_EQ(OTF2_Reader_OpenEvtFiles(r), OTF2_SUCCESS);
  OTF2_EvtReader* er = OTF2_Reader_GetEvtReader(r, location);
  OTF2_EvtReaderCallbacks* cb = OTF2_EvtReaderCallbacks_New();
  OTF2_EvtReaderCallbacks_SetEnterCallback(cb,
                                           [](OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                                              OTF2_AttributeList*, OTF2_RegionRef) -> OTF2_CallbackCode {
                                             static_cast<Seen*>(u)->times.push_back(t);
                                             return OTF2_CALLBACK_SUCCESS;
                                           });
  OTF2_EvtReaderCallbacks_SetLeaveCallback(cb,
                                           [](OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u,
                                              OTF2_AttributeList*, OTF2_RegionRef) -> OTF2_CallbackCode {
                                             static_cast<Seen*>(u)->times.push_back(t);
                                             return OTF2_CALLBACK_SUCCESS;
                                           });
  OTF2_EvtReaderCallbacks_SetMpiSendCallback(
      cb,
      [](OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList*, uint32_t, OTF2_CommRef comm,
         uint32_t, uint64_t) -> OTF2_CallbackCode {
        static_cast<Seen*>(u)->times.push_back(t);
        static_cast<Seen*>(u)->comms.push_back(comm);
        return OTF2_CALLBACK_SUCCESS;
      });
  OTF2_Reader_RegisterEvtCallbacks(r, er, cb, &seen);
  EXPECT_EQ(OTF2_Reader_ReadAllLocalEvents(r, er, &n), OTF2_SUCCESS);
  OTF2_EvtReaderCallbacks_Delete(cb);
  OTF2_Reader_CloseEvtReader(r, er);
  OTF2_Reader_CloseEvtFiles(r);
  OTF2_Reader_Close(r);
  return seen;
}

TEST(LocalMappings, ReadersSeeTheArchivesCommunicatorsAndRankZerosClock) {
  const fs::path dir = fs::path(P3S_TEST_TMP) / "local_mappings";
  fs::remove_all(dir);
  std::string error;
  ArchivePtr a = create_archive(dir.string(), error);
  ASSERT_TRUE(a) << error;
  ASSERT_EQ(OTF2_Archive_SetSerialCollectiveCallbacks(a.get()), OTF2_SUCCESS);
  // Rank 1's clock runs 500 ns behind rank 0's at MPI_Init and 1500 ns behind 1 ms later.
  const ClockModel clock{1000, 500, 1001000, 1500, true};
  const std::vector<std::uint64_t> local = {1000, 500000, 1001000};
  // Rank 1's local communicator 0 is the archive's communicator 2.
  LocalMaps maps;
  maps.comm = {2, 0, 1};
  RunInfo run;
  run.world_size = 2;
  run.hosts = {"node0", "node1"};
  Unified unified;
  unified.comms = {GlobalComm{raw::kWorldKey, raw::kCommWorld, {0, 1}, raw::kNoParent},
                   GlobalComm{raw::kSelfKey, raw::kCommSelf, {0}, raw::kNoParent}, GlobalComm{7, 0, {1, 0}, 0}};
  ArchiveParts parts;
  std::vector<LocationStats> stats(2);
  // The events as the recorder writes them: straight into the archive's event files, once OTF2 made the directory.
  parts.events = [&](OTF2_Archive*, std::vector<std::uint64_t>& locations, std::string&) {
    fs::create_directories(dir / std::string(trace::kArchiveName));
    for (int rank = 0; rank < 2; ++rank) {
      const fs::path file = dir / std::string(trace::kArchiveName) / (std::to_string(rank) + ".evt");
      auto sink = otf2::FileSink::create(file.string(), error);
      if (!sink) return false;
      auto w = otf2::EventChunks::create(otf2::kEventChunkBytes, 1, *sink);
      if (!w) return false;
      w->enter(local[0], 5);
      w->message(otf2::Id::MpiSend, local[1], 1 - rank, 0, 7, 8);
      w->leave(local[2], 5);
      if (!w->close() || !sink->close()) return false;
      LocationStats& st = stats[static_cast<std::size_t>(rank)];
      st.rank = rank;
      st.location = location_id(rank, 0);
      st.events = w->events();
      st.first_ns = clock.global(local[0]);
      st.last_ns = clock.global(local[2]);
      st.complete = 1;
    }
    locations = {0, 1};
    return true;
  };
  parts.local_definitions = [&](OTF2_DefWriter* dw, std::uint64_t location, std::string& err) {
    if (location == 0) return true;  // rank 0: its own clock, the archive's ids
    return write_local_mappings(dw, maps, clock, local.back(), err);
  };
  parts.global_definitions = [&](OTF2_Archive* archive, std::string& err) {
    return write_global_definitions(archive, run, unified, stats, err);
  };
  ASSERT_TRUE(write_archive(std::move(a), parts, error)) << error;

  const Seen rank0 = read_location(dir / "traces.otf2", 0);
  EXPECT_EQ(rank0.times, local);
  EXPECT_EQ(rank0.comms, std::vector<OTF2_CommRef>{0});
  const Seen rank1 = read_location(dir / "traces.otf2", 1);
  ASSERT_EQ(rank1.times.size(), local.size());
  for (std::size_t i = 0; i < local.size(); ++i) {
    // OTF2 rounds the interpolated offset where the conversion truncated it: at most 1 ns apart.
    EXPECT_NEAR(static_cast<double>(rank1.times[i]), static_cast<double>(clock.global(local[i])), 1.0) << i;
  }
  EXPECT_EQ(rank1.times[0], 1500u);
  EXPECT_EQ(rank1.times[2], 1002500u);
  EXPECT_EQ(rank1.comms, std::vector<OTF2_CommRef>{2});
}

}  // namespace
}  // namespace p3s::interpose
