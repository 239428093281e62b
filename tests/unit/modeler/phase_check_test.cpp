// SPDX-License-Identifier: BSD-3-Clause
// The check of a predicted phase on phases written by hand: each rule fails on a phase that breaks it, with the rank
// and call named, a repair makes each consistent, and a consistent phase passes.
#include "p3s/modeler/phase_check.hpp"

#include <gtest/gtest.h>

#include <map>

#include "p3s/error.hpp"

namespace p3s::modeler {
namespace {

const CommModel kWorld = [] {
  CommModel c;
  c.created_by = mpi::Function::MPI_Init;
  return c;
}();
const CommModel kPairs = [] {  // blocks of 2 ranks
  CommModel c;
  c.kind = CommModel::Kind::Block;
  c.param = ExactLaw::constant(Rational::make(2));
  c.created_by = mpi::Function::MPI_Comm_split;
  return c;
}();

/// One instance of a phase, written call by call.
class Phase {
 public:
  explicit Phase(std::int64_t n) : ranks_(static_cast<std::size_t>(n)) {
    for (std::size_t r = 0; r < ranks_.size(); ++r) ranks_[r].rank = static_cast<std::int64_t>(r);
  }

  /// Appends a call to rank r; returns its index.
  std::int32_t call(std::int64_t r, mpi::Function f, std::vector<PredictedAction> actions = {}) {
    PredictedCall c;
    c.function = f;
    c.call = std::string(mpi::name(f));
    c.actions = std::move(actions);
    c.burst_ns = 100;
    auto& calls = ranks_[static_cast<std::size_t>(r)].calls;
    calls.push_back(std::move(c));
    return static_cast<std::int32_t>(calls.size() - 1);
  }

  PhaseConsistency check() const {
    PhaseChecker checker(7, static_cast<std::int64_t>(ranks_.size()));
    for (const PredictedRank& r : ranks_) checker.add(r);
    return checker.finish();
  }

  /// The phase as a repair writes it, checked again.
  PhaseConsistency check_repaired(const PhaseConsistency& verdict) const {
    PhaseChecker checker(7, static_cast<std::int64_t>(ranks_.size()));
    for (PredictedRank r : ranks_) {
      verdict.repair(r);
      checker.add(r);
    }
    return checker.finish();
  }

  std::vector<PredictedRank>& ranks() { return ranks_; }

 private:
  std::vector<PredictedRank> ranks_;
};

PredictedAction message(mpi::ActionKind kind, std::int64_t peer, std::uint32_t tag = 1, double bytes = 64,
                        const CommModel* comm = &kWorld) {
  PredictedAction a;
  a.kind = kind;
  a.peer = peer;
  a.tag = tag;
  a.bytes = bytes;
  a.comm = comm;
  return a;
}

PredictedAction send(std::int64_t peer, std::uint32_t tag = 1, double bytes = 64, const CommModel* comm = &kWorld) {
  return message(mpi::ActionKind::Send, peer, tag, bytes, comm);
}
PredictedAction recv(std::int64_t peer, std::uint32_t tag = 1, double bytes = 64, const CommModel* comm = &kWorld) {
  return message(mpi::ActionKind::Recv, peer, tag, bytes, comm);
}
PredictedAction post(std::int64_t peer, std::uint32_t tag = 1, double bytes = 64, const CommModel* comm = &kWorld) {
  return message(mpi::ActionKind::IrecvPost, peer, tag, bytes, comm);
}
PredictedAction done_recv(std::int32_t started, std::int64_t peer, std::uint32_t tag = 1, double bytes = 64) {
  PredictedAction a = recv(peer, tag, bytes);
  a.started = started;
  return a;
}
PredictedAction done_send(std::int32_t started) {
  PredictedAction a;
  a.kind = mpi::ActionKind::IsendComplete;
  a.comm = &kWorld;
  a.started = started;
  return a;
}
PredictedAction coll(mpi::Collective op, double block = 8, std::int64_t root = -1, const CommModel* comm = &kWorld) {
  PredictedAction a;
  a.kind = mpi::ActionKind::Collective;
  a.collective = op;
  a.block = block;
  a.root = root;
  a.comm = comm;
  return a;
}

/// A ring exchange on n ranks: two posted receives, two sends, one MPI_Waitall; then an Allreduce on the world and
/// a Bcast on pairs of ranks, and a Sendrecv round the ring.
Phase ring(std::int64_t n) {
  Phase p(n);
  for (std::int64_t r = 0; r < n; ++r) {
    const std::int64_t left = (r + n - 1) % n, right = (r + 1) % n;
    p.call(r, mpi::Function::MPI_Irecv, {post(left, 1)});
    p.call(r, mpi::Function::MPI_Irecv, {post(right, 2)});
    p.call(r, mpi::Function::MPI_Isend, {send(right, 1)});
    p.call(r, mpi::Function::MPI_Isend, {send(left, 2)});
    p.call(r, mpi::Function::MPI_Waitall, {done_recv(0, left, 1), done_recv(1, right, 2), done_send(2), done_send(3)});
    p.call(r, mpi::Function::MPI_Allreduce, {coll(mpi::Collective::Allreduce)});
    p.call(r, mpi::Function::MPI_Bcast, {coll(mpi::Collective::Bcast, 16, r - r % 2, &kPairs)});
    p.call(r, mpi::Function::MPI_Sendrecv, {send(right, 3, 1e6), recv(left, 3, 1e6)});
  }
  return p;
}

/// Checks that the phase has exactly these flaws, that the first finding names `rank` and `call` and holds `words`,
/// and that its repair leaves it consistent.
void expect_flaws(const Phase& p, const std::map<Flaw, std::uint64_t>& flaws, std::int64_t rank, std::int32_t call,
                  const std::string& words) {
  const PhaseConsistency c = p.check();
  for (std::size_t f = 0; f < kFlawKinds; ++f) {
    const auto it = flaws.find(static_cast<Flaw>(f));
    EXPECT_EQ(c.flaws[f], it == flaws.end() ? 0U : it->second)
        << flaw_name(static_cast<Flaw>(f)) << ": " << c.summary();
  }
  ASSERT_FALSE(c.first.empty());
  EXPECT_EQ(c.first.front().rank, rank) << c.first.front().what;
  EXPECT_EQ(c.first.front().call, call) << c.first.front().what;
  EXPECT_NE(c.first.front().what.find(words), std::string::npos) << c.first.front().what;
  const std::string line = c.refusal();
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_NE(line.find("phase 7 predicted at n = "), std::string::npos) << line;
  EXPECT_NE(line.find(c.first.front().what), std::string::npos) << line;
  EXPECT_NE(line.find("--strict"), std::string::npos) << line;
  EXPECT_TRUE(c.repairable);
  const PhaseConsistency again = p.check_repaired(c);
  EXPECT_TRUE(again.consistent()) << again.summary() << ": "
                                  << (again.first.empty() ? std::string() : again.first.front().what);
}

TEST(PhaseCheck, AConsistentPhasePasses) {
  for (const std::int64_t n : {2, 4, 6}) {
    const PhaseConsistency c = ring(n).check();
    EXPECT_TRUE(c.consistent()) << "n = " << n << ": " << c.summary() << " "
                                << (c.first.empty() ? std::string() : c.first.front().what);
    EXPECT_TRUE(c.fixes.empty());
    EXPECT_EQ(c.repair_note(), "");
  }
}

TEST(PhaseCheck, ASendWithoutItsReceiveFails) {
  Phase p = ring(4);
  p.call(0, mpi::Function::MPI_Send, {send(2, 5)});
  expect_flaws(p, {{Flaw::UnmatchedSend, 1}}, 0, 8, "sends rank 2 a message (tag 5");
}

TEST(PhaseCheck, AReceiveWithoutItsSendFails) {
  Phase p = ring(4);
  p.call(3, mpi::Function::MPI_Recv, {recv(1, 5)});
  expect_flaws(p, {{Flaw::UnmatchedReceive, 1}}, 3, 8, "waits for a message from rank 1 (tag 5");
}

TEST(PhaseCheck, AMessageLargerThanItsReceiveFails) {
  Phase p = ring(4);
  p.ranks()[2].calls[0].actions[0].bytes = 8;  // rank 2's receive from rank 1, which sends 64 bytes: fits in the room
  EXPECT_TRUE(p.check().consistent());
  p.ranks()[1].calls[2].actions[0].bytes = 200000;  // now it does not
  expect_flaws(p, {{Flaw::Truncated, 1}}, 2, 0, "the message it receives is 200000 bytes");
  // The repair makes the receive, and its completion, take the message.
  const PhaseConsistency c = p.check();
  PredictedRank r2 = p.ranks()[2];
  c.repair(r2);
  EXPECT_EQ(r2.calls[0].actions[0].bytes, 200000);
  EXPECT_EQ(r2.calls[4].actions[0].bytes, 200000);
}

TEST(PhaseCheck, MismatchedTagsOrCommunicatorsFail) {
  Phase tags = ring(4);
  tags.ranks()[1].calls[2].actions[0].tag = 9;  // rank 1 sends to 2 with tag 9; 2 waits for tag 1
  expect_flaws(tags, {{Flaw::UnmatchedSend, 1}, {Flaw::UnmatchedReceive, 1}}, 2, 0, "from rank 1 (tag 1");

  // The same ranks on another communicator: pairs of ranks hold 2 and 3, but a message on them is not one on the world.
  Phase comms = ring(4);
  comms.ranks()[3].calls[3].actions[0].comm = &kPairs;  // rank 3's send to 2, tag 2, on its pair
  expect_flaws(comms, {{Flaw::UnmatchedSend, 1}, {Flaw::UnmatchedReceive, 1}}, 2, 1, "on world from MPI_Init");
}

TEST(PhaseCheck, APeerOutsideItsCommunicatorFails) {
  Phase p = ring(4);
  p.call(0, mpi::Function::MPI_Send, {send(2, 6, 8, &kPairs)});  // rank 2 is not in rank 0's pair
  expect_flaws(p, {{Flaw::PeerOutside, 1}}, 0, 8, "not in its communicator (blocks of 2");
  Phase beyond = ring(4);
  beyond.call(1, mpi::Function::MPI_Send, {send(4, 6)});
  expect_flaws(beyond, {{Flaw::PeerOutside, 1}}, 1, 8, "names rank 4, not one of the 4 ranks");
}

TEST(PhaseCheck, ACollectiveWithAMissingMemberFails) {
  Phase p = ring(4);
  for (std::int64_t r = 0; r < 3; ++r) p.call(r, mpi::Function::MPI_Barrier, {coll(mpi::Collective::Barrier, 0)});
  expect_flaws(p, {{Flaw::CollectiveMissing, 1}}, 0, 8, "has no partner on rank 3");
  // A missing member of one pair only: the other pair agrees.
  Phase pair = ring(4);
  pair.call(2, mpi::Function::MPI_Bcast, {coll(mpi::Collective::Bcast, 4, 2, &kPairs)});
  expect_flaws(pair, {{Flaw::CollectiveMissing, 1}}, 2, 8, "has no partner on rank 3");
}

TEST(PhaseCheck, CollectivesThatDifferBetweenMembersFail) {
  Phase root = ring(4);
  root.ranks()[3].calls[6].actions[0].root = 3;  // rank 3 broadcasts from itself, rank 2 from 2
  expect_flaws(root, {{Flaw::CollectiveDiffers, 1}}, 3, 6, "BCAST, root 3");
  Phase order = ring(4);
  for (std::int64_t r = 0; r < 4; ++r) {
    const mpi::Collective first = r == 1 ? mpi::Collective::Barrier : mpi::Collective::Allreduce;
    const mpi::Collective second = r == 1 ? mpi::Collective::Allreduce : mpi::Collective::Barrier;
    order.call(r, mpi::Function::MPI_Allreduce, {coll(first)});
    order.call(r, mpi::Function::MPI_Allreduce, {coll(second)});
  }
  expect_flaws(order, {{Flaw::CollectiveDiffers, 1}}, 1, 8, "as its 2nd collective on world");
  Phase size = ring(4);
  size.ranks()[0].calls[5].actions[0].block = 16;
  expect_flaws(size, {{Flaw::CollectiveDiffers, 1}}, 0, 5, "ALLREDUCE, 16 bytes as its 1st collective");
}

TEST(PhaseCheck, ARequestNeverCompletedFails) {
  Phase p = ring(4);
  p.ranks()[1].calls[4].actions.pop_back();  // the Waitall no longer completes the Isend of call 3
  expect_flaws(p, {{Flaw::NotCompleted, 1}}, 1, 3, "starts a request (a send to rank 0)");
  // The repair completes it with an MPI_Waitall at the end, which takes over the tail.
  const PhaseConsistency c = p.check();
  PredictedRank r1 = p.ranks()[1];
  r1.tail_ns = 500;
  c.repair(r1);
  ASSERT_EQ(r1.calls.size(), 9U);
  EXPECT_EQ(r1.calls.back().function, mpi::Function::MPI_Waitall);
  ASSERT_EQ(r1.calls.back().actions.size(), 1U);
  EXPECT_EQ(r1.calls.back().actions[0].started, 3);
  EXPECT_EQ(r1.calls.back().burst_ns, 500);
  EXPECT_EQ(r1.tail_ns, 0);
}

TEST(PhaseCheck, ACompletionOfNoRequestFails) {
  Phase p = ring(4);
  p.call(2, mpi::Function::MPI_Wait, {done_send(3)});  // call 3's one request was completed by the Waitall
  expect_flaws(p, {{Flaw::CompletesNothing, 1}}, 2, 8, "which has no request left");
}

TEST(PhaseCheck, WildcardsTakeWhatIsLeftAsMPIMatches) {
  // Every rank sends rank 0 one message; rank 0 receives them from any source, with any tag for the last.
  Phase p(4);
  for (std::int64_t r = 1; r < 4; ++r) p.call(r, mpi::Function::MPI_Send, {send(0, static_cast<std::uint32_t>(r))});
  p.call(0, mpi::Function::MPI_Recv, {recv(kAnySource, 2)});
  p.call(0, mpi::Function::MPI_Recv, {recv(kAnySource, 1)});
  p.call(0, mpi::Function::MPI_Recv, {recv(3, kAnyTag)});
  EXPECT_TRUE(p.check().consistent()) << p.check().summary();
  // One more wildcard has no message left, whatever the timing.
  p.call(0, mpi::Function::MPI_Recv, {recv(kAnySource, kAnyTag)});
  expect_flaws(p, {{Flaw::UnmatchedReceive, 1}}, 0, 3, "from any source (any tag");
}

TEST(PhaseCheck, AReceiveThatTakesItsMessagesTagIsMatchedInOrderAndSettled) {
  // A code whose tags name the direction (MG's axis and side): each rank sends tag 10 to the right and tag 20 to
  // the left. The model keeps one tag per receive slot (the more frequent), so its receives take their message's.
  Phase p(4);
  for (std::int64_t r = 0; r < 4; ++r) {
    const std::int64_t left = (r + 3) % 4, right = (r + 1) % 4;
    PredictedAction from_left = post(left, 10);
    PredictedAction from_right = post(right, 10, 128);  // the model's tag, which the message does not have
    from_left.tag_from_send = from_right.tag_from_send = true;
    p.call(r, mpi::Function::MPI_Irecv, {from_left});
    p.call(r, mpi::Function::MPI_Irecv, {from_right});
    p.call(r, mpi::Function::MPI_Send, {send(right, 10)});
    p.call(r, mpi::Function::MPI_Send, {send(left, 20, 128)});
    PredictedAction done_left = done_recv(0, left, 10), done_right = done_recv(1, right, 10, 128);
    done_left.tag_from_send = done_right.tag_from_send = true;
    p.call(r, mpi::Function::MPI_Waitall, {done_left, done_right});
  }
  const PhaseConsistency c = p.check();
  EXPECT_TRUE(c.consistent()) << c.summary();
  PredictedRank r0 = p.ranks()[0];
  c.settle(r0);
  EXPECT_EQ(r0.calls[0].actions[0].tag, 10U);
  EXPECT_EQ(r0.calls[1].actions[0].tag, 20U);  // posted, and where it completes: the message's tag
  EXPECT_EQ(r0.calls[4].actions[1].tag, 20U);
  EXPECT_EQ(r0.calls[4].actions[0].tag, 10U);

  // Without the flag the same phase is inconsistent (what the model's one tag gave before).
  for (PredictedRank& r : p.ranks()) {
    for (PredictedCall& call : r.calls) {
      for (PredictedAction& a : call.actions) a.tag_from_send = false;
    }
  }
  EXPECT_FALSE(p.check().consistent());
}

TEST(PhaseCheck, AReceiveThatTakesItsMessagesTagLeavesOtherTagsToTheirOwnReceives) {
  // Rank 1 sends rank 0 tag 5 then tag 6; rank 0 posts a receive for tag 6 first, then one that takes any: as MPI
  // matches them, the tag-6 receive takes the second message, the other the first.
  Phase p(2);
  p.call(1, mpi::Function::MPI_Send, {send(0, 5, 8)});
  p.call(1, mpi::Function::MPI_Send, {send(0, 6, 16)});
  p.call(0, mpi::Function::MPI_Recv, {recv(1, 6, 16)});
  PredictedAction any = recv(1, 6, 8);
  any.tag_from_send = true;
  p.call(0, mpi::Function::MPI_Recv, {any});
  const PhaseConsistency c = p.check();
  EXPECT_TRUE(c.consistent()) << c.summary();
  PredictedRank r0 = p.ranks()[0];
  c.settle(r0);
  EXPECT_EQ(r0.calls[0].actions[0].tag, 6U);
  EXPECT_EQ(r0.calls[1].actions[0].tag, 5U);
  // A third receive finds no message left on its channel.
  PredictedAction more = recv(1, 6, 8);
  more.tag_from_send = true;
  p.call(0, mpi::Function::MPI_Recv, {more});
  expect_flaws(p, {{Flaw::UnmatchedReceive, 1}}, 0, 2, "from rank 1");
}

TEST(PhaseCheck, AReceiveThatTakesItsMessagesTagLeavesTheOnesOfNamedTags) {
  // Rank 1 sends tag 6 then tag 5; rank 0 posts the receive of any tag before the one of tag 6: the code's own
  // receive had a tag, so MPI matched both: the named tag takes its message, the other the one left.
  Phase p(2);
  p.call(1, mpi::Function::MPI_Send, {send(0, 6, 16)});
  p.call(1, mpi::Function::MPI_Send, {send(0, 5, 8)});
  PredictedAction any = recv(1, 6, 8);
  any.tag_from_send = true;
  p.call(0, mpi::Function::MPI_Recv, {any});
  p.call(0, mpi::Function::MPI_Recv, {recv(1, 6, 16)});
  const PhaseConsistency c = p.check();
  EXPECT_TRUE(c.consistent()) << c.summary();
  PredictedRank r0 = p.ranks()[0];
  c.settle(r0);
  EXPECT_EQ(r0.calls[0].actions[0].tag, 5U);
}

TEST(PhaseCheck, ARepairCompletesAReceiveThatTakesItsMessagesTagWithThatTag) {
  // Rank 0 posts a receive of the model's tag 10 from rank 1, which sends tag 20; nothing completes the request.
  Phase p(2);
  PredictedAction posted = post(1, 10);
  posted.tag_from_send = true;
  p.call(0, mpi::Function::MPI_Irecv, {posted});
  p.call(1, mpi::Function::MPI_Send, {send(0, 20)});
  const PhaseConsistency c = p.check();
  ASSERT_FALSE(c.consistent());
  PredictedRank r0 = p.ranks()[0];
  c.repair(r0);
  EXPECT_EQ(r0.calls[0].actions[0].tag, 20U);
  ASSERT_EQ(r0.calls.size(), 2U);  // the MPI_Waitall the repair adds
  ASSERT_EQ(r0.calls[1].actions.size(), 1U);
  EXPECT_EQ(r0.calls[1].actions[0].tag, 20U);
  EXPECT_TRUE(p.check_repaired(c).consistent());
}

TEST(PhaseCheck, ProcNullMatchesNothing) {
  // A grid's boundary: sends and receives to MPI_PROC_NULL complete at once, and need no other end.
  Phase p(2);
  p.call(0, mpi::Function::MPI_Send, {send(kProcNull)});
  p.call(1, mpi::Function::MPI_Sendrecv, {send(kProcNull), recv(kProcNull)});
  p.call(1, mpi::Function::MPI_Irecv, {post(kProcNull)});
  p.call(1, mpi::Function::MPI_Wait, {done_recv(1, kProcNull)});
  EXPECT_TRUE(p.check().consistent()) << p.check().summary();
}

TEST(PhaseCheck, CallsThatWaitForEachOtherFail) {
  // Round a ring, every rank receives from its left before sending to its right: each waits for the next.
  Phase p(4);
  for (std::int64_t r = 0; r < 4; ++r) {
    p.call(r, mpi::Function::MPI_Recv, {recv((r + 3) % 4)});
    p.call(r, mpi::Function::MPI_Send, {send((r + 1) % 4)});
  }
  expect_flaws(p, {{Flaw::Blocked, 4}}, 0, 0, "waits for the message of rank 3's call 1 (MPI_Send)");

  // Sending first passes while MPI buffers the messages; one larger than that waits for its receive.
  Phase eager(4);
  for (std::int64_t r = 0; r < 4; ++r) {
    eager.call(r, mpi::Function::MPI_Send, {send((r + 1) % 4, 1, 1024)});
    eager.call(r, mpi::Function::MPI_Recv, {recv((r + 3) % 4, 1, 1024)});
  }
  EXPECT_TRUE(eager.check().consistent()) << eager.check().summary();
  for (PredictedRank& r : eager.ranks()) {
    r.calls[0].actions[0].bytes = 1e6;
    r.calls[1].actions[0].bytes = 1e6;
  }
  expect_flaws(eager, {{Flaw::Blocked, 4}}, 0, 0, "waits until the receive of rank 1's call 1 (MPI_Recv) is posted");

  // Collectives in another order on two communicators both ranks belong to.
  Phase colls(2);
  CommModel dup = kWorld;
  dup.created_by = mpi::Function::MPI_Comm_dup;
  colls.call(0, mpi::Function::MPI_Barrier, {coll(mpi::Collective::Barrier, 0, -1, &kWorld)});
  colls.call(0, mpi::Function::MPI_Barrier, {coll(mpi::Collective::Barrier, 0, -1, &dup)});
  colls.call(1, mpi::Function::MPI_Barrier, {coll(mpi::Collective::Barrier, 0, -1, &dup)});
  colls.call(1, mpi::Function::MPI_Barrier, {coll(mpi::Collective::Barrier, 0, -1, &kWorld)});
  expect_flaws(colls, {{Flaw::Blocked, 2}}, 0, 0, "waits in BARRIER on world from MPI_Init for rank 1");
}

TEST(PhaseCheck, RanksAreCheckedOnceEach) {
  PhaseChecker checker(7, 2);
  PredictedRank r;
  r.rank = 0;
  checker.add(r);
  EXPECT_THROW(checker.add(r), TraceError);
  r.rank = 2;
  EXPECT_THROW(checker.add(r), TraceError);
  EXPECT_THROW((void)checker.finish(), TraceError);
}

TEST(PhaseCheck, TheReplaySharesTheRoomOfAReceive) {
  EXPECT_EQ(message_count(99.6), 100);
  EXPECT_EQ(message_count(-3), 0);
  EXPECT_EQ(receive_room(100), 100 + 65536);
  EXPECT_EQ(receive_room(1e6), 2000000);
  EXPECT_EQ(path_of(mpi::Function::MPI_Waitany), CallPath::Completion);
  EXPECT_EQ(path_of(mpi::Function::MPI_Comm_split), CallPath::Collective);
  EXPECT_TRUE(starts_requests(mpi::Function::MPI_Issend));
  EXPECT_FALSE(starts_requests(mpi::Function::MPI_Sendrecv));
}

}  // namespace
}  // namespace p3s::modeler
