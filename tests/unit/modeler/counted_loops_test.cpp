// SPDX-License-Identifier: BSD-3-Clause
// Loops whose tag is their counter, end to end on signatures built in code (no MPI): on a process grid of
// 2^floor(k/2) rows and 2^ceil(k/2) columns (n = 2^k), each rank sums a vector along its row by recursive halving
// (its steps tagged log2(columns) down to 1), exchanges the sum with the rank at its transposed position (tag 1;
// itself on the diagonal), and reduces a scalar along the row by recursive doubling (tags 1 up to log2(columns)).
// Fitted at 4 to 32 processes the model predicts 64 exactly; fitted at 4 to 16, 32.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "p3s/modeler/fit.hpp"
#include "p3s/modeler/model.hpp"
#include "p3s/modeler/predict.hpp"
#include "ring_signatures.hpp"

namespace p3s::modeler {
namespace {

/// The grid at n = 2^k: rows 2^floor(k/2), columns 2^ceil(k/2), and log2 of the columns.
struct Grid {
  std::int32_t rows = 1;
  std::int32_t cols = 1;
  std::int32_t log2_cols = 0;
};

Grid grid_of(std::int32_t n) {
  std::int32_t k = 0;
  while ((1 << k) < n) ++k;
  return {1 << (k / 2), 1 << ((k + 1) / 2), (k + 1) / 2};
}

/// The transposed position of r: on a square grid the rank at (column, row); with twice as many columns as rows,
/// that of the pair r / 2 on the square of the rows, keeping r's low bit.
std::int32_t transposed(std::int32_t r, const Grid& g) {
  if (g.rows == g.cols) return (r % g.rows) * g.rows + r / g.rows;
  const std::int32_t pair = r / 2;
  return 2 * ((pair % g.rows) * g.rows + pair / g.rows) + r % 2;
}

/// One exchange of rank r with `partner`: MPI_Irecv, MPI_Send, MPI_Wait, all with `tag`; `work` before the first.
void exchange(analyzer::SigRank& out, std::int32_t partner, std::uint32_t tag, double bytes, double work) {
  const std::int32_t r = out.rank;
  SigAction post = message(mpi::ActionKind::IrecvPost, r, partner, bytes);
  post.tag = tag;
  post.request = true;
  const auto started = static_cast<std::int32_t>(out.events.size());
  out.events.push_back(event(mpi::Function::MPI_Irecv, {post}, work));
  SigAction send = message(mpi::ActionKind::Send, r, partner, bytes);
  send.tag = tag;
  out.events.push_back(event(mpi::Function::MPI_Send, {send}, 100));
  SigAction done = message(mpi::ActionKind::Recv, r, partner, bytes);
  done.tag = tag;
  done.request = true;
  done.started = started;
  out.events.push_back(event(mpi::Function::MPI_Wait, {done}, 100));
}

/// One rank's iteration: the halving steps to r ^ 1, r ^ 2, ... (tags counting down to 1), the transposed
/// exchange (tag 1), the doubling steps to ..., r ^ 2, r ^ 1 (tags counting up from 1).
analyzer::SigRank solver_rank(std::int32_t r, std::int32_t n) {
  const Grid g = grid_of(n);
  analyzer::SigRank out;
  out.rank = r;
  const double segment = 65536.0 / g.cols;
  for (std::int32_t i = g.log2_cols; i >= 1; --i) {
    exchange(out, r ^ (g.cols >> i), static_cast<std::uint32_t>(i), segment, i == g.log2_cols ? 1e8 / n : 200);
  }
  exchange(out, transposed(r, g), 1, segment, g.log2_cols == 0 ? 1e8 / n : 200);
  for (std::int32_t i = 1; i <= g.log2_cols; ++i)
    exchange(out, r ^ (g.cols >> i), static_cast<std::uint32_t>(i), 8, 300);
  return out;
}

Signature solver(std::int32_t n) {
  Signature s = ring(n, 1);
  s.command = "mpirun -np " + std::to_string(n) + " ./solver";
  analyzer::SigPhase& loop = s.phases.at(1);
  loop.ranks.clear();
  for (std::int32_t r = 0; r < n; ++r) loop.ranks.push_back(solver_rank(r, n));
  loop.weight = 50;
  loop.work = stat(1e8);
  s.order = {{0, 1}, {1, 50}};
  return s;
}

std::vector<std::filesystem::path> solver_series(std::initializer_list<std::int32_t> ns) {
  std::vector<std::filesystem::path> out;
  for (const std::int32_t n : ns) out.push_back(save(solver(n), "solver" + std::to_string(n)));
  return out;
}

void expect_exact(const Validation& v) {
  for (const PhaseCheck& c : v.phases) {
    EXPECT_TRUE(c.pattern_exact) << "phase " << c.phase << " at " << v.n << ": " << c.first_mismatch;
    EXPECT_EQ(c.comms_predicted, c.comms_actual) << "phase " << c.phase;
    EXPECT_EQ(c.weight_predicted, c.weight_actual) << "phase " << c.phase;
    EXPECT_LT(c.volume_error_max, 1e-9) << "phase " << c.phase;
  }
}

TEST(CountedLoops, StepsTaggedByTheirCounterArePredictedAtALargerCount) {
  ModelOptions o;
  o.validate_with = save(solver(64), "solver64");
  const Fit fit = build_model(solver_series({4, 8, 16, 32}), o);
  ASSERT_TRUE(fit.report.validation.has_value());
  expect_exact(*fit.report.validation);

  // At 256 ranks (16 columns): four halving steps, the transposed exchange, four doubling steps.
  const PhasePredictor p(fit.model.phases.at(1), 256);
  const PredictedRank r = p.rank(17);
  ASSERT_EQ(r.calls.size(), 27U);
  const std::vector<std::int64_t> peers{16, 19, 21, 25, 17, 25, 21, 19, 16};
  for (std::size_t k = 0; k < peers.size(); ++k) {
    ASSERT_FALSE(r.calls[3 * k].actions.empty());
    EXPECT_EQ(r.calls[3 * k].actions.front().peer, peers[k]) << "exchange " << k;
  }
}

TEST(CountedLoops, AOneStepLoopAndTheExchangeAfterItAreToldApartAtTheSmallestCount) {
  // At 4 ranks the halving has one step, tagged 1 like the transposed exchange after it; fitted on 4, 8, 16, the
  // model must still count the steps as log2 of the columns and predict 32, where they are three.
  const Fit fit = build_model(solver_series({4, 8, 16, 32}), {});
  ASSERT_TRUE(fit.report.validation.has_value());
  EXPECT_EQ(fit.report.validation->n, 32);
  expect_exact(*fit.report.validation);
}

TEST(CountedLoops, EachCheckNamesTheRunsPhaseAndWhetherItIsRelevantThere) {
  // The accuracy figures are taken over the run's relevant phases: each check says which of the run's phases it
  // compared with and whether that one is relevant, in the report as read back.
  ModelOptions o;
  o.validate_with = save(solver(64), "solver64");
  const Fit fit = build_model(solver_series({4, 8, 16, 32}), o);
  ASSERT_TRUE(fit.report.validation.has_value());
  const analyzer::Signature run = analyzer::read_signature(*o.validate_with);
  const std::filesystem::path report = std::filesystem::path(::testing::TempDir()) / "counted_loops.report.json";
  write_fit_report(fit.report, report);
  const FitReport back = read_fit_report(report);
  ASSERT_TRUE(back.validation.has_value());
  ASSERT_EQ(back.validation->phases.size(), fit.report.validation->phases.size());
  for (std::size_t k = 0; k < back.validation->phases.size(); ++k) {
    const PhaseCheck& c = back.validation->phases[k];
    ASSERT_TRUE(c.run_phase.has_value()) << "phase " << c.phase;
    const auto it = std::find_if(run.phases.begin(), run.phases.end(),
                                 [&](const analyzer::SigPhase& p) { return p.listed_id() == *c.run_phase; });
    ASSERT_NE(it, run.phases.end()) << "phase " << c.phase;
    EXPECT_EQ(c.relevant, it->relevant) << "phase " << c.phase;
    EXPECT_EQ(c.run_phase, fit.report.validation->phases[k].run_phase);
  }
  EXPECT_TRUE(std::any_of(back.validation->phases.begin(), back.validation->phases.end(),
                          [](const PhaseCheck& c) { return c.relevant; }));
}

}  // namespace
}  // namespace p3s::modeler
