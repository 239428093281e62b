// SPDX-License-Identifier: BSD-3-Clause
// The recorder's open-addressing map, checked against std::map under random inserts and erases.
#include "flat_map.hpp"

#include <gtest/gtest.h>

#include <map>
#include <random>

namespace p3s::interpose {
namespace {

TEST(FlatMap, FindPutErase) {
  FlatMap<int> m(16);
  EXPECT_EQ(m.find(7), nullptr);
  ASSERT_TRUE(m.put(7, 70));
  ASSERT_TRUE(m.put(7, 71));  // overwrite
  ASSERT_NE(m.find(7), nullptr);
  EXPECT_EQ(*m.find(7), 71);
  EXPECT_EQ(m.size(), 1u);
  m.erase(7);
  EXPECT_EQ(m.find(7), nullptr);
  EXPECT_EQ(m.size(), 0u);
  m.erase(7);  // erasing a missing key is harmless
}

TEST(FlatMap, InsertKeepsAPresentValue) {
  FlatMap<int> m(16);
  EXPECT_EQ(m.insert(7, 70), FlatMap<int>::Stored::Inserted);
  EXPECT_EQ(m.insert(7, 71), FlatMap<int>::Stored::Present);
  EXPECT_EQ(*m.find(7), 70);
  EXPECT_EQ(m.size(), 1u);
}

TEST(FlatMap, MatchesStdMapUnderChurn) {
  // Pointer-like keys (aligned, clustered) as MPI handles are in Open MPI; growth from a tiny table.
  FlatMap<std::uint64_t> m(16);
  std::map<std::uint64_t, std::uint64_t> ref;
  std::mt19937_64 rng(42);
  for (int i = 0; i < 200000; ++i) {
    const std::uint64_t key = 0x7f0000000000ULL + (rng() % 4096) * 64;
    if (rng() % 3 == 0) {
      m.erase(key);
      ref.erase(key);
    } else {
      ASSERT_TRUE(m.put(key, key ^ static_cast<std::uint64_t>(i)));
      ref[key] = key ^ static_cast<std::uint64_t>(i);
    }
  }
  ASSERT_EQ(m.size(), ref.size());
  for (std::uint64_t k = 0; k < 4096; ++k) {
    const std::uint64_t key = 0x7f0000000000ULL + k * 64;
    const auto it = ref.find(key);
    const std::uint64_t* v = m.find(key);
    if (it == ref.end()) {
      EXPECT_EQ(v, nullptr) << key;
    } else {
      ASSERT_NE(v, nullptr) << key;
      EXPECT_EQ(*v, it->second);
    }
  }
}

}  // namespace
}  // namespace p3s::interpose
