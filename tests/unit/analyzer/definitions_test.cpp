// SPDX-License-Identifier: BSD-3-Clause
// Clock conversion and communicator rank resolution on hand-made definitions.
#include "p3s/analyzer/definitions.hpp"

#include "p3s/analyzer/event.hpp"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace p3s::analyzer {
namespace {

TEST(Clock, NanosecondsSinceTheTraceStart) {
  const ClockProperties ns{1000000000, 100, 50};
  EXPECT_EQ(ns.to_ns(150), 50u);
  EXPECT_EQ(ns.to_ns(100), 0u);
  EXPECT_EQ(ns.to_ns(20), 0u);  // before the start
  EXPECT_EQ(ns.length_ns(), 50u);
  // A 2.6 GHz TSC: one hour of ticks must not overflow on the way to nanoseconds.
  const ClockProperties tsc{2596199457, 1000, 2596199457ull * 3600};
  EXPECT_EQ(tsc.to_ns(1000 + 2596199457ull * 3600), 3600000000000u);
  EXPECT_EQ(tsc.to_ns(1000 + 2596199457ull / 2), 499999999u);
  EXPECT_EQ(tsc.length_ns(), 3600000000000u);
}

Communicator comm(std::uint32_t id, CommKind kind, std::vector<std::int32_t> ranks = {},
                  std::vector<std::int32_t> remote = {}) {
  Communicator c;
  c.id = id;
  c.kind = kind;
  c.world_ranks = std::move(ranks);
  c.remote_world_ranks = std::move(remote);
  return c;
}

TEST(Ranks, GroupSelfInterAndUnresolved) {
  TraceDefinitions d;
  d.comms = {comm(0, CommKind::Group, {5, 1, 3}), comm(1, CommKind::Self), comm(2, CommKind::Inter, {0, 1}, {2, 3, 4}),
             comm(3, CommKind::Unresolved)};
  EXPECT_EQ(d.world_rank(0, 0, 7), 5);
  EXPECT_EQ(d.world_rank(0, 2, 7), 3);
  EXPECT_EQ(d.world_rank(0, 3, 7), kUnresolvedRank);
  EXPECT_EQ(d.world_rank(1, 0, 7), 7);
  EXPECT_EQ(d.world_rank(1, 0, kUnresolvedRank), kUnresolvedRank);
  EXPECT_EQ(d.world_rank(2, 2, 1), 4);  // caller in group A: peers are in group B
  EXPECT_EQ(d.world_rank(2, 1, 4), 1);  // caller in group B: peers are in group A
  EXPECT_EQ(d.world_rank(2, 0, 9), kUnresolvedRank);
  EXPECT_EQ(d.world_rank(3, 0, 0), kUnresolvedRank);
  EXPECT_EQ(d.world_rank(4, 0, 0), kUnresolvedRank);
  EXPECT_EQ(d.comm(4), nullptr);
}

TEST(Names, KindsAndOperations) {
  EXPECT_EQ(event_kind_name(EventKind::MpiIsendComplete), "MPI_ISEND_COMPLETE");
  EXPECT_EQ(mpi::name(mpi::Collective::CreateHandle), "CREATE_HANDLE");
  EXPECT_EQ(mpi::name(mpi::Collective::Unknown), "UNKNOWN");
  EXPECT_TRUE(is_mpi_record(EventKind::CollectiveEnd));
  EXPECT_FALSE(is_mpi_record(EventKind::Leave));
  EXPECT_EQ(paradigm_name(Paradigm::Mpi), "MPI");
}

}  // namespace
}  // namespace p3s::analyzer
