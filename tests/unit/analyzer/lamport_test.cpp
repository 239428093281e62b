// SPDX-License-Identifier: BSD-3-Clause
// Matching and Lamport clocks on hand-built operation sequences.
#include "lamport.hpp"

#include <gtest/gtest.h>

#include <map>

#include "p3s/error.hpp"

namespace p3s::analyzer {
namespace {

constexpr std::uint32_t kWorld = 0;
constexpr std::uint32_t kRow = 5;  ///< a sub-communicator of two ranks

class VectorSource final : public OpSource {
 public:
  explicit VectorSource(std::vector<Op> ops) : ops_(std::move(ops)) {}
  bool next(Op& op) override {
    if (i_ == ops_.size()) return false;
    op = ops_[i_++];
    return true;
  }

 private:
  std::vector<Op> ops_;
  std::size_t i_ = 0;
};

Action send(std::int32_t to, std::uint32_t tag = 0, std::uint64_t bytes = 8, std::uint32_t comm = kWorld) {
  Action a;
  a.kind = mpi::ActionKind::Send;
  a.peer = to;
  a.tag = tag;
  a.bytes = bytes;
  a.comm = comm;
  return a;
}

Action recv(std::int32_t from, std::uint32_t tag = 0, std::uint64_t bytes = 8, std::uint32_t comm = kWorld) {
  Action a = send(from, tag, bytes, comm);
  a.kind = mpi::ActionKind::Recv;
  return a;
}

Action coll(std::uint32_t comm = kWorld) {
  Action a;
  a.kind = mpi::ActionKind::Collective;
  a.comm = comm;
  a.op = mpi::Collective::Allreduce;
  return a;
}

Action other(mpi::ActionKind kind, std::uint64_t request = 0, std::uint32_t comm = kWorld) {
  Action a;
  a.kind = kind;
  a.request = request;
  a.comm = comm;
  return a;
}

Op op(std::uint32_t region, std::vector<Action> actions) {
  Op o;
  o.header.region = region;
  o.actions = std::move(actions);
  return o;
}

/// Everything the engine reports, per location.
struct Recorded : LamportSink {
  struct Row {
    std::uint64_t index;
    std::uint32_t region;
    std::uint64_t op_tick;
    std::vector<std::uint64_t> ticks;
    std::vector<Action> actions;
  };
  std::map<std::size_t, std::vector<Row>> rows;
  std::vector<std::uint32_t> tick_events;
  std::vector<std::uint64_t> symbols;
  void on_op(std::size_t l, std::uint64_t index, const Op& o, std::uint64_t op_tick,
             std::span<const std::uint64_t> ticks) override {
    rows[l].push_back({index, o.header.region, op_tick, {ticks.begin(), ticks.end()}, o.actions});
  }
  void on_tick(std::uint64_t tick, std::uint32_t events, std::uint64_t symbol) override {
    EXPECT_EQ(tick, tick_events.size() + 1) << "ticks must arrive in order";
    tick_events.push_back(events);
    symbols.push_back(symbol);
  }
};

LamportResult run(std::vector<std::vector<Op>> programs, Recorded& sink, LamportOptions options = {}) {
  std::vector<LamportLocation> locs;
  for (std::size_t r = 0; r < programs.size(); ++r) {
    locs.push_back({static_cast<std::int32_t>(r), std::make_unique<VectorSource>(std::move(programs[r]))});
  }
  const std::uint32_t world = static_cast<std::uint32_t>(locs.size());
  const CommSize size = [world](std::uint32_t comm) -> std::uint32_t { return comm == kRow ? 2 : world; };
  const ActionFeature feature = [](std::int32_t rank, const Op& o, const Action& a) {
    return mix64(static_cast<std::uint64_t>(rank) * 1000 + o.header.region * 10 + static_cast<std::uint64_t>(a.kind));
  };
  return run_lamport(std::move(locs), size, feature, sink, options);
}

/// Invariants that must hold for every run: per location strictly increasing ticks of events, ops in order
/// with non-decreasing op ticks, and each message's receive later than its send (checked through `sends`).
void check_invariants(const Recorded& s) {
  for (const auto& [l, rows] : s.rows) {
    std::uint64_t last = 0;
    std::uint64_t last_op = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      EXPECT_EQ(rows[i].index, i) << "location " << l;
      EXPECT_GE(rows[i].op_tick, last_op) << "location " << l << " op " << i;
      last_op = rows[i].op_tick;
      for (std::uint64_t t : rows[i].ticks) {
        if (t == 0) continue;
        EXPECT_GT(t, last) << "location " << l << " op " << i;
        last = t;
      }
    }
  }
}

TEST(Lamport, SendThenReceiveCarriesTheClock) {
  Recorded s;
  const LamportResult r = run({{op(1, {send(1)})}, {op(2, {recv(0)})}}, s);
  check_invariants(s);
  EXPECT_EQ(r.messages, 1u);
  EXPECT_EQ(s.rows[0][0].ticks[0], 1u);
  EXPECT_EQ(s.rows[1][0].ticks[0], 2u);
  EXPECT_EQ(s.tick_events, (std::vector<std::uint32_t>{1, 1}));
}

TEST(Lamport, ReceivePostedBeforeTheSendWaits) {
  // Rank 1 receives first in program order, rank 0 computes and sends late: the clock still comes from the send.
  Recorded s;
  run({{op(1, {send(1)}), op(1, {send(1)}), op(1, {send(1)})}, {op(2, {recv(0)}), op(2, {recv(0)}), op(2, {recv(0)})}},
      s);
  check_invariants(s);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_GT(s.rows[1][i].ticks[0], s.rows[0][i].ticks[0]);
}

TEST(Lamport, WildcardReceiveUsesTheActualSource) {
  // A receive from MPI_ANY_SOURCE is recorded with the source it matched: rank 2's message, sent late.
  // Rank 2 sends only after hearing from rank 1, so its message carries a later clock than rank 1's.
  Recorded s;
  run({{op(2, {recv(2, 7)}), op(2, {recv(1, 7)})},
       {op(1, {send(0, 7)}), op(1, {send(2, 8)})},
       {op(2, {recv(1, 8)}), op(1, {send(0, 7)})}},
      s);
  check_invariants(s);
  EXPECT_GT(s.rows[0][0].ticks[0], s.rows[2][1].ticks[0]);
  EXPECT_GT(s.rows[2][1].ticks[0], s.rows[1][1].ticks[0]);
}

TEST(Lamport, OutOfOrderCompletionMatchesBySize) {
  // Two receives on one channel complete in the reverse of their posting order (Waitany): the one reporting 16
  // bytes took the second message, so it must carry the second send's clock.
  Recorded s;
  run({{op(1, {send(1, 3, 8)}), op(9, {}), op(9, {}), op(1, {send(1, 3, 16)})},
       {op(4, {other(mpi::ActionKind::IrecvPost, 1), other(mpi::ActionKind::IrecvPost, 2)}), op(5, {recv(0, 3, 16)}),
        op(5, {recv(0, 3, 8)})}},
      s);
  check_invariants(s);
  EXPECT_GT(s.rows[1][1].ticks[0], s.rows[0][3].ticks[0]);  // 16 bytes: after the second send
  EXPECT_GT(s.rows[1][2].ticks[0], s.rows[0][0].ticks[0]);
}

TEST(Lamport, ChannelsAreSeparatedByTagAndCommunicator) {
  // Same pair, different tags: a receive of tag 2 may overtake the pending tag-1 message (FIFO per channel).
  Recorded s;
  const LamportResult r = run({{op(1, {send(1, 1)}), op(1, {send(1, 2)}), op(1, {send(1, 1, 8, kRow)})},
                               {op(2, {recv(0, 2)}), op(2, {recv(0, 1, 8, kRow)}), op(2, {recv(0, 1)})}},
                              s);
  check_invariants(s);
  EXPECT_EQ(r.messages, 3u);
  EXPECT_EQ(r.unmatched_sends, 0u);
  EXPECT_GT(s.rows[1][0].ticks[0], s.rows[0][1].ticks[0]);
  EXPECT_GT(s.rows[1][1].ticks[0], s.rows[0][2].ticks[0]);
}

TEST(Lamport, CollectivesSynchroniseTheirMembersOnly) {
  // Ranks 0 and 1 share the row communicator; rank 2 does not take part, its clock stays independent.
  Recorded s;
  run({{op(1, {send(1)}), op(1, {send(1)}), op(3, {coll(kRow)})},
       {op(3, {coll(kRow)}), op(2, {recv(0)}), op(2, {recv(0)})},
       {op(4, {})}},
      s, {});
  check_invariants(s);
  // Rank 1 reaches the collective at clock 0, rank 0 at clock 2: both leave at 3.
  EXPECT_EQ(s.rows[0][2].ticks[0], 3u);
  EXPECT_EQ(s.rows[1][0].ticks[0], 3u);
  EXPECT_EQ(s.rows[1][1].ticks[0], 4u);
}

TEST(Lamport, WorldCollectiveTakesTheMaximum) {
  Recorded s;
  run({{op(1, {send(1)}), op(3, {coll()})}, {op(2, {recv(0)}), op(3, {coll()})}, {op(3, {coll()})}}, s);
  check_invariants(s);
  for (std::size_t l = 0; l < 3; ++l) EXPECT_EQ(s.rows[l].back().ticks[0], 3u) << l;
  EXPECT_EQ(s.tick_events.back(), 3u);  // three events on the collective's tick
}

TEST(Lamport, SendrecvIsTwoEventsInOneCall) {
  // A ring exchange with Sendrecv: each rank sends right and receives from the left inside one call.
  Recorded s;
  std::vector<std::vector<Op>> ring;
  for (std::int32_t r = 0; r < 4; ++r) ring.push_back({op(7, {send((r + 1) % 4), recv((r + 3) % 4)})});
  const LamportResult res = run(std::move(ring), s);
  check_invariants(s);
  EXPECT_EQ(res.messages, 4u);
  for (std::size_t l = 0; l < 4; ++l) {
    EXPECT_EQ(s.rows[l][0].ticks[0], 1u);
    EXPECT_EQ(s.rows[l][0].ticks[1], 2u);
    EXPECT_EQ(s.rows[l][0].op_tick, 1u);
  }
}

TEST(Lamport, CallsWithoutEventsJoinTheNextEvent) {
  // An Irecv post and a Wait that only completes a send carry no tick: they belong to the following event.
  Recorded s;
  run({{op(4, {other(mpi::ActionKind::IrecvPost, 1)}), op(1, {send(1)}),
        op(6, {other(mpi::ActionKind::IsendComplete, 2)}), op(5, {recv(1)})},
       {op(2, {recv(0)}), op(1, {send(0)})}},
      s);
  check_invariants(s);
  const auto& r0 = s.rows[0];
  ASSERT_EQ(r0.size(), 4u);
  EXPECT_EQ(r0[0].op_tick, r0[1].op_tick);  // the post belongs to the send's tick
  EXPECT_EQ(r0[2].op_tick, r0[3].op_tick);  // the Wait belongs to the receive's tick
}

TEST(Lamport, ProcNullOperationsAreLocal) {
  // MPI_PROC_NULL operations record the call but no message: the call has no action and no event.
  Recorded s;
  const LamportResult r = run({{op(1, {}), op(2, {}), op(3, {coll()})}, {op(3, {coll()})}}, s);
  check_invariants(s);
  EXPECT_EQ(r.messages, 0u);
  EXPECT_EQ(r.events, 2u);
}

TEST(Lamport, NonBlockingCollectiveCompletesAfterEveryStart) {
  // Rank 0 starts early and waits; rank 1 starts after a message from rank 0. Rank 0's completion must come
  // after rank 1's start, which comes after the message.
  Recorded s;
  Action start0 = other(mpi::ActionKind::NbCollRequest, 11);
  Action done0 = coll();
  done0.kind = mpi::ActionKind::NbCollComplete;
  done0.request = 11;
  Action start1 = start0;
  start1.request = 21;
  Action done1 = done0;
  done1.request = 21;
  run({{op(8, {start0}), op(1, {send(1)}), op(9, {done0})}, {op(2, {recv(0)}), op(8, {start1}), op(9, {done1})}}, s);
  check_invariants(s);
  EXPECT_GT(s.rows[0][2].ticks[0], s.rows[1][0].ticks[0]);
  EXPECT_EQ(s.rows[1][1].op_tick, s.rows[1][2].op_tick);  // the start joins the completion's tick
}

TEST(Lamport, ProcessCollectiveNumbersOverrideThreads) {
  // A process with two threads (locations 0 and 1 are both rank 0): the extraction numbered the calls on
  // the row communicator; location 1's Allreduce is the process's first, location 0's free is the second.
  Recorded s;
  Action first = coll(kRow);
  first.seq = 0;
  Action second = coll(kRow);
  second.seq = 1;
  std::vector<LamportLocation> locs;
  locs.push_back({0, std::make_unique<VectorSource>(std::vector<Op>{op(6, {second})})});
  locs.push_back({0, std::make_unique<VectorSource>(std::vector<Op>{op(3, {first})})});
  locs.push_back({1, std::make_unique<VectorSource>(std::vector<Op>{op(3, {coll(kRow)}), op(6, {coll(kRow)})})});
  const CommSize size = [](std::uint32_t) -> std::uint32_t { return 2; };
  const ActionFeature feature = [](std::int32_t, const Op&, const Action&) { return std::uint64_t{1}; };
  const LamportResult r = run_lamport(std::move(locs), size, feature, s);
  EXPECT_EQ(r.events, 4u);
  EXPECT_EQ(s.rows[1][0].ticks[0], s.rows[2][0].ticks[0]);
  EXPECT_EQ(s.rows[0][0].ticks[0], s.rows[2][1].ticks[0]);
}

TEST(Lamport, UnmatchedReceiveIsAnErrorNamingRankAndCall) {
  Recorded s;
  try {
    run({{op(1, {send(1)})}, {op(2, {recv(0)}), op(2, {recv(0, 9)})}}, s);
    FAIL() << "expected TraceError";
  } catch (const TraceError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("rank 1, MPI call 1"), std::string::npos) << what;
    EXPECT_NE(what.find("tag 9"), std::string::npos) << what;
    EXPECT_NE(what.find("--partial"), std::string::npos) << what;
  }
}

TEST(Lamport, PartialTracesContinueAndReport) {
  // A killed run: rank 1's last receive never got its send, and rank 0 never reached the final collective.
  Recorded s;
  const LamportResult r =
      run({{op(1, {send(1)})}, {op(2, {recv(0)}), op(2, {recv(0, 9)}), op(3, {coll()})}}, s, LamportOptions{true});
  check_invariants(s);
  EXPECT_EQ(r.unmatched_receives.size(), 1u);
  EXPECT_EQ(r.incomplete_collectives.size(), 1u);
  EXPECT_EQ(s.rows[1].size(), 3u);
}

TEST(Lamport, UnreceivedSendsAreCounted) {
  Recorded s;
  const LamportResult r = run({{op(1, {send(1)}), op(1, {send(1, 4)})}, {op(2, {recv(0)})}}, s);
  EXPECT_EQ(r.unmatched_sends, 1u);
  ASSERT_EQ(r.unmatched_send_examples.size(), 1u);
  EXPECT_NE(r.unmatched_send_examples[0].description.find("tag 4"), std::string::npos);
}

TEST(Lamport, SymbolsRepeatWithTheProgram) {
  // Ten identical iterations of a two-rank exchange give a periodic symbol sequence.
  Recorded s;
  std::vector<Op> a;
  std::vector<Op> b;
  for (int i = 0; i < 10; ++i) {
    a.push_back(op(1, {send(1)}));
    a.push_back(op(2, {recv(1)}));
    b.push_back(op(2, {recv(0)}));
    b.push_back(op(1, {send(0)}));
  }
  run({a, b}, s);
  ASSERT_EQ(s.symbols.size(), 40u);
  for (std::size_t t = 4; t < s.symbols.size(); ++t) EXPECT_EQ(s.symbols[t], s.symbols[t - 4]) << t;
  EXPECT_NE(s.symbols[0], s.symbols[1]);
}

TEST(Lamport, MemoryFollowsMessagesInFlightNotTraceLength) {
  // 100000 iterations of a ring: messages in flight and open ticks stay small.
  constexpr int kIters = 100000;
  std::vector<std::vector<Op>> ring(4);
  for (std::int32_t r = 0; r < 4; ++r) {
    for (int i = 0; i < kIters; ++i)
      ring[static_cast<std::size_t>(r)].push_back(op(7, {send((r + 1) % 4), recv((r + 3) % 4)}));
  }
  struct Counting : LamportSink {
    std::uint64_t ops = 0;
    std::uint64_t ticks = 0;
    void on_op(std::size_t, std::uint64_t, const Op&, std::uint64_t, std::span<const std::uint64_t>) override { ++ops; }
    void on_tick(std::uint64_t, std::uint32_t, std::uint64_t) override { ++ticks; }
  } sink;
  std::vector<LamportLocation> locs;
  for (std::int32_t r = 0; r < 4; ++r) {
    locs.push_back({r, std::make_unique<VectorSource>(std::move(ring[static_cast<std::size_t>(r)]))});
  }
  const CommSize size = [](std::uint32_t) -> std::uint32_t { return 4; };
  const ActionFeature feature = [](std::int32_t, const Op&, const Action&) { return std::uint64_t{1}; };
  const LamportResult r = run_lamport(std::move(locs), size, feature, sink);
  EXPECT_EQ(sink.ops, 4u * kIters);
  EXPECT_EQ(r.messages, 4u * kIters);
  EXPECT_LE(r.max_in_flight, 4u * 1024);  // bounded by the scheduling quantum, not by kIters
  EXPECT_LE(r.max_open_ticks, 4096u);
}

}  // namespace
}  // namespace p3s::analyzer
