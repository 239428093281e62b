// SPDX-License-Identifier: BSD-3-Clause
// Requests sharing one handle value (Open MPI's shared "empty" request, or a freed handle handed out again to
// another thread) complete one by one: each thread's oldest first.
#include "request_table.hpp"

#include <gtest/gtest.h>

namespace p3s::interpose {
namespace {

RequestInfo request(std::uint64_t id) {
  RequestInfo r;
  r.id = id;
  return r;
}

/// Finds and forgets the request thread `owner` completes with this handle; its id, or 0 if none.
std::uint64_t complete(RequestTable& t, std::uint64_t handle, std::uint32_t owner) {
  RequestInfo* found = t.find(handle, owner);
  if (found == nullptr) return 0;
  const std::uint64_t id = found->id;
  t.remove(handle, found);
  return id;
}

TEST(RequestTable, DistinctHandles) {
  RequestTable t;
  ASSERT_TRUE(t.add(0x1000, 0, request(1)));
  ASSERT_TRUE(t.add(0x2000, 0, request(2)));
  EXPECT_EQ(t.find(0x1000, 0)->id, 1u);
  EXPECT_EQ(t.find(0x2000, 0)->id, 2u);
  EXPECT_EQ(complete(t, 0x1000, 0), 1u);
  EXPECT_EQ(t.find(0x1000, 0), nullptr);
  EXPECT_EQ(t.size(), 1u);
}

TEST(RequestTable, SharedHandleIsFifo) {
  // Two eager Isends that completed at once both return the same handle: neither completion may be lost.
  RequestTable t;
  ASSERT_TRUE(t.add(0x5000, 0, request(1)));
  ASSERT_TRUE(t.add(0x5000, 0, request(2)));
  ASSERT_TRUE(t.add(0x5000, 0, request(3)));
  EXPECT_EQ(t.size(), 3u);
  EXPECT_EQ(complete(t, 0x5000, 0), 1u);
  ASSERT_TRUE(t.add(0x5000, 0, request(4)));
  EXPECT_EQ(complete(t, 0x5000, 0), 2u);
  EXPECT_EQ(complete(t, 0x5000, 0), 3u);
  EXPECT_EQ(complete(t, 0x5000, 0), 4u);
  EXPECT_EQ(t.find(0x5000, 0), nullptr);
  EXPECT_EQ(t.size(), 0u);
}

TEST(RequestTable, AHandleFreedAndReusedByAnotherThreadCompletesForEach) {
  // Thread 1's receive completes inside MPI and its handle goes to thread 2's next receive, which completes
  // before thread 1 looks its handle up: each must still get its own request (its communicator, its peer).
  RequestTable t;
  ASSERT_TRUE(t.add(0x7000, 1, request(10)));
  ASSERT_TRUE(t.add(0x7000, 2, request(20)));
  EXPECT_EQ(complete(t, 0x7000, 2), 20u);
  EXPECT_EQ(complete(t, 0x7000, 1), 10u);
  EXPECT_EQ(t.size(), 0u);
}

TEST(RequestTable, ThreadsKeepTheirOwnFifoOnOneHandle) {
  RequestTable t;
  ASSERT_TRUE(t.add(0x9000, 1, request(1)));
  ASSERT_TRUE(t.add(0x9000, 2, request(2)));
  ASSERT_TRUE(t.add(0x9000, 1, request(3)));
  ASSERT_TRUE(t.add(0x9000, 2, request(4)));
  EXPECT_EQ(complete(t, 0x9000, 2), 2u);
  EXPECT_EQ(complete(t, 0x9000, 2), 4u);
  EXPECT_EQ(complete(t, 0x9000, 1), 1u);
  EXPECT_EQ(complete(t, 0x9000, 1), 3u);
  EXPECT_EQ(t.size(), 0u);
}

TEST(RequestTable, ARequestCompletedByAnotherThreadIsStillFound) {
  // MPI lets any thread complete a request: with none of its own, a thread takes the oldest.
  RequestTable t;
  ASSERT_TRUE(t.add(0x3000, 1, request(1)));
  ASSERT_TRUE(t.add(0x3000, 2, request(2)));
  EXPECT_EQ(complete(t, 0x3000, 3), 1u);
  EXPECT_EQ(complete(t, 0x3000, 3), 2u);
  EXPECT_EQ(complete(t, 0x3000, 3), 0u);
}

TEST(RequestTable, UpdatesThroughFindPersist) {
  RequestTable t;
  ASSERT_TRUE(t.add(0x10, 0, request(1)));
  t.find(0x10, 0)->active = false;
  EXPECT_FALSE(t.find(0x10, 0)->active);
}

}  // namespace
}  // namespace p3s::interpose
