// SPDX-License-Identifier: BSD-3-Clause
// A model degrades phase by phase: a group that no law reproduces is kept as measured (exact at the fitted n,
// approximate and flagged elsewhere), and a held-out run the model cannot be evaluated at is a row of the
// validation, not the end of the fit.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "p3s/error.hpp"
#include "p3s/modeler/fit.hpp"
#include "p3s/modeler/lt4nc.hpp"
#include "p3s/modeler/model.hpp"
#include "p3s/modeler/predict.hpp"
#include "ring_signatures.hpp"

namespace p3s::modeler {
namespace {

/// Pseudo-random right peers: no frame, rank class or small expression explains them.
std::vector<std::int32_t> scattered(std::int32_t r, std::int32_t n) {
  const std::uint64_t h =
      (static_cast<std::uint64_t>(r) + 1) * 2654435761ULL ^ static_cast<std::uint64_t>(n) * 40503ULL;
  return {static_cast<std::int32_t>((h >> 7) % static_cast<std::uint64_t>(n))};
}

/// The group of the phase calling `call`.
std::size_t group_of(const PhaseModel& p, const std::string& call) {
  for (std::size_t g = 0; g < p.groups.size(); ++g) {
    if (p.groups[g].call == call) return g;
  }
  ADD_FAILURE() << "no group calls " << call;
  return 0;
}

TEST(Degrade, UnmodelledPeersAreKeptAsMeasuredAndFlagged) {
  const Fit fit = build_model(ring_series({4, 8, 16, 32}, 100, scattered), {});
  // The model fitted on 4, 8, 16 could only approximate the sends at 32: the validation says so.
  ASSERT_TRUE(fit.report.validation.has_value());
  const PhaseCheck& check = fit.report.validation->phases.at(1);
  EXPECT_TRUE(check.error.empty()) << check.error;
  EXPECT_FALSE(check.approximate_groups.empty());
  EXPECT_NE(validation_report(*fit.report.validation).find("approximate (kept as measured at other n): group"),
            std::string::npos);
  const PhaseModel& loop = fit.model.phases.at(1);
  const std::size_t g = group_of(loop, "MPI_Isend");
  ASSERT_FALSE(loop.groups[g].measured.empty());
  EXPECT_EQ(fit.report.phases.at(1).approximate_groups, (std::vector<std::uint32_t>{static_cast<std::uint32_t>(g)}));
  const std::vector<std::string>& notes = fit.report.phases[1].notes;
  EXPECT_TRUE(std::any_of(notes.begin(), notes.end(),
                          [](const std::string& s) { return s.find("kept as measured at n = 4 8 16 32") != s.npos; }));

  // Written and read back, it gives at a fitted n exactly what was measured there, and is not approximate.
  const std::filesystem::path path = dir() / "scattered.model";
  write_model(fit.model, path);
  const Model back = read_model(path);
  const PhaseModel& again = back.phases.at(1);
  EXPECT_TRUE(again.approximate_groups(16).empty());
  const PhasePredictor at16(again, 16);
  for (std::int32_t r = 0; r < 16; ++r) {
    const PredictedRank pr = at16.rank(r);
    ASSERT_EQ(pr.calls.at(1).call, "MPI_Isend");
    EXPECT_EQ(pr.calls[1].actions.at(0).peer, scattered(r, 16).front()) << "rank " << r;
  }

  // At a new n the nearest fitted run stands in: every rank still sends once, the group is flagged.
  EXPECT_EQ(again.approximate_groups(64), (std::vector<std::uint32_t>{static_cast<std::uint32_t>(g)}));
  EXPECT_EQ(again.groups[g].measured.source(64).n, 32);
  const PhasePredictor at64(again, 64);
  for (std::int32_t r = 0; r < 64; ++r) {
    const PredictedRank pr = at64.rank(r);
    ASSERT_EQ(pr.calls.size(), 4U) << "rank " << r;
    EXPECT_LT(pr.calls[1].actions.empty() ? -1 : pr.calls[1].actions[0].peer, 64);
  }
  // Standing in, the sends no longer meet the receives the laws give: the LT4NC is refused, naming the phase, and
  // nothing is written; with a repair it is written, saying which groups are approximate, which run stands in and
  // what the repair dropped.
  std::filesystem::remove_all(dir() / "lt64");
  try {
    (void)write_lt4nc(back, 64, dir() / "lt64");
    ADD_FAILURE() << "an inconsistent LT4NC was written";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("phase 1 predicted at n = 64 is inconsistent"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir() / "lt64"));
  EXPECT_TRUE(write_lt4nc(back, 64, dir() / "lt64", false, OnInconsistency::Repair).repaired());
  std::ifstream in(dir() / "lt64" / "lt4nc.json");
  const nlohmann::json header = nlohmann::json::parse(in);
  EXPECT_EQ(header.at("consistency"), "repaired");
  EXPECT_TRUE(header.at("phases").at(0).at("repair").is_null());
  EXPECT_GT(header.at("phases").at(1).at("repair").at("dropped_actions").get<int>(), 0);
  const nlohmann::json& approx = header.at("phases").at(1).at("approximate_groups");
  ASSERT_EQ(approx.size(), 1U);
  EXPECT_EQ(approx[0].at("group"), g);
  EXPECT_EQ(approx[0].at("call"), "MPI_Isend");
  EXPECT_EQ(approx[0].at("from_n"), 32);
  EXPECT_TRUE(header.at("phases").at(0).at("approximate_groups").empty());
  // The readable report says so too.
  EXPECT_NE(model_report(back, fit.report).find("peers as measured at n = 4 8 16 32"), std::string::npos);
}

TEST(Degrade, AnUnmodelledCountIsKeptAsMeasured) {
  // Each rank probes 0, 1 or 2 times per iteration, by no law: the group keeps each rank's count per run.
  const Probes probes = [](std::int32_t r, std::int32_t n) { return (r * 5 + n) % 3; };
  const Fit fit = fit_model(load_runs(ring_series({4, 8, 16, 32}, 100, right_neighbour, probes), 3));
  const PhaseModel& loop = fit.model.phases.at(1);
  const std::size_t g = group_of(loop, "MPI_Iprobe");
  ASSERT_FALSE(loop.groups[g].measured.empty());
  const std::filesystem::path path = dir() / "probes.model";
  write_model(fit.model, path);
  const PhaseModel again = read_model(path).phases.at(1);
  for (std::int32_t r = 0; r < 16; ++r) EXPECT_EQ(again.groups[g].count_at(r, 16), probes(r, 16)) << "rank " << r;
  EXPECT_EQ(again.approximate_groups(64), (std::vector<std::uint32_t>{static_cast<std::uint32_t>(g)}));
  const PhasePredictor at64(again, 64);
  for (std::int32_t r = 0; r < 64; ++r) {
    const auto calls = static_cast<std::int32_t>(at64.rank(r).calls.size());
    EXPECT_GE(calls, 4);
    EXPECT_LE(calls, 6);
  }
}

/// n / 4 Isends to the right neighbour: at 18 processes a quarter of n is no whole number of calls.
std::vector<std::int32_t> quarter(std::int32_t r, std::int32_t n) {
  return std::vector<std::int32_t>(static_cast<std::size_t>(n / 4), (r + 1) % n);
}

TEST(Degrade, AHeldOutRunTheModelCannotBeEvaluatedAtIsReportedAndTheModelWritten) {
  const Fit fit = build_model(ring_series({4, 8, 16, 18}, 100, quarter), {});
  ASSERT_TRUE(fit.report.validation.has_value());
  const Validation& v = *fit.report.validation;
  EXPECT_EQ(v.n, 18);
  ASSERT_EQ(v.phases.size(), 2U);
  EXPECT_TRUE(v.phases[0].error.empty()) << v.phases[0].error;
  const PhaseCheck& loop = v.phases[1];
  EXPECT_FALSE(loop.pattern_exact);
  // The error names the phase, the group, the law and where it would be whole.
  EXPECT_NE(loop.error.find("phase 1, group"), std::string::npos) << loop.error;
  EXPECT_NE(loop.error.find("(1/4)*n"), std::string::npos) << loop.error;
  EXPECT_NE(loop.error.find("at n = 18 (it is at n = 16 and n = 20)"), std::string::npos) << loop.error;
  EXPECT_NE(validation_report(v).find("not evaluated: phase 1, group"), std::string::npos) << validation_report(v);
  // The model of all four runs is written, and predicts.
  const std::filesystem::path path = dir() / "quarter.model";
  write_model(fit.model, path);
  write_fit_report(fit.report, fit_report_path(path));
  EXPECT_EQ(read_fit_report(fit_report_path(path)).validation->phases.at(1).error, loop.error);
  EXPECT_EQ(read_model(path).inputs.size(), 4U);
  const PhasePredictor at18(read_model(path).phases.at(1), 18);
  EXPECT_EQ(at18.weight(), 100);
}

TEST(Degrade, PredictingWhereALawIsNoWholeNumberNamesThePhaseGroupAndNearbyN) {
  const Fit fit = fit_model(load_runs(ring_series({4, 8, 16}, 100, quarter), 3));
  try {
    (void)PhasePredictor(fit.model.phases.at(1), 18);
    FAIL() << "a quarter of 18 calls was generated";
  } catch (const ModelError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("phase 1, group 1 (MPI_Isend): the repetition count (1/4)*n is not a whole number of calls "
                        "at n = 18 (it is at n = 16 and n = 20)"),
              std::string::npos)
        << what;
  }
  EXPECT_NO_THROW((void)PhasePredictor(fit.model.phases.at(1), 20));
}

}  // namespace
}  // namespace p3s::modeler
