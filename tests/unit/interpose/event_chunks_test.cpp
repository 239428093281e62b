// SPDX-License-Identifier: BSD-3-Clause
// The direct OTF2 event writer against OTF2's own: the same events give the same file, byte for byte, across chunk
// boundaries and buffer flushes, with every record kind and every width of compressed integer. And its repair: a
// file cut anywhere comes back as the writer would have written only the events before the cut.
#include "event_chunks.hpp"
#include "event_repair.hpp"

#include <gtest/gtest.h>
#include <otf2/otf2.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

namespace p3s::interpose::otf2 {
namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kChunk = 256 * 1024;  // OTF2's smallest event chunk: the most boundaries per event

/// One event of any kind the recorder writes, with every field it may carry.
struct Ev {
  int kind = 0;
  std::uint64_t t = 0;
  std::uint32_t a = 0, b = 0, c = 0;
  std::uint64_t x = 0, y = 0, z = 0;
  std::uint8_t n = 0;
};

/// Values at every edge of OTF2's integer compression.
std::uint64_t edge_value(std::uint64_t r) {
  static constexpr std::uint64_t kEdges[] = {0,          1,         255,         256,        65535,
                                             65536,      1u << 24,  0xffffffffu, 1ull << 32, 1ull << 40,
                                             1ull << 56, ~0ull - 1, ~0ull,       12345,      7};
  return kEdges[r % std::size(kEdges)];
}

std::vector<Ev> script(std::size_t count) {
  std::vector<Ev> events;
  std::uint64_t state = 0x9e3779b97f4a7c15ull;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 17;
  };
  std::uint64_t t = 1000;
  for (std::size_t i = 0; i < count; ++i) {
    Ev e;
    e.kind = static_cast<int>(next() % 16);
    if (next() % 3 != 0) t += next() % 5000;  // a third of the events share the time of the one before
    e.t = t;
    e.a = static_cast<std::uint32_t>(edge_value(next()));
    e.b = static_cast<std::uint32_t>(edge_value(next()));
    e.c = static_cast<std::uint32_t>(edge_value(next()));
    e.x = edge_value(next());
    e.y = edge_value(next());
    e.z = edge_value(next());
    e.n = static_cast<std::uint8_t>(next() % 4);
    events.push_back(e);
  }
  return events;
}

constexpr Id kMessages[] = {Id::MpiSend, Id::MpiRecv, Id::MpiIsend, Id::MpiIrecv};
constexpr Id kRequests[] = {Id::MpiIsendComplete, Id::MpiIrecvRequest, Id::MpiRequestCancelled,
                            Id::NonBlockingCollectiveRequest};

bool write_direct(EventChunks& w, const Ev& e) {
  const std::uint64_t values[3] = {e.x, e.y, e.z};
  switch (e.kind) {
    case 0:
      return w.enter(e.t, e.a);
    case 1:
      return w.enter(e.t, e.a, e.b, e.c);
    case 2:
      return w.leave(e.t, e.a);
    case 3:
      return w.metric(e.t, e.a, e.n, values);
    case 4:
    case 5:
      return w.message(kMessages[e.kind - 4], e.t, e.a, e.b, e.c, e.x);
    case 6:
    case 7:
      return w.message(kMessages[e.kind - 4], e.t, e.a, e.b, e.c, e.x, e.y);
    case 8:
    case 9:
    case 10:
    case 11:
      return w.request(kRequests[e.kind - 8], e.t, e.x);
    case 12:
      return w.collective_begin(e.t);
    case 13:
      return w.collective_end(e.t, static_cast<std::uint8_t>(e.n + 2), e.a, e.b, e.x, e.y, e.n % 2 == 1, e.z);
    default:
      return w.comm(e.kind == 14 ? Id::CommCreate : Id::CommDestroy, e.t, e.a);
  }
}

OTF2_ErrorCode write_otf2(OTF2_EvtWriter* w, OTF2_AttributeList* attrs, const Ev& e) {
  const OTF2_Type types[3] = {OTF2_TYPE_UINT64, OTF2_TYPE_UINT64, OTF2_TYPE_UINT64};
  OTF2_MetricValue values[3];
  values[0].unsigned_int = e.x;
  values[1].unsigned_int = e.y;
  values[2].unsigned_int = e.z;
  switch (e.kind) {
    case 0:
      return OTF2_EvtWriter_Enter(w, nullptr, e.t, e.a);
    case 1:
      OTF2_AttributeList_AddStringRef(attrs, e.b, e.c);
      return OTF2_EvtWriter_Enter(w, attrs, e.t, e.a);
    case 2:
      return OTF2_EvtWriter_Leave(w, nullptr, e.t, e.a);
    case 3:
      return OTF2_EvtWriter_Metric(w, nullptr, e.t, e.a, e.n, types, values);
    case 4:
      return OTF2_EvtWriter_MpiSend(w, nullptr, e.t, e.a, e.b, e.c, e.x);
    case 5:
      return OTF2_EvtWriter_MpiRecv(w, nullptr, e.t, e.a, e.b, e.c, e.x);
    case 6:
      return OTF2_EvtWriter_MpiIsend(w, nullptr, e.t, e.a, e.b, e.c, e.x, e.y);
    case 7:
      return OTF2_EvtWriter_MpiIrecv(w, nullptr, e.t, e.a, e.b, e.c, e.x, e.y);
    case 8:
      return OTF2_EvtWriter_MpiIsendComplete(w, nullptr, e.t, e.x);
    case 9:
      return OTF2_EvtWriter_MpiIrecvRequest(w, nullptr, e.t, e.x);
    case 10:
      return OTF2_EvtWriter_MpiRequestCancelled(w, nullptr, e.t, e.x);
    case 11:
      return OTF2_EvtWriter_NonBlockingCollectiveRequest(w, nullptr, e.t, e.x);
    case 12:
      return OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, e.t);
    case 13: {
      const auto op = static_cast<OTF2_CollectiveOp>(e.n + 2);
      return e.n % 2 == 1 ? OTF2_EvtWriter_NonBlockingCollectiveComplete(w, nullptr, e.t, op, e.a, e.b, e.x, e.y, e.z)
                          : OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, e.t, op, e.a, e.b, e.x, e.y);
    }
    case 14:
      return OTF2_EvtWriter_CommCreate(w, nullptr, e.t, e.a);
    default:
      return OTF2_EvtWriter_CommDestroy(w, nullptr, e.t, e.a);
  }
}

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::path(P3S_TEST_TMP) / "event_chunks" / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::vector<char> bytes_of(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// The events as OTF2 itself writes them, in an archive with the smallest chunks; the path of the event file.
fs::path otf2_file(const std::vector<Ev>& events, const fs::path& dir) {
  OTF2_Archive* a = OTF2_Archive_Open(dir.c_str(), "traces", OTF2_FILEMODE_WRITE, kChunk, 4 * 1024 * 1024,
                                      OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  EXPECT_NE(a, nullptr);
  static const OTF2_FlushCallbacks flush = {
      [](void*, OTF2_FileType, OTF2_LocationRef, void*, bool) -> OTF2_FlushType { return OTF2_FLUSH; }, nullptr};
  OTF2_Archive_SetFlushCallbacks(a, &flush, nullptr);
  OTF2_Archive_SetSerialCollectiveCallbacks(a);
  OTF2_Archive_OpenEvtFiles(a);
  OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(a, 0);
  OTF2_AttributeList* attrs = OTF2_AttributeList_New();
  for (const Ev& e : events) EXPECT_EQ(write_otf2(w, attrs, e), OTF2_SUCCESS);
  OTF2_AttributeList_Delete(attrs);
  OTF2_Archive_CloseEvtWriter(a, w);
  OTF2_Archive_CloseEvtFiles(a);
  OTF2_Archive_Close(a);
  return dir / "traces" / "0.evt";
}

/// The events through the direct writer with three chunks in memory, flushed every `flush_every` events (0: never).
fs::path direct_file(const std::vector<Ev>& events, const fs::path& file, std::size_t flush_every) {
  std::string error;
  auto sink = FileSink::create(file.string(), error);
  EXPECT_TRUE(sink) << error;
  auto w = EventChunks::create(kChunk, 3, *sink);
  EXPECT_TRUE(w);
  for (std::size_t i = 0; i < events.size(); ++i) {
    EXPECT_TRUE(write_direct(*w, events[i]));
    if (flush_every != 0 && i % flush_every == 0) {
      EXPECT_TRUE(w->flush());
    }
  }
  EXPECT_TRUE(w->close());
  EXPECT_TRUE(sink->close()) << sink->error();
  EXPECT_EQ(w->events(), events.size());
  EXPECT_EQ(w->first_time(), events.front().t);
  EXPECT_EQ(w->last_time(), events.back().t);
  return file;
}

/// Where two files first differ, as "chunk c, byte b", or "" where they are the same.
std::string first_difference(const fs::path& a, const fs::path& b) {
  const std::vector<char> x = bytes_of(a);
  const std::vector<char> y = bytes_of(b);
  for (std::size_t i = 0; i < std::min(x.size(), y.size()); ++i) {
    if (x[i] != y[i]) return "chunk " + std::to_string(i / kChunk) + ", byte " + std::to_string(i % kChunk);
  }
  if (x.size() != y.size()) return "sizes " + std::to_string(x.size()) + " and " + std::to_string(y.size());
  return "";
}

TEST(EventChunks, WritesTheBytesOtf2WritesForTheSameEvents) {
  const std::vector<Ev> events = script(200000);  // about 11 chunks of 256 KiB: the buffer of three fills 3 times
  const fs::path dir = fresh_dir("same");
  const fs::path expected = otf2_file(events, dir / "otf2");
  ASSERT_GT(fs::file_size(expected), 10 * kChunk);
  EXPECT_EQ(first_difference(direct_file(events, dir / "direct.evt", 0), expected), "");
  // Flushes in between write a part of a chunk that a later write completes: the file ends up the same.
  EXPECT_EQ(first_difference(direct_file(events, dir / "flushed.evt", 7919), expected), "");
}

TEST(EventChunks, TheExitSpanHoldsWholeRecordsAndNothingIsWrittenAfterIt) {
  const std::vector<Ev> events = script(100000);
  const fs::path dir = fresh_dir("exit");
  const fs::path whole = direct_file(events, dir / "whole.evt", 0);
  std::string error;
  auto sink = FileSink::create((dir / "killed.evt").string(), error);
  ASSERT_TRUE(sink) << error;
  auto w = EventChunks::create(kChunk, 3, *sink);
  ASSERT_TRUE(w);
  for (std::size_t i = 0; i < 60000; ++i) ASSERT_TRUE(write_direct(*w, events[i]));  // past one buffer of three
  const EventChunks::Span span = w->exit_span();
  ASSERT_GT(span.bytes, 0u);
  ASSERT_TRUE(sink->write(span.offset, span.data, span.bytes));
  EXPECT_EQ(w->exit_span().bytes, 0u) << "a second termination handler writes nothing";
  for (std::size_t i = 60000; i < events.size(); ++i) write_direct(*w, events[i]);
  w->close();
  sink->close();
  // The killed file is the whole one cut after the 60000th event (its chunk header not yet told where it ends).
  const std::vector<char> killed = bytes_of(dir / "killed.evt");
  const std::vector<char> full = bytes_of(whole);
  ASSERT_LT(killed.size(), full.size());
  const std::size_t chunk_of_tail = (killed.size() / kChunk) * kChunk;
  for (std::size_t i = 0; i < killed.size(); ++i) {
    if (i >= chunk_of_tail + kLastEventAt && i < chunk_of_tail + kLastEventAt + 8) continue;
    ASSERT_EQ(killed[i], full[i]) << "byte " << i;
  }
}

/// The file of `count` events written whole and cut after `keep` bytes, then repaired; returns what was kept.
RepairedEvents repair_cut(const fs::path& whole, std::size_t keep, const fs::path& out) {
  const std::vector<char> bytes = bytes_of(whole);
  const fs::path cut = out.string() + ".cut";
  {
    std::ofstream f(cut, std::ios::binary);
    f.write(bytes.data(), static_cast<std::streamsize>(std::min(keep, bytes.size())));
  }
  RepairedEvents kept;
  std::string error;
  EXPECT_TRUE(repair_event_file(cut.string(), out.string(), kChunk, kept, error)) << error;
  return kept;
}

TEST(EventRepair, AFileCutAnywhereKeepsItsWholeEventsAsIfOnlyTheyHadBeenWritten) {
  const std::vector<Ev> events = script(100000);  // about 5 chunks
  const fs::path dir = fresh_dir("repair");
  const fs::path whole = direct_file(events, dir / "whole.evt", 0);
  const std::size_t size = fs::file_size(whole);
  // The intact file comes back as it is, closed.
  RepairedEvents kept = repair_cut(whole, size, dir / "intact.evt");
  EXPECT_EQ(kept.events, events.size());
  EXPECT_TRUE(kept.closed);
  EXPECT_EQ(kept.bytes_lost, 0u);
  EXPECT_EQ(first_difference(dir / "intact.evt", whole), "");
  // Cut inside records, at chunk boundaries and inside the next chunk's header: the events before the cut, in the
  // file the writer would have closed after the last of them.
  const std::size_t cuts[] = {kChunk / 3, kChunk - 1, kChunk, kChunk + 5, kChunk + 18, 2 * kChunk + 12345, size - 3};
  for (const std::size_t cut : cuts) {
    SCOPED_TRACE("cut at " + std::to_string(cut));
    const fs::path repaired = dir / ("cut" + std::to_string(cut) + ".evt");
    kept = repair_cut(whole, cut, repaired);
    ASSERT_GT(kept.events, 0u);
    ASSERT_LT(kept.events, events.size());
    EXPECT_FALSE(kept.closed);
    EXPECT_LT(kept.bytes_lost, 64u) << "at most the record or header the cut went through";
    const std::vector<Ev> first(events.begin(), events.begin() + static_cast<std::ptrdiff_t>(kept.events));
    EXPECT_EQ(first_difference(repaired, direct_file(first, dir / "first.evt", 0)), "");
    EXPECT_EQ(kept.first_time, events.front().t);
    EXPECT_EQ(kept.last_time, first.back().t);
  }
}

TEST(EventRepair, DamageEndsTheEventsAndCountsWhatWasLost) {
  const std::vector<Ev> events = script(50000);
  const fs::path dir = fresh_dir("damage");
  const fs::path whole = direct_file(events, dir / "whole.evt", 0);
  std::vector<char> bytes = bytes_of(whole);
  // A chunk header spoiled: everything from that chunk on is lost, the chunks before it are kept.
  bytes[kChunk] = static_cast<char>(0x7e);
  {
    std::ofstream f(dir / "spoiled.evt", std::ios::binary);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  RepairedEvents kept;
  std::string error;
  ASSERT_TRUE(repair_event_file((dir / "spoiled.evt").string(), (dir / "kept.evt").string(), kChunk, kept, error))
      << error;
  EXPECT_GT(kept.events, 0u);
  EXPECT_LT(kept.events, events.size());
  EXPECT_EQ(kept.bytes_lost, bytes.size() - kChunk);
  const std::vector<Ev> first(events.begin(), events.begin() + static_cast<std::ptrdiff_t>(kept.events));
  EXPECT_EQ(first_difference(dir / "kept.evt", direct_file(first, dir / "first.evt", 0)), "");
  // A file that is not there is an error that names it.
  EXPECT_FALSE(repair_event_file((dir / "missing.evt").string(), (dir / "out.evt").string(), kChunk, kept, error));
  EXPECT_NE(error.find("missing.evt"), std::string::npos) << error;
}

/// Takes the first `room` bytes, then refuses.
class ShortSink final : public ChunkSink {
 public:
  explicit ShortSink(std::size_t room) : room_(room) {}
  bool write(std::uint64_t, const std::byte*, std::size_t bytes) noexcept override {
    if (bytes > room_) return false;
    room_ -= bytes;
    return true;
  }

 private:
  std::size_t room_;
};

TEST(EventChunks, AFailedWriteStopsTheStream) {
  ShortSink sink(kChunk);  // one chunk fits, the buffer of two does not
  auto w = EventChunks::create(kChunk, 2, sink);
  ASSERT_TRUE(w);
  std::uint64_t t = 1;
  bool ok = true;
  std::size_t written = 0;
  for (; ok && written < 200000; ++written) ok = w->leave(++t, 7);
  EXPECT_FALSE(ok) << "two chunks of Leave events must overflow into the sink";
  EXPECT_TRUE(w->failed());
  EXPECT_FALSE(w->enter(++t, 7));
  EXPECT_FALSE(w->close());
}

TEST(EventChunks, CompressesIntegersAsOtf2Does) {
  std::byte out[16];
  EXPECT_EQ(EventChunks::put_u32(out, 0) - out, 1);
  EXPECT_EQ(out[0], std::byte{0});
  EXPECT_EQ(EventChunks::put_u32(out, UINT32_MAX) - out, 1);
  EXPECT_EQ(out[0], std::byte{0xff});
  EXPECT_EQ(EventChunks::put_u32(out, 0x93) - out, 2);
  EXPECT_EQ(out[0], std::byte{1});
  EXPECT_EQ(out[1], std::byte{0x93});
  EXPECT_EQ(EventChunks::put_u64(out, 0x4000) - out, 3);
  EXPECT_EQ(out[0], std::byte{2});
  EXPECT_EQ(EventChunks::put_u64(out, 1ull << 56) - out, 9);
  EXPECT_EQ(out[0], std::byte{8});
}

}  // namespace
}  // namespace p3s::interpose::otf2
