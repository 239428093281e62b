// SPDX-License-Identifier: BSD-3-Clause
// The compact record encoding: every kind comes back as written, small values take few bytes, damage is caught.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "raw_codec.hpp"

namespace p3s::interpose::raw {
namespace {

struct Written {
  RecordHeader header;
  std::vector<std::byte> payload;  ///< padded to 8, as a reader gives it
};

std::vector<std::byte> bytes_of(const void* p, std::size_t n) {
  std::vector<std::byte> v(n);
  if (n != 0) std::memcpy(v.data(), p, n);
  v.resize((n + 7) & ~std::size_t{7});
  return v;
}

/// Encodes `records` one after the other, then decodes the stream and compares.
void round_trip(const std::vector<Written>& records) {
  std::vector<std::byte> stream;
  CodecState writer;
  for (const Written& w : records) {
    const std::size_t at = stream.size();
    stream.resize(at + max_encoded(w.header.kind, w.payload.size()));
    std::byte* end = encode(stream.data() + at, writer, w.header.kind, w.header.flags, w.header.region,
                            w.header.time_ns, w.payload.data(), w.payload.size(), nullptr, 0);
    ASSERT_LE(static_cast<std::size_t>(end - (stream.data() + at)), max_encoded(w.header.kind, w.payload.size()));
    stream.resize(static_cast<std::size_t>(end - stream.data()));
  }
  CodecState reader;
  const std::byte* p = stream.data();
  const std::byte* const stop = stream.data() + stream.size();
  for (const Written& w : records) {
    std::uint64_t length = 0;
    ASSERT_TRUE(get_varint(p, stop, length));
    std::vector<std::byte> out(8 * length + 8);
    RecordHeader h{};
    const long n = decode(p, p + length, reader, h, out.data());
    ASSERT_GE(n, 0);
    p += length;
    EXPECT_EQ(h.kind, w.header.kind);
    EXPECT_EQ(h.flags, w.header.flags);
    EXPECT_EQ(h.region, w.header.region);
    EXPECT_EQ(h.time_ns, w.header.time_ns);
    ASSERT_EQ(static_cast<std::size_t>(n), w.payload.size());
    EXPECT_EQ(std::memcmp(out.data(), w.payload.data(), w.payload.size()), 0) << "kind " << int(w.header.kind);
    EXPECT_EQ(h.bytes, sizeof(RecordHeader) + w.payload.size());
  }
  EXPECT_EQ(p, stop);
}

TEST(RawCodec, EveryKindComesBackAsWritten) {
  std::mt19937_64 rng(7);
  std::vector<Written> records;
  std::uint64_t t = 1'000'000'000'000ULL;
  std::uint64_t cpu = 5'000'000;
  const auto any64 = [&] { return rng() >> (rng() % 64); };
  for (int i = 0; i < 2000; ++i) {
    // Times mostly grow, sometimes go back (a collective's begin after its enter) or are 0 (definitions).
    t += rng() % 3 == 0 ? -static_cast<std::uint64_t>(rng() % 1000) : rng() % 100000;
    const std::uint64_t time = rng() % 17 == 0 ? 0 : t;
    const auto region = static_cast<std::uint16_t>(rng() % 3 == 0 ? 0 : rng() % 65536);
    switch (rng() % 6) {
      case 0: {  // an Enter with a call site and three metrics, one going back
        const std::uint64_t values[4] = {any64(), cpu += rng() % 5000, any64(), cpu - rng() % 100};
        records.push_back({{Kind::Enter, kFlagCallsite, region, 0, time}, bytes_of(values, sizeof values)});
        break;
      }
      case 1: {
        const std::uint64_t values[4] = {cpu += rng() % 5000, any64(), any64(), any64()};  // one beyond 3 metrics
        records.push_back({{Kind::Leave, 0, region, 0, time}, bytes_of(values, sizeof values)});
        break;
      }
      case 2: {  // negative peers (MPI_PROC_NULL, MPI_ANY_SOURCE) and tags, sizes over 4 GiB
        const Msg m{static_cast<std::uint32_t>(rng()),
                    static_cast<std::int32_t>(rng() % 5) - 3,
                    static_cast<std::int32_t>(rng()),
                    0,
                    any64(),
                    any64()};
        records.push_back({{Kind::Isend, 0, 0, 0, time}, bytes_of(&m, sizeof m)});
        break;
      }
      case 3: {
        const Coll c{7, 3, -1, 0, any64(), any64(), 0};
        records.push_back({{Kind::CollEnd, 0, 0, 0, time}, bytes_of(&c, sizeof c)});
        break;
      }
      case 4: {  // text, verbatim, of any length (over 127 bytes: a longer length varint)
        std::string kv = "key";
        kv.push_back('\0');
        kv += std::string(rng() % 300, 'v');
        kv.push_back('\0');
        records.push_back({{Kind::Meta, 0, 0, 0, 0}, bytes_of(kv.data(), kv.size())});
        break;
      }
      default:
        records.push_back({{Kind::CollBegin, 0, 0, 0, time}, {}});
    }
  }
  round_trip(records);
}

TEST(RawCodec, APointToPointCallTakesUnderAThirdOfItsFixedSize) {
  // Isend's Enter, message and Leave with a CPU-time metric, as the recorder writes them in a halo loop.
  CodecState st;
  std::vector<std::byte> buf(256);
  std::byte* p = buf.data();
  std::uint64_t t = 123'456'789'000ULL;
  std::uint64_t cpu = 987'654'321ULL;
  std::size_t bytes = 0;
  for (int i = 0; i < 100; ++i) {
    p = buf.data();
    p = encode(p, st, Kind::Enter, 0, 57, t += 900, reinterpret_cast<const std::byte*>(&(cpu += 850)), 8, nullptr, 0);
    const Msg m{3, 1, 2, 0, 128, static_cast<std::uint64_t>(4 * i + 1)};
    p = encode(p, st, Kind::Isend, 0, 0, t += 150, reinterpret_cast<const std::byte*>(&m), sizeof m, nullptr, 0);
    p = encode(p, st, Kind::Leave, 0, 57, t += 60, reinterpret_cast<const std::byte*>(&(cpu += 200)), 8, nullptr, 0);
    bytes = static_cast<std::size_t>(p - buf.data());
  }
  const std::size_t fixed = 3 * sizeof(RecordHeader) + 8 + sizeof(Msg) + 8;  // version 1: 96 bytes
  EXPECT_LE(bytes * 3, fixed) << bytes << " bytes";
}

TEST(RawCodec, DamageIsReportedNotReadPast) {
  CodecState st;
  RecordHeader h{};
  std::byte out[64];
  // A varint that never ends inside the body.
  const std::byte open_varint[] = {std::byte{3}, std::byte{0x80}, std::byte{0x80}};
  EXPECT_EQ(decode(open_varint, open_varint + sizeof open_varint, st, h, out), -1);
  // A region over 16 bits.
  const std::byte big_region[] = {std::byte{1 | kTagRegion | kTagNoTime}, std::byte{0xff}, std::byte{0xff},
                                  std::byte{0x7f}};
  EXPECT_EQ(decode(big_region, big_region + sizeof big_region, st, h, out), -1);
  // An empty body.
  EXPECT_EQ(decode(out, out, st, h, out), -1);
}

}  // namespace
}  // namespace p3s::interpose::raw
