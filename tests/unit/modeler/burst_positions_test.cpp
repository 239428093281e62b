// SPDX-License-Identifier: BSD-3-Clause
// Where a rank that skips calls has its computation: the positions a call may stand for, the choice between them,
// and a pipeline built in code whose first and last ranks skip the receive and the send. Fitted at 4-16 and
// predicted at 32, every rank must compute where it did in the runs: before its send, and the last rank before
// the reduction that follows the send it skips, with no computation spread over the calls around it.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "p3s/modeler/model.hpp"
#include "p3s/modeler/predict.hpp"
#include "ring_signatures.hpp"
#include "work_model.hpp"

namespace p3s::modeler {
namespace {

using detail::BurstKey;

TEST(BurstPositions, ACallStandsForThePositionsItSkippedAndItsOwn) {
  // Three groups of one, two and one terms; the rank skips group 1's first term, then all of group 2.
  const std::vector<BurstKey> potential = {{0, 0, 0}, {1, 0, 0}, {1, 0, 1}, {2, 0, 0}, {3, 0, 0}};
  const std::vector<BurstKey> own = {{0, 0, 0}, {1, 0, 1}, {3, 0, 0}, {3, 0, 0}};
  const std::vector<std::vector<BurstKey>> c = detail::call_candidates(own, potential, std::vector<bool>(4, false));
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[0], (std::vector<BurstKey>{{0, 0, 0}}));
  EXPECT_EQ(c[1], (std::vector<BurstKey>{{1, 0, 0}, {1, 0, 1}}));
  EXPECT_EQ(c[2], (std::vector<BurstKey>{{2, 0, 0}, {3, 0, 0}}));
  EXPECT_EQ(c[3], (std::vector<BurstKey>{{3, 0, 0}}));  // a second call of one position stands for it alone
  // A group in a loop keeps its own positions.
  std::vector<bool> loop(4, false);
  loop[1] = true;
  EXPECT_EQ(detail::call_candidates(own, potential, loop)[1], (std::vector<BurstKey>{{1, 0, 1}}));
  // A call after a loop it skipped does not stand for the loop's positions (it would be moved into the loop).
  const std::vector<BurstKey> after = {{0, 0, 0}, {3, 0, 0}};
  EXPECT_EQ(detail::call_candidates(after, potential, loop)[1], (std::vector<BurstKey>{{2, 0, 0}, {3, 0, 0}}));
}

TEST(BurstPositions, TheCallGoesWhereTheClassComputesMostAndStaysOnATie) {
  const std::vector<BurstKey> candidates = {{1, 0, 0}, {2, 0, 0}};
  EXPECT_EQ(detail::stands_for(candidates, [](const BurstKey& k) { return k.group == 1 ? 5e6 : 300.0; }),
            (BurstKey{1, 0, 0}));
  EXPECT_EQ(detail::stands_for(candidates, [](const BurstKey&) { return 1.0; }), (BurstKey{2, 0, 0}));
}

/// A pipeline on n ranks: each iteration rank r receives from r - 1, computes 1e8 / n and sends to r + 1 (the first
/// rank receives nothing, the last sends nothing), then all reduce.
Signature pipeline(std::int32_t n) {
  Signature s = ring(n, 50, "PAPI_TOT_INS", "mpirun -np " + std::to_string(n) + " ./pipeline");
  analyzer::SigPhase& loop = s.phases.at(1);
  const double bytes = 8192;
  for (std::int32_t r = 0; r < n; ++r) {
    analyzer::SigRank& b = loop.ranks.at(static_cast<std::size_t>(r));
    b.events.clear();
    if (r > 0)
      b.events.push_back(event(mpi::Function::MPI_Recv, {message(mpi::ActionKind::Recv, r, r - 1, bytes)}, 1000));
    const double compute = 1e8 / n;
    if (r < n - 1) {
      b.events.push_back(event(mpi::Function::MPI_Send, {message(mpi::ActionKind::Send, r, r + 1, bytes)}, compute));
    }
    b.events.push_back(event(mpi::Function::MPI_Allreduce, {allreduce(n)}, r < n - 1 ? 300 : 300 + compute));
  }
  loop.work = stat(1e8 + 1300.0 * n);
  return s;
}

TEST(BurstPositions, APipelinesEndsComputeWhereTheyDidInTheRuns) {
  std::vector<std::filesystem::path> runs;
  for (const std::int32_t n : {4, 8, 16}) runs.push_back(save(pipeline(n), "pipeline" + std::to_string(n)));
  ModelOptions o;
  o.hold_out_largest = false;
  const Fit fit = build_model(runs, o);
  const std::int64_t n = 32;
  const double compute = 1e8 / n;
  const PhasePredictor p(fit.model.phases.at(1), n);
  for (std::int64_t r = 0; r < n; ++r) {
    const PredictedRank rank = p.rank(r);
    for (const PredictedCall& c : rank.calls) {
      const double burst = c.burst_ns.value();
      const bool computes = c.call == "MPI_Send" || (r == n - 1 && c.call == "MPI_Allreduce");
      if (computes) {
        EXPECT_NEAR(burst, compute, 0.05 * compute) << "rank " << r << ", before " << c.call;
      } else {
        EXPECT_LT(burst, 0.01 * compute) << "rank " << r << ", before " << c.call << ": computation moved here";
      }
    }
  }
}

/// An Amdahl loop on n ranks: rank 0 computes a serial part of 3e6 before an MPI_Bcast that the others wait in,
/// then every rank computes 1e8 / n before an MPI_Allreduce, 10 % more or less from rank to rank (cores that differ
/// by more than the serial part at small n: the ranks' totals do not tell rank 0 apart).
Signature amdahl(std::int32_t n) {
  Signature s = ring(n, 40, "cputime_ns", "mpirun -np " + std::to_string(n) + " ./amdahl");
  analyzer::SigPhase& loop = s.phases.at(1);
  for (std::int32_t r = 0; r < n; ++r) {
    analyzer::SigRank& b = loop.ranks.at(static_cast<std::size_t>(r));
    b.events.clear();
    SigAction bcast;
    bcast.kind = mpi::ActionKind::Collective;
    bcast.collective = mpi::Collective::Bcast;
    bcast.root = 0;
    bcast.comm_size = static_cast<std::uint32_t>(n);
    bcast.bytes = 32;
    bcast.bytes_received = 32;
    b.events.push_back(event(mpi::Function::MPI_Bcast, {bcast}, r == 0 ? 3e6 : 1000));
    const double noise = 1 + 0.1 * std::sin(1.7 * r + 0.3 * n);
    b.events.push_back(event(mpi::Function::MPI_Allreduce, {allreduce(n)}, 1e8 / n * noise));
  }
  loop.work = stat(1e8 + 3e6);
  return s;
}

TEST(BurstPositions, ARootsSerialPartStaysOnTheRootWhenTotalsCannotTellIt) {
  std::vector<std::filesystem::path> runs;
  for (const std::int32_t n : {2, 4, 8, 16}) runs.push_back(save(amdahl(n), "amdahl" + std::to_string(n)));
  ModelOptions o;
  o.hold_out_largest = false;
  const Fit fit = build_model(runs, o);
  const PhasePredictor p(fit.model.phases.at(1), 32);
  const double root = p.rank(0).calls.at(0).burst_ns.value();
  EXPECT_NEAR(root, 3e6, 0.05 * 3e6) << "rank 0's serial part";
  for (const std::int64_t r : {1, 17, 31}) {
    EXPECT_LT(p.rank(r).calls.at(0).burst_ns.value(), 1e4) << "rank " << r << " computes part of the serial part";
  }
}

}  // namespace
}  // namespace p3s::modeler
