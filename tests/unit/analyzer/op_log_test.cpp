// SPDX-License-Identifier: BSD-3-Clause
// Operation files: what is written is read back exactly, patches land in buffered and flushed data, and the
// encoding is compact for the operations real traces are made of.
#include "op_log.hpp"

#include <gtest/gtest.h>

#include <random>

#include "p3s/error.hpp"

namespace p3s::analyzer {
namespace {

bool same(const Action& a, const Action& b) {
  return a.kind == b.kind && a.op == b.op && a.comm == b.comm && a.peer == b.peer && a.root == b.root &&
         a.tag == b.tag && a.seq == b.seq && a.bytes == b.bytes && a.bytes_received == b.bytes_received &&
         a.request == b.request;
}

bool same(const OpHeader& a, const OpHeader& b) {
  return a.enter_ns == b.enter_ns && a.leave_ns == b.leave_ns && a.burst_ns == b.burst_ns &&
         a.burst_work == b.burst_work && a.call_work == b.call_work && a.region == b.region &&
         a.callsite == b.callsite && a.actions == b.actions;
}

/// Values at the edges of every field's range, and ordinary ones.
std::uint64_t pick(std::mt19937_64& rng) {
  switch (rng() % 6) {
    case 0:
      return 0;
    case 1:
      return ~std::uint64_t{0};
    case 2:
      return rng();
    case 3:
      return rng() % 128;
    default:
      return rng() % 100000;
  }
}

Op random_op(std::mt19937_64& rng, std::uint64_t& clock) {
  Op op;
  OpHeader& h = op.header;
  // Mostly forward in time, sometimes a step back (clock corrections) or a jump.
  h.enter_ns = rng() % 10 == 0 ? pick(rng) : clock + rng() % 5000;
  h.leave_ns = rng() % 10 == 0 ? pick(rng) : h.enter_ns + rng() % 3000;
  h.burst_ns = rng() % 2 == 0 ? h.enter_ns - clock : pick(rng);
  h.burst_work = pick(rng);
  h.call_work = pick(rng);
  h.region = static_cast<std::uint32_t>(pick(rng));
  h.callsite = rng() % 2 == 0 ? 0xffffffffu : static_cast<std::uint32_t>(pick(rng));
  clock = h.leave_ns;
  const std::uint32_t count = static_cast<std::uint32_t>(rng() % 4);
  for (std::uint32_t i = 0; i < count; ++i) {
    Action a;
    a.kind = static_cast<mpi::ActionKind>(rng() % 8);
    a.op = static_cast<mpi::Collective>(pick(rng));
    a.comm = static_cast<std::uint32_t>(pick(rng));
    a.peer = static_cast<std::int32_t>(pick(rng));
    a.root = static_cast<std::int32_t>(pick(rng));
    a.tag = static_cast<std::uint32_t>(pick(rng));
    a.seq = static_cast<std::uint32_t>(pick(rng));
    a.bytes = pick(rng);
    a.bytes_received = pick(rng);
    a.request = pick(rng);
    op.actions.push_back(a);
  }
  h.actions = count;
  return op;
}

std::filesystem::path scratch_file(const char* name) {
  const std::filesystem::path dir = std::filesystem::path(P3S_TEST_TMP) / "op_log";
  std::filesystem::create_directories(dir);
  return dir / name;
}

std::vector<Op> read_all(const std::filesystem::path& path) {
  std::vector<Op> out;
  OpReader reader(path);
  Op op;
  while (reader.next(op)) out.push_back(op);
  return out;
}

void expect_equal(const std::vector<Op>& written, const std::vector<Op>& read) {
  ASSERT_EQ(read.size(), written.size());
  for (std::size_t i = 0; i < read.size(); ++i) {
    ASSERT_TRUE(same(read[i].header, written[i].header)) << "operation " << i;
    ASSERT_EQ(read[i].actions.size(), written[i].actions.size()) << "operation " << i;
    for (std::size_t j = 0; j < read[i].actions.size(); ++j) {
      ASSERT_TRUE(same(read[i].actions[j], written[i].actions[j])) << "operation " << i << " action " << j;
    }
  }
}

TEST(OpLog, RandomOperationsRoundTrip) {
  for (const bool threaded : {false, true}) {
    std::mt19937_64 rng(threaded ? 7 : 3);
    const auto path = scratch_file(threaded ? "random-threaded.ops" : "random.ops");
    std::vector<Op> written;
    std::uint64_t clock = 0;
    OpWriter writer(path, threaded);
    for (int i = 0; i < 200000; ++i) {  // several buffers' worth
      written.push_back(random_op(rng, clock));
      writer.append(written.back().header, written.back().actions.data(), written.back().header.actions);
    }
    writer.finish();
    EXPECT_EQ(writer.operations(), written.size());
    expect_equal(written, read_all(path));
  }
}

TEST(OpLog, OperationLargerThanTheBufferRoundTrips) {
  const auto path = scratch_file("large.ops");
  Op big;
  big.header.enter_ns = 10;
  big.header.leave_ns = 20;
  for (std::uint32_t i = 0; i < 100000; ++i) {  // an MPI_Waitall completing 10^5 requests: megabytes encoded
    Action a;
    a.kind = mpi::ActionKind::Recv;
    a.peer = static_cast<std::int32_t>(i);
    a.bytes = ~std::uint64_t{0} - i;
    a.request = ~std::uint64_t{0} - i;
    big.actions.push_back(a);
  }
  big.header.actions = static_cast<std::uint32_t>(big.actions.size());
  Op small;
  small.header.enter_ns = 30;
  small.header.leave_ns = 31;
  OpWriter writer(path);
  writer.append(small.header, nullptr, 0);
  writer.append(big.header, big.actions.data(), big.header.actions);
  writer.append(small.header, nullptr, 0);
  writer.finish();
  EXPECT_GT(writer.bytes(), std::uint64_t{1} << 20);
  small.header.enter_ns = 30;
  expect_equal({small, big, small}, read_all(path));
}

TEST(OpLog, PatchesLandInBufferedAndFlushedActions) {
  const auto path = scratch_file("patch.ops");
  std::vector<Op> written;
  std::vector<std::uint64_t> offsets;
  OpWriter writer(path, /*patchable_collectives=*/true);
  for (int i = 0; i < 100000; ++i) {
    Op op;
    op.header.enter_ns = 100 * static_cast<std::uint64_t>(i);
    op.header.leave_ns = op.header.enter_ns + 10;
    Action a;
    a.kind = i % 2 == 0 ? mpi::ActionKind::NbCollRequest : mpi::ActionKind::Collective;
    a.comm = kNoSeq;
    op.actions.push_back(a);
    op.header.actions = 1;
    writer.append(op.header, op.actions.data(), 1);
    ASSERT_EQ(writer.action_offsets().size(), 1u);
    ASSERT_NE(writer.action_offsets()[0], OpWriter::kNotPatchable);
    offsets.push_back(writer.action_offsets()[0]);
    written.push_back(op);
  }
  // The first operations are on disk by now, the last ones still buffered.
  for (const std::size_t i : {std::size_t{0}, std::size_t{1}, written.size() / 2, written.size() - 1}) {
    Action& a = written[i].actions[0];
    a.comm = 42;
    a.op = mpi::Collective::Allreduce;
    a.root = 3;
    a.seq = static_cast<std::uint32_t>(i);
    writer.patch_action(offsets[i], a);
  }
  writer.finish();
  expect_equal(written, read_all(path));
}

TEST(OpLog, OnlyRequestsAndThreadedCollectivesArePatchable) {
  Action coll;
  coll.kind = mpi::ActionKind::Collective;
  Action send;
  send.kind = mpi::ActionKind::Send;
  Action request;
  request.kind = mpi::ActionKind::NbCollRequest;
  const Action actions[] = {coll, send, request};
  OpHeader h;
  h.actions = 3;
  OpWriter writer(scratch_file("patchable.ops"));
  writer.append(h, actions, 3);
  const auto& offsets = writer.action_offsets();
  ASSERT_EQ(offsets.size(), 3u);
  EXPECT_EQ(offsets[0], OpWriter::kNotPatchable);
  EXPECT_EQ(offsets[1], OpWriter::kNotPatchable);
  EXPECT_NE(offsets[2], OpWriter::kNotPatchable);
  writer.finish();
}

TEST(OpLog, TypicalOperationsTakeUnderThirtyPercentOfTheirMemorySize) {
  // An MPI_Isend and an MPI_Wait completing an MPI_Irecv, 20 us apart, as a stencil code makes them.
  const auto path = scratch_file("typical.ops");
  OpWriter writer(path);
  std::uint64_t t = 5'000'000'000;
  constexpr int kPairs = 10000;
  std::size_t memory = 0;
  for (int i = 0; i < kPairs; ++i) {
    Action isend;
    isend.kind = mpi::ActionKind::Send;
    isend.comm = 0;
    isend.peer = 17;
    isend.tag = 99;
    isend.bytes = 65536;
    isend.request = 1000 + static_cast<std::uint64_t>(i);
    Action recv = isend;
    recv.kind = mpi::ActionKind::Recv;
    OpHeader h;
    h.enter_ns = t + 20000;
    h.burst_ns = 20000;
    h.burst_work = 19500;
    h.leave_ns = h.enter_ns + 800;
    h.call_work = 780;
    h.region = 12;
    h.actions = 1;
    writer.append(h, &isend, 1);
    h.enter_ns = h.leave_ns + 1500;
    h.burst_ns = 1500;
    h.leave_ns = h.enter_ns + 3000;
    h.region = 14;
    writer.append(h, &recv, 1);
    t = h.leave_ns;
    memory += 2 * (sizeof(OpHeader) + sizeof(Action));
  }
  writer.finish();
  EXPECT_LE(writer.bytes() * 10, memory * 3) << writer.bytes() / (2 * kPairs) << " bytes per operation";
  EXPECT_EQ(read_all(path).size(), 2u * kPairs);
}

TEST(OpLog, TruncatedFileIsReportedNotMisread) {
  const auto path = scratch_file("truncated.ops");
  {
    OpWriter writer(path);
    std::mt19937_64 rng(1);
    std::uint64_t clock = 0;
    for (int i = 0; i < 100; ++i) {
      Op op = random_op(rng, clock);
      op.actions.resize(3);
      op.header.actions = 3;
      writer.append(op.header, op.actions.data(), 3);
    }
    writer.finish();
  }
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 5);
  EXPECT_THROW(read_all(path), Error);
}

}  // namespace
}  // namespace p3s::analyzer
