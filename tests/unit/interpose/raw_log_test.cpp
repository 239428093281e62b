// SPDX-License-Identifier: BSD-3-Clause
// Raw logs: what the recorder appends is what the converter reads, across buffer flushes and after a crash.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <utility>

#include "raw_reader.hpp"
#include "thread_log.hpp"

namespace p3s::interpose {
namespace {
namespace fs = std::filesystem;

std::string temp_path(const std::string& name) {
  fs::create_directories(P3S_TEST_TMP);
  return (fs::path(P3S_TEST_TMP) / name).string();
}

raw::FileHeader header(int rank) {
  raw::FileHeader h{};
  std::memcpy(h.magic, raw::kMagic, sizeof h.magic);
  h.version = raw::kVersion;
  h.header_bytes = sizeof h;
  h.rank = rank;
  h.world_size = 2;
  h.metric_count = 1;
  return h;
}

/// The whole records a log holds, read back, and whether it ends torn; -1 if it cannot be opened.
std::pair<int, bool> read_records(const std::string& path) {
  std::string error;
  auto reader = RawReader::open(path, error);
  if (!reader) return {-1, false};
  RawRecord r{};
  int n = 0;
  while (reader->next(r)) ++n;
  return {n, reader->torn()};
}

/// The records of a log that must end cleanly; -1 if it cannot be opened or ends torn.
int count_records(const std::string& path) {
  const auto [n, torn] = read_records(path);
  return torn ? -1 : n;
}

/// Writes `n` send records with increasing times through a buffer of `buffer` bytes.
void write_sends(const std::string& path, int n, std::size_t buffer) {
  std::string error;
  auto log = ThreadLog::open(path, buffer, header(0), error);
  ASSERT_TRUE(log) << error;
  for (int i = 0; i < n; ++i) {
    const raw::Msg m{0, i % 7, i, 0, static_cast<std::uint64_t>(i) * 8, 0};
    ASSERT_TRUE(log->append(raw::Kind::Send, static_cast<std::uint64_t>(i), m));
  }
  if (buffer < 1024) {
    EXPECT_GT(log->flushes(), 0u);
  }
  ASSERT_TRUE(log->close());
}

TEST(RawLog, RoundTripAcrossFlushes) {
  const std::string path = temp_path("roundtrip.raw");
  write_sends(path, 10000, 512);  // records of about 12 bytes: the buffer is written several hundred times
  std::string error;
  auto reader = RawReader::open(path, error);
  ASSERT_TRUE(reader) << error;
  EXPECT_EQ(reader->header().rank, 0);
  RawRecord r{};
  int i = 0;
  while (reader->next(r)) {
    ASSERT_EQ(r.header.kind, raw::Kind::Send);
    ASSERT_EQ(r.header.time_ns, static_cast<std::uint64_t>(i));
    raw::Msg m{};
    std::memcpy(&m, r.payload, sizeof m);
    ASSERT_EQ(m.tag, i);
    ASSERT_EQ(m.peer, i % 7);
    ASSERT_EQ(m.bytes, static_cast<std::uint64_t>(i) * 8);
    ++i;
  }
  EXPECT_EQ(i, 10000);
  EXPECT_FALSE(reader->torn());
  reader->rewind();
  ASSERT_TRUE(reader->next(r));
  EXPECT_EQ(r.header.time_ns, 0u);
  ASSERT_TRUE(reader->next(r));  // times are differences: the decoder starts again too
  EXPECT_EQ(r.header.time_ns, 1u);
}

TEST(RawLog, TornTailStopsCleanly) {
  // A process killed in the middle of a write leaves a partial last record: everything before it is kept.
  const std::string path = temp_path("torn.raw");
  write_sends(path, 100, 1 << 16);
  fs::resize_file(path, fs::file_size(path) - 5);
  EXPECT_EQ(read_records(path), std::make_pair(99, true));
}

TEST(RawLog, AnOverlongBodyIsDamageNotAllocated) {
  // A damaged length that still fits in the file: a message record as long as no structure encodes.
  const std::string path = temp_path("overlong.raw");
  write_sends(path, 2, 1 << 16);
  {
    std::ofstream out(path, std::ios::binary | std::ios::app);
    out.put(static_cast<char>(0xe8));  // 1000 as a varint
    out.put(static_cast<char>(0x07));
    out.put(static_cast<char>(raw::Kind::Send));
    out << std::string(999, '\x01');
  }
  EXPECT_EQ(read_records(path), std::make_pair(2, true));
}

TEST(RawLog, NothingIsWrittenAfterTheExitFlush) {
  // Another thread appending while the termination handler wrote its buffer may publish those bytes again.
  const std::string path = temp_path("exited.raw");
  std::string error;
  auto log = ThreadLog::open(path, 1 << 20, header(0), error);
  ASSERT_TRUE(log) << error;
  ASSERT_TRUE(log->append(raw::Kind::Send, 1, raw::Msg{}));
  log->flush_for_exit();
  const auto size = fs::file_size(path);
  ASSERT_TRUE(log->append(raw::Kind::Send, 2, raw::Msg{}));
  log->flush_for_exit();
  EXPECT_TRUE(log->flush());
  EXPECT_EQ(fs::file_size(path), size);
  EXPECT_EQ(count_records(path), 1);
}

TEST(RawLog, RejectsForeignFiles) {
  const std::string path = temp_path("foreign.raw");
  {
    std::ofstream out(path);
    out << std::string(300, 'x');
  }
  std::string error;
  EXPECT_FALSE(RawReader::open(path, error));
  EXPECT_NE(error.find("is not a p3s raw log"), std::string::npos) << error;
  {
    std::ofstream out(path);
    out << "P3S";
  }
  error.clear();
  EXPECT_FALSE(RawReader::open(path, error));
  EXPECT_NE(error.find("shorter than"), std::string::npos) << error;
}

TEST(RawLog, AHeaderNamingImpossibleSizesIsDamage) {
  // A flipped byte in a header must not make a reader allocate for billions of ranks.
  for (const auto& [rank, world] : {std::pair{0, 1 << 25}, std::pair{-3, 2}, std::pair{2, 2}, std::pair{0, 0}}) {
    raw::FileHeader h = header(rank);
    h.world_size = world;
    const std::string path = temp_path("damaged_header.raw");
    {
      std::ofstream out(path, std::ios::binary);
      out.write(reinterpret_cast<const char*>(&h), sizeof h);
    }
    std::string error;
    EXPECT_FALSE(RawReader::open(path, error)) << rank << " of " << world;
    EXPECT_NE(error.find("has a damaged header (rank " + std::to_string(rank) + " of " + std::to_string(world)),
              std::string::npos)
        << error;
  }
}

TEST(RawLog, RecordLargerThanTheBufferFailsLoudly) {
  std::string error;
  auto log = ThreadLog::open(temp_path("huge.raw"), 256, header(0), error);
  ASSERT_TRUE(log) << error;
  std::vector<std::byte> big(1024);
  EXPECT_FALSE(log->append(raw::Kind::Meta, 0, 0, 0, big.data(), big.size()));
  EXPECT_TRUE(log->failed());
  EXPECT_NE(log->error().find("P3S_BUFFER_MB"), std::string::npos) << log->error();
}

TEST(RawLog, FlushesOnceTheIntervalPassed) {
  // A slow application: few records, a big buffer. Records older than the interval must reach the disk.
  const std::string path = temp_path("interval.raw");
  std::string error;
  auto log = ThreadLog::open(path, 1 << 20, header(0), error);
  ASSERT_TRUE(log) << error;
  log->set_flush_interval(1000, 0);
  const raw::Msg m{};
  ASSERT_TRUE(log->append(raw::Kind::Send, 500, m));
  EXPECT_EQ(log->flushes(), 0u);
  EXPECT_EQ(fs::file_size(path), sizeof(raw::FileHeader));
  ASSERT_TRUE(log->append(raw::Kind::Send, 1500, m));
  EXPECT_EQ(log->flushes(), 1u);
  EXPECT_EQ(count_records(path), 2);
  ASSERT_TRUE(log->append(raw::Kind::Send, 1600, m));
  EXPECT_EQ(log->flushes(), 1u);
}

TEST(RawLog, FlushForExitWritesWholeRecords) {
  const std::string path = temp_path("exit.raw");
  std::string error;
  auto log = ThreadLog::open(path, 1 << 20, header(0), error);
  ASSERT_TRUE(log) << error;
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(log->append(raw::Kind::Send, static_cast<std::uint64_t>(i), raw::Msg{}));
  log->flush_for_exit();
  EXPECT_EQ(count_records(path), 10);
}

TEST(RawLog, UnwritableDirectoryIsReported) {
  std::string error;
  auto log = ThreadLog::open("/nonexistent-dir/x.raw", 4096, header(0), error);
  EXPECT_FALSE(log);
  EXPECT_NE(error.find("/nonexistent-dir/x.raw"), std::string::npos) << error;
}

}  // namespace
}  // namespace p3s::interpose
