// SPDX-License-Identifier: BSD-3-Clause
// A wavefront pipeline built in code (no MPI), as an LU-SSOR solver makes it: on a column-major grid of
// MPI_Dims_create(n, 2), plane by plane a receive from north and west and a send south and east, each skipped where the
// neighbour does not exist, of a block of 33 points split unevenly (the first 33 mod q blocks one point longer), less
// the global boundary; then a face exchange of a whole block. Fitted at 2 (a grid of one column) to 16 ranks, the model
// must predict 32 and 64 exactly: a loop of planes, one step each way, and each rank's own sizes.
#include <gtest/gtest.h>

#include "p3s/modeler/dims.hpp"
#include "p3s/modeler/fit.hpp"
#include "p3s/modeler/model.hpp"
#include "p3s/modeler/predict.hpp"
#include "ring_signatures.hpp"

namespace p3s::modeler {
namespace {

constexpr std::int64_t kPoints = 33;
constexpr int kPlanes = 5;

std::int64_t block(std::int64_t extent, std::int64_t q, std::int64_t x) {
  return extent / q + (x < extent % q ? 1 : 0);
}

/// A rank of the pipeline: its grid, its coordinates and its neighbours (-1: none).
struct Place {
  std::int64_t rows = 1, cols = 1, row = 0, col = 0;
  std::int32_t north = -1, south = -1, west = -1, east = -1;
  /// The points of its block along the other side, less the global boundary (a plane's message).
  [[nodiscard]] double inner(bool along_rows) const {
    const std::int64_t q = along_rows ? cols : rows;
    const std::int64_t x = along_rows ? col : row;
    return static_cast<double>(block(kPoints, q, x) - (x == 0 ? 1 : 0) - (x == q - 1 ? 1 : 0));
  }
};

Place place(std::int32_t r, std::int32_t n) {
  const std::vector<int> d = dims_create(n, 2);
  Place p{d[0], d[1], r % d[0], r / d[0]};
  if (p.row > 0) p.north = r - 1;
  if (p.row < p.rows - 1) p.south = r + 1;
  if (p.col > 0) p.west = r - static_cast<std::int32_t>(p.rows);
  if (p.col < p.cols - 1) p.east = r + static_cast<std::int32_t>(p.rows);
  return p;
}

SigAction tagged(mpi::ActionKind kind, std::int32_t r, std::int32_t peer, double bytes, std::uint32_t tag) {
  SigAction a = message(kind, r, peer, bytes);
  a.tag = tag;
  return a;
}

/// One rank's time step: the planes, then the face exchange with north and south.
analyzer::SigRank step(std::int32_t r, std::int32_t n) {
  const Place p = place(r, n);
  analyzer::SigRank out;
  out.rank = r;
  const double ns = 40 * p.inner(true);   // north-south messages: the block along the row
  const double we = 40 * p.inner(false);  // west-east messages: the block along the column
  for (int k = 0; k < kPlanes; ++k) {
    if (p.north >= 0)
      out.events.push_back(event(mpi::Function::MPI_Recv, {tagged(mpi::ActionKind::Recv, r, p.north, ns, 1)}, 10));
    if (p.west >= 0)
      out.events.push_back(event(mpi::Function::MPI_Recv, {tagged(mpi::ActionKind::Recv, r, p.west, we, 2)}, 10));
    if (p.south >= 0)
      out.events.push_back(event(mpi::Function::MPI_Send, {tagged(mpi::ActionKind::Send, r, p.south, ns, 1)}, 1e6 / n));
    if (p.east >= 0)
      out.events.push_back(event(mpi::Function::MPI_Send, {tagged(mpi::ActionKind::Send, r, p.east, we, 2)}, 10));
  }
  const double face = 2640 * static_cast<double>(block(kPoints, p.cols, p.col));
  if (p.north >= 0) {
    SigAction post = tagged(mpi::ActionKind::IrecvPost, r, p.north, face, 3);
    post.request = true;
    out.events.push_back(event(mpi::Function::MPI_Irecv, {post}, 10));
  }
  if (p.south >= 0)
    out.events.push_back(event(mpi::Function::MPI_Send, {tagged(mpi::ActionKind::Send, r, p.south, face, 3)}, 10));
  if (p.north >= 0) {
    SigAction done = tagged(mpi::ActionKind::Recv, r, p.north, face, 3);
    done.request = true;
    for (std::size_t e = 0; e < out.events.size(); ++e) {
      if (out.events[e].function == mpi::Function::MPI_Irecv) done.started = static_cast<std::int32_t>(e);
    }
    out.events.push_back(event(mpi::Function::MPI_Wait, {done}, 10));
  }
  out.events.push_back(event(mpi::Function::MPI_Allreduce, {allreduce(n)}, 10));
  return out;
}

Signature pipeline(std::int32_t n) {
  Signature s = ring(n, 10, "PAPI_TOT_INS", "mpirun -np " + std::to_string(n) + " ./pipeline");
  analyzer::SigPhase& loop = s.phases.at(1);
  loop.ranks.clear();
  for (std::int32_t r = 0; r < n; ++r) loop.ranks.push_back(step(r, n));
  return s;
}

std::vector<std::filesystem::path> pipeline_series(std::initializer_list<std::int32_t> ns) {
  std::vector<std::filesystem::path> out;
  for (const std::int32_t n : ns) out.push_back(save(pipeline(n), "pipeline" + std::to_string(n)));
  return out;
}

TEST(Pipeline, PlanesWithSkippedBoundaryCallsAndUnevenBlocksArePredictedExactly) {
  const std::vector<std::filesystem::path> fitted = pipeline_series({2, 4, 8, 16});
  ModelOptions options;
  options.validate_with = save(pipeline(32), "pipeline32");
  options.fit.evaluate_at = {32, 64};
  const Fit fit = build_model(fitted, options);
  ASSERT_TRUE(fit.report.validation.has_value());
  for (const PhaseCheck& c : fit.report.validation->phases) {
    EXPECT_TRUE(c.pattern_exact) << c.first_mismatch;
    EXPECT_EQ(c.comms_predicted, c.comms_actual);
    EXPECT_LT(c.volume_error_max, 1e-12);
  }
  const PhaseModel& phase = fit.model.phases.at(1);
  // The planes are one loop whose count is constant, not a group per plane.
  ASSERT_FALSE(phase.loops.empty());
  ASSERT_TRUE(phase.groups.at(phase.loops.front().first).iterations.has_value());
  EXPECT_EQ(phase.groups.at(phase.loops.front().first).iterations->to_string(), std::to_string(kPlanes));
  EXPECT_LE(phase.groups.size(), 7U);
  // At 64 (8 x 8), every rank's calls and sizes as the application makes them.
  const PhasePredictor predictor(phase, 64);
  const Signature real = pipeline(64);
  for (std::int32_t r = 0; r < 64; ++r) {
    const PredictedRank got = predictor.rank(r);
    const analyzer::SigRank& want = real.phases.at(1).ranks.at(static_cast<std::size_t>(r));
    ASSERT_EQ(got.calls.size(), want.events.size()) << "rank " << r;
    for (std::size_t k = 0; k < got.calls.size(); ++k) {
      EXPECT_EQ(got.calls[k].function, want.events[k].function) << "rank " << r << ", call " << k;
      if (want.events[k].function == mpi::Function::MPI_Wait) continue;
      ASSERT_FALSE(got.calls[k].actions.empty());
      EXPECT_EQ(got.calls[k].actions[0].peer, want.events[k].actions[0].peer) << "rank " << r << ", call " << k;
      EXPECT_DOUBLE_EQ(got.calls[k].actions[0].bytes, want.events[k].actions[0].bytes)
          << "rank " << r << ", call " << k;
    }
  }
}

}  // namespace
}  // namespace p3s::modeler
