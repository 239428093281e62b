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

}  // namespace
}  // namespace p3s::modeler
