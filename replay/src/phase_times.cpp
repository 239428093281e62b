// SPDX-License-Identifier: BSD-3-Clause
// Phase times from what the ranks measured: each rank's mean instance time (its instances tile its time, as the
// analyzer's phase times do), summed over the ranks and divided by their number.
#include <algorithm>
#include <cmath>
#include <limits>

#include "runner.hpp"

namespace p3s::replay::detail {
namespace {

RankSums rank_sums(const Measured& m) {
  const double k = std::max<double>(1, static_cast<double>(m.instances.size()));
  RankSums s;
  // A rank's instance time is the mean of its measured instances, as the application's phase time is its
  // instances' sum over their number: consecutive instances tile the rank's time, so the mean is the measured
  // stretch over its instances, and an instance that one rank's delay lengthened shortens the next.
  for (const double x : m.instances) {
    s.time_ns += x;
    s.squares += x * x;
  }
  s.time_ns /= k;
  s.compute_ns = m.compute_ns / k;
  s.predicted_ns = m.predicted_ns / k;
  s.mpi_ns = m.mpi_ns / k;
  s.calls = m.calls / k;
  s.messages = m.messages / k;
  s.bytes = m.bytes / k;
  s.instances = static_cast<double>(m.instances.size());
  return s;
}

}  // namespace

PhaseAccum::PhaseAccum(std::size_t phases)
    : sums(phases),
      lo(phases, std::numeric_limits<double>::infinity()),
      hi(phases, -std::numeric_limits<double>::infinity()),
      compute_hi(phases, 0) {}

void PhaseAccum::add(const std::vector<Measured>& measured) {
  for (std::size_t p = 0; p < measured.size() && p < sums.size(); ++p) {
    const RankSums s = rank_sums(measured[p]);
    RankSums& t = sums[p];
    t.time_ns += s.time_ns;
    t.squares += s.squares;
    t.compute_ns += s.compute_ns;
    t.predicted_ns += s.predicted_ns;
    t.mpi_ns += s.mpi_ns;
    t.calls += s.calls;
    t.messages += s.messages;
    t.bytes += s.bytes;
    t.instances += s.instances;
    lo[p] = std::min(lo[p], s.time_ns);
    hi[p] = std::max(hi[p], s.time_ns);
    compute_hi[p] = std::max(compute_hi[p], s.compute_ns);
  }
}

std::vector<PhaseTime> phase_times(const ReplayPlan& plan, PhaseAccum accum, const std::vector<bool>& done,
                                   std::int64_t n, MPI_Comm comm) {
  const std::size_t phases = plan.phases.size();
  MPI_Allreduce(MPI_IN_PLACE, accum.sums.data(), static_cast<int>(kRankSumsDoubles * phases), MPI_DOUBLE, MPI_SUM,
                comm);
  MPI_Allreduce(MPI_IN_PLACE, accum.lo.data(), static_cast<int>(phases), MPI_DOUBLE, MPI_MIN, comm);
  MPI_Allreduce(MPI_IN_PLACE, accum.hi.data(), static_cast<int>(phases), MPI_DOUBLE, MPI_MAX, comm);
  MPI_Allreduce(MPI_IN_PLACE, accum.compute_hi.data(), static_cast<int>(phases), MPI_DOUBLE, MPI_MAX, comm);
  const double ranks = static_cast<double>(n);
  std::vector<PhaseTime> out;
  for (std::size_t p = 0; p < phases; ++p) {
    const PlannedPhase& pm = plan.phases[p];
    const RankSums& s = accum.sums[p];
    PhaseTime t;
    t.id = pm.id;
    t.calls = pm.calls;
    t.weight = pm.weight;
    t.replayed = done[p];
    t.main_loop = pm.main_loop;
    t.repaired = pm.repaired;
    t.instances = static_cast<int>(std::lround(s.instances / ranks));
    t.time_ns = s.time_ns / ranks;
    t.time_min_ns = std::isfinite(accum.lo[p]) ? accum.lo[p] : 0.0;
    t.time_max_ns = std::isfinite(accum.hi[p]) ? accum.hi[p] : 0.0;
    t.time_stddev_ns = std::sqrt(std::max(0.0, s.squares / std::max(1.0, s.instances) - t.time_ns * t.time_ns));
    t.compute_ns = s.compute_ns / ranks;
    t.compute_max_ns = accum.compute_hi[p];
    t.predicted_compute_ns = s.predicted_ns / ranks;
    t.mpi_ns = s.mpi_ns / ranks;
    t.calls_per_instance = s.calls / ranks;
    t.messages_per_instance = s.messages;
    t.bytes_per_instance = s.bytes;
    out.push_back(std::move(t));
  }
  return out;
}

void add_pet(ReplayResult& result) {
  for (const PhaseTime& t : result.phases) {
    if (t.replayed) result.pet_ns += static_cast<double>(t.weight) * t.time_ns;
    if (t.replayed && t.main_loop) result.main_ns += static_cast<double>(t.weight) * t.time_ns;
  }
}

}  // namespace p3s::replay::detail
