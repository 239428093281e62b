// SPDX-License-Identifier: BSD-3-Clause
// p3s-synth archives read back with the analyzer's reader: message counts and bytes written down by hand from the
// programs, consistency of every example (matching, clocks, collectives), --target-events and determinism.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "archive_check.hpp"
#include "p3s/analyzer/summary.hpp"
#include "p3s/analyzer/trace_reader.hpp"
#include "p3s/error.hpp"
#include "p3s/synth/generator.hpp"

namespace p3s::synth {
namespace {
namespace fs = std::filesystem;
using analyzer::MessageCount;
using testing::check_archive;
using testing::generate_text;

MessageCount msg(const char* op, std::int32_t peer, std::uint32_t tag, std::uint64_t bytes, std::uint64_t count) {
  return MessageCount{.op = op, .peer = peer, .tag = tag, .bytes = bytes, .count = count};
}

std::uint64_t calls(const analyzer::RankSummary& r, const std::string& name) {
  const auto it = r.calls.find(name);
  return it == r.calls.end() ? 0 : it->second;
}

/// Every event of one rank, in order.
std::vector<analyzer::Event> events_of(const fs::path& dir, int rank) {
  analyzer::TraceReader reader(dir);
  analyzer::LocationStream s = reader.open(static_cast<std::uint64_t>(rank));
  std::vector<analyzer::Event> out;
  analyzer::Event e;
  while (s.next(e)) out.push_back(e);
  return out;
}

/// Work-metric bursts of one rank: from each Enter's metric to the next's (it counts work outside MPI calls).
std::vector<std::uint64_t> bursts_of(const fs::path& dir, int rank) {
  std::vector<std::uint64_t> out;
  std::optional<std::uint64_t> before;
  for (const analyzer::Event& e : events_of(dir, rank)) {
    if (e.kind != analyzer::EventKind::Enter) continue;
    if (!e.work) {
      ADD_FAILURE() << "an Enter without its metric";
      return out;
    }
    if (before) {
      EXPECT_GE(*e.work, *before) << "the counter went back";
      out.push_back(*e.work - *before);
    }
    before = e.work;
  }
  return out;
}

std::string file_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(Generate, RingHaloMessagesAndEventsByHand) {
  const auto r = generate_text(R"({"body": [{"op": "loop", "count": 5, "body": [
      {"op": "compute", "ns": 1000}, {"op": "halo", "offsets": [1, -1], "bytes": 1000}]}]})",
                               "ring", 4);
  // Per rank: MPI_Init 7 records, per iteration 2 Irecv and 2 Isend of 4 records (Metric, Enter, request/message,
  // Leave) and a Waitall of 3 + 4 completions, MPI_Finalize 7: 7 + 5 × 23 + 7.
  EXPECT_EQ(r.events_per_rank, std::vector<std::uint64_t>(4, 129));
  const analyzer::Summary s = analyzer::summarize(r.archive);
  ASSERT_EQ(s.ranks.size(), 4u);
  EXPECT_TRUE(s.complete);
  EXPECT_EQ(s.work_metric, "cputime_ns");
  for (int rank = 0; rank < 4; ++rank) {
    SCOPED_TRACE(rank);
    const auto& rs = s.ranks[static_cast<std::size_t>(rank)];
    const int lo = std::min((rank + 1) % 4, (rank + 3) % 4);
    const int hi = std::max((rank + 1) % 4, (rank + 3) % 4);
    EXPECT_EQ(rs.messages, (std::vector<MessageCount>{msg("recv", lo, 0, 1000, 5), msg("recv", hi, 0, 1000, 5),
                                                      msg("send", lo, 0, 1000, 5), msg("send", hi, 0, 1000, 5)}));
    EXPECT_EQ(calls(rs, "MPI_Irecv"), 10u);
    EXPECT_EQ(calls(rs, "MPI_Isend"), 10u);
    EXPECT_EQ(calls(rs, "MPI_Waitall"), 5u);
    EXPECT_EQ(calls(rs, "MPI_Init"), 1u);
    EXPECT_EQ(calls(rs, "MPI_Finalize"), 1u);
    EXPECT_EQ(rs.events, 129u);
  }
  EXPECT_EQ(check_archive(fs::path(r.archive).parent_path()).messages.size(), 40u);
}

TEST(Generate, NonPeriodicHaloCallsProcNullWithoutMessages) {
  const auto r = generate_text(R"({"body": [{"op": "loop", "count": 3, "body": [
      {"op": "halo", "offsets": [1, -1], "bytes": 100, "periodic": false}]}]})",
                               "open_halo", 4);
  // Rank 0: per iteration one real and one MPI_PROC_NULL receive and send: (4 + 3) × 2 + Waitall (3 + 2).
  EXPECT_EQ(r.events_per_rank[0], 7 + 3 * 19 + 7u);
  const analyzer::Summary s = analyzer::summarize(r.archive);
  EXPECT_EQ(s.ranks[0].messages, (std::vector<MessageCount>{msg("recv", 1, 0, 100, 3), msg("send", 1, 0, 100, 3)}));
  EXPECT_EQ(calls(s.ranks[0], "MPI_Irecv"), 6u);
  EXPECT_EQ(calls(s.ranks[0], "MPI_Isend"), 6u);
  EXPECT_EQ(s.ranks[1].messages, (std::vector<MessageCount>{msg("recv", 0, 0, 100, 3), msg("recv", 2, 0, 100, 3),
                                                            msg("send", 0, 0, 100, 3), msg("send", 2, 0, 100, 3)}));
  EXPECT_EQ(s.ranks[3].messages, (std::vector<MessageCount>{msg("recv", 2, 0, 100, 3), msg("send", 2, 0, 100, 3)}));
  check_archive(fs::path(r.archive).parent_path());
}

TEST(Generate, TwoDimensionalHaloOnTheProcessGrid) {
  // 6 ranks: a 3 x 2 grid, rank = x * 2 + y. Rank 2 = (1, 0): x neighbours 0 and 4, y neighbour 3 (non-periodic).
  const auto r = generate_text(R"({"body": [{"op": "halo", "offsets": [[1, 0], [-1, 0], [0, 1], [0, -1]],
      "bytes": [300, 300, 200, 200], "periodic": false, "distinct_tags": true, "tag": 10}]})",
                               "halo2d", 6);
  const analyzer::Summary s = analyzer::summarize(r.archive);
  // Offset i uses tag 10 + i; a message sent with offset i is received by the receive of offset i.
  EXPECT_EQ(s.ranks[2].messages, (std::vector<MessageCount>{msg("recv", 0, 10, 300, 1), msg("recv", 3, 13, 200, 1),
                                                            msg("recv", 4, 11, 300, 1), msg("send", 0, 11, 300, 1),
                                                            msg("send", 3, 12, 200, 1), msg("send", 4, 10, 300, 1)}));
  EXPECT_EQ(calls(s.ranks[2], "MPI_Irecv"), 4u);
  check_archive(fs::path(r.archive).parent_path());
}

TEST(Generate, ButterflySendrecvExchangesWithXorPartners) {
  const auto r = generate_text(R"({"body": [{"op": "loop", "count": 2, "body": [
      {"op": "sendrecv", "xor": "butterfly", "bytes": 512, "tag": 7}]}]})",
                               "butterfly", 8);
  const analyzer::Summary s = analyzer::summarize(r.archive);
  EXPECT_EQ(calls(s.ranks[5], "MPI_Sendrecv"), 6u);
  EXPECT_EQ(s.ranks[5].messages, (std::vector<MessageCount>{msg("recv", 1, 7, 512, 2), msg("recv", 4, 7, 512, 2),
                                                            msg("recv", 7, 7, 512, 2), msg("send", 1, 7, 512, 2),
                                                            msg("send", 4, 7, 512, 2), msg("send", 7, 7, 512, 2)}));
  check_archive(fs::path(r.archive).parent_path());

  // 6 ranks: masks 1, 2, 4; partners beyond rank 5 are MPI_PROC_NULL (5 ^ 2 = 7, 2 ^ 4 = 6).
  const auto r6 = generate_text(R"({"body": [{"op": "sendrecv", "xor": "butterfly", "bytes": 64}]})", "butterfly6", 6);
  const analyzer::Summary s6 = analyzer::summarize(r6.archive);
  EXPECT_EQ(calls(s6.ranks[5], "MPI_Sendrecv"), 3u);
  EXPECT_EQ(s6.ranks[5].messages, (std::vector<MessageCount>{msg("recv", 1, 0, 64, 1), msg("recv", 4, 0, 64, 1),
                                                             msg("send", 1, 0, 64, 1), msg("send", 4, 0, 64, 1)}));
  EXPECT_EQ(s6.ranks[2].messages, (std::vector<MessageCount>{msg("recv", 0, 0, 64, 1), msg("recv", 3, 0, 64, 1),
                                                             msg("send", 0, 0, 64, 1), msg("send", 3, 0, 64, 1)}));
  check_archive(fs::path(r6.archive).parent_path());
}

TEST(Generate, SendrecvOffsetsShiftAlongTheRanks) {
  const auto r =
      generate_text(R"({"body": [{"op": "sendrecv", "offset": [1, 2], "bytes": 32, "periodic": false}]})", "shift", 4);
  const analyzer::Summary s = analyzer::summarize(r.archive);
  // Send to r + d, receive from r - d: rank 0 only sends, rank 3 only receives.
  EXPECT_EQ(s.ranks[0].messages, (std::vector<MessageCount>{msg("send", 1, 0, 32, 1), msg("send", 2, 0, 32, 1)}));
  EXPECT_EQ(s.ranks[3].messages, (std::vector<MessageCount>{msg("recv", 1, 0, 32, 1), msg("recv", 2, 0, 32, 1)}));
  EXPECT_EQ(calls(s.ranks[3], "MPI_Sendrecv"), 2u);
  check_archive(fs::path(r.archive).parent_path());
}

TEST(Generate, PipelineIsAWavefront) {
  const auto r = generate_text(R"({"body": [{"op": "loop", "count": 3, "body": [
      {"op": "pipeline", "bytes": 64, "tag": 3, "work": {"ns": 10000}}]}]})",
                               "wavefront", 4);
  const analyzer::Summary s = analyzer::summarize(r.archive);
  EXPECT_EQ(calls(s.ranks[0], "MPI_Recv"), 0u);
  EXPECT_EQ(calls(s.ranks[0], "MPI_Send"), 3u);
  EXPECT_EQ(s.ranks[0].messages, (std::vector<MessageCount>{msg("send", 1, 3, 64, 3)}));
  EXPECT_EQ(s.ranks[2].messages, (std::vector<MessageCount>{msg("recv", 1, 3, 64, 3), msg("send", 3, 3, 64, 3)}));
  EXPECT_EQ(calls(s.ranks[3], "MPI_Send"), 0u);
  const auto facts = check_archive(fs::path(r.archive).parent_path());
  // The wave needs 10 us of work per rank: rank 3 receives its first message at least 30 us after rank 0 sent it.
  for (const auto& m : facts.messages) {
    if (m.dest == 3) {
      EXPECT_GE(m.recv_ns, m.send_ns);
    }
  }

  const auto down = generate_text(R"({"body": [{"op": "pipeline", "bytes": 8, "direction": "down",
      "ends": "proc_null"}]})",
                                  "sweep_down", 4);
  const analyzer::Summary d = analyzer::summarize(down.archive);
  // From rank 3 down to rank 0; the end ranks call Recv/Send with MPI_PROC_NULL.
  EXPECT_EQ(calls(d.ranks[0], "MPI_Send"), 1u);
  EXPECT_EQ(calls(d.ranks[3], "MPI_Recv"), 1u);
  EXPECT_EQ(d.ranks[0].messages, (std::vector<MessageCount>{msg("recv", 1, 0, 8, 1)}));
  EXPECT_EQ(d.ranks[3].messages, (std::vector<MessageCount>{msg("send", 2, 0, 8, 1)}));
  check_archive(fs::path(down.archive).parent_path());
}

TEST(Generate, CollectiveBytesFollowTheRecorderRules) {
  const auto r = generate_text(R"({"body": [
      {"op": "allreduce", "bytes": 8}, {"op": "bcast", "bytes": 256, "root": 1}, {"op": "reduce", "bytes": 16},
      {"op": "alltoall", "bytes": 8}, {"op": "barrier"}, {"op": "gather", "bytes": 4}, {"op": "scatter", "bytes": 4},
      {"op": "allgather", "bytes": 4}, {"op": "scan", "bytes": 4},
      {"op": "allreduce", "bytes": 8, "in_place": true}]})",
                               "collectives", 4);
  using Op = mpi::Collective;
  // (op, sent, received) per rank, Score-P's conventions: the root counts its own block, all-to-all n blocks.
  struct Bytes {
    Op op;
    std::uint64_t sent;
    std::uint64_t received;
    bool operator==(const Bytes&) const = default;
  };
  auto expected = [](int rank) {
    const auto me = static_cast<std::uint64_t>(rank);
    return std::vector<Bytes>{{Op::CreateHandle, 0, 0},
                              {Op::Allreduce, 32, 32},
                              {Op::Bcast, rank == 1 ? 1024u : 0u, 256},
                              {Op::Reduce, 16, rank == 0 ? 64u : 0u},
                              {Op::Alltoall, 32, 32},
                              {Op::Barrier, 0, 0},
                              {Op::Gather, 4, rank == 0 ? 16u : 0u},
                              {Op::Scatter, rank == 0 ? 16u : 0u, 4},
                              {Op::Allgather, 16, 16},
                              {Op::Scan, (4 - me) * 4, (me + 1) * 4},
                              {Op::Allreduce, 24, 24},
                              {Op::DestroyHandle, 0, 0}};
  };
  for (int rank = 0; rank < 4; ++rank) {
    SCOPED_TRACE(rank);
    std::vector<Bytes> got;
    for (const analyzer::Event& e : events_of(fs::path(r.archive).parent_path(), rank)) {
      if (e.kind == analyzer::EventKind::CollectiveEnd) got.push_back({e.op, e.bytes, e.bytes_received});
    }
    EXPECT_EQ(got, expected(rank));
  }
  EXPECT_EQ(check_archive(fs::path(r.archive).parent_path()).collectives, 12u);
}

TEST(Generate, SubCommunicatorsResolveToWorldRanks) {
  const auto r = generate_text(R"({"comms": [{"name": "rows", "split": "row"}, {"name": "cols", "split": "col"},
      {"name": "halves", "split": {"block": 4}}],
      "body": [{"op": "allreduce", "bytes": 8, "comm": "rows"},
               {"op": "halo", "offsets": [1, -1], "bytes": 100, "comm": "cols"},
               {"op": "bcast", "bytes": 8, "root": 3, "comm": "halves"}]})",
                               "comms", 8);
  const fs::path dir = fs::path(r.archive).parent_path();
  const analyzer::Summary s = analyzer::summarize(r.archive);
  // 8 ranks: grid 4 x 2. Rows {0,1} {2,3} ...; columns {0,2,4,6} {1,3,5,7}: rank 0's column neighbours are 2 and 6.
  EXPECT_EQ(s.ranks[0].messages, (std::vector<MessageCount>{msg("recv", 2, 0, 100, 1), msg("recv", 6, 0, 100, 1),
                                                            msg("send", 2, 0, 100, 1), msg("send", 6, 0, 100, 1)}));
  EXPECT_EQ(calls(s.ranks[0], "MPI_Comm_split"), 3u);
  EXPECT_EQ(calls(s.ranks[0], "MPI_Comm_free"), 3u);
  analyzer::TraceReader reader(dir);
  // WORLD, SELF, 4 rows, 2 columns, 2 halves.
  EXPECT_EQ(reader.definitions().comms.size(), 10u);
  std::vector<std::vector<std::int32_t>> groups;
  std::vector<std::int32_t> roots;
  for (const analyzer::Event& e : events_of(dir, 5)) {
    if (e.kind == analyzer::EventKind::CollectiveEnd &&
        (e.op == mpi::Collective::Allreduce || e.op == mpi::Collective::Bcast)) {
      groups.push_back(reader.definitions().comm(e.comm)->world_ranks);
      roots.push_back(e.root);
    }
  }
  EXPECT_EQ(groups, (std::vector<std::vector<std::int32_t>>{{4, 5}, {4, 5, 6, 7}}));
  EXPECT_EQ(roots, (std::vector<std::int32_t>{analyzer::kNoRank, 7}));  // root 3 of the second half is world rank 7
  check_archive(dir);
}

TEST(Generate, ComputeFactorsPerRank) {
  const auto r = generate_text(R"({"body": [{"op": "compute", "ns": 100000, "gradient": 0.3,
      "imbalance": [{"ranks": [0, -1], "factor": 2}]}, {"op": "barrier"}]})",
                               "imbalance", 4);
  const fs::path dir = fs::path(r.archive).parent_path();
  // Burst from MPI_Init's Leave to the Barrier's Enter: ns × factor × (1 + 0.3 r / 3) + the 50 ns call gap
  // (±1 ns: the counter is rounded at both ends).
  const double expected[] = {200050, 110050, 120050, 260050};
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_NEAR(static_cast<double>(bursts_of(dir, rank).at(0)), expected[rank], 1.0) << rank;
  }
}

TEST(Generate, ComputeScalesWithTheProcessCount) {
  // ns_exp 1: 8 ranks' work spread over 4 ranks takes twice as long.
  const auto r = generate_text(R"({"ranks": 8, "body": [{"op": "compute", "ns": 100000, "ns_exp": 1},
      {"op": "barrier"}]})",
                               "strong", 4);
  EXPECT_NEAR(static_cast<double>(bursts_of(fs::path(r.archive).parent_path(), 0).at(0)), 200050.0, 1.0);
}

TEST(Generate, BurstNoiseStaysWithinItsBounds) {
  const auto r = generate_text(R"({"body": [{"op": "loop", "count": 300, "body": [
      {"op": "compute", "ns": 100000, "noise": 0.2}, {"op": "barrier"}]}]})",
                               "noise", 2, 42);
  for (int rank = 0; rank < 2; ++rank) {
    auto b = bursts_of(fs::path(r.archive).parent_path(), rank);
    b.erase(b.begin() + 300, b.end());  // the 300 noisy bursts (then Finalize's)
    const auto [lo, hi] = std::minmax_element(b.begin(), b.end());
    EXPECT_GE(*lo, 80000u);
    EXPECT_LE(*hi, 120100u);
    EXPECT_LT(*lo, 85000u) << "uniform ±20 % noise should reach near its bounds in 300 draws";
    EXPECT_GT(*hi, 115000u);
  }
  const auto n = generate_text(R"({"body": [{"op": "loop", "count": 400, "body": [
      {"op": "compute", "ns": 100000, "noise": {"dist": "normal", "rel": 0.2}}, {"op": "barrier"}]}]})",
                               "normal", 1, 42);
  auto b = bursts_of(fs::path(n.archive).parent_path(), 0);
  b.resize(400);
  double mean = 0;
  for (auto x : b) mean += static_cast<double>(x) / 400.0;
  double var = 0;
  for (auto x : b) var += (static_cast<double>(x) - mean) * (static_cast<double>(x) - mean) / 399.0;
  EXPECT_NEAR(mean, 100050.0, 3000.0);
  EXPECT_NEAR(std::sqrt(var), 20000.0, 3000.0);
}

TEST(Generate, ByteJitterStaysWithinItsBounds) {
  const auto r = generate_text(R"({"body": [{"op": "loop", "count": 50, "body": [
      {"op": "halo", "offsets": [1, -1], "bytes": 10000, "jitter": 0.02},
      {"op": "allreduce", "bytes": 1000, "jitter": 0.02}]}]})",
                               "jitter", 4);
  const fs::path dir = fs::path(r.archive).parent_path();
  const auto facts = check_archive(dir);  // also checks that each receive reports its send's bytes
  ASSERT_EQ(facts.messages.size(), 400u);
  std::set<std::uint64_t> sizes;
  for (const auto& m : facts.messages) {
    EXPECT_GE(m.sent_bytes, 9800u);
    EXPECT_LE(m.sent_bytes, 10200u);
    sizes.insert(m.sent_bytes);
  }
  EXPECT_GT(sizes.size(), 50u);
  // A collective's count is the same on every member: one draw per call.
  std::vector<std::vector<std::uint64_t>> per_rank(4);
  for (int rank = 0; rank < 4; ++rank) {
    for (const analyzer::Event& e : events_of(dir, rank)) {
      if (e.kind == analyzer::EventKind::CollectiveEnd && e.op == mpi::Collective::Allreduce) {
        EXPECT_GE(e.bytes, 4 * 980u);
        EXPECT_LE(e.bytes, 4 * 1020u);
        per_rank[static_cast<std::size_t>(rank)].push_back(e.bytes);
      }
    }
  }
  for (int rank = 1; rank < 4; ++rank) EXPECT_EQ(per_rank[static_cast<std::size_t>(rank)], per_rank[0]);
}

TEST(Generate, ExampleCallCountsByHand) {
  auto summary = [](const char* name, int ranks) {
    const Program p = load_program(testing::programs_dir() / (std::string(name) + ".json"));
    const auto r = generate(p, GenerateOptions{.out_dir = testing::scratch_dir(name), .ranks = ranks});
    return analyzer::summarize(r.archive);
  };
  // nested: outer 10 × (bcast, middle 4 × (halo, inner 3 × allreduce)).
  const auto nested = summary("nested", 4);
  EXPECT_EQ(calls(nested.ranks[2], "MPI_Bcast"), 10u);
  EXPECT_EQ(calls(nested.ranks[2], "MPI_Waitall"), 40u);
  EXPECT_EQ(calls(nested.ranks[2], "MPI_Allreduce"), 120u);
  EXPECT_EQ(nested.ranks[2].messages,
            (std::vector<MessageCount>{msg("recv", 1, 0, 4096, 40), msg("recv", 3, 0, 4096, 40),
                                       msg("send", 1, 0, 4096, 40), msg("send", 3, 0, 4096, 40)}));
  // alternating: 20 × (3 × A, 2 × B).
  const auto alt = summary("alternating", 4);
  EXPECT_EQ(calls(alt.ranks[0], "MPI_Waitall"), 60u);
  EXPECT_EQ(calls(alt.ranks[0], "MPI_Allreduce"), 40u);
  // irregular: 12 × (inner [3, 5, 2, 4] cyclically, allreduce): 3 × 14 halos.
  const auto irr = summary("irregular", 4);
  EXPECT_EQ(calls(irr.ranks[1], "MPI_Waitall"), 42u);
  EXPECT_EQ(calls(irr.ranks[1], "MPI_Irecv"), 84u);
  EXPECT_EQ(calls(irr.ranks[1], "MPI_Allreduce"), 12u);
  // compute_first: 50 × (sendrecv around the ring, allreduce).
  const auto cf = summary("compute_first", 4);
  EXPECT_EQ(cf.ranks[1].messages,
            (std::vector<MessageCount>{msg("recv", 0, 0, 32768, 50), msg("send", 2, 0, 32768, 50)}));
  // stencil at 16 ranks (4 x 4 grid, non-periodic): corner rank 0 talks to 4 (x) and 1 (y); faces shrink as
  // 1/sqrt(n): 16384 × sqrt(8/16) = 11585, 8192 × sqrt(8/16) = 5793.
  const auto st = summary("stencil", 16);
  EXPECT_EQ(st.ranks[0].messages,
            (std::vector<MessageCount>{msg("recv", 1, 0, 5793, 100), msg("recv", 4, 0, 11585, 100),
                                       msg("send", 1, 0, 5793, 100), msg("send", 4, 0, 11585, 100)}));
  EXPECT_EQ(calls(st.ranks[0], "MPI_Irecv"), 400u);
  EXPECT_EQ(calls(st.ranks[0], "MPI_Bcast"), 1u);
  EXPECT_EQ(calls(st.ranks[0], "MPI_Reduce"), 1u);
}

TEST(Generate, EveryExampleIsConsistent) {
  for (const char* name : {"nested", "alternating", "compute_first", "irregular", "noisy", "stencil"}) {
    for (int ranks : {8, 6, 1}) {
      SCOPED_TRACE(std::string(name) + " at " + std::to_string(ranks) + " ranks");
      const Program p = load_program(testing::programs_dir() / (std::string(name) + ".json"));
      const fs::path dir = testing::scratch_dir(std::string(name) + std::to_string(ranks));
      const auto r = generate(p, GenerateOptions{.out_dir = dir, .ranks = ranks, .seed = 3});
      const auto facts = check_archive(dir);
      EXPECT_EQ(facts.events, r.events);
      EXPECT_EQ(count_events(p, ranks), r.events);
      const analyzer::Summary s = analyzer::summarize(dir);
      EXPECT_EQ(s.processes, ranks);
      EXPECT_TRUE(s.complete);
      std::uint64_t total = 0;
      for (const auto& rs : s.ranks) total += rs.events;
      EXPECT_EQ(total, r.events);
    }
  }
}

TEST(Generate, ArchiveSaysWhatItIs) {
  const auto r = generate_text(R"({"body": [{"op": "barrier"}]})", "properties", 3);
  analyzer::TraceReader reader(fs::path(r.archive).parent_path());
  const auto& d = reader.definitions();
  EXPECT_EQ(d.property("P3S::COMPLETE"), "true");
  EXPECT_EQ(d.property("P3S::PROCESSES"), "3");
  EXPECT_EQ(d.property("P3S::WORK_METRIC"), "cputime_ns");
  EXPECT_NE(d.property("P3S::COMMAND").value_or("").find("synthetic"), std::string::npos);
  EXPECT_NE(d.property("P3S::TOOL").value_or("").find("p3s"), std::string::npos);
  EXPECT_EQ(d.work_metric_member, "cputime_ns");
  ASSERT_EQ(d.metric_members.size(), 1u);
  EXPECT_EQ(d.metric_members[0].name, "cputime_ns");
  EXPECT_TRUE(d.written_by_p3s());
  EXPECT_EQ(d.processes, 3);
  ASSERT_GT(d.regions.size(), 35u);
  EXPECT_EQ(d.regions[0].name, "MPI_Init");
  EXPECT_EQ(d.regions[35].name, "MPI_Barrier");
}

TEST(Generate, TargetEventsResizesTheOutermostLoop) {
  struct Case {
    const char* name;
    int ranks;
    std::uint64_t target;
  };
  for (const Case c : {Case{"stencil", 16, 300000}, Case{"nested", 8, 50000}, Case{"irregular", 4, 40000},
                       Case{"alternating", 3, 1000000}}) {
    SCOPED_TRACE(c.name);
    const Program p = load_program(testing::programs_dir() / (std::string(c.name) + ".json"));
    const auto r = generate(
        p, GenerateOptions{.out_dir = testing::scratch_dir(c.name), .ranks = c.ranks, .target_events = c.target});
    EXPECT_NEAR(static_cast<double>(r.events), static_cast<double>(c.target), 0.1 * static_cast<double>(c.target));
    EXPECT_EQ(r.scaled_loop.rfind("body[", 0), 0u) << r.scaled_loop;
    EXPECT_EQ(analyzer::summarize(r.archive).ranks.size(), static_cast<std::size_t>(c.ranks));
  }
  const Program stencil = load_program(testing::programs_dir() / "stencil.json");
  // Fewer events than MPI_Init, the set-up and one time step write cannot be met.
  EXPECT_THROW(
      generate(stencil, GenerateOptions{.out_dir = testing::scratch_dir("tiny"), .ranks = 8, .target_events = 100}),
      InputError);
  const Program flat = parse_program(R"({"body": [{"op": "barrier"}]})", "flat.json");
  EXPECT_THROW(generate(flat, GenerateOptions{.out_dir = testing::scratch_dir("flat"), .target_events = 1000}),
               InputError);
}

TEST(Generate, LongRunsStayReadable) {
  // More than the 4 MiB a rank's writer buffers: OTF2 writes the buffer out several times. p3s archives set no
  // post-flush callback, so no BUFFER_FLUSH records appear, and the location definitions count what is there.
  const Program p = load_program(testing::programs_dir() / "compute_first.json");
  const fs::path dir = testing::scratch_dir("long");
  const auto r = generate(p, GenerateOptions{.out_dir = dir, .ranks = 1, .target_events = 700000});
  const analyzer::Summary s = analyzer::summarize(dir);
  EXPECT_EQ(s.ranks.at(0).events, r.events);
  // Per iteration at 1 rank: a Sendrecv to itself (5 records) and an Allreduce (5); MPI_Init and MPI_Finalize 14.
  EXPECT_EQ(r.events, 10 * r.scaled_count + 14);
  EXPECT_GT(r.events * 40, std::uint64_t{4} << 20) << "the archive must be long enough to be written out in parts";
}

TEST(Generate, ManyRanksAreWrittenInBatches) {
  // 40 ranks: two passes of the simulation, each writing some ranks. Jittered sizes and noisy clocks must be the
  // same in both, or messages between ranks of different passes would disagree on bytes or order.
  const Program p = load_program(testing::programs_dir() / "noisy.json");
  const fs::path dir = testing::scratch_dir("batches");
  const auto r = generate(p, GenerateOptions{.out_dir = dir, .ranks = 40, .seed = 5});
  const auto facts = check_archive(dir);
  EXPECT_EQ(facts.messages.size(), 40u * 40u * 2u);
  EXPECT_EQ(facts.events, r.events);
  EXPECT_EQ(count_events(p, 40), r.events);
  EXPECT_EQ(r.events_per_rank.size(), 40u);
}

TEST(Generate, SameSeedSameArchive) {
  const Program p = load_program(testing::programs_dir() / "noisy.json");
  auto run = [&](const char* name, std::uint64_t seed) {
    const fs::path dir = testing::scratch_dir(name);
    (void)generate(p, GenerateOptions{.out_dir = dir, .ranks = 4, .seed = seed});
    std::map<std::string, std::string> files;
    for (const auto& e : fs::directory_iterator(dir / "traces")) files[e.path().filename()] = file_bytes(e.path());
    files["traces.def"] = file_bytes(dir / "traces.def");
    return files;
  };
  const auto a = run("seed7a", 7);
  const auto b = run("seed7b", 7);
  const auto c = run("seed8", 8);
  EXPECT_EQ(a.size(), 9u);  // 4 × (.evt, .def) + traces.def
  EXPECT_TRUE(a == b) << "the same seed must give byte-identical event and definition files";
  EXPECT_NE(a.at("0.evt"), c.at("0.evt")) << "another seed must draw other noise";
}

TEST(Generate, ReplacesAnExistingArchive) {
  const fs::path dir = testing::scratch_dir("replace");
  const Program big = parse_program(R"({"body": [{"op": "loop", "count": 9, "body": [{"op": "barrier"}]}]})", "a");
  const Program small = parse_program(R"({"body": [{"op": "barrier"}]})", "b");
  (void)generate(big, GenerateOptions{.out_dir = dir, .ranks = 2});
  const auto r = generate(small, GenerateOptions{.out_dir = dir, .ranks = 2});
  EXPECT_EQ(check_archive(dir).events, r.events);
  EXPECT_FALSE(fs::exists(dir / ".p3s-partial"));
}

}  // namespace
}  // namespace p3s::synth
