// SPDX-License-Identifier: BSD-3-Clause
// Kinds of one phase that are one kind with some of its messages empty (united_kinds): an MPI code makes no call for
// a message it has nothing to put in, so which of a step's messages a rank makes is the run's data.
#include <gtest/gtest.h>

#include <vector>

#include "p3s/analyzer/kind_union.hpp"

namespace p3s::analyzer {
namespace {

Stat stat(double v) {
  Stat s;
  s.add(v);
  s.finish();
  return s;
}

SigEvent call(mpi::Function f, std::vector<SigAction> actions, double burst) {
  SigEvent e;
  e.function = f;
  e.call = std::string(mpi::name(f));
  e.actions = std::move(actions);
  e.burst_ns = stat(burst);
  e.burst_work = stat(burst);
  e.call_ns = stat(10);
  e.calls = stat(1);
  return e;
}

SigAction message(mpi::ActionKind kind, std::int32_t peer, double bytes, std::int32_t started = -1) {
  SigAction a;
  a.kind = kind;
  a.peer = peer;
  a.bytes = a.bytes_min = a.bytes_max = bytes;
  a.request = kind != mpi::ActionKind::Send || started >= 0;
  a.started = started;
  return a;
}

SigAction reduction() {
  SigAction a;
  a.kind = mpi::ActionKind::Collective;
  a.collective = mpi::Collective::Allreduce;
  a.bytes = 8;
  return a;
}

/// A step of a rank: receive from `left`, send to `right` (where `send` is non-zero), wait, then an allreduce.
SigRank step(double send, double burst) {
  SigRank r;
  r.rank = 1;
  SigAction post = message(mpi::ActionKind::IrecvPost, 0, 300);
  post.request = true;
  r.events.push_back(call(mpi::Function::MPI_Irecv, {post}, burst));
  std::vector<SigAction> done{message(mpi::ActionKind::Recv, 0, 300, 0)};
  if (send > 0) {
    SigAction s = message(mpi::ActionKind::Send, 2, send);
    s.request = true;
    r.events.push_back(call(mpi::Function::MPI_Isend, {s}, burst));
    SigAction sent;
    sent.kind = mpi::ActionKind::IsendComplete;
    sent.request = true;
    sent.started = 1;
    done.insert(done.begin(), sent);
  }
  r.events.push_back(call(mpi::Function::MPI_Waitall, done, burst));
  r.events.push_back(call(mpi::Function::MPI_Allreduce, {reduction()}, burst));
  return r;
}

TEST(KindUnion, AStepThatLeavesOutAnEmptyMessageIsTheStepWithThatMessageOfZeroBytes) {
  // 30 steps send 1000 bytes to the right, 10 have nothing to send there and make no Isend (and no completion of
  // one): one kind of 40 steps whose send is 750 bytes on average, the Waitall completing both requests.
  const SigRank whole = step(1000, 100);
  const SigRank without = step(0, 200);
  const auto m = merge_rank_calls(without, 10, whole, 30);
  ASSERT_TRUE(m.has_value());
  ASSERT_EQ(m->events.size(), 4u);
  EXPECT_EQ(m->events[1].function, mpi::Function::MPI_Isend);
  EXPECT_DOUBLE_EQ(m->events[1].actions[0].bytes, 750);
  EXPECT_DOUBLE_EQ(m->events[1].actions[0].bytes_min, 0);
  EXPECT_DOUBLE_EQ(m->events[1].actions[0].bytes_max, 1000);
  const SigEvent& wait = m->events[2];
  ASSERT_EQ(wait.actions.size(), 2u);  // in the order of the call that completes more
  EXPECT_EQ(wait.actions[0].kind, mpi::ActionKind::IsendComplete);
  EXPECT_EQ(wait.actions[0].started, 1);  // the merged list's Isend
  EXPECT_EQ(wait.actions[1].started, 0);
  EXPECT_DOUBLE_EQ(wait.actions[1].bytes, 300);
  // Every statistic is the mean over the 40 instances; a burst before a call an instance did not make is 0 there.
  EXPECT_DOUBLE_EQ(m->events[0].burst_ns.mean, 125);
  EXPECT_DOUBLE_EQ(m->events[1].burst_ns.mean, 75);
  EXPECT_EQ(m->events[1].burst_ns.n, 40u);
  // Either way round, the same union.
  const auto n = merge_rank_calls(whole, 30, without, 10);
  ASSERT_TRUE(n.has_value());
  ASSERT_EQ(n->events.size(), 4u);
  EXPECT_DOUBLE_EQ(n->events[1].actions[0].bytes, 750);
  EXPECT_EQ(n->events[2].actions.size(), 2u);
}

/// A rank that sends to `peer` alone and waits for that send.
SigRank sends_to(std::int32_t peer) {
  SigRank r;
  SigAction s = message(mpi::ActionKind::Send, peer, 100);
  s.request = true;
  r.events.push_back(call(mpi::Function::MPI_Isend, {s}, 10));
  SigAction sent;
  sent.kind = mpi::ActionKind::IsendComplete;
  sent.request = true;
  sent.started = 0;
  r.events.push_back(call(mpi::Function::MPI_Waitall, {sent}, 10));
  return r;
}

TEST(KindUnion, AWaitCompletesEachKindsOwnSendsInTheUnion) {
  // One kind sends left only, the other right only: one Waitall completing both sends, each completion naming its
  // own Isend (a send's completion names no peer: only its start tells them apart).
  const auto m = merge_rank_calls(sends_to(0), 10, sends_to(2), 10);
  ASSERT_TRUE(m.has_value());
  ASSERT_EQ(m->events.size(), 3u);
  const SigEvent& wait = m->events[2];
  EXPECT_EQ(wait.function, mpi::Function::MPI_Waitall);
  ASSERT_EQ(wait.actions.size(), 2u);
  EXPECT_NE(wait.actions[0].started, wait.actions[1].started);
  for (const SigAction& a : wait.actions) {
    ASSERT_GE(a.started, 0);
    EXPECT_EQ(m->events[static_cast<std::size_t>(a.started)].function, mpi::Function::MPI_Isend);
  }
}

TEST(KindUnion, KindsThatDifferByACollectiveOrAnotherCallAreNotOne) {
  const SigRank whole = step(1000, 100);
  SigRank more = whole;
  more.events.push_back(call(mpi::Function::MPI_Allreduce, {reduction()}, 100));  // a check of its own
  EXPECT_FALSE(merge_rank_calls(whole, 30, more, 10).has_value());
  SigRank probe = whole;
  probe.events.insert(probe.events.begin(), call(mpi::Function::MPI_Iprobe, {}, 100));
  EXPECT_FALSE(merge_rank_calls(whole, 30, probe, 10).has_value());
}

TEST(KindUnion, TwoKindsOfAPhaseUniteRankByRank) {
  SigPhase a;
  a.id = 4;
  a.weight = 30;
  a.time_ns = stat(1000);
  a.ranks = {step(1000, 100)};
  SigPhase b = a;
  b.id = 9;
  b.weight = 10;
  b.time_ns = stat(2000);
  b.ranks = {step(0, 200)};
  const auto u = united_kinds(a, b);
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->id, 4u);
  EXPECT_EQ(u->weight, 40u);
  EXPECT_DOUBLE_EQ(u->time_ns.mean, 1250);
  ASSERT_EQ(u->ranks.size(), 1u);
  EXPECT_EQ(u->ranks[0].events.size(), 4u);
  b.ranks[0].events.pop_back();  // no allreduce in it: another program point
  EXPECT_FALSE(united_kinds(a, b).has_value());
}

}  // namespace
}  // namespace p3s::analyzer
