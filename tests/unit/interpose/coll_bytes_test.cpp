// SPDX-License-Identifier: BSD-3-Clause
// Collective byte rules (Score-P's conventions), including MPI_IN_PLACE and v-variants.
#include "coll_bytes.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace p3s::interpose {
namespace {

CollShape shape(int me, int size, int root, std::uint64_t sblock, std::uint64_t rblock, bool in_place = false) {
  CollShape c;
  c.me = me;
  c.size = size;
  c.root = root;
  c.sblock = sblock;
  c.rblock = rblock;
  c.stype = 8;
  c.rtype = 8;
  c.in_place = in_place;
  return c;
}

TEST(CollBytes, BcastMatchesScorePArchive) {
  // Score-P's phases-mpi-np8 archive: the root of a Bcast of 64 ints on 8 ranks reports Sent 2048, Received 256.
  EXPECT_EQ(collective_bytes(OTF2_COLLECTIVE_OP_BCAST, shape(0, 8, 0, 256, 256)), (CollBytes{2048, 256}));
  EXPECT_EQ(collective_bytes(OTF2_COLLECTIVE_OP_BCAST, shape(3, 8, 0, 256, 256)), (CollBytes{0, 256}));
}

TEST(CollBytes, AllreduceMatchesScorePArchive) {
  // One double on 8 ranks: Sent 64, Received 64 in the Score-P archive.
  EXPECT_EQ(collective_bytes(OTF2_COLLECTIVE_OP_ALLREDUCE, shape(5, 8, -1, 8, 8)), (CollBytes{64, 64}));
  EXPECT_EQ(collective_bytes(OTF2_COLLECTIVE_OP_ALLREDUCE, shape(5, 8, -1, 8, 8, true)), (CollBytes{56, 56}));
}

TEST(CollBytes, RootedAllToOne) {
  EXPECT_EQ(collective_bytes(OTF2_COLLECTIVE_OP_GATHER, shape(0, 4, 0, 16, 16)), (CollBytes{16, 64}));
  EXPECT_EQ(collective_bytes(OTF2_COLLECTIVE_OP_GATHER, shape(0, 4, 0, 16, 16, true)), (CollBytes{0, 48}));
  EXPECT_EQ(collective_bytes(OTF2_COLLECTIVE_OP_GATHER, shape(2, 4, 0, 16, 16)), (CollBytes{16, 0}));
  EXPECT_EQ(collective_bytes(OTF2_COLLECTIVE_OP_REDUCE, shape(1, 4, 1, 8, 8)), (CollBytes{8, 32}));
  EXPECT_EQ(collective_bytes(OTF2_COLLECTIVE_OP_SCATTER, shape(0, 4, 0, 16, 16)), (CollBytes{64, 16}));
  EXPECT_EQ(collective_bytes(OTF2_COLLECTIVE_OP_SCATTER, shape(3, 4, 0, 16, 16)), (CollBytes{0, 16}));
}

TEST(CollBytes, VariantsSumTheirCounts) {
  const std::vector<int> counts{1, 2, 3, 4};
  CollShape root = shape(2, 4, 2, 0, 0);
  root.rcounts = counts;
  EXPECT_EQ(collective_bytes(OTF2_COLLECTIVE_OP_GATHERV, root), (CollBytes{24, 80}));
  root.in_place = true;
  EXPECT_EQ(collective_bytes(OTF2_COLLECTIVE_OP_GATHERV, root), (CollBytes{0, 56}));
  CollShape all = shape(1, 4, -1, 8, 0);
  all.rcounts = counts;
  EXPECT_EQ(collective_bytes(OTF2_COLLECTIVE_OP_ALLGATHERV, all), (CollBytes{32, 80}));
  all.scounts = counts;
  EXPECT_EQ(collective_bytes(OTF2_COLLECTIVE_OP_ALLTOALLV, all), (CollBytes{80, 80}));
  EXPECT_EQ(collective_bytes(OTF2_COLLECTIVE_OP_REDUCE_SCATTER, all), (CollBytes{80, 64}));
}

TEST(CollBytes, ScanCountsPrefixes) {
  EXPECT_EQ(collective_bytes(OTF2_COLLECTIVE_OP_SCAN, shape(1, 4, -1, 8, 8)), (CollBytes{24, 16}));
  EXPECT_EQ(collective_bytes(OTF2_COLLECTIVE_OP_EXSCAN, shape(1, 4, -1, 8, 8)), (CollBytes{16, 8}));
  EXPECT_EQ(collective_bytes(OTF2_COLLECTIVE_OP_BARRIER, shape(1, 4, -1, 8, 8)), (CollBytes{0, 0}));
}

TEST(CollBytes, OnlyRootedOperationsHaveARoot) {
  EXPECT_TRUE(is_rooted(OTF2_COLLECTIVE_OP_BCAST));
  EXPECT_TRUE(is_rooted(OTF2_COLLECTIVE_OP_SCATTERV));
  EXPECT_FALSE(is_rooted(OTF2_COLLECTIVE_OP_ALLREDUCE));
  EXPECT_FALSE(is_rooted(OTF2_COLLECTIVE_OP_BARRIER));
}

}  // namespace
}  // namespace p3s::interpose
