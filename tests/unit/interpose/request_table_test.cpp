// SPDX-License-Identifier: BSD-3-Clause
// Requests sharing one handle value (Open MPI's shared "empty" request) complete one by one, oldest first.
#include "request_table.hpp"

#include <gtest/gtest.h>

namespace p3s::interpose {
namespace {

RequestInfo request(std::uint64_t id) {
  RequestInfo r;
  r.id = id;
  return r;
}

TEST(RequestTable, DistinctHandles) {
  RequestTable t;
  ASSERT_TRUE(t.add(0x1000, request(1)));
  ASSERT_TRUE(t.add(0x2000, request(2)));
  EXPECT_EQ(t.find(0x1000)->id, 1u);
  EXPECT_EQ(t.find(0x2000)->id, 2u);
  t.remove(0x1000);
  EXPECT_EQ(t.find(0x1000), nullptr);
  EXPECT_EQ(t.size(), 1u);
}

TEST(RequestTable, SharedHandleIsFifo) {
  // Two eager Isends that completed at once both return the same handle: neither completion may be lost.
  RequestTable t;
  ASSERT_TRUE(t.add(0x5000, request(1)));
  ASSERT_TRUE(t.add(0x5000, request(2)));
  ASSERT_TRUE(t.add(0x5000, request(3)));
  EXPECT_EQ(t.size(), 3u);
  EXPECT_EQ(t.find(0x5000)->id, 1u);
  t.remove(0x5000);
  EXPECT_EQ(t.find(0x5000)->id, 2u);
  ASSERT_TRUE(t.add(0x5000, request(4)));
  t.remove(0x5000);
  EXPECT_EQ(t.find(0x5000)->id, 3u);
  t.remove(0x5000);
  EXPECT_EQ(t.find(0x5000)->id, 4u);
  t.remove(0x5000);
  EXPECT_EQ(t.find(0x5000), nullptr);
  EXPECT_EQ(t.size(), 0u);
}

TEST(RequestTable, UpdatesThroughFindPersist) {
  RequestTable t;
  ASSERT_TRUE(t.add(0x10, request(1)));
  t.find(0x10)->active = false;
  EXPECT_FALSE(t.find(0x10)->active);
}

}  // namespace
}  // namespace p3s::interpose
