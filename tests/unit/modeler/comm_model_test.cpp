// SPDX-License-Identifier: BSD-3-Clause
// Communicators as structured data: members, colour and key of MPI_Comm_split, sizes and the creating call, and
// how they are learnt from the members each run saw.
#include <gtest/gtest.h>

#include <vector>

#include "comm_model.hpp"
#include "p3s/error.hpp"
#include "p3s/modeler/model.hpp"

namespace p3s::modeler {
namespace {

CommModel comm(CommModel::Kind kind, std::int64_t param = 0) {
  CommModel c;
  c.kind = kind;
  c.param = ExactLaw::constant(Rational::make(param));
  return c;
}

/// members(), size_of(), member(), color(), key() and index_of() tell the same story for every rank at n: the
/// ranks that share r's colour, ordered by key, are r's members, and r is at its own index among them.
void expect_consistent(const CommModel& c, std::int64_t n) {
  for (std::int64_t r = 0; r < n; ++r) {
    const std::vector<std::int64_t> m = c.members(r, n);
    ASSERT_EQ(c.size_of(r, n), static_cast<std::int64_t>(m.size())) << c.to_string() << " r=" << r << " n=" << n;
    std::vector<std::int64_t> same_colour;
    for (std::int64_t q = 0; q < n; ++q) {
      if (c.kind == CommModel::Kind::Self ? q == r : c.color(q, n) == c.color(r, n)) same_colour.push_back(q);
    }
    EXPECT_EQ(same_colour, m) << c.to_string() << " r=" << r << " n=" << n;
    for (std::size_t i = 0; i < m.size(); ++i) EXPECT_EQ(c.member(r, n, static_cast<std::int64_t>(i)), m[i]);
    EXPECT_EQ(c.member(r, n, static_cast<std::int64_t>(m.size())), -1);
    EXPECT_EQ(c.member(r, n, -1), -1);
    EXPECT_EQ(c.member(r, n, c.index_of(r, n)), r) << c.to_string() << " r=" << r << " n=" << n;
  }
}

TEST(CommModel, SplitArgumentsRebuildTheMembers) {
  for (const std::int64_t n : {1, 4, 6, 7, 16, 30}) {
    expect_consistent(comm(CommModel::Kind::World), n);
    expect_consistent(comm(CommModel::Kind::Self), n);
    expect_consistent(comm(CommModel::Kind::Block, 4), n);
    expect_consistent(comm(CommModel::Kind::Strided, 3), n);
  }
}

TEST(CommModel, RulesAreReadableAndEvaluated) {
  CommModel rows;
  rows.kind = CommModel::Kind::Block;
  rows.param = ExactLaw{Basis::Dims2Minor, Rational::make(1), Rational::make(0)};
  EXPECT_EQ(rows.color_rule(), "r / dims2(n)[1]");
  EXPECT_EQ(rows.color_rule(64), "r / 8");
  EXPECT_EQ(rows.key_rule(), "r");
  EXPECT_EQ(rows.size_rule(), "dims2(n)[1]");
  const CommModel columns = comm(CommModel::Kind::Strided, 8);
  EXPECT_EQ(columns.color_rule(64), "r % 8");
  EXPECT_EQ(columns.size_rule(), "ceil(n / 8)");
  EXPECT_EQ(comm(CommModel::Kind::Self).key_rule(), "0");
  EXPECT_TRUE(rows.same_at(comm(CommModel::Kind::Block, 8), 64));
  EXPECT_FALSE(rows.same_at(comm(CommModel::Kind::Block, 8), 32));
  EXPECT_EQ(comm_kind_named(comm_kind_name(CommModel::Kind::Strided)), CommModel::Kind::Strided);
  EXPECT_FALSE(comm_kind_named("rows").has_value());
}

TEST(CommModel, AnNWhereItCannotExistIsRefused) {
  CommModel quarters;
  quarters.kind = CommModel::Kind::Block;
  quarters.param = ExactLaw{Basis::N, Rational::make(1, 4), Rational::make(0)};  // blocks of n/4 ranks
  EXPECT_NO_THROW(quarters.check_at(64));
  EXPECT_THROW(quarters.check_at(66), ModelError);
  EXPECT_THROW(comm(CommModel::Kind::Strided, 0).check_at(8), ModelError);
  EXPECT_NO_THROW(comm(CommModel::Kind::World).check_at(7));
}

TEST(CommModel, LearntWithTheCallThatCreatedIt) {
  // Rows of a 2 x (n/2) grid at 4 and 8 processes, made by MPI_Comm_split in both runs.
  std::vector<detail::CommObservation> obs;
  for (const std::int64_t n : {4, 8}) {
    for (std::int64_t r = 0; r < n; ++r) {
      std::vector<std::int64_t> m;
      for (std::int64_t i = r / (n / 2) * (n / 2); i < (r / (n / 2) + 1) * (n / 2); ++i) m.push_back(i);
      obs.push_back({n, r, m, mpi::Function::MPI_Comm_split});
    }
  }
  std::optional<CommModel> c = detail::learn_comm(obs);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->kind, CommModel::Kind::Block);
  EXPECT_EQ(c->created_by, mpi::Function::MPI_Comm_split);
  EXPECT_EQ(c->size_of(0, 8), 4);
  EXPECT_EQ(c->size_of(5, 8), 4);
  // Runs that disagree on the creating call leave it unknown, not guessed.
  obs.back().created_by = mpi::Function::MPI_Cart_sub;
  c = detail::learn_comm(obs);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->created_by, mpi::Function::Other);
}

/// Every rank's members of a communicator at the counts `ns`, as `members_of(r, n)` gives them.
template <typename Members>
std::vector<detail::CommObservation> observed(std::initializer_list<std::int64_t> ns, const Members& members_of) {
  std::vector<detail::CommObservation> obs;
  for (const std::int64_t n : ns) {
    for (std::int64_t r = 0; r < n; ++r) obs.push_back({n, r, members_of(r, n), mpi::Function::MPI_Comm_split});
  }
  return obs;
}

TEST(CommModel, SelfIsItsCallerAtEveryCount) {
  // MPI_COMM_SELF is named in an archive without members (its member is whoever calls): observed as the caller.
  analyzer::Signature run;
  run.processes = 4;
  analyzer::SigComm self;
  self.id = 1;
  self.kind = analyzer::CommKind::Self;
  run.communicators.push_back(self);
  const detail::CommObservation o = detail::observe_comm(run, 4, 3, 1, 1);
  EXPECT_EQ(o.members, std::vector<std::int64_t>{3});
  // Learnt from such observations at 2, 4 and 8, it exists at any other count.
  std::vector<detail::CommObservation> obs;
  for (const std::int64_t n : {2, 4, 8}) {
    for (std::int64_t r = 0; r < n; ++r) obs.push_back(detail::observe_comm(run, n, r, 1, 1));
  }
  const std::optional<CommModel> c = detail::learn_comm(obs);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->kind, CommModel::Kind::Self);
  EXPECT_NO_THROW(c->check_at(13));
  EXPECT_EQ(c->members(12, 13), std::vector<std::int64_t>{12});
}

TEST(CommModel, OneRankSplitsAreSelf) {
  // MPI_Comm_split with every rank its own colour: communicators of one rank, the caller.
  const std::optional<CommModel> c =
      detail::learn_comm(observed({2, 4, 8}, [](std::int64_t r, std::int64_t) { return std::vector{r}; }));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->kind, CommModel::Kind::Self);
}

TEST(CommModel, SplitsThatDoNotDivideNAreBlocks) {
  // Blocks of 3 consecutive ranks, the last one short where 3 does not divide n (4 -> 3 + 1, 8 -> 3 + 3 + 2).
  const auto blocks = [](std::int64_t r, std::int64_t n) {
    std::vector<std::int64_t> m;
    for (std::int64_t i = r / 3 * 3; i < std::min(n, r / 3 * 3 + 3); ++i) m.push_back(i);
    return m;
  };
  std::optional<CommModel> c = detail::learn_comm(observed({4, 8, 16}, blocks));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->kind, CommModel::Kind::Block);
  EXPECT_EQ(c->members(31, 32), (std::vector<std::int64_t>{30, 31}));
  // Every third rank (colour r mod 3): the strided pieces hold ceil or floor of n / 3 ranks.
  const auto strided = [](std::int64_t r, std::int64_t n) {
    std::vector<std::int64_t> m;
    for (std::int64_t i = r % 3; i < n; i += 3) m.push_back(i);
    return m;
  };
  c = detail::learn_comm(observed({4, 8, 16}, strided));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->kind, CommModel::Kind::Strided);
  EXPECT_EQ(c->size_of(2, 32), 10);
  EXPECT_EQ(c->size_of(0, 32), 11);
}

}  // namespace
}  // namespace p3s::modeler
