// SPDX-License-Identifier: BSD-3-Clause
// The cost laws a range replay fits to collectives timed at several sizes.
#include "collective_cost.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace p3s::replay::detail {
namespace {

TEST(CollectiveFit, ATreeCostsInLog2OfItsMembers) {
  // 10 us + 5 us per doubling, timed at 2, 4, 8, 16 and 30 ranks.
  std::vector<std::pair<int, double>> points;
  for (const int m : {2, 4, 8, 16, 30}) points.emplace_back(m, 10000 + 5000 * std::log2(m));
  const CollectiveFit f = fit_collective(points, true);
  EXPECT_FALSE(f.linear);
  EXPECT_NEAR(f.a, 10000, 1);
  EXPECT_NEAR(f.b, 5000, 1);
  EXPECT_NEAR(f.b * (f.x(128) - f.x(16)), 15000, 1);  // 3 more doublings
}

TEST(CollectiveFit, AnAllToAllCostsInItsMembersWhereThatFitsBetter) {
  std::vector<std::pair<int, double>> points;
  for (const int m : {2, 4, 8, 16, 30}) points.emplace_back(m, 2000 + 700.0 * m);
  const CollectiveFit linear = fit_collective(points, true);
  EXPECT_TRUE(linear.linear);
  EXPECT_NEAR(linear.b, 700, 1);
  EXPECT_FALSE(fit_collective(points, false).linear);  // a reduction's algorithms are trees: never linear
  EXPECT_TRUE(may_be_linear(mpi::Collective::Alltoall));
  EXPECT_FALSE(may_be_linear(mpi::Collective::Allreduce));
}

TEST(CollectiveFit, NoCostIsBelowZero) {
  // Falling times (noise) give no negative slope; a fit with a negative constant goes through the origin.
  const CollectiveFit falling = fit_collective({{2, 900}, {4, 500}, {8, 100}}, false);
  EXPECT_EQ(falling.b, 0);
  const CollectiveFit steep = fit_collective({{2, 100}, {4, 1000}, {8, 2000}}, false);
  EXPECT_GE(steep.a, 0);
  EXPECT_GT(steep.b, 0);
}

TEST(CollectiveCosts, UncalibratedCollectivesAreNotGuessed) {
  const CollectiveCosts none;
  EXPECT_TRUE(none.empty());
  EXPECT_FALSE(none.extra_ns(mpi::Collective::Allreduce, 8, 16, 64).has_value());
}

}  // namespace
}  // namespace p3s::replay::detail
