// SPDX-License-Identifier: BSD-3-Clause
// Unification of communicators and call sites across ranks.
#include "definitions.hpp"

#include <gtest/gtest.h>

namespace p3s::interpose {
namespace {

CommDef comm(std::uint32_t local, std::uint64_t key, std::uint32_t size, std::int32_t my_rank, std::uint32_t parent = 0,
             std::uint32_t flags = 0, std::vector<std::int32_t> members = {}) {
  CommDef c;
  c.def = raw::CommDefinition{local, parent, key, size, flags, my_rank, 0};
  c.members = std::move(members);
  if (!c.members.empty()) c.def.flags |= raw::kCommHasMembers;
  return c;
}

/// Four ranks: world, self, and a split into {0,2} (key from world rank 0) and {3,1} ordered by key 3 < 1.
std::vector<RankDefs> four_ranks() {
  std::vector<RankDefs> r(4);
  for (int i = 0; i < 4; ++i) {
    r[static_cast<std::size_t>(i)].rank = i;
    r[static_cast<std::size_t>(i)].comms.push_back(comm(0, raw::kWorldKey, 4, i, raw::kNoParent, raw::kCommWorld));
    r[static_cast<std::size_t>(i)].comms.push_back(comm(1, raw::kSelfKey, 1, 0, raw::kNoParent, raw::kCommSelf));
  }
  const std::uint64_t even = (0ULL << 32) | 1;
  const std::uint64_t odd = (3ULL << 32) | 1;
  r[0].comms.push_back(comm(2, even, 2, 0));
  r[2].comms.push_back(comm(2, even, 2, 1));
  r[3].comms.push_back(comm(2, odd, 2, 0));
  r[1].comms.push_back(comm(2, odd, 2, 1));
  r[1].callsites = {"main+0x10 [app+0x1010]", "main+0x20 [app+0x1020]"};
  r[2].callsites = {"main+0x20 [app+0x1020]"};
  return r;
}

TEST(Definitions, UnifiesAgreedKeysAndRebuildsMembers) {
  const auto ranks = four_ranks();
  const Unified u = unify(ranks, 4);
  ASSERT_EQ(u.comms.size(), 4u);
  EXPECT_EQ(u.comms[0].members, (std::vector<std::int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(u.comms[1].flags & raw::kCommSelf, raw::kCommSelf);
  // Ordered by key: the even communicator (key of world rank 0) first.
  EXPECT_EQ(u.comms[2].members, (std::vector<std::int32_t>{0, 2}));
  EXPECT_EQ(u.comms[3].members, (std::vector<std::int32_t>{3, 1}));
  EXPECT_EQ(u.comms[2].parent, 0u);
  const LocalMaps m1 = map_rank(ranks[1], u);
  EXPECT_EQ(m1.comm, (std::vector<std::uint32_t>{0, 1, 3}));
  const LocalMaps m2 = map_rank(ranks[2], u);
  EXPECT_EQ(m2.comm, (std::vector<std::uint32_t>{0, 1, 2}));
}

TEST(Definitions, MissingMemberStaysUnknown) {
  auto ranks = four_ranks();
  ranks.erase(ranks.begin() + 2);  // rank 2's log was lost
  const Unified u = unify(ranks, 4);
  EXPECT_EQ(u.comms[2].members, (std::vector<std::int32_t>{0, -1}));
}

TEST(Definitions, LazyCommunicatorsAreIdentifiedByMembers) {
  std::vector<RankDefs> ranks(3);
  const std::uint64_t lazy = 0xfffffffe00000000ULL;
  for (int i = 0; i < 3; ++i) ranks[static_cast<std::size_t>(i)].rank = i;
  ranks[0].comms.push_back(comm(0, lazy, 2, 0, raw::kNoParent, raw::kCommLazy, {0, 1}));
  ranks[1].comms.push_back(comm(0, lazy, 2, 1, raw::kNoParent, raw::kCommLazy, {0, 1}));
  ranks[2].comms.push_back(comm(0, lazy, 2, 1, raw::kNoParent, raw::kCommLazy, {1, 2}));
  const Unified u = unify(ranks, 3);
  ASSERT_EQ(u.comms.size(), 4u);  // world, self, {0,1}, {1,2}
  EXPECT_EQ(map_rank(ranks[0], u).comm[0], map_rank(ranks[1], u).comm[0]);
  EXPECT_NE(map_rank(ranks[0], u).comm[0], map_rank(ranks[2], u).comm[0]);
}

TEST(Definitions, CallsitesAreUnitedAndMapped) {
  const auto ranks = four_ranks();
  const Unified u = unify(ranks, 4);
  ASSERT_EQ(u.callsites.size(), 2u);
  EXPECT_EQ(map_rank(ranks[1], u).callsite, (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(map_rank(ranks[2], u).callsite, (std::vector<std::uint32_t>{1}));
}

TEST(Definitions, SerialisationRoundTrips) {
  const auto ranks = four_ranks();
  const RankDefs back = deserialize_rank_defs(serialize(ranks[1]));
  EXPECT_EQ(back.rank, 1);
  ASSERT_EQ(back.comms.size(), ranks[1].comms.size());
  EXPECT_EQ(back.comms[2].def.key, ranks[1].comms[2].def.key);
  EXPECT_EQ(back.callsites, ranks[1].callsites);
  const LocalMaps maps = map_rank(ranks[3], unify(ranks, 4));
  const LocalMaps maps_back = deserialize_local_maps(serialize(maps));
  EXPECT_EQ(maps_back.comm, maps.comm);
  EXPECT_THROW((void)deserialize_local_maps(std::vector<std::byte>(3)), std::runtime_error);
}

TEST(Definitions, ADamagedIndexFromAKilledRunAllocatesNothing) {
  // A flipped bit in a raw log of a killed run can make a definition's index huge: the record is dropped, the
  // tables keep their size and the definitions before it.
  RankDefs defs;
  const raw::CommDefinition world{0, raw::kNoParent, raw::kWorldKey, 2, raw::kCommWorld, 0, 0};
  add_definition(defs, raw::Kind::CommDef, reinterpret_cast<const std::byte*>(&world), sizeof world);
  const raw::CommDefinition damaged{0xfffffff0u, 0, 7, 2, 0, 0, 0};
  add_definition(defs, raw::Kind::CommDef, reinterpret_cast<const std::byte*>(&damaged), sizeof damaged);
  EXPECT_EQ(defs.comms.size(), 1u);
  struct {
    raw::CallsiteDefinition def;
    char text[8];
  } site{{std::uint64_t{1} << 40}, "main+1"};
  add_definition(defs, raw::Kind::CallsiteDef, reinterpret_cast<const std::byte*>(&site), sizeof site);
  EXPECT_TRUE(defs.callsites.empty());
  // A gap of one lost record is kept as a gap.
  const raw::CommDefinition after_gap{2, 0, 9, 2, 0, 1, 0};
  add_definition(defs, raw::Kind::CommDef, reinterpret_cast<const std::byte*>(&after_gap), sizeof after_gap);
  EXPECT_EQ(defs.comms.size(), 3u);
}

TEST(Definitions, ACommunicatorLargerThanTheWorldIsDamageAndAllocatesNothing) {
  // A flipped byte in a communicator's size (1.4 * 10^9 members in a run of 4): the communicator is left undefined,
  // the others are unified as before.
  auto ranks = four_ranks();
  ranks[1].comms[2].def.size = 1427852231u;
  const Unified u = unify(ranks, 4);
  ASSERT_EQ(u.comms.size(), 4u) << "world, self and both halves: rank 3's log still defines the odd one";
  for (const GlobalComm& c : u.comms) EXPECT_LE(c.members.size(), 4u);
  ranks[3].comms[2].def.size = 1427852231u;
  const Unified without = unify(ranks, 4);
  EXPECT_EQ(without.comms.size(), 3u);
  EXPECT_EQ(map_rank(ranks[3], without).comm[2], 0xffffffffu);
}

}  // namespace
}  // namespace p3s::interpose
