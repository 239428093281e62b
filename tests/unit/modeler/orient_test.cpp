// SPDX-License-Identifier: BSD-3-Clause
// Steps along periodic sides of 2: the order seen along a longer side is given to the pairs that never showed one.
#include "orient.hpp"

#include <gtest/gtest.h>

namespace p3s::modeler::detail {
namespace {

/// An MPI_Irecv group whose one call receives from torus3c(r) + label.
GroupModel receive_from(const Label& label) {
  GroupModel g;
  g.call = "MPI_Irecv";
  g.role = Role::PointToPoint;
  Program p;
  p.frame = Frame::Torus3C;
  Term t;
  t.slots.push_back({IndexedLaw::constant(label[0]), IndexedLaw::constant(label[1]), IndexedLaw::constant(label[2])});
  p.terms.push_back(t);
  g.pattern.cases.push_back({RankPredicate{}, p});
  return g;
}

Label label_of_group(const GroupModel& g) {
  const Term& t = g.pattern.cases.front().program.terms.front();
  return {t.slots[0][0].base.b.num, t.slots[0][1].base.b.num, t.slots[0][2].base.b.num};
}

TEST(OrientSteps, PairsAlongSidesOfTwoFollowTheOrderSeenElsewhere) {
  // Fitted at 2, 4, 8, 16 (dims3: 2x1x1, 2x2x1, 2x2x2, 4x2x2): along the first side (4 at 16) the code receives
  // from +1 first; along the others (never more than 2) both receives were fitted as -1.
  std::vector<GroupModel> groups = {receive_from({1, 0, 0}),  receive_from({-1, 0, 0}), receive_from({0, -1, 0}),
                                    receive_from({0, -1, 0}), receive_from({0, 0, -1}), receive_from({0, 0, -1})};
  const std::vector<std::int64_t> fitted = {2, 4, 8, 16};
  orient_steps(groups, fitted);
  EXPECT_EQ(label_of_group(groups[0]), (Label{1, 0, 0}));
  EXPECT_EQ(label_of_group(groups[1]), (Label{-1, 0, 0}));
  EXPECT_EQ(label_of_group(groups[2]), (Label{0, 1, 0}));
  EXPECT_EQ(label_of_group(groups[3]), (Label{0, -1, 0}));
  EXPECT_EQ(label_of_group(groups[4]), (Label{0, 0, 1}));
  EXPECT_EQ(label_of_group(groups[5]), (Label{0, 0, -1}));
}

TEST(OrientSteps, NothingChangesWithoutAnOrderSeen) {
  std::vector<GroupModel> groups = {receive_from({0, -1, 0}), receive_from({0, -1, 0})};
  const std::vector<std::int64_t> fitted = {4, 8};
  orient_steps(groups, fitted);
  EXPECT_EQ(label_of_group(groups[0]), (Label{0, -1, 0}));
  EXPECT_EQ(label_of_group(groups[1]), (Label{0, -1, 0}));
}

}  // namespace
}  // namespace p3s::modeler::detail
