// SPDX-License-Identifier: BSD-3-Clause
// Integer expressions in (r, n): semantics, printing and parsing, and the search for rank-dependent functions.
#include "p3s/modeler/expression.hpp"

#include "p3s/error.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using p3s::modeler::Expression;
using p3s::modeler::find_expression;
using p3s::modeler::RankSample;
using p3s::modeler::SearchOptions;
using p3s::modeler::SearchStats;
using Op = Expression::Op;

Expression r() { return Expression::terminal(Op::R); }
Expression n() { return Expression::terminal(Op::N); }
Expression c(std::int64_t v) { return Expression::terminal(Op::Constant, v); }
Expression bin(Op op, const Expression& a, const Expression& b) { return Expression::binary(op, a, b); }

std::int64_t eval(std::string_view text, std::int64_t nv, std::int64_t rv) {
  return Expression::parse(text).evaluate(nv, rv).value();
}

// Samples of f at every rank of each process count.
std::vector<RankSample> ranks(const std::vector<std::int64_t>& ns,
                              const std::function<std::int64_t(std::int64_t, std::int64_t)>& f,
                              std::int64_t first_rank = 0) {
  std::vector<RankSample> out;
  for (const std::int64_t nv : ns) {
    for (std::int64_t rv = first_rank; rv < nv; ++rv) {
      out.push_back({nv, rv, f(nv, rv)});
    }
  }
  return out;
}

bool matches(const Expression& e, const std::vector<RankSample>& samples) {
  for (const RankSample& s : samples) {
    if (e.evaluate(s.n, s.r) != s.value) {
      return false;
    }
  }
  return true;
}

// ---------------------------------------------------------------------------------------------------------------
// Semantics

TEST(Expression, Arithmetic) {
  EXPECT_EQ(eval("n - 1 - r", 8, 3), 4);
  EXPECT_EQ(eval("(r + n/2) % n", 8, 6), 2);
  EXPECT_EQ(eval("r & (r - 1)", 8, 6), 4);
  EXPECT_EQ(eval("r ^ 4", 8, 6), 2);
  EXPECT_EQ(eval("r | 1", 8, 6), 7);
  EXPECT_EQ(eval("1 << r", 8, 5), 32);
  EXPECT_EQ(eval("n >> 2", 8, 0), 2);
  EXPECT_EQ(eval("2*r + 1", 8, 3), 7);
  EXPECT_EQ(eval("floor(sqrt(n))", 50, 0), 7);
  EXPECT_EQ(eval("floor(log2(n))", 50, 0), 5);
  EXPECT_EQ(eval("dims2(n)[0]", 12, 0), 4);
  EXPECT_EQ(eval("dims2(n)[1]", 12, 0), 3);
}

TEST(Expression, FloorDivisionAndNonNegativeModulo) {
  EXPECT_EQ(eval("(r - 7)/2", 0, 0), -4);
  EXPECT_EQ(eval("7/(0 - 2)", 0, 0), -4);
  EXPECT_EQ(eval("(r - 1) % n", 8, 0), 7);
  EXPECT_EQ(eval("(r - 1) % (0 - 8)", 8, 0), 7);
  EXPECT_EQ(eval("(r - 8) >> 1", 8, 1), -4);  // arithmetic shift rounds down
}

TEST(Expression, UndefinedValues) {
  EXPECT_EQ(Expression::parse("n / r").evaluate(8, 0), std::nullopt);
  EXPECT_EQ(Expression::parse("n % r").evaluate(8, 0), std::nullopt);
  EXPECT_EQ(Expression::parse("1 << r").evaluate(8, 63), std::nullopt);
  EXPECT_EQ(Expression::parse("1 << r").evaluate(8, -1), std::nullopt);
  EXPECT_EQ(Expression::parse("r*r").evaluate(8, std::int64_t{1} << 40), std::nullopt);  // overflow
  EXPECT_EQ(Expression::parse("r + 1").evaluate(8, std::numeric_limits<std::int64_t>::max()), std::nullopt);
  EXPECT_EQ(Expression::parse("floor(log2(n))").evaluate(0, 0), std::nullopt);
  EXPECT_EQ(Expression::parse("r / (0 - 1)").evaluate(0, std::numeric_limits<std::int64_t>::min()), std::nullopt);
}

// ---------------------------------------------------------------------------------------------------------------
// Printing and parsing

TEST(Expression, PrintsWithFewestParentheses) {
  EXPECT_EQ(bin(Op::Xor, r(), c(4)).to_string(), "r ^ 4");
  EXPECT_EQ(bin(Op::Mod, bin(Op::Add, r(), bin(Op::Div, n(), c(2))), n()).to_string(), "(r + n/2) % n");
  EXPECT_EQ(bin(Op::Sub, bin(Op::Sub, n(), c(1)), r()).to_string(), "n - 1 - r");
  EXPECT_EQ(bin(Op::Sub, n(), bin(Op::Sub, c(1), r())).to_string(), "n - (1 - r)");
  EXPECT_EQ(bin(Op::And, r(), bin(Op::Sub, r(), c(1))).to_string(), "r & (r - 1)");
  EXPECT_EQ(bin(Op::Xor, bin(Op::Or, r(), c(1)), c(2)).to_string(), "(r | 1) ^ 2");
  EXPECT_EQ(bin(Op::Or, bin(Op::Xor, r(), c(1)), c(2)).to_string(), "(r ^ 1) | 2");
  EXPECT_EQ(bin(Op::Xor, bin(Op::Xor, r(), c(1)), c(2)).to_string(), "r ^ 1 ^ 2");
  EXPECT_EQ(bin(Op::Mul, c(-1), r()).to_string(), "-1*r");
  EXPECT_EQ(bin(Op::Shl, c(1), bin(Op::Add, r(), c(1))).to_string(), "1 << (r + 1)");
  EXPECT_EQ(bin(Op::Add, bin(Op::Shl, c(1), r()), c(1)).to_string(), "(1 << r) + 1");
  EXPECT_EQ(Expression().to_string(), "0");
  EXPECT_EQ(Expression::terminal(Op::Dims2Minor).to_string(), "dims2(n)[1]");
}

TEST(Expression, ParseRoundTrip) {
  for (const std::string text : {"r ^ 4", "(r + n/2) % n", "n - 1 - r", "n - (1 - r)", "r & (r - 1)", "(r | 1) ^ 2",
                                 "(r ^ 1) | 2", "r ^ 1 ^ 2", "r ^ (1 ^ 2)", "-1*r", "1 << (r + 1)", "(1 << r) + 1",
                                 "r*(n + 1)", "r/2*2", "r/(2*2)", "r % dims2(n)[0] + floor(log2(n))", "(n >> 1) << 1",
                                 "r - -3", "((floor(sqrt(n))*dims2(n)[1] - r) & 3) | (r ^ n)"}) {
    const Expression e = Expression::parse(text);
    EXPECT_EQ(e.to_string(), text);
    EXPECT_EQ(Expression::parse(e.to_string()), e) << text;
  }
  EXPECT_EQ(Expression::parse("  ( r+n / 2 )%n ").to_string(), "(r + n/2) % n");
  EXPECT_EQ(Expression::parse("((r))").to_string(), "r");
  EXPECT_EQ(Expression::parse("r-1").to_string(), "r - 1");
  // Precedence as in C: the clarifying parentheses do not change the tree.
  EXPECT_EQ(Expression::parse("r & r - 1"), Expression::parse("r & (r - 1)"));
  EXPECT_EQ(Expression::parse("1 << r + 1 | 2 ^ r"), Expression::parse("(1 << (r + 1)) | (2 ^ r)"));
}

TEST(Expression, ADamagedExpressionIsRefusedBeforeItsTreeIsWalked) {
  // Parentheses 100,000 deep, or a sum of 100,000 terms, make a tree as deep: parsed, printed or evaluated by
  // recursion, it overflowed the stack. A model's expressions are a few dozen characters.
  const std::string nested = std::string(100000, '(') + "r" + std::string(100000, ')');
  EXPECT_THROW((void)Expression::parse(nested), p3s::InputError);
  std::string sum = "r";
  for (int i = 0; i < 100000; ++i) sum += "+r";
  try {
    (void)Expression::parse(sum);
    ADD_FAILURE() << "a 200,001-character expression was parsed";
  } catch (const p3s::InputError& e) {
    EXPECT_LT(std::string(e.what()).size(), 300U);
  }
  EXPECT_EQ(Expression::parse("((((r + 1))))").to_string(), "r + 1");
}

TEST(Expression, ParseErrors) {
  for (const std::string text :
       {"", "r +", "(r", "r)", "x", "rr", "r ** 2", "2 3", "n2", "- r", "99999999999999999999"}) {
    EXPECT_THROW((void)Expression::parse(text), p3s::InputError) << "'" << text << "'";
  }
}

TEST(Expression, BuildersRejectWrongKinds) {
  EXPECT_THROW((void)Expression::terminal(Op::Add), p3s::InputError);
  EXPECT_THROW((void)Expression::binary(Op::R, r(), r()), p3s::InputError);
  EXPECT_EQ(bin(Op::Add, r(), n()).size(), 3U);
}

TEST(Expression, JsonRoundTrip) {
  const Expression e = Expression::parse("(r + n/2) % n");
  const nlohmann::json j = e;
  EXPECT_EQ(j, "(r + n/2) % n");
  EXPECT_EQ(nlohmann::json::parse(j.dump()).get<Expression>(), e);
  EXPECT_THROW((void)nlohmann::json(3).get<Expression>(), p3s::InputError);
  EXPECT_THROW((void)nlohmann::json("r +").get<Expression>(), p3s::InputError);
}

// ---------------------------------------------------------------------------------------------------------------
// Search

TEST(FindExpression, BinomialTreeParent) {
  const auto samples = ranks(
      {8, 16, 32}, [](auto, auto rv) { return rv - (rv & -rv); }, 1);
  const auto e = find_expression(samples);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->to_string(), "r & (r - 1)");
  EXPECT_TRUE(matches(*e, samples));
}

TEST(FindExpression, BitExchangePartner) {
  const auto samples = ranks({8, 16}, [](auto, auto rv) { return rv ^ 4; });
  EXPECT_EQ(find_expression(samples).value().to_string(), "r ^ 4");
  // A constant outside the default vocabulary is offered through the options.
  const auto far = ranks({16, 32}, [](auto, auto rv) { return rv ^ 8; });
  SearchOptions options;
  options.constants = {0, 1, 2, 8};
  EXPECT_EQ(find_expression(far, options).value().to_string(), "r ^ 8");
}

TEST(FindExpression, MirrorRank) {
  const auto samples = ranks({4, 6, 8}, [](auto nv, auto rv) { return nv - 1 - rv; });
  // n - r - 1 and n - 1 - r tie at 5 nodes; the enumeration order meets this one first.
  EXPECT_EQ(find_expression(samples).value().to_string(), "n - r - 1");
}

TEST(FindExpression, HalfRotation) {
  // At powers of two this is also r ^ n/2: the counts 6 and 10 tell them apart.
  const auto samples = ranks({4, 6, 8, 10, 16}, [](auto nv, auto rv) { return (rv + nv / 2) % nv; });
  const auto e = find_expression(samples);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->to_string(), "(r + n/2) % n");
  EXPECT_EQ(e->evaluate(100, 70), 20);
}

TEST(FindExpression, GridColumnUsesDims) {
  const auto samples = ranks({6, 12, 20, 24}, [](auto nv, auto rv) {
    const std::int64_t cols = nv == 6 ? 3 : nv == 12 ? 4 : 5 + (nv == 24 ? 1 : 0);
    return rv % cols;
  });
  EXPECT_EQ(find_expression(samples).value().to_string(), "r % dims2(n)[0]");
}

TEST(FindExpression, Terminals) {
  EXPECT_EQ(find_expression(ranks({4, 8}, [](auto, auto) { return 3; })).value().to_string(), "3");
  EXPECT_EQ(find_expression(ranks({4, 8}, [](auto nv, auto) { return nv; })).value().to_string(), "n");
  EXPECT_EQ(find_expression(ranks({4, 8}, [](auto, auto rv) { return rv; })).value().to_string(), "r");
}

TEST(FindExpression, InconsistentOrUnreachable) {
  EXPECT_EQ(find_expression(std::vector<RankSample>{{8, 1, 2}, {8, 1, 3}}), std::nullopt);
  // n - 1 - r needs 5 nodes.
  SearchOptions small;
  small.max_size = 3;
  EXPECT_EQ(find_expression(ranks({4, 8}, [](auto nv, auto rv) { return nv - 1 - rv; }), small), std::nullopt);
  EXPECT_THROW((void)find_expression({}), p3s::ModelError);
}

TEST(FindExpression, FindsOnTwoHundredSamplesWithinItsBudget) {
  // 192 samples, found at size 5.
  const auto samples = ranks({64, 128}, [](auto, auto rv) { return rv - (rv & -rv); });
  SearchStats stats;
  const auto e = find_expression(samples, {}, &stats);
  ASSERT_TRUE(e.has_value());
  EXPECT_TRUE(matches(*e, samples));
  EXPECT_FALSE(stats.budget_exhausted);
  EXPECT_GT(stats.candidates, 0U);
  EXPECT_LT(stats.candidates, SearchOptions{}.max_candidates);
}

TEST(FindExpression, StopsOnACountedBudgetWhateverTheLoad) {
  // Noise has no small expression. The search stops after exactly as many candidates every time: a count,
  // never a clock, decides how far it goes, so a loaded machine gets the same answer.
  std::mt19937 rng(7);
  const std::vector<RankSample> noise =
      ranks({64, 136}, [&](auto, auto) { return static_cast<std::int64_t>(rng() % 1000); });
  SearchOptions budget;
  budget.max_candidates = 200000;
  SearchStats first;
  SearchStats second;
  EXPECT_EQ(find_expression(noise, budget, &first), std::nullopt);
  EXPECT_EQ(find_expression(noise, budget, &second), std::nullopt);
  EXPECT_TRUE(first.budget_exhausted);
  EXPECT_LE(first.candidates, budget.max_candidates);
  EXPECT_EQ(first.candidates, second.candidates);
  // Without the budget cut, the same search ends on max_size instead.
  SearchOptions small;
  small.max_size = 5;
  SearchStats unbounded;
  EXPECT_EQ(find_expression(noise, small, &unbounded), std::nullopt);
  EXPECT_FALSE(unbounded.budget_exhausted);
}

}  // namespace
