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

/// A point-to-point group whose terms each make one call: per term, the label of each slot, and what each slot does.
GroupModel exchange(const char* call, const std::vector<std::vector<Label>>& terms, const SlotKinds& kinds) {
  GroupModel g;
  g.call = call;
  g.role = Role::PointToPoint;
  g.slot_kinds = kinds;
  Program p;
  p.frame = Frame::Torus3C;
  for (const std::vector<Label>& slots : terms) {
    Term t;
    for (const Label& l : slots) {
      t.slots.push_back({IndexedLaw::constant(l[0]), IndexedLaw::constant(l[1]), IndexedLaw::constant(l[2])});
    }
    p.terms.push_back(t);
  }
  p.slots = static_cast<int>(kinds[1] ? 2 : 1);
  g.slots = p.slots;
  g.pattern.cases.push_back({RankPredicate{}, p});
  return g;
}

Label label_at(const GroupModel& g, std::size_t term, std::size_t slot) {
  const Term& t = g.pattern.cases.front().program.terms.at(term);
  return {t.slots[slot][0].base.b.num, t.slots[slot][1].base.b.num, t.slots[slot][2].base.b.num};
}

TEST(MeetSteps, AReceiveStepsOppositeItsSendAlongSidesNeverLongerThanTwo) {
  // Fitted at 2, 4, 8 (dims3: 2x1x1, 2x2x1, 2x2x2): no side was longer than 2, and the fit gave each receive the
  // sign of its send. A Sendrecv along x, then an MPI_Irecv group and an MPI_Send group along y and z.
  const SlotKinds sendrecv{mpi::ActionKind::Send, mpi::ActionKind::Recv};
  std::vector<GroupModel> groups = {
      exchange("MPI_Sendrecv", {{{-1, 0, 0}, {-1, 0, 0}}, {{1, 0, 0}, {1, 0, 0}}}, sendrecv),
      exchange("MPI_Irecv", {{{0, -1, 0}}, {{0, 0, 1}}}, {mpi::ActionKind::IrecvPost, std::nullopt}),
      exchange("MPI_Send", {{{0, -1, 0}}, {{0, 0, 1}}}, {mpi::ActionKind::Send, std::nullopt})};
  meet_steps(groups, std::vector<std::int64_t>{2, 4, 8});
  EXPECT_EQ(label_at(groups[0], 0, 0), (Label{-1, 0, 0}));
  EXPECT_EQ(label_at(groups[0], 0, 1), (Label{1, 0, 0}));
  EXPECT_EQ(label_at(groups[0], 1, 0), (Label{1, 0, 0}));
  EXPECT_EQ(label_at(groups[0], 1, 1), (Label{-1, 0, 0}));
  EXPECT_EQ(label_at(groups[1], 0, 0), (Label{0, 1, 0}));
  EXPECT_EQ(label_at(groups[1], 1, 0), (Label{0, 0, -1}));
  EXPECT_EQ(label_at(groups[2], 0, 0), (Label{0, -1, 0}));  // sends keep their sign
  EXPECT_EQ(label_at(groups[2], 1, 0), (Label{0, 0, 1}));
}

TEST(MeetSteps, StepsSeenAlongALongerSideKeepTheirLaws) {
  // At 16 (4x2x2) the first side was 4: the runs showed which way each step went there, whatever it was.
  const SlotKinds sendrecv{mpi::ActionKind::Send, mpi::ActionKind::Recv};
  std::vector<GroupModel> groups = {exchange("MPI_Sendrecv", {{{-1, 0, 0}, {-1, 0, 0}}}, sendrecv)};
  meet_steps(groups, std::vector<std::int64_t>{2, 4, 8, 16});
  EXPECT_EQ(label_at(groups[0], 0, 1), (Label{-1, 0, 0}));
}

}  // namespace
}  // namespace p3s::modeler::detail
