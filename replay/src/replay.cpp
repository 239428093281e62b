// SPDX-License-Identifier: BSD-3-Clause
// The replay's phase loop. Each rank runs the phase order of its plan (plan.cpp), and times its instances the way the
// analyzer times phases: each instance ends at the rank's last call of it and begins where the rank's previous instance
// ended, so a rank's instance times tile its time and their mean over ranks is the phase time, pipelines included.
// MPI_Init and MPI_Finalize are not made again: the phases holding them are replayed without them.
#include "p3s/replay/replay.hpp"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "burst.hpp"
#include "communicators.hpp"
#include "executor.hpp"
#include "made_once.hpp"
#include "p3s/error.hpp"
#include "p3s/modeler/dims.hpp"
#include "p3s/modeler/predict.hpp"
#include "watchdog.hpp"

namespace p3s::replay {

std::string_view compute_name(Compute c) noexcept { return c == Compute::Sleep ? "sleep" : "spin"; }

std::optional<Compute> compute_named(std::string_view name) noexcept {
  if (name == "spin") return Compute::Spin;
  if (name == "sleep") return Compute::Sleep;
  return std::nullopt;
}

namespace {

/// What one rank measured of one phase.
struct Measured {
  std::vector<double> instances;  ///< the measured instances' times
  double compute_ns = 0;          ///< emulated over the measured instances
  double predicted_ns = 0;        ///< predicted over the measured instances
  double mpi_ns = 0;
  double calls = 0;
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2 == 1) return *mid;
  return (*mid + *std::max_element(v.begin(), mid)) / 2;
}

double largest_size(const std::vector<PlannedPhase>& phases) {
  double largest = 0;
  for (const PlannedPhase& p : phases) {
    for (const modeler::PredictedCall& c : p.rank.calls) {
      for (const modeler::PredictedAction& a : c.actions) largest = std::max({largest, a.bytes, a.block});
    }
  }
  return largest;
}

}  // namespace

ReplayResult run_replay(const ReplayPlan& plan, const ReplayOptions& options) {
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::int64_t n = size;
  const modeler::ScopedDimsRule rule(plan.dims_rule);  // communicators' laws in dims(n)
  double largest = largest_size(plan.phases);
  MPI_Allreduce(MPI_IN_PLACE, &largest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  const detail::Communicators comms(plan.comms, n, rank);
  detail::Executor executor(comms, rank, largest);
  const detail::BurstEmulator burst(options.compute);
  detail::Position position;
  const detail::Watchdog watchdog(rank, options.watchdog_s, position);

  std::vector<Measured> measured(plan.phases.size());
  std::vector<bool> done(plan.phases.size(), false);
  MPI_Barrier(MPI_COMM_WORLD);
  const std::int64_t start = detail::now_ns();
  std::int64_t last_end = start;
  for (const analyzer::PhaseRunEntry& e : plan.order) {
    const PlannedPhase& pm = plan.phases.at(e.phase);
    if (done[e.phase] || e.count == 0) continue;
    done[e.phase] = true;
    const auto total = static_cast<int>(std::min<std::uint64_t>(e.count, options.warmup + options.instances));
    const int warm = e.count > 1 ? std::max(0, total - options.instances) : 0;
    const modeler::PredictedRank& calls = pm.rank;
    Measured& m = measured[e.phase];
    position.phase = pm.id;
    for (int i = 0; i < total; ++i) {
      const bool timed = i >= warm;
      position.instance = static_cast<std::uint32_t>(i);
      executor.begin(calls.calls);
      for (std::size_t k = 0; k < calls.calls.size(); ++k) {
        const modeler::PredictedCall& c = calls.calls[k];
        position.call = static_cast<std::uint32_t>(k);
        position.function = -1;
        ++position.step;
        const double burst_ns = c.burst_ns.value_or(0);
        const std::int64_t t0 = detail::now_ns();
        burst.run(burst_ns);
        position.function = static_cast<std::int32_t>(c.function);
        position.peer = c.actions.empty() ? -1 : c.actions.front().peer;
        ++position.step;
        const std::int64_t t1 = detail::now_ns();
        if (!detail::made_once(c.function)) executor.execute(c, k);
        const std::int64_t t2 = detail::now_ns();
        if (timed) {
          m.compute_ns += static_cast<double>(t1 - t0);
          m.predicted_ns += burst_ns;
          m.mpi_ns += static_cast<double>(t2 - t1);
          m.calls += 1;
        }
      }
      position.function = -1;
      ++position.step;
      const std::int64_t t0 = detail::now_ns();
      burst.run(calls.tail_ns.value_or(0));
      executor.end();
      const std::int64_t end = detail::now_ns();
      if (timed) {
        m.compute_ns += static_cast<double>(end - t0);
        m.predicted_ns += calls.tail_ns.value_or(0);
        m.instances.push_back(static_cast<double>(end - last_end));
      }
      last_end = end;
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const std::int64_t wall = detail::now_ns() - start;

  ReplayResult result;
  result.processes = n;
  result.notes = plan.notes;
  result.replay_wall_ns = static_cast<double>(wall);
  MPI_Allreduce(MPI_IN_PLACE, &result.replay_wall_ns, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  for (std::size_t p = 0; p < plan.phases.size(); ++p) {
    const PlannedPhase& pm = plan.phases[p];
    const Measured& m = measured[p];
    PhaseTime t;
    t.id = pm.id;
    t.calls = pm.calls;
    t.weight = pm.weight;
    t.replayed = done[p];
    t.instances = static_cast<int>(m.instances.size());
    const double k = std::max<double>(1, static_cast<double>(m.instances.size()));
    // A rank's instance time is the median of its measured instances: an instance the machine interrupted (a
    // descheduled rank on an oversubscribed node) weighs 1 in M here, where in the application it weighs 1 in
    // its weight.
    double mean = median(m.instances);
    double sq = 0;
    for (const double x : m.instances) sq += x * x;
    // Sums over ranks: mean instance time, squares, compute, predicted compute, MPI time, calls, instances.
    double sums[7] = {mean,
                      sq,
                      m.compute_ns / k,
                      m.predicted_ns / k,
                      m.mpi_ns / k,
                      m.calls / k,
                      static_cast<double>(m.instances.size())};
    MPI_Allreduce(MPI_IN_PLACE, sums, 7, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double lo = mean, hi = mean;
    MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    const double ranks = static_cast<double>(n);
    t.time_ns = sums[0] / ranks;
    t.time_min_ns = lo;
    t.time_max_ns = hi;
    const double samples = std::max(1.0, sums[6]);
    const double overall = sums[0] / ranks;
    t.time_stddev_ns = std::sqrt(std::max(0.0, sums[1] / samples - overall * overall));
    t.compute_ns = sums[2] / ranks;
    t.predicted_compute_ns = sums[3] / ranks;
    t.mpi_ns = sums[4] / ranks;
    t.calls_per_instance = sums[5] / ranks;
    t.main_loop = pm.main_loop;
    if (t.replayed) result.pet_ns += static_cast<double>(t.weight) * t.time_ns;
    if (t.replayed && t.main_loop) result.main_ns += static_cast<double>(t.weight) * t.time_ns;
    result.phases.push_back(std::move(t));
  }
  return result;
}

}  // namespace p3s::replay
