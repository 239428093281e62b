// SPDX-License-Identifier: BSD-3-Clause
#include "p3s/simulate/calibration.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "p3s/error.hpp"

namespace p3s::simulate {
namespace {

const std::vector<std::int64_t> kSizes = {1, 8, 64, 512, 4096, 32768, 262144, 1 << 20, 4 << 20};

/// The time the fitted link gives a message of `bytes`, as SMPI computes it from the nominal values and the
/// factor of the size's range.
double fitted(const LinkFit& fit, std::int64_t bytes) {
  const Factor* f = &fit.factors.front();
  for (const Factor& x : fit.factors) {
    if (x.bytes <= bytes) f = &x;
  }
  return fit.latency_s * f->latency + static_cast<double>(bytes) / (fit.bandwidth_Bps * f->bandwidth);
}

TEST(Calibration, OneLineIsFittedAsItIs) {
  std::vector<PingPong> points;
  for (const std::int64_t s : kSizes) points.push_back({s, 2e-6 + static_cast<double>(s) / 5e9});
  const LinkFit fit = fit_link(points);
  EXPECT_NEAR(fit.latency_s, 2e-6, 1e-12);
  EXPECT_NEAR(fit.bandwidth_Bps, 5e9, 1e3);
  ASSERT_EQ(fit.factors.size(), kSizes.size() - 1);
  EXPECT_EQ(fit.factors.front().bytes, 0);
  for (const Factor& f : fit.factors) {
    EXPECT_NEAR(f.latency, 1, 1e-6);
    EXPECT_NEAR(f.bandwidth, 1, 1e-6);
  }
  EXPECT_LT(fit.max_error, 1e-9);
}

TEST(Calibration, TwoProtocolsAreFittedPerSizeRange) {
  // Eager below 64 KiB (1 us, 2 GB/s), rendezvous from there on (8 us, 10 GB/s): no one line fits both.
  std::vector<PingPong> points;
  for (const std::int64_t s : kSizes) {
    const double b = static_cast<double>(s);
    points.push_back({s, s < 65536 ? 1e-6 + b / 2e9 : 8e-6 + b / 1e10});
  }
  const LinkFit fit = fit_link(points);
  EXPECT_NEAR(fit.bandwidth_Bps, 1e10, 1e4);
  for (const PingPong& p : points) EXPECT_NEAR(fitted(fit, p.bytes) / p.seconds, 1, 1e-9) << p.bytes << " bytes";
  EXPECT_LT(fit.max_error, 1e-9);
}

TEST(Calibration, NoiseNeverGivesAFactorBelowZero) {
  // A larger message measured faster than a smaller one, and a large one dearer than the line through its range.
  std::vector<PingPong> points = {{1, 1e-6}, {8, 0.9e-6}, {64, 1.1e-6}, {4096, 3e-6}, {1 << 20, 1e-4}, {4 << 20, 9e-4}};
  const LinkFit fit = fit_link(points);
  for (const Factor& f : fit.factors) {
    EXPECT_GT(f.latency, 0);
    EXPECT_GT(f.bandwidth, 0);
    EXPECT_TRUE(std::isfinite(f.latency) && std::isfinite(f.bandwidth));
  }
  // Every size but the largest starts a range, whose line goes through it.
  for (std::size_t i = 0; i + 1 < points.size(); ++i) {
    EXPECT_NEAR(fitted(fit, points[i].bytes) / points[i].seconds, 1, 1e-9) << points[i].bytes << " bytes";
  }
}

TEST(Calibration, TooFewSizesOrBadTimesAreRefused) {
  EXPECT_THROW((void)fit_link({{1, 1e-6}, {8, 1e-6}}), InputError);
  EXPECT_THROW((void)fit_link({{1, 1e-6}, {8, 0}, {64, 2e-6}}), InputError);
}

TEST(Calibration, MachineOfOneNodeSaysSoAndKeepsItsFactors) {
  Measurements m;
  m.processes = 2;
  m.hosts = {"a", "a"};
  m.cores = 16;
  m.mpi_library = "some MPI";
  m.flops = 3e9;
  for (const std::int64_t s : kSizes) m.inside_node.push_back({s, 5e-7 + static_cast<double>(s) / 8e9});
  std::vector<std::string> notes;
  const Machine machine = calibrated_machine(m, 0, notes);
  EXPECT_NEAR(machine.latency_s, 5e-7, 1e-12);
  EXPECT_NEAR(machine.loopback_bandwidth_Bps, 8e9, 1e3);
  EXPECT_EQ(machine.cores_per_node, 16);
  EXPECT_DOUBLE_EQ(machine.flops, 3e9);
  ASSERT_EQ(notes.size(), 1U);
  EXPECT_NE(notes.front().find("inside one node"), std::string::npos);

  // Written and read back: the factors reach the cluster as SMPI's piecewise factors.
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "p3s_calibration_test";
  std::filesystem::create_directories(dir);
  write_machine(machine, m, notes, dir / "machine.json");
  const Machine back = read_machine(dir / "machine.json");
  EXPECT_EQ(back.factors, machine.factors);
  EXPECT_EQ(back.cores_per_node, 16);
  const Platform p = write_cluster(back, 32, dir);
  EXPECT_EQ(p.latency_factors.substr(0, 2), "0:");
  EXPECT_EQ(std::count(p.latency_factors.begin(), p.latency_factors.end(), ';'),
            static_cast<std::ptrdiff_t>(machine.factors.size()) - 1);
  std::filesystem::remove_all(dir);
}

TEST(Calibration, FactorsOutOfOrderAreRefused) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / "p3s_bad_factors.json";
  std::ofstream(path) << R"({"schema_version": 1, "factors": [{"bytes": 0, "latency": 1, "bandwidth": 1},)"
                      << R"( {"bytes": 0, "latency": 2, "bandwidth": 1}]})";
  EXPECT_THROW((void)read_machine(path), InputError);
  std::ofstream(path) << R"({"schema_version": 1, "factors": [{"bytes": 0, "latency": -1, "bandwidth": 1}]})";
  EXPECT_THROW((void)read_machine(path), InputError);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace p3s::simulate
