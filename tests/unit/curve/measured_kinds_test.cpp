// SPDX-License-Identifier: BSD-3-Clause
// Measured runs read as points: the kinds of a phase (one program point whose calls followed the data) are one
// phase, as the model relates them.
#include <gtest/gtest.h>

#include <filesystem>

#include "../modeler/ring_signatures.hpp"
#include "p3s/curve/curve.hpp"

namespace p3s::modeler {
namespace {

TEST(MeasuredPoints, TheKindsOfAPhaseAreOnePhaseOfTheRun) {
  // At 8, 40 of the 100 iterations find nothing to send on rank 0 (no MPI_Isend there): a phase of its own.
  Signature at8 = ring(8, 60);
  analyzer::SigPhase kind = at8.phases[1];
  kind.id = 2;
  kind.weight = 40;
  kind.ranks[0].events.erase(kind.ranks[0].events.begin() + 1);
  kind.ranks[0].events[1].actions.erase(kind.ranks[0].events[1].actions.begin());
  kind.ranks[0].events[1].actions.front().started = 0;
  at8.phases.push_back(kind);
  at8.order = {{0, 1}, {1, 30}, {2, 40}, {1, 30}};
  const std::filesystem::path four = dir() / "np4";
  const std::filesystem::path eight = dir() / "np8";
  std::filesystem::create_directories(four);
  std::filesystem::create_directories(eight);
  analyzer::write_signature(ring(4, 100), four / "signature.json");
  analyzer::write_signature(at8, eight / "signature.json");

  const std::vector<curve::Point> points = curve::read_points({four, eight});
  ASSERT_EQ(points.size(), 2u);
  ASSERT_EQ(points[1].n, 8);
  ASSERT_EQ(points[1].phases.size(), 2u);
  EXPECT_EQ(points[1].phases[1].weight, 100);
  EXPECT_EQ(points[0].phases[1].weight, 100);
}

}  // namespace
}  // namespace p3s::modeler
