// SPDX-License-Identifier: BSD-3-Clause
// The MPI vocabulary generated from the wrapper spec: every function found by its name and back, what the spec
// says of sends and completions, and the stable names of every enumeration.
#include "p3s/mpi/vocabulary.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace p3s::mpi {
namespace {

TEST(Vocabulary, EveryFunctionIsFoundByItsNameAndOnlyThere) {
  std::set<std::string> names;
  for (std::uint16_t i = 0; i < kFunctionCount; ++i) {
    const auto f = static_cast<Function>(i);
    const std::string_view n = name(f);
    ASSERT_FALSE(n.empty()) << i;
    EXPECT_EQ(function_named(n), f) << n;
    EXPECT_TRUE(names.insert(std::string(n)).second) << n << " twice";
    EXPECT_NE(kind(f), CallKind::Other) << n;
  }
  EXPECT_EQ(function_named("MPI_Comm_rank"), Function::Other);  // recorded by other tracers, not wrapped
  EXPECT_EQ(function_named(""), Function::Other);
  EXPECT_EQ(function_named("mpi_send"), Function::Other);  // names are exact
  EXPECT_EQ(kind(Function::Other), CallKind::Other);
  EXPECT_TRUE(name(Function::Other).empty());
}

TEST(Vocabulary, WhatTheSpecSaysOfACall) {
  EXPECT_EQ(kind(Function::MPI_Issend), CallKind::Isend);
  EXPECT_EQ(info(Function::MPI_Issend).mode, SendMode::Synchronous);
  EXPECT_EQ(info(Function::MPI_Bsend_init).mode, SendMode::Buffered);
  EXPECT_EQ(info(Function::MPI_Send).mode, SendMode::Standard);
  EXPECT_EQ(info(Function::MPI_Testany).completes, Completes::Any);
  EXPECT_TRUE(info(Function::MPI_Testany).test);
  EXPECT_EQ(info(Function::MPI_Waitall).completes, Completes::All);
  EXPECT_FALSE(info(Function::MPI_Waitall).test);
  EXPECT_EQ(info(Function::MPI_Iallreduce).collective, Collective::Allreduce);
  EXPECT_EQ(kind(Function::MPI_Iallreduce), CallKind::NbCollective);
  EXPECT_EQ(info(Function::MPI_Send).collective, Collective::None);
  EXPECT_EQ(kind(Function::MPI_Cart_create), CallKind::CommCreate);
  EXPECT_EQ(kind(Function::MPI_Sendrecv_replace), CallKind::Sendrecv);
  EXPECT_TRUE(is_point_to_point(kind(Function::MPI_Irecv)));
  EXPECT_FALSE(is_point_to_point(kind(Function::MPI_Waitall)));
  EXPECT_TRUE(is_collective(kind(Function::MPI_Ibcast)));
  EXPECT_TRUE(is_rooted(Collective::Scatterv));
  EXPECT_FALSE(is_rooted(Collective::Allgather));
  EXPECT_EQ(short_name(Function::MPI_Isend), "Isend");
  EXPECT_EQ(short_name(Function::Other, "MPI_Comm_rank"), "Comm_rank");
  EXPECT_EQ(short_name(Function::Other, "user_region"), "user_region");
}

TEST(Vocabulary, StableNamesReadBack) {
  for (int k = 0; k <= static_cast<int>(CallKind::Other); ++k) {
    const auto v = static_cast<CallKind>(k);
    EXPECT_EQ(call_kind_named(name(v)), v) << name(v);
  }
  for (int k = 0; k <= static_cast<int>(ActionKind::Cancelled); ++k) {
    const auto v = static_cast<ActionKind>(k);
    EXPECT_EQ(action_kind_named(name(v)), v) << name(v);
  }
  for (int k = 0; k <= static_cast<int>(Collective::DestroyHandleAndDeallocate); ++k) {
    const auto v = static_cast<Collective>(k);
    EXPECT_EQ(collective_named(name(v)), v) << name(v);
  }
  EXPECT_EQ(collective_named("UNKNOWN"), Collective::Unknown);
  EXPECT_EQ(collective_named("NONE"), Collective::None);
  // The names files have always used.
  EXPECT_EQ(name(ActionKind::IrecvPost), "irecv");
  EXPECT_EQ(name(ActionKind::Collective), "coll");
  EXPECT_EQ(name(Collective::ReduceScatterBlock), "REDUCE_SCATTER_BLOCK");
  EXPECT_FALSE(action_kind_named("Send").has_value());
  EXPECT_FALSE(collective_named("allreduce").has_value());
}

}  // namespace
}  // namespace p3s::mpi
