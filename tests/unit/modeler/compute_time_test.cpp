// SPDX-License-Identifier: BSD-3-Clause
// Compute-time laws (CRMi) and the far point (CRMc) on signatures built in code: the ring application whose time
// per unit of work grows as the work per rank shrinks (a planted CPI), fitted at 4-32 processes; a far run with a
// 16 times smaller input at 64 processes has the work per rank of the full input at 1024.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

#include "p3s/error.hpp"
#include "p3s/modeler/fit.hpp"
#include "p3s/modeler/model.hpp"
#include "p3s/modeler/predict.hpp"
#include "p3s/modeler/series.hpp"
#include "ring_signatures.hpp"

namespace p3s::modeler {
namespace {

/// Time per unit of work for a rank doing `work` per instance: 1 while the work is at least the full input's at 32
/// ranks, then 5 % less each time it halves (its data start to fit in a cache): the fitted runs cannot see it.
double cpi(double work) { return work >= 1e8 / 32 ? 1 : 1 - 0.05 * std::log2(1e8 / 32 / work); }

/// The ring at n with its input divided by `reduce`; every burst of the loop takes work x cpi(the rank's work).
Signature timed_ring(std::int32_t n, double reduce, const std::string& command = "") {
  Signature s = ring(n, 100, "PAPI_TOT_INS", command);
  for (analyzer::SigRank& r : s.phases[1].ranks) {
    double total = 0;
    for (SigEvent& e : r.events) {
      if (e.function == mpi::Function::MPI_Isend) e.burst_work = stat(e.burst_work.mean / reduce);
      total += e.burst_work.mean;
    }
    for (SigEvent& e : r.events) e.burst_ns = stat(e.burst_work.mean * cpi(total));
  }
  return s;
}

/// The true compute time per rank and instance of the full input at n.
double true_time(std::int64_t n) {
  const double work = 1e8 / static_cast<double>(n) + 1800;
  return work * cpi(work);
}

std::vector<std::filesystem::path> series() {
  std::vector<std::filesystem::path> out;
  for (const std::int32_t n : {4, 8, 16, 32}) out.push_back(save(timed_ring(n, 1), "ring" + std::to_string(n)));
  return out;
}

double predicted_time(const Model& m, std::int64_t n) {
  const PhasePredictor p(m.phases.at(1), n);
  const PredictedRank r = p.rank(n / 2);
  double t = r.tail_ns.value_or(0);
  for (const PredictedCall& c : r.calls) t += c.burst_ns.value();
  EXPECT_NEAR(t, *p.class_time(p.class_of(n / 2)), 1e-6 * t);  // the bursts add up to the class's time
  return t;
}

TEST(ComputeTime, LawsReproduceTheFittedRuns) {
  ModelOptions o;
  o.hold_out_largest = false;
  const Fit fit = build_model(series(), o);
  for (const std::int64_t n : {4, 8, 16, 32}) {
    EXPECT_NEAR(predicted_time(fit.model, n), true_time(n), 0.02 * true_time(n)) << "n = " << n;
  }
  // The SCIC keeps the time per rank beside the work: their ratio is the planted time per unit of work.
  const std::vector<ScicRow>& rows = fit.report.phases.at(1).measured.at(0);
  ASSERT_EQ(rows.size(), 4u);
  for (const ScicRow& row : rows) EXPECT_NEAR(row.time_per_rank / row.work_per_rank, cpi(row.work_per_rank), 1e-9);
}

TEST(ComputeTime, FarPointRecoversTheGrowingTimePerWork) {
  ModelOptions o;
  o.hold_out_largest = false;
  const Fit plain = build_model(series(), o);
  o.far_point = save(timed_ring(64, 16, "mpirun -np 64 ./ring 6"), "far64");
  const Fit far = build_model(series(), o);
  const WorkClass& cls = far.model.phases.at(1).work.at(0);
  ASSERT_TRUE(cls.far_point.has_value());
  EXPECT_EQ(cls.far_point->run_n, 64);
  EXPECT_NEAR(static_cast<double>(cls.far_point->n), 1024, 0.03 * 1024);  // 16 x smaller input on 64 ranks
  ASSERT_TRUE(cls.time_fit.has_value());
  for (const std::int64_t n : {512, 1024}) {
    const double truth = true_time(n);
    const double without = std::abs(predicted_time(plain.model, n) - truth) / truth;
    const double with = std::abs(predicted_time(far.model, n) - truth) / truth;
    std::printf("n = %lld: error %.2f %% without the far point, %.2f %% with it\n", static_cast<long long>(n),
                100 * without, 100 * with);
    EXPECT_GT(without, 0.15) << "the runs alone cannot see the time per work at " << n;
    EXPECT_LT(with, 0.05) << "the far point should recover it at " << n;
  }
  // Both laws are kept and survive the model file.
  const std::filesystem::path path = dir() / "far.model";
  write_model(far.model, path);
  const Model back = read_model(path);
  EXPECT_EQ(back.phases.at(1).work.at(0).far_point->n, cls.far_point->n);
  EXPECT_DOUBLE_EQ(predicted_time(back, 512), predicted_time(far.model, 512));
}

TEST(ComputeTime, TheFarPointIsEvaluatedWithTheSeriesMpisGrids) {
  // A series recorded with MPICH: its laws in dims(n) follow MPICH's grids, at the far run's n too. At 72, MPICH
  // cuts a 2-D grid 9 x 8 and Open MPI 12 x 6: a count of dims2(n)[1] / 8 calls is 1 with MPICH's grid and no
  // whole number with Open MPI's, so the far point is used only when it is evaluated with the series' rule.
  ModelOptions o;
  o.hold_out_largest = false;
  Fit fit = build_model(series(), o);
  fit.model.dims_rule = DimsRule::Mpich;
  Term* counted = nullptr;
  for (GroupModel& g : fit.model.phases.at(1).groups) {
    if (g.role == Role::PointToPoint && !g.pattern.cases.empty())
      counted = &g.pattern.cases.front().program.terms.front();
  }
  ASSERT_NE(counted, nullptr) << "the ring's phase has no point-to-point group";
  ASSERT_EQ(counted->count, ExactLaw::constant(Rational::make(1)));
  counted->count = ExactLaw{*basis_from_name("dims2(n)[1]"), Rational{1, 8}, Rational::make(0)};
  const std::filesystem::path path = save(timed_ring(72, 18, "mpirun -np 72 ./ring 100"), "far72");
  const std::vector<modeler::Run> far = load_runs(std::span(&path, 1), 1);
  calibrate_with_far_point(fit, far.front());
  const WorkClass& cls = fit.model.phases.at(1).work.at(0);
  ASSERT_TRUE(cls.far_point.has_value());
  EXPECT_EQ(cls.far_point->run_n, 72);
  EXPECT_EQ(current_dims_rule(), DimsRule::OpenMpi);  // and the thread's rule is left as it was
}

TEST(ComputeTime, AFarPointWithinTheFittedCountsIsRefused) {
  // One of the fitted runs given again as the far point bent the compute-time law 3.6x at 1024 ranks.
  ModelOptions o;
  o.hold_out_largest = false;
  o.far_point = save(timed_ring(16, 1, "mpirun -np 16 ./ring 96"), "again16");
  try {
    (void)build_model(series(), o);
    FAIL() << "a far point within the fitted counts was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("within the fitted counts"), std::string::npos) << e.what();
  }
}

TEST(ComputeTime, FarPointOfAnotherProgramIsRefused) {
  ModelOptions o;
  o.hold_out_largest = false;
  o.far_point = save(timed_ring(64, 16, "mpirun -np 64 ./other 6"), "other64");
  try {
    (void)build_model(series(), o);
    FAIL() << "a far point of another program was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("runs other"), std::string::npos) << e.what();
  }
  Signature unrelated = timed_ring(64, 16, "mpirun -np 64 ./ring 6");
  for (analyzer::SigRank& r : unrelated.phases[1].ranks) {
    for (SigEvent& e : r.events) {
      if (e.function == mpi::Function::MPI_Allreduce) e.function = mpi::Function::MPI_Barrier;
      e.call = std::string(mpi::name(e.function));
    }
  }
  o.far_point = save(unrelated, "unrelated64");
  try {
    (void)build_model(series(), o);
    FAIL() << "a far point without related phases was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("calibrates no phase"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace p3s::modeler
