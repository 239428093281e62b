// SPDX-License-Identifier: BSD-3-Clause
// The model end to end on signatures built in code (no MPI): a ring exchange with an Allreduce whose sizes and
// work shrink with n, fitted at 4-32 processes and evaluated at 64; the checks on the inputs; the model file.
#include "p3s/modeler/model.hpp"
#include "p3s/modeler/lt4nc.hpp"
#include "p3s/shell_words.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>

#include <nlohmann/json.hpp>

#include "p3s/error.hpp"
#include "p3s/modeler/dims.hpp"
#include "p3s/modeler/fit.hpp"
#include "p3s/modeler/predict.hpp"
#include "p3s/modeler/series.hpp"
#include "ring_signatures.hpp"

namespace p3s::modeler {
namespace {

TEST(Model, RingFittedAtFewCountsPredictsALargerOneExactly) {
  const Fit fit = build_model(ring_series({4, 8, 16, 32}), {});
  const Model& m = fit.model;
  ASSERT_TRUE(fit.report.validation.has_value());
  EXPECT_EQ(fit.report.validation->n, 32);
  // The validation is of the fit without the run at 32; the model written has it folded in.
  EXPECT_EQ(fit.report.validation->fitted_on, (std::vector<std::int64_t>{4, 8, 16}));
  EXPECT_EQ(fit.report.fitted_on, (std::vector<std::int64_t>{4, 8, 16, 32}));
  for (const PhaseCheck& c : fit.report.validation->phases) {
    EXPECT_TRUE(c.pattern_exact) << c.first_mismatch;
    EXPECT_EQ(c.comms_predicted, c.comms_actual);
    EXPECT_EQ(c.weight_predicted, c.weight_actual);
    EXPECT_LT(c.volume_error_max, 1e-9);
    EXPECT_LT(c.work_error_max, 1e-6);
  }
  ASSERT_EQ(m.phases.size(), 2u);
  const PhasePredictor p(m.phases[1], 64);
  EXPECT_EQ(p.weight(), 100);
  const PredictedRank r = p.rank(63);
  ASSERT_EQ(r.calls.size(), 4u);
  EXPECT_EQ(r.calls[0].call, "MPI_Irecv");
  EXPECT_EQ(r.calls[0].actions.at(0).peer, 62);
  EXPECT_EQ(r.calls[1].actions.at(0).peer, 0);  // the ring wraps around
  EXPECT_DOUBLE_EQ(r.calls[1].actions.at(0).bytes, 1048576.0 / 64);
  EXPECT_NEAR(r.calls[1].burst_work, 1e8 / 64, 1e-3 * 1e8 / 64);  // shared work, spread over 64 ranks
  ASSERT_EQ(r.calls[2].actions.size(), 2u);                       // the Waitall completes both requests
  EXPECT_EQ(r.calls[3].actions.at(0).collective, mpi::Collective::Allreduce);
  EXPECT_DOUBLE_EQ(r.calls[3].actions.at(0).bytes, 8.0 * 64);
}

/// A scan of `block` bytes at rank r of n, counted as the recorder does: a block to each rank after r and one from
/// each rank before it, r's own included unless `exclusive` (MPI_Exscan, or MPI_Scan in place).
SigAction scan(mpi::Collective op, std::int32_t r, std::int32_t n, double block, bool exclusive) {
  SigAction a;
  a.kind = mpi::ActionKind::Collective;
  a.collective = op;
  a.comm_size = static_cast<std::uint32_t>(n);
  a.bytes = block * (n - r - (exclusive ? 1 : 0));
  a.bytes_received = block * (r + (exclusive ? 0 : 1));
  return a;
}

/// The ring at 4-32 ranks, each rank's iteration followed by the calls `add` appends for rank r of n.
std::vector<std::filesystem::path> ring_with(
    const std::string& name, const std::function<void(analyzer::SigRank&, std::int32_t r, std::int32_t n)>& add) {
  std::vector<std::filesystem::path> paths;
  for (const std::int32_t n : {4, 8, 16, 32}) {
    Signature s = ring(n, 100);
    for (analyzer::SigRank& rank : s.phases[1].ranks) add(rank, rank.rank, n);
    paths.push_back(save(s, name + std::to_string(n)));
  }
  return paths;
}

TEST(Model, AScansSizesFollowEachRanksPlaceNotTheMeanOverRanks) {
  const Fit fit = build_model(
      ring_with(
          "ring-scans",
          [](analyzer::SigRank& rank, std::int32_t r, std::int32_t n) {
            rank.events.push_back(event(mpi::Function::MPI_Scan, {scan(mpi::Collective::Scan, r, n, 24, false)}, 10));
            rank.events.push_back(event(mpi::Function::MPI_Scan, {scan(mpi::Collective::Scan, r, n, 16, true)}, 10));
            rank.events.push_back(event(mpi::Function::MPI_Exscan, {scan(mpi::Collective::Exscan, r, n, 8, true)}, 10));
          }),
      {});
  ASSERT_TRUE(fit.report.validation.has_value());
  for (const PhaseCheck& c : fit.report.validation->phases) {
    EXPECT_TRUE(c.pattern_exact) << c.first_mismatch;
    EXPECT_LT(c.volume_error_max, 1e-9) << "phase " << c.phase;
  }
  const PhasePredictor p(fit.model.phases.at(1), 64);
  for (const std::int64_t r : {0, 17, 63}) {
    const PredictedRank pr = p.rank(r);
    ASSERT_EQ(pr.calls.size(), 7u);
    const auto at = [&](std::size_t call) { return pr.calls[call].actions.at(0); };
    EXPECT_DOUBLE_EQ(at(4).bytes, 24.0 * static_cast<double>(64 - r)) << "rank " << r;
    EXPECT_DOUBLE_EQ(at(4).bytes_received, 24.0 * static_cast<double>(r + 1)) << "rank " << r;
    EXPECT_DOUBLE_EQ(at(5).bytes, 16.0 * static_cast<double>(63 - r)) << "rank " << r;
    EXPECT_DOUBLE_EQ(at(6).bytes_received, 8.0 * static_cast<double>(r)) << "rank " << r;
    EXPECT_DOUBLE_EQ(at(6).block, 8.0);
  }
}

/// The collective entries of a model's ring phase, in group order.
std::vector<CollectiveEntry> collectives_of(const Model& m) {
  std::vector<CollectiveEntry> all;
  for (const GroupModel& g : m.phases.at(1).groups) all.insert(all.end(), g.collectives.begin(), g.collectives.end());
  return all;
}

/// The ring at 4-32 ranks whose messages follow each sender's data: sender s sends the mean (1 MiB / n) times 1 +
/// 0.3 (d_s - mean d), d_s = sin(2.4 s + n): no law in n or r gives a rank its size, but the mean over the ranks is
/// exactly 1 MiB / n.
std::vector<std::filesystem::path> ring_of_data_sizes() {
  std::vector<std::filesystem::path> paths;
  for (const std::int32_t n : {4, 8, 16, 32}) {
    Signature s = ring(n, 100);
    std::vector<double> factor(static_cast<std::size_t>(n));
    double mean = 0;
    for (std::int32_t r = 0; r < n; ++r) mean += std::sin(2.4 * r + n) / n;
    for (std::int32_t r = 0; r < n; ++r) factor[static_cast<std::size_t>(r)] = 1 + 0.3 * (std::sin(2.4 * r + n) - mean);
    for (analyzer::SigRank& rank : s.phases[1].ranks) {
      for (SigEvent& e : rank.events) {
        for (SigAction& a : e.actions) {
          const bool sent = a.kind == mpi::ActionKind::Send;
          if (!sent && a.kind != mpi::ActionKind::IrecvPost && a.kind != mpi::ActionKind::Recv) continue;
          a.bytes *= factor[static_cast<std::size_t>(sent ? rank.rank : a.peer)];
          a.bytes_min = a.bytes_max = a.bytes;
        }
      }
    }
    paths.push_back(save(s, "ring-data-sizes" + std::to_string(n)));
  }
  return paths;
}

// Sizes that follow each rank's data miss message by message, but the phase's volume (what the network carries) is
// the mean's law times the messages: the validation tells the two apart.
TEST(Model, TheVolumeOfAPhaseIsCheckedBesideItsMessagesSizes) {
  const Fit fit = build_model(ring_of_data_sizes(), {});
  ASSERT_TRUE(fit.report.validation.has_value());
  const PhaseCheck& step = fit.report.validation->phases.at(1);
  EXPECT_TRUE(step.pattern_exact) << step.first_mismatch;
  EXPECT_GT(step.volume_error_mean, 0.05);
  EXPECT_GT(step.volume_error_max, step.volume_error_mean);
  EXPECT_LT(step.volume_error_total, 1e-6);
  EXPECT_LT(fit.report.validation->phases.at(0).volume_error_total, 1e-9);
  const std::string text = validation_report(*fit.report.validation);
  EXPECT_NE(text.find("volume err phase"), std::string::npos) << text;
}

TEST(Model, OnlyAScanWhoseLastMemberReceivesButSendsNothingIsInPlace) {
  const auto add = [](analyzer::SigRank& rank, std::int32_t r, std::int32_t n) {
    // A nonblocking scan's request carries no byte at any member: it tells nothing about the scan's kind.
    SigAction request = scan(mpi::Collective::Scan, r, n, 0, false);
    request.kind = mpi::ActionKind::NbCollRequest;
    rank.events.push_back(event(mpi::Function::MPI_Iscan, {request}, 10));
    // An inclusive scan of 8-byte blocks, but of no element in the run at 8: its last member sent nothing there.
    rank.events.push_back(
        event(mpi::Function::MPI_Scan, {scan(mpi::Collective::Scan, r, n, n == 8 ? 0 : 8, false)}, 10));
    // An inclusive scan that looks in place in the run at 8 only: the other runs outvote it.
    rank.events.push_back(event(mpi::Function::MPI_Scan, {scan(mpi::Collective::Scan, r, n, 8, n == 8)}, 10));
    rank.events.push_back(event(mpi::Function::MPI_Exscan, {scan(mpi::Collective::Exscan, r, n, 8, true)}, 10));
  };
  const Fit fit = build_model(ring_with("ring-scan-kinds", add), {});
  const Model& m = fit.model;
  const std::string report = model_report(m, fit.report);
  EXPECT_NE(report.find("EXSCAN on world, bytes = 4*(n-1) (mean; by place: a block to each later member)\n"),
            std::string::npos)
      << report;
  std::vector<std::pair<mpi::Collective, bool>> kinds;
  for (const CollectiveEntry& c : collectives_of(m)) kinds.emplace_back(c.op, c.exclusive);
  const std::vector<std::pair<mpi::Collective, bool>> expected{{mpi::Collective::Allreduce, false},
                                                               {mpi::Collective::Scan, false},
                                                               {mpi::Collective::Scan, false},
                                                               {mpi::Collective::Scan, false},
                                                               {mpi::Collective::Exscan, true}};
  EXPECT_EQ(kinds, expected);

  // A model file written before "exclusive" was a key: its MPI_Exscan is still exclusive.
  const std::filesystem::path path = dir() / "scan-kinds.model";
  write_model(m, path);
  nlohmann::json j;
  std::ifstream(path) >> j;
  std::function<void(nlohmann::json&)> strip = [&](nlohmann::json& x) {
    if (x.is_object()) x.erase("exclusive");
    for (nlohmann::json& y : x) {
      if (y.is_structured()) strip(y);
    }
  };
  strip(j);
  std::ofstream(path) << j.dump();
  ASSERT_EQ(j.dump().find("exclusive"), std::string::npos);
  std::vector<std::pair<mpi::Collective, bool>> read_back;
  for (const CollectiveEntry& c : collectives_of(read_model(path))) read_back.emplace_back(c.op, c.exclusive);
  EXPECT_EQ(read_back, expected);
}

TEST(Model, ARankWithMoreWorkIsAWorkClassOfItsOwn) {
  // Rank 0 also writes the output: 5e6 more work per iteration, at every n; the others share 1e8.
  std::vector<std::filesystem::path> paths;
  for (const std::int32_t n : {4, 8, 16, 32}) {
    paths.push_back(save(ring(n, 100, "PAPI_TOT_INS", "", 5e6), "ring-io" + std::to_string(n)));
  }
  const Fit fit = build_model(paths, {});
  const Model& m = fit.model;
  ASSERT_TRUE(fit.report.validation.has_value());
  for (const PhaseCheck& c : fit.report.validation->phases) EXPECT_LT(c.work_error_max, 1e-3) << c.phase;
  ASSERT_EQ(m.phases.at(1).work.size(), 2u);
  EXPECT_EQ(m.phases[1].work[0].when.to_string(), "r == 0");
  const PhasePredictor p(m.phases[1], 64);
  double rank0 = 0;
  double rank5 = 0;
  for (const PredictedCall& c : p.rank(0).calls) rank0 += c.burst_work;
  for (const PredictedCall& c : p.rank(5).calls) rank5 += c.burst_work;
  EXPECT_NEAR(rank0 - rank5, 5e6, 1e3);
}

TEST(Model, ReportsReadableEquations) {
  const Fit fit = fit_model(load_runs(ring_series({4, 8, 16}), 3));
  const std::string report = model_report(fit.model, fit.report);
  EXPECT_NE(report.find("weight = 100"), std::string::npos) << report;
  EXPECT_NE(report.find("dest = (r + 1) mod n"), std::string::npos) << report;
  EXPECT_NE(report.find("bytes = 1048576/n"), std::string::npos) << report;
  EXPECT_NE(report.find("scaling"), std::string::npos) << report;
}

/// The ring at 4-32 ranks making `weights[k]` iterations at the k-th count (its order saying the same).
std::vector<std::filesystem::path> ring_iterating(const std::string& name, const std::vector<std::uint64_t>& weights) {
  std::vector<std::filesystem::path> paths;
  const std::vector<std::int32_t> ns = {4, 8, 16, 32};
  for (std::size_t k = 0; k < ns.size(); ++k)
    paths.push_back(save(ring(ns[k], weights[k]), name + std::to_string(ns[k])));
  return paths;
}

TEST(Model, AWeightTheDataDecidesIsTheNearestFittedRunsNotATrend) {
  // How often a step takes a data-dependent branch: a few percent apart from one count to the next, no law of n.
  const Fit fit = build_model(ring_iterating("dataweight", {1000, 1012, 985, 1021}), {});
  ASSERT_TRUE(fit.report.validation.has_value());
  EXPECT_EQ(fit.report.validation->phases.at(1).weight_predicted, 985) << "fitted on 4-16: 16's, at 32";
  const PhaseModel& loop = fit.model.phases.at(1);
  EXPECT_FALSE(loop.weight_exact);
  EXPECT_EQ(loop.weight_measured.size(), 4U);
  EXPECT_EQ(loop.weight_at(8), 1012);
  EXPECT_EQ(loop.weight_at(12), 985) << "the larger of two fitted n as near";
  EXPECT_EQ(loop.weight_at(1024), 1021) << "not a trend run away a few doublings out";
  const std::vector<std::string> caveats = loop.caveats(64, {4, 8, 16, 32});
  EXPECT_TRUE(std::any_of(caveats.begin(), caveats.end(), [](const std::string& s) {
    return s.find("at n = 64 it is the nearest fitted run's (n = 32), 1021") != std::string::npos;
  }));
  EXPECT_TRUE(loop.caveats(16, {4, 8, 16, 32}).empty()) << "a fitted count's own weight";
  const std::vector<std::string>& notes = fit.report.phases.at(1).notes;
  EXPECT_TRUE(std::any_of(notes.begin(), notes.end(), [](const std::string& s) {
    return s.find("kept as measured at n = 4 8 16 32") != std::string::npos;
  }));
  const std::filesystem::path path = dir() / "dataweight.model";
  write_model(fit.model, path);
  EXPECT_EQ(read_model(path).phases.at(1).weight_measured, loop.weight_measured);
  // A file that says otherwise is refused: measured weights beside an exact law, none, or not by a process count.
  nlohmann::json written;
  std::ifstream(path) >> written;
  const auto refused = [&](const std::function<void(nlohmann::json&)>& mutate) {
    nlohmann::json j = written;
    mutate(j.at("phases").at(1));
    std::ofstream(path) << j.dump();
    EXPECT_THROW(static_cast<void>(read_model(path)), InputError) << j.at("phases").at(1).at("weight_measured");
  };
  refused([](nlohmann::json& p) { p["weight_exact"] = true; });
  refused([](nlohmann::json& p) { p["weight_measured"] = nlohmann::json::object(); });
  refused([](nlohmann::json& p) { p["weight_measured"] = nullptr; });
  refused([](nlohmann::json& p) { p["weight_measured"]["04"] = 3; });
  refused([](nlohmann::json& p) { p["weight_measured"]["64"] = -1; });
  // A weight that grows with n by more than the data moves it is a trend, fitted and extrapolated.
  const Fit trend = build_model(ring_iterating("trendweight", {1000, 1300, 1700, 2300}), {});
  EXPECT_TRUE(trend.model.phases.at(1).weight_measured.empty());
  EXPECT_GT(trend.model.phases.at(1).weight_at(64), 2300);
}

TEST(Model, APhaseThatIsATimeStepInEveryFittedRunIsOneInTheModel) {
  // The analysis marks the phases that are one time step each (the step and its kinds); the model keeps the mark
  // where every fitted run has it, and their weights add up to the code's steps at any n.
  const auto series = [](const std::string& name, bool marked_at_16) {
    std::vector<std::filesystem::path> paths;
    for (const std::int32_t n : {4, 8, 16}) {
      Signature s = ring(n, 100);
      s.phases.at(1).step = n != 16 || marked_at_16;
      paths.push_back(save(s, name + std::to_string(n)));
    }
    return paths;
  };
  const Fit fit = build_model(series("stepmarked", true), {});
  EXPECT_FALSE(fit.model.phases.at(0).step);
  EXPECT_TRUE(fit.model.phases.at(1).step);
  EXPECT_EQ(time_step_text(fit.model.phases, 64), "phase 1: 100 steps");
  const std::filesystem::path path = dir() / "stepmarked.model";
  write_model(fit.model, path);
  EXPECT_TRUE(read_model(path).phases.at(1).step);
  nlohmann::json written;
  std::ifstream(path) >> written;
  written.at("phases").at(1)["step"] = 1;
  std::ofstream(path) << written.dump();
  EXPECT_THROW(static_cast<void>(read_model(path)), InputError) << "a mark that is no true or false";
  const Fit unmarked = build_model(series("stepunmarked", false), {});
  EXPECT_FALSE(unmarked.model.phases.at(1).step) << "not a step in every fitted run";
  EXPECT_EQ(time_step_text(unmarked.model.phases, 64), "");
}

TEST(Model, TheTimeStepsKindsAddUpToTheStepsAtANewNTheMainKindTakingTheRest) {
  // 1000 steps: a kind (the step with a probe more) taken n / 4 times, another (two probes) as often as the data
  // says (100, 103, 98, 101), and the main kind the rest (899, 895, 898, 891: no law of its own, kept as measured).
  // Each kind by its own law would give 898 + 8 + 98 = 1004 steps at 32.
  const std::map<std::int32_t, std::uint64_t> data = {{4, 100}, {8, 103}, {16, 98}, {32, 101}};
  const auto run = [&data](std::int32_t n) {
    const std::uint64_t each = static_cast<std::uint64_t>(n / 4);
    Signature s = ring(n, 1000 - each - data.at(n));
    for (const auto& [probes, weight] : {std::pair{1, each}, std::pair{2, data.at(n)}}) {
      analyzer::SigPhase kind = s.phases.at(1);
      kind.id = static_cast<std::uint32_t>(s.phases.size());
      kind.weight = weight;
      kind.step = true;
      for (std::int32_t r = 0; r < n; ++r) kind.ranks.at(r) = loop_rank(r, n, right_neighbour(r, n), 0, probes);
      s.order.push_back({kind.id, kind.weight});
      s.phases.push_back(kind);
    }
    s.phases.at(1).step = true;
    return s;
  };
  std::vector<std::filesystem::path> paths;
  for (const std::int32_t n : {4, 8, 16, 32}) paths.push_back(save(run(n), "kinds" + std::to_string(n)));
  const Fit fit = build_model(paths, {});
  ASSERT_TRUE(fit.report.validation.has_value());
  ASSERT_TRUE(fit.report.validation->time_step.has_value());
  const StepCheck& held = *fit.report.validation->time_step;
  EXPECT_EQ(held.kinds, (std::vector<std::uint32_t>{1, 2, 3}));
  EXPECT_EQ(held.predicted, 1000) << "fitted on 4-16, at 32";
  EXPECT_EQ(held.actual, 1000);
  const PhaseModel& main = fit.model.phases.at(1);
  ASSERT_TRUE(main.step_total.has_value());
  EXPECT_FALSE(main.weight_exact) << "no law of its own";
  EXPECT_FALSE(fit.model.phases.at(2).step_total.has_value()) << "only the heaviest kind takes the rest";
  EXPECT_EQ(main.weight_at(16), 898) << "a fitted run's own";
  EXPECT_EQ(main.weight_at(128), 1000 - 32 - 101);
  EXPECT_EQ(time_step_text(fit.model.phases, 128), "phase 1 with kinds 2, 3: 1000 steps");
  const std::filesystem::path path = dir() / "kinds.model";
  write_model(fit.model, path);
  EXPECT_EQ(read_model(path).phases.at(1).weight_at(128), 867) << "the other kinds linked when read";
  nlohmann::json written;
  std::ifstream(path) >> written;
  const auto refused = [&](const std::function<void(nlohmann::json&)>& mutate, const std::string& why) {
    nlohmann::json j = written;
    mutate(j.at("phases"));
    std::ofstream(path) << j.dump();
    EXPECT_THROW(static_cast<void>(read_model(path)), InputError) << why;
  };
  refused([](nlohmann::json& p) { p.at(0)["step_total"] = p.at(1).at("step_total"); }, "on a phase that is no kind");
  refused([](nlohmann::json& p) { p.at(2)["step_total"] = p.at(1).at("step_total"); }, "on a second kind");
  refused(
      [](nlohmann::json& p) {
        p.at(2)["step"] = false;
        p.at(3)["step"] = false;
      },
      "on the only kind");
}

/// A ring series of 1000 steps at 4, 8, 16, 32: the main kind, and a kind (the step with a probe more) taken
/// `taken` times at each n.
std::vector<std::filesystem::path> two_kind_series(const std::string& name,
                                                   const std::map<std::int32_t, std::uint64_t>& taken) {
  std::vector<std::filesystem::path> paths;
  for (const std::int32_t n : {4, 8, 16, 32}) {
    Signature s = ring(n, 1000 - taken.at(n));
    s.phases.at(1).step = true;
    analyzer::SigPhase kind = s.phases.at(1);
    kind.id = 2;
    kind.weight = taken.at(n);
    for (std::int32_t r = 0; r < n; ++r) kind.ranks.at(r) = loop_rank(r, n, right_neighbour(r, n), 0, 1);
    s.order.push_back({kind.id, kind.weight});
    s.phases.push_back(kind);
    paths.push_back(save(s, name + std::to_string(n)));
  }
  return paths;
}

TEST(Model, AKindOfTheTimeStepWhoseWeightJumpsWithTheDataKeepsItsWeightsTheStepsStayWhole) {
  // 1000 steps: a kind (the step with a probe more) taken 40, 1, 2, 3 times at 4, 8, 16, 32 (where a stretch of
  // steps was cut is the run's data); the main kind the rest. No law reproduces the kind's weights: a regression
  // would miss them at the fitted n, and the kinds would no longer add up to the code's steps.
  const std::map<std::int32_t, std::uint64_t> jumps = {{4, 40}, {8, 1}, {16, 2}, {32, 3}};
  const Fit fit = build_model(two_kind_series("jumpingkind", jumps), {});
  const PhaseModel& kind = fit.model.phases.at(2);
  EXPECT_EQ(kind.weight_measured, (std::map<std::int64_t, std::int64_t>{{4, 40}, {8, 1}, {16, 2}, {32, 3}}));
  const std::vector<std::string>& notes = fit.report.phases.at(2).notes;
  EXPECT_TRUE(std::any_of(notes.begin(), notes.end(),
                          [](const std::string& n) { return n.starts_with("a kind of the time step whose weight"); }));
  EXPECT_FALSE(std::any_of(notes.begin(), notes.end(), [](const std::string& n) { return n.ends_with("(rounded)"); }))
      << "no regression is left to speak of";
  ASSERT_TRUE(fit.model.phases.at(1).step_total.has_value());
  ASSERT_TRUE(fit.report.validation.has_value() && fit.report.validation->time_step.has_value());
  EXPECT_EQ(fit.report.validation->time_step->predicted, 1000) << "fitted on 4-16, at 32";
  for (const std::int64_t n : {4, 8, 16, 32, 128}) {
    EXPECT_EQ(fit.model.phases.at(1).weight_at(n) + kind.weight_at(n), 1000) << "at " << n;
  }
}

TEST(Model, AKindOfTheTimeStepTakesNoLawThatOnlyJoinsItsWeights) {
  // A kind taken 30, 30, 10, 10 times at 4, 8, 16, 32: an exact law of floor(log2(n)/2) (1, 1, 2, 2 there) joins
  // the two values, and would give fewer than none at 128. Two distinct points of a basis confirm no law of two
  // coefficients: the weights are kept as measured, the main kind takes the code's other steps.
  const std::map<std::int32_t, std::uint64_t> taken = {{4, 30}, {8, 30}, {16, 10}, {32, 10}};
  const Fit fit = build_model(two_kind_series("joinedkind", taken), {});
  const PhaseModel& kind = fit.model.phases.at(2);
  EXPECT_FALSE(kind.weight_exact);
  EXPECT_EQ(kind.weight_at(128), 10) << "the nearest fitted run's";
  EXPECT_EQ(fit.model.phases.at(1).weight_at(128), 990);
  const std::vector<std::string>& notes = fit.report.phases.at(2).notes;
  EXPECT_TRUE(std::any_of(notes.begin(), notes.end(),
                          [](const std::string& n) { return n.find(" only joins, its basis") != std::string::npos; }));
  ASSERT_TRUE(fit.report.validation.has_value() && fit.report.validation->time_step.has_value());
  EXPECT_EQ(fit.report.validation->time_step->predicted, 1000);
}

TEST(Model, FileRoundTrip) {
  const Fit fit = build_model(ring_series({4, 8, 16, 32}), {});
  const std::filesystem::path path = dir() / "ring.model";
  write_model(fit.model, path);
  write_fit_report(fit.report, fit_report_path(path));
  EXPECT_EQ(fit_report_path(path).filename(), "ring.model.report.json");
  const Model back = read_model(path);
  const FitReport report = read_fit_report(fit_report_path(path));
  EXPECT_EQ(model_report(back, report), model_report(fit.model, fit.report));
  ASSERT_TRUE(report.validation.has_value());
  EXPECT_EQ(validation_report(*report.validation), validation_report(*fit.report.validation));
  EXPECT_EQ(back.limits.order_from_n, 32);
  EXPECT_EQ(back.limits.threads_per_process, 1);
  // Every work and size law is listed with its errors, and the model file keeps each law's leave-one-out error.
  const std::vector<LawFit>& laws = report.phases.at(1).laws;
  ASSERT_EQ(laws.size(), fit.report.phases.at(1).laws.size());
  ASSERT_FALSE(laws.empty());
  for (std::size_t i = 0; i < laws.size(); ++i) {
    EXPECT_EQ(laws[i].law, fit.report.phases[1].laws[i].law);
    EXPECT_EQ(laws[i].loo_rel_error, fit.report.phases[1].laws[i].loo_rel_error);
  }
  EXPECT_TRUE(std::any_of(laws.begin(), laws.end(), [](const LawFit& l) {
    return l.law.rfind("work class", 0) == 0 && l.loo_rel_error.has_value();
  }));
  EXPECT_EQ(back.phases.at(1).work.at(0).bursts.at(0).work.law.loo_rel_error,
            fit.model.phases.at(1).work.at(0).bursts.at(0).work.law.loo_rel_error);
}

TEST(Model, ModelFileHoldsWhatPredictionReadsAndNotTheFit) {
  const Fit fit = build_model(ring_series({4, 8, 16, 32}), {});
  const std::filesystem::path path = dir() / "ring.model";
  write_model(fit.model, path);
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const char* fit_only : {"\"validation\"", "\"measured\"", "\"notes\"", "\"share\""}) {
    EXPECT_EQ(text.find(fit_only), std::string::npos) << fit_only << " is in the model file";
  }
  EXPECT_NE(text.find("\"schema_version\": 6"), std::string::npos);
  EXPECT_NE(text.find("\"time_fit\""), std::string::npos);  // the compute-time laws are what predict reads
  EXPECT_NE(text.find("\"limits\""), std::string::npos);
}

TEST(Model, NeedsThreeProcessCounts) {
  try {
    (void)build_model(ring_series({4, 8}), {});
    FAIL() << "two runs were accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("3 or more distinct process counts"), std::string::npos) << e.what();
  }
}

TEST(Model, RefusesTwoRunsAtOneProcessCount) {
  std::vector<std::filesystem::path> paths = ring_series({4, 8, 16});
  paths.push_back(save(ring(8, 100), "ring8-again"));
  EXPECT_THROW((void)build_model(paths, {}), InputError);
}

TEST(Model, RefusesMixedWorkMetrics) {
  std::vector<std::filesystem::path> paths = ring_series({4, 8});
  paths.push_back(save(ring(16, 100, "cputime_ns"), "ring16-cputime"));
  try {
    (void)build_model(paths, {});
    FAIL() << "mixed metrics were accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cputime_ns"), std::string::npos) << e.what();
  }
}

TEST(Model, RefusesPhasesFoundByDifferentMethods) {
  std::vector<std::filesystem::path> paths = ring_series({4, 8});
  Signature by_rank = ring(16, 100);
  by_rank.phase_method = analyzer::PhaseMethod::ByRank;
  paths.push_back(save(by_rank, "ring16-by-rank"));
  try {
    (void)build_model(paths, {});
    FAIL() << "phases of two methods were accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("analyze the runs together"), std::string::npos) << e.what();
  }
}

/// A ring whose Isend goes down a periodic row-major grid, as MPI_Dims_create(n, 2) lays it out under `rule`,
/// recorded on `library`.
std::vector<std::filesystem::path> grid_series(std::initializer_list<std::int32_t> ns, DimsRule rule,
                                               const std::string& library) {
  const SendPeers down = [rule](std::int32_t r, std::int32_t n) {
    const std::vector<int> d = dims_create(n, 2, rule);
    return std::vector<std::int32_t>{((r / d[1] + 1) % d[0]) * d[1] + r % d[1]};
  };
  std::vector<std::filesystem::path> out;
  for (const std::int32_t n : ns) {
    Signature s = ring(n, 100, "PAPI_TOT_INS", "", 0, down);
    s.mpi_library = library;
    out.push_back(save(s, "grid" + std::to_string(n) + std::string(dims_rule_name(rule))));
  }
  return out;
}

TEST(Model, GridsFollowTheDimsCreateOfTheRunsLibrary) {
  // 4-32 lay out alike under both rules; 72 does not: 12 x 6 in Open MPI, 9 x 8 in MPICH.
  for (const auto& [rule, library] : {std::pair{DimsRule::Mpich, std::string("MPICH Version:      4.0.2")},
                                      std::pair{DimsRule::OpenMpi, std::string("Open MPI v4.1.4, package: Debian")}}) {
    const Fit fit = build_model(grid_series({4, 8, 16, 32}, rule, library), {});
    EXPECT_EQ(fit.model.dims_rule, rule);
    EXPECT_EQ(fit.model.mpi_library, library);
    const ScopedDimsRule scope(fit.model.dims_rule);
    const PredictedRank r0 = PhasePredictor(fit.model.phases.at(1), 72).rank(0);
    EXPECT_EQ(r0.calls.at(1).actions.at(0).peer, dims_create(72, 2, rule)[1]) << dims_rule_name(rule);
  }
  // The rule travels with the model file.
  const Fit fit = build_model(grid_series({4, 8, 16, 32}, DimsRule::Mpich, "MPICH Version: 4.0.2"), {});
  const std::filesystem::path file = dir() / "mpich.model";
  write_model(fit.model, file);
  EXPECT_EQ(read_model(file).dims_rule, DimsRule::Mpich);
  // Runs on two libraries whose grids differ are no series.
  std::vector<std::filesystem::path> mixed = grid_series({4, 8}, DimsRule::Mpich, "MPICH Version: 4.0.2");
  for (const auto& p : grid_series({16}, DimsRule::OpenMpi, "Open MPI v4.1.4")) mixed.push_back(p);
  EXPECT_THROW((void)load_runs(mixed, 3), InputError);
}

TEST(Model, RefusesAnotherApplicationOrInput) {
  std::vector<std::filesystem::path> paths = ring_series({4, 8});
  paths.push_back(save(ring(16, 100, "PAPI_TOT_INS", "mpirun -np 16 ./ring 200"), "ring16-other-input"));
  try {
    (void)build_model(paths, {});
    FAIL() << "another input was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("same application with the same input"), std::string::npos) << e.what();
  }
}

/// The ring at 16 saved, with `damage` applied to its JSON: the model of 4, 8 and that run must be refused with a
/// message holding `says`.
void expect_refused(const std::string& name, const std::function<void(nlohmann::json&)>& damage,
                    const std::string& says) {
  std::vector<std::filesystem::path> paths = ring_series({4, 8});
  const std::filesystem::path p = save(ring(16, 100), "ring16-" + name);
  nlohmann::json j;
  {
    std::ifstream in(p);
    j = nlohmann::json::parse(in);
  }
  damage(j);
  std::ofstream(p, std::ios::trunc) << j.dump(1);
  paths.push_back(p);
  try {
    (void)build_model(paths, {});
    FAIL() << name << ": accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << name << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find(p.string()), std::string::npos) << name << ": " << e.what();
  }
}

TEST(Model, RefusesImpossibleOrIncompleteSignatures) {
  using J = nlohmann::json;
  expect_refused(
      "weight0", [](J& j) { j["phases"][1]["weight"] = 0; }, "weight is 0");
  expect_refused(
      "weight-1", [](J& j) { j["phases"][1]["weight"] = -1; }, "weight is -1");
  expect_refused(
      "half-process", [](J& j) { j["processes"] = 8.5; }, "processes is 8.5");
  expect_refused(
      "no-phases", [](J& j) { j["phases"] = J::array(); }, "no phases");
  expect_refused(
      "order-99",
      [](J& j) {
        j["order"].push_back({99, 1});
      },
      "names phase 99");
  expect_refused(
      "peer-999", [](J& j) { j["phases"][1]["ranks"][0]["events"][0]["actions"][0]["peer"] = 999; }, "peer 999");
  expect_refused(
      "peer-5", [](J& j) { j["phases"][1]["ranks"][0]["events"][0]["actions"][0]["peer"] = -5; }, "peer -5");
  expect_refused(
      "bytes-1", [](J& j) { j["phases"][1]["ranks"][0]["events"][0]["actions"][0]["bytes"] = -1; }, "-1.0");
  expect_refused(
      "partial", [](J& j) { j["complete"] = false; }, "did not reach MPI_Finalize");
}

TEST(Model, ValidatesOnlyWithARunOfTheSameApplication) {
  const std::vector<std::filesystem::path> paths = ring_series({4, 8, 16});
  ModelOptions options;
  options.validate_with = save(ring(32, 100, "PAPI_TOT_INS", "mpirun -np 32 ./stencil 20"), "stencil32-validate");
  try {
    (void)build_model(paths, options);
    FAIL() << "a run of another application was used to validate";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("same application"), std::string::npos) << e.what();
  }
}

TEST(Model, ApplicationCommandDropsTheLauncher) {
  EXPECT_EQ(application_command("mpirun -np 4 --oversubscribe /x/halo2d 2000"), "halo2d 2000");
  EXPECT_EQ(application_command("mpiexec --mca btl self,tcp -n 16 --bind-to core ./app -i in.dat"), "app -i in.dat");
  EXPECT_EQ(application_command("srun --ntasks=64 ./app"), "app");
  EXPECT_EQ(application_command("/usr/bin/mpiexec.mpich -n 8 /x/stencil2d 20"), "stencil2d 20");
  EXPECT_EQ(application_command("mpirun.openmpi -np 2 ./app"), "app");
  EXPECT_EQ(application_command("./app 3"), "app 3");
  EXPECT_EQ(application_command(""), "");
}

TEST(Model, ApplicationCommandKeepsEachArgumentWhole) {
  // `app x y` and `app "x y"` are two inputs: the recorder quotes the second, and the identity keeps it apart.
  const std::string two = join_words({"mpirun", "-np", "4", "./app", "x", "y"});
  const std::string one = join_words({"mpirun", "-np", "4", "./app", "x y"});
  EXPECT_EQ(application_command(two), "app x y");
  EXPECT_EQ(application_command(one), "app 'x y'");
  EXPECT_NE(application_command(one), application_command(two));
  const std::vector<std::string> odd = {"./app", "it's", "", "a\"b", "$HOME"};
  EXPECT_EQ(split_words(join_words(odd)), odd);
}

/// The ring at 4 and 8, and at 16 with a phase of `share` of its time that the others lack.
std::vector<std::filesystem::path> ring_series_with_extra_phase(double share, const std::string& name) {
  std::vector<std::filesystem::path> paths = ring_series({4, 8});
  Signature odd = ring(16, 100);
  analyzer::SigPhase extra = odd.phases[0];
  extra.id = 2;
  extra.share = share;
  extra.ranks[0].events[0].function = mpi::Function::MPI_Barrier;
  extra.ranks[0].events[0].call = "MPI_Barrier";
  odd.phases.push_back(extra);
  paths.push_back(save(odd, name));
  return paths;
}

TEST(Model, PhasesMissingInSomeRunAreReported) {
  ModelOptions fit_all;
  fit_all.hold_out_largest = false;
  const Fit fit = build_model(ring_series_with_extra_phase(0.002, "ring16-extra-phase"), fit_all);
  EXPECT_EQ(fit.model.phases.size(), 2u);
  ASSERT_EQ(fit.report.unrelated.size(), 1u);
  EXPECT_NE(fit.report.unrelated[0].find("MPI_Barrier"), std::string::npos) << fit.report.unrelated[0];
}

TEST(Model, ARelevantPhaseMissingInSomeRunStopsTheFit) {
  // 20 % of the run at 16 in a phase the runs at 4 and 8 lack: the model would leave that time out.
  const std::vector<std::filesystem::path> paths = ring_series_with_extra_phase(0.2, "ring16-relevant-extra");
  ModelOptions fit_all;
  fit_all.hold_out_largest = false;
  try {
    (void)build_model(paths, fit_all);
    FAIL() << "a relevant phase left out was not refused";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("phase 2 of the run at 16"), std::string::npos) << what;
    EXPECT_NE(what.find("20.0 %"), std::string::npos) << what;
    EXPECT_NE(what.find("--allow-missing"), std::string::npos) << what;
  }
  fit_all.allow_missing = true;
  const Fit fit = build_model(paths, fit_all);
  EXPECT_EQ(fit.model.phases.size(), 2u);
  ASSERT_EQ(fit.report.unrelated.size(), 1u);
}

TEST(Model, APhaseWhoseCallsChangeWithNIsRelatedByItsPlaceInTheOrder) {
  using Related = std::vector<std::optional<std::uint32_t>>;
  // Between the same related phases, one phase on each side, the calls of one including the other's: the same place
  // in the program (a finalisation that polls with MPI_Irecv/MPI_Wait only beyond 2 processes).
  const std::vector<std::string> two = {"MPI_Init", "MPI_Allreduce MPI_Send", "MPI_Barrier", "MPI_Finalize MPI_Recv"};
  const std::vector<std::string> four = {"MPI_Init", "MPI_Allreduce MPI_Irecv MPI_Send MPI_Wait", "MPI_Barrier",
                                         "MPI_Finalize MPI_Irecv MPI_Recv MPI_Wait"};
  EXPECT_EQ(relate_phase_lists(two, four), (Related{0u, 1u, 2u, 3u}));
  // A phase whose calls neither include nor are included in those of the one left opposite it is another part of
  // the program (one collective for another); a finalisation that calls less is the same.
  const std::vector<std::string> other = {"MPI_Init", "MPI_Alltoall MPI_Send", "MPI_Barrier", "MPI_Finalize"};
  EXPECT_EQ(relate_phase_lists(two, other), (Related{0u, std::nullopt, 2u, 3u}));
  // Two phases left opposite one: which of them it is, the order does not say.
  const std::vector<std::string> split = {"MPI_Init", "MPI_Allreduce", "MPI_Send", "MPI_Barrier",
                                          "MPI_Finalize MPI_Recv"};
  EXPECT_EQ(relate_phase_lists(two, split), (Related{0u, std::nullopt, 3u, 4u}));
}

TEST(Model, KindsOfTheTimeStepAreRelatedAmongThemselvesWhereverTheyFirstOccur) {
  using Related = std::vector<std::optional<std::uint32_t>>;
  // Two runs of steps with a phase between them (a code's second `run`). A kind of the step (a re-neighbouring
  // with a check) occurs first in the second run at 2 processes, in the first at 4: in the order of first
  // occurrence it is on either side of the phase between the runs.
  const PhaseKey init{"MPI_Init", false};
  const PhaseKey plain{"MPI_Irecv MPI_Send MPI_Wait", true};
  const PhaseKey between{"MPI_Allreduce MPI_Barrier MPI_Bcast MPI_Irecv MPI_Send MPI_Wait", false};
  const PhaseKey kind{"MPI_Allreduce MPI_Irecv MPI_Send MPI_Sendrecv MPI_Wait", true};
  const PhaseKey output{"MPI_Allreduce", false};
  const PhaseKey finish{"MPI_Finalize", false};
  const std::vector<PhaseKey> two = {init, plain, between, kind, finish};
  const std::vector<PhaseKey> four = {init, plain, kind, output, between, finish};
  EXPECT_EQ(relate_phase_keys(two, four), (Related{0u, 1u, 4u, 2u, 5u}));
  // By their calls alone the kind and the phase between the runs cannot both be related.
  const auto calls = [](const std::vector<PhaseKey>& keys) {
    std::vector<std::string> out;
    for (const PhaseKey& k : keys) out.push_back(k.calls);
    return out;
  };
  const Related by_calls = relate_phase_lists(calls(two), calls(four));
  EXPECT_FALSE(by_calls[2].has_value() && by_calls[3].has_value());
  // A list that marks no kind (a plan, a run whose analysis found no step) is related by calls alone.
  std::vector<PhaseKey> unmarked = four;
  for (PhaseKey& k : unmarked) k.step = false;
  EXPECT_EQ(relate_phase_keys(two, unmarked), by_calls);
  // A phase that is a kind at one n and no kind at another is still related by its calls and place.
  std::vector<PhaseKey> no_kind = four;
  no_kind[2].step = false;
  EXPECT_EQ(relate_phase_keys(two, no_kind), (Related{0u, 1u, 4u, 2u, 5u}));
}

TEST(Model, LogicalTraceIsWrittenRankByRank) {
  const Model m = build_model(ring_series({4, 8, 16, 32}), {}).model;
  const std::filesystem::path out = dir() / "lt4nc-1000";
  std::filesystem::remove_all(out);
  write_lt4nc(m, 1000, out);
  EXPECT_TRUE(std::filesystem::exists(out / "lt4nc.json"));
  for (const auto& e : std::filesystem::directory_iterator(out)) {  // no temporary left beside them
    const std::string name = e.path().filename().string();
    EXPECT_TRUE(name == "lt4nc.json" || name == "ranks.jsonl" || name == "ranks.index") << name;
  }
  std::ifstream in(out / "ranks.jsonl");
  std::size_t lines = 0;
  std::size_t communications = 0;
  std::ifstream header_file(out / "lt4nc.json");
  const nlohmann::json header = nlohmann::json::parse(header_file);
  EXPECT_EQ(header.at("schema_version"), 4);
  EXPECT_EQ(header.at("consistency"), "checked");
  EXPECT_EQ(header.at("kind"), "lt4nc");
  const nlohmann::json& comms = header.at("communicators");
  ASSERT_EQ(comms.size(), 1u);  // the ring and its Allreduce are on the world
  EXPECT_EQ(comms[0].at("kind"), "world");
  EXPECT_EQ(comms[0].at("color"), "0");
  EXPECT_EQ(comms[0].at("size"), 1000);
  EXPECT_EQ(header.at("limits").at("threads_per_process"), 1);
  EXPECT_EQ(header.at("limits").at("order_from_n"), 32);
  for (std::string line; std::getline(in, line);) {
    ++lines;
    const nlohmann::json parsed = nlohmann::json::parse(line);
    for (const nlohmann::json& call : parsed.at("calls")) {
      // The ring's bursts take as many ns as their work: the compute-time laws give the work's values.
      ASSERT_TRUE(call.at("burst_ns").is_number());
      EXPECT_NEAR(call.at("burst_ns").get<double>(), call.at("burst_work").get<double>(),
                  1e-3 * call.at("burst_work").get<double>() + 1e-6);
      for (const nlohmann::json& a : call.at("actions")) {
        if (a.at("kind") == "isend_complete") continue;
        ASSERT_TRUE(a.contains("comm")) << a.dump();
        EXPECT_EQ(a.at("comm"), 0);
        EXPECT_EQ(a.at("comm_size"), 1000);
        ++communications;
      }
    }
  }
  EXPECT_EQ(lines, 1000u * m.phases.size());
  EXPECT_GT(communications, 3000u);
}

}  // namespace
}  // namespace p3s::modeler
