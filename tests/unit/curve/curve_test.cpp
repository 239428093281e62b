// SPDX-License-Identifier: BSD-3-Clause
// The curve from known times: speedup, efficiency, the two rules of the recommendation, where phases stop scaling.
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "p3s/curve/curve.hpp"
#include "p3s/error.hpp"

namespace p3s::curve {
namespace {

/// A point at n with time t seconds, predicted or measured.
Point at(std::int64_t n, double seconds, bool predicted = true) {
  Point p;
  p.n = n;
  (predicted ? p.predicted_ns : p.measured_ns) = seconds * 1e9;
  return p;
}

/// Amdahl's law: serial share s of a run of 100 s at one process.
double amdahl(double s, std::int64_t n) { return 100 * (s + (1 - s) / static_cast<double>(n)); }

TEST(Curve, SpeedupAndEfficiencyAreAgainstTheBaseline) {
  const Curve c = make_curve({at(4, 80, false), at(8, 40, false), at(16, 25), at(32, 20)}, Options{});
  ASSERT_EQ(c.rows.size(), 4U);
  EXPECT_EQ(c.baseline, 4);
  EXPECT_DOUBLE_EQ(c.rows[0].speedup, 1);
  EXPECT_DOUBLE_EQ(c.rows[1].speedup, 2);
  EXPECT_DOUBLE_EQ(c.rows[1].efficiency, 1);
  EXPECT_DOUBLE_EQ(c.rows[2].speedup, 3.2);
  EXPECT_DOUBLE_EQ(c.rows[2].efficiency, 0.8);
  EXPECT_DOUBLE_EQ(c.rows[3].efficiency, 0.5);
  EXPECT_FALSE(c.rows[0].predicted);
  EXPECT_TRUE(c.rows[3].predicted);
  Options o;
  o.baseline = 8;
  const Curve at8 = make_curve({at(4, 80), at(8, 40), at(16, 25)}, o);
  EXPECT_DOUBLE_EQ(at8.rows[0].speedup, 0.5);
  EXPECT_DOUBLE_EQ(at8.rows[2].efficiency, 0.8);
  o.baseline = 12;
  EXPECT_THROW((void)make_curve({at(4, 80), at(8, 40), at(16, 25)}, o), InputError);
}

TEST(Curve, TheEfficiencyRuleTakesTheLargestEfficientN) {
  // Serial share 1 %: efficiency against 1 process falls below 50 % past 100 processes; a doubling from 64 to 128
  // still gains 30 %, from 128 to 256 22 %.
  std::vector<Point> points;
  for (const std::int64_t n : {1, 2, 4, 8, 16, 32, 64, 128, 256}) points.push_back(at(n, amdahl(0.01, n)));
  Options o;
  o.gain = 0.25;
  const Curve c = make_curve(points, o);
  EXPECT_EQ(c.recommendation.by_efficiency, 64);  // E(64) = 61 %, E(128) = 44 %
  ASSERT_TRUE(c.recommendation.knee.has_value());
  EXPECT_EQ(*c.recommendation.knee, 128);
  EXPECT_EQ(c.recommendation.n, 64);
  EXPECT_NE(c.recommendation.rule.find("efficiency is at least 50 %"), std::string::npos);
  EXPECT_EQ(c.recommendation.fastest, 256);
}

TEST(Curve, TheKneeWinsWhereDoublingGainsLittleFirst) {
  // Serial share 5 %: 8 -> 16 gains 35 %, 16 -> 32 27 %, 32 -> 64 19 %, 64 -> 128 11 %; the efficiency against 8
  // is 18 % at 128.
  std::vector<Point> points;
  for (const std::int64_t n : {8, 16, 32, 64, 128}) points.push_back(at(n, amdahl(0.05, n)));
  Options o;
  o.efficiency = 0.15;
  o.gain = 0.15;
  const Curve c = make_curve(points, o);
  EXPECT_EQ(c.recommendation.by_efficiency, 128);
  ASSERT_TRUE(c.recommendation.knee.has_value());
  EXPECT_EQ(*c.recommendation.knee, 64);
  EXPECT_EQ(c.recommendation.n, 64);
  EXPECT_NE(c.recommendation.rule.find("the knee"), std::string::npos);
  ASSERT_TRUE(c.rows[0].gain.has_value());
  EXPECT_NEAR(*c.rows[0].gain, 1 - amdahl(0.05, 16) / amdahl(0.05, 8), 1e-12);
  // Points that are no doubling apart: the gain is per doubling.
  const Curve odd = make_curve({at(4, 100), at(16, 25)}, Options{});
  EXPECT_NEAR(*odd.rows[0].gain, 0.5, 1e-12);
}

TEST(Curve, AStillScalingRunIsRecommendedItsLargestEfficientN) {
  const Curve c = make_curve({at(2, 100), at(4, 50), at(8, 25)}, Options{});
  EXPECT_FALSE(c.recommendation.knee.has_value());
  EXPECT_EQ(c.recommendation.n, 8);
}

/// A point with two phases: a halo that scales, and a reduction whose MPI time grows with n.
Point with_phases(std::int64_t n) {
  Point p = at(n, 0);
  const double halo = 64.0 / static_cast<double>(n);
  const double reduce = 0.5 * std::log2(static_cast<double>(n));
  p.predicted_ns = (halo + reduce) * 1e9;
  p.phases.push_back({1, "MPI_Irecv MPI_Isend MPI_Waitall", 100, true, halo * 1e9, 0.9 * halo * 1e9, 0.9 * halo * 1e9,
                      0.1 * halo * 1e9, 0.05, 400.0 * static_cast<double>(n), 8e3 * static_cast<double>(n)});
  p.phases.push_back({2, "MPI_Allreduce", 100, true, reduce * 1e9, 0.1e9, 0.1e9, reduce * 1e9 - 0.1e9, 0.05,
                      std::nullopt, std::nullopt});
  p.phases.push_back({3, "MPI_Finalize", 1, false, 1e6, 1e6, 1e6, 0, 0, std::nullopt, std::nullopt});
  return p;
}

TEST(Curve, ThePhaseThatStopsScalingFirstIsNamedWithWhy) {
  const Curve c = make_curve({with_phases(4), with_phases(8), with_phases(16), with_phases(32)}, Options{});
  ASSERT_EQ(c.phases.size(), 3U);
  ASSERT_TRUE(c.first_to_stop.has_value());
  const PhaseLimit& first = c.phases[*c.first_to_stop];
  EXPECT_EQ(first.id, 2U);
  ASSERT_TRUE(first.stops_at.has_value());
  EXPECT_EQ(*first.stops_at, 4);
  EXPECT_NE(first.why.find("collectives"), std::string::npos) << first.why;
  EXPECT_FALSE(c.phases[0].stops_at.has_value());  // the halo halves at every doubling
  EXPECT_TRUE(c.phases[2].minor);
  ASSERT_EQ(first.time_ns.size(), 4U);
  EXPECT_NEAR(*first.time_ns[3], 2.5e9, 1);
}

TEST(Curve, ARankThatComputesMostIsNamedAsTheImbalance) {
  // Rank 0 computes a serial part of 4 s beside its share of 64 s; the others wait for it in MPI. From 32 to 64 the
  // time goes from 6 s to 5 s, a gain of 17 %.
  std::vector<Point> points;
  for (const std::int64_t n : {8, 16, 32, 64}) {
    const double share = 64.0 / static_cast<double>(n);
    const double mean = 4.0 / static_cast<double>(n) + share;
    Point p = at(n, 4 + share);
    p.phases.push_back({1, "MPI_Allreduce MPI_Sendrecv", 10, true, (4 + share) * 1e9, mean * 1e9, (4 + share) * 1e9,
                        (4 + share - mean) * 1e9, 0, std::nullopt, std::nullopt});
    points.push_back(p);
  }
  Options o;
  o.gain = 0.2;
  const Curve c = make_curve(points, o);
  ASSERT_TRUE(c.first_to_stop.has_value());
  const PhaseLimit& l = c.phases[*c.first_to_stop];
  EXPECT_EQ(*l.stops_at, 32);
  EXPECT_NE(l.why.find("imbalance"), std::string::npos) << l.why;
  EXPECT_NE(l.why.find("computes 4.7 times the mean"), std::string::npos) << l.why;
}

TEST(Curve, ACurveIsWrittenAsJsonAndCsv) {
  const Curve c = make_curve({at(4, 80, false), with_phases(8), with_phases(16)}, Options{});
  const nlohmann::json j = nlohmann::json::parse(curve_json(c));
  EXPECT_EQ(j.at("schema_version"), 1);
  EXPECT_EQ(j.at("rows").size(), 3U);
  EXPECT_EQ(j.at("rows")[0].at("source"), "measured");
  EXPECT_TRUE(j.at("rows")[0].at("predicted_ns").is_null());
  EXPECT_EQ(j.at("recommendation").at("n"), c.recommendation.n);
  EXPECT_EQ(j.at("phases").size(), 3U);
  const std::string csv = curve_csv(c);
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "n,source,time_s,predicted_s,measured_s,error,speedup,efficiency");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 4);
  EXPECT_NE(curve_table(c).find("recommended n = "), std::string::npos);
}

TEST(Curve, ExtraPReadsThePointsPerPhaseAndMetric) {
  Point measured = at(4, 80, false);
  const nlohmann::json j = nlohmann::json::parse(extrap_json({measured, with_phases(8), with_phases(16)}));
  EXPECT_EQ(j.at("parameters"), nlohmann::json::array({"p"}));
  const nlohmann::json& run = j.at("measurements").at("run");
  ASSERT_EQ(run.at("time").size(), 3U);
  EXPECT_EQ(run.at("time")[0].at("point"), nlohmann::json::array({4}));
  EXPECT_DOUBLE_EQ(run.at("time")[0].at("values")[0].get<double>(), 80);
  EXPECT_EQ(run.at("time_measured").size(), 1U);
  EXPECT_EQ(run.at("time_predicted").size(), 2U);
  const nlohmann::json& halo = j.at("measurements").at("run->phase 1");
  EXPECT_DOUBLE_EQ(halo.at("messages")[1].at("values")[0].get<double>(), 6400);
  EXPECT_EQ(halo.at("visits")[0].at("values")[0], 100);
  EXPECT_FALSE(j.at("measurements").at("run->phase 2").contains("messages"));  // not known: left out
  for (const auto& [path, metrics] : j.at("measurements").items()) {
    for (const auto& [metric, list] : metrics.items()) {
      for (const nlohmann::json& m : list) {
        EXPECT_EQ(m.at("point").size(), 1U) << path << " " << metric;
        EXPECT_TRUE(m.at("values")[0].is_number()) << path << " " << metric;
      }
    }
  }
}

TEST(Curve, NothingToDrawIsAnError) {
  EXPECT_THROW((void)make_curve({}, Options{}), InputError);
  Options o;
  o.gain = 0;
  EXPECT_THROW((void)make_curve({at(2, 1), at(4, 1)}, o), InputError);
}

TEST(Curve, APredictionBesideItsRealRunShowsTheError) {
  Point p = at(64, 9);
  p.measured_ns = 10e9;
  const Curve c = make_curve({at(32, 16, false), p}, Options{});
  ASSERT_TRUE(c.rows[1].error.has_value());
  EXPECT_NEAR(*c.rows[1].error, -0.1, 1e-12);
  EXPECT_TRUE(c.rows[1].predicted);
  EXPECT_DOUBLE_EQ(c.rows[1].time_ns, 9e9);
}

}  // namespace
}  // namespace p3s::curve
