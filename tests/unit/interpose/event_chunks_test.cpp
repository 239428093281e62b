// SPDX-License-Identifier: BSD-3-Clause
// The direct OTF2 event writer against OTF2's own: the same events give the same file, byte for byte, across chunk
// boundaries and buffer flushes, with every record kind and every width of compressed integer.
#include "event_chunks.hpp"

#include <gtest/gtest.h>
#include <otf2/otf2.h>

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

TEST(EventChunks, WritesTheBytesOtf2WritesForTheSameEvents) {
  const std::vector<Ev> events = script(200000);  // about 11 chunks of 256 KiB
  const fs::path dir = fresh_dir("same");
  const fs::path expected = otf2_file(events, dir / "otf2");
  std::string error;
  const fs::path mine = dir / "direct.evt";
  auto sink = FileSink::create(mine.string(), error);
  ASSERT_TRUE(sink) << error;
  // Three chunks in memory: the sink gets them three times before close().
  auto w = EventChunks::create(kChunk, 3, *sink);
  ASSERT_TRUE(w);
  for (const Ev& e : events) ASSERT_TRUE(write_direct(*w, e));
  ASSERT_TRUE(w->close());
  ASSERT_TRUE(sink->close()) << sink->error();
  EXPECT_EQ(w->events(), events.size());
  const std::vector<char> want = bytes_of(expected);
  const std::vector<char> got = bytes_of(mine);
  ASSERT_GT(want.size(), 10 * kChunk);  // the sink got the buffer of three chunks three times
  ASSERT_EQ(got.size(), want.size());
  std::size_t first_difference = want.size();
  for (std::size_t i = 0; i < want.size() && first_difference == want.size(); ++i) {
    if (got[i] != want[i]) first_difference = i;
  }
  EXPECT_EQ(first_difference, want.size())
      << "chunk " << first_difference / kChunk << ", byte " << first_difference % kChunk;
}

/// Takes the first `room` bytes, then refuses.
class ShortSink final : public ChunkSink {
 public:
  explicit ShortSink(std::size_t room) : room_(room) {}
  bool write(const std::byte*, std::size_t bytes) noexcept override {
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
