// SPDX-License-Identifier: BSD-3-Clause
// Reading a curve's points from replay results and `p3s scale` directories, drawing its plots, and the command
// lines `p3s scale` makes.
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "p3s/curve/curve.hpp"
#include "p3s/error.hpp"
#include "p3s/scale/scale.hpp"

namespace p3s::curve {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class Points : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("p3s_curve_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "results");
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// A replay result at n with PET `pet` seconds, its one phase all of it.
  fs::path result(std::int64_t n, double pet, const std::string& name, bool compared = false, bool repaired = false) {
    json phase{{"id", 1},
               {"calls", "MPI_Allreduce"},
               {"weight", 10},
               {"main_loop", true},
               {"replayed", true},
               {"time_ns", pet * 1e8},
               {"time_min_ns", pet * 1e8},
               {"time_max_ns", pet * 1e8},
               {"compute_ns", pet * 5e7},
               {"mpi_ns", pet * 5e7}};
    if (repaired) phase["repaired"] = true;
    json j{{"schema_version", 1},  {"tool", "p3s-replay 0.1.0"},     {"inputs", {{"application", "app 10"}}},
           {"processes", n},       {"phases", json::array({phase})}, {"pet_ns", pet * 1e9},
           {"main_ns", pet * 1e9}, {"replay_wall_ns", 2e9},          {"notes", json::array()}};
    if (compared) j["comparison"] = {{"real_ns", pet * 1.1e9}, {"signature", "real/signature.json"}};
    const fs::path path = dir_ / "results" / name;
    std::ofstream(path) << j.dump();
    return path;
  }

  fs::path dir_;
};

TEST_F(Points, ResultsAreReadAndSortedByN) {
  const std::vector<Point> p = read_points({result(64, 2, "b.json", true), result(32, 3, "a.json")});
  ASSERT_EQ(p.size(), 2U);
  EXPECT_EQ(p[0].n, 32);
  EXPECT_DOUBLE_EQ(*p[0].predicted_ns, 3e9);
  EXPECT_FALSE(p[0].measured_ns.has_value());
  EXPECT_EQ(p[0].predicted_by, "replay");
  EXPECT_DOUBLE_EQ(p[0].replay_core_s, 64);  // 32 ranks for 2 s
  ASSERT_EQ(p[1].phases.size(), 1U);
  EXPECT_DOUBLE_EQ(p[1].phases[0].time_ns, 2e9);  // 10 instances of 0.2 s
  EXPECT_DOUBLE_EQ(*p[1].measured_ns, 2.2e9);
  // A scale directory: its results/ (and runs/).
  EXPECT_EQ(read_points({dir_}).size(), 2U);
}

TEST_F(Points, APredictionReplayedRepairedSaysHowFarToTrustIt) {
  const std::vector<Point> p =
      read_points({result(16, 5, "a.json"), result(32, 3, "b.json", false, true)});  // a result of before: no key
  ASSERT_EQ(p.size(), 2U);
  EXPECT_FALSE(p[0].phases.at(0).repaired);
  EXPECT_TRUE(p[1].phases.at(0).repaired);
  const Curve c = make_curve(p, Options{});
  ASSERT_EQ(c.notes.size(), 1U);
  EXPECT_NE(c.notes[0].find("at n = 32 the prediction's phases 1 (100 % of its time) were repaired"), std::string::npos)
      << c.notes[0];
}

TEST_F(Points, TwoPredictionsAtOneNAreRefused) {
  result(32, 3, "a.json");
  result(32, 4, "b.json");
  EXPECT_THROW((void)read_points({dir_}), InputError);
}

TEST_F(Points, WhatIsNoResultIsRefusedInOneLine) {
  std::ofstream(dir_ / "x.json") << "not json";
  try {
    (void)read_points({dir_ / "x.json"});
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("x.json"), std::string::npos);
  }
  std::ofstream(dir_ / "y.json") << R"({"tool": "p3s-replay 0.1.0", "schema_version": 1, "processes": 4})";
  EXPECT_THROW((void)read_points({dir_ / "y.json"}), InputError);
  EXPECT_THROW((void)read_points({dir_ / "absent"}), InputError);
  fs::create_directories(dir_ / "empty");
  EXPECT_THROW((void)read_points({dir_ / "empty"}), InputError);
}

TEST_F(Points, PlotsAreDrawnWholeAndNotReplacedWithoutForce) {
  if (std::system("gnuplot --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "gnuplot is not installed";
  const Curve c = make_curve(read_points({result(16, 5, "a.json"), result(32, 3, "b.json", true)}), Options{});
  draw_plots(c, dir_ / "plots", false);
  for (const char* name : {"time", "speedup", "phases"}) {
    EXPECT_GT(fs::file_size(dir_ / "plots" / (std::string(name) + ".png")), 1000U) << name;
    std::ifstream svg(dir_ / "plots" / (std::string(name) + ".svg"));
    const std::string text((std::istreambuf_iterator<char>(svg)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("<svg"), std::string::npos) << name;
  }
  EXPECT_THROW(draw_plots(c, dir_ / "plots", false), InputError);
  EXPECT_NO_THROW(draw_plots(c, dir_ / "plots", true));
  for (const fs::directory_entry& e : fs::directory_iterator(dir_ / "plots")) {
    EXPECT_EQ(e.path().string().find("p3s-tmp"), std::string::npos) << e.path();
  }
}

TEST(ScaleCommand, TheProcessCountGoesWhereTheCommandSays) {
  const std::vector<std::string> command{"mpirun", "--oversubscribe", "-np",           "{n}", "--bind-to",
                                         "none",   "./app",           "--size={n}x{n}"};
  EXPECT_EQ(scale::at_n(command, 16)[3], "16");
  EXPECT_EQ(scale::at_n(command, 16)[7], "--size=16x16");
  const std::vector<std::string> launcher = scale::default_launcher(command);
  ASSERT_EQ(launcher.size(), 6U);  // the application and its arguments are not the launcher's
  EXPECT_EQ(launcher.back(), "none");
  EXPECT_THROW((void)scale::default_launcher({"mpirun", "-np", "4", "./app"}), InputError);
  EXPECT_THROW((void)scale::default_launcher({"./app", "{n}"}), InputError);
}

}  // namespace
}  // namespace p3s::curve
