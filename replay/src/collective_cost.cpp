// SPDX-License-Identifier: BSD-3-Clause
#include "collective_cost.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "burst.hpp"
#include "executor.hpp"

namespace p3s::replay::detail {
namespace {

/// Least squares a + b x over the points, and its residual.
std::pair<CollectiveFit, double> least_squares(const std::vector<std::pair<int, double>>& points, bool linear) {
  CollectiveFit f;
  f.linear = linear;
  f.measured = points;
  const auto k = static_cast<double>(points.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& [m, t] : points) {
    const double x = f.x(m);
    sx += x;
    sy += t;
    sxx += x * x;
    sxy += x * t;
  }
  const double det = k * sxx - sx * sx;
  f.b = det > 0 ? std::max(0.0, (k * sxy - sx * sy) / det) : 0.0;
  f.a = (sy - f.b * sx) / k;
  if (f.a < 0) {  // no cost is below zero: the line through the origin
    f.a = 0;
    f.b = sxx > 0 ? std::max(0.0, sxy / sxx) : 0.0;
  }
  double residual = 0;
  for (const auto& [m, t] : points) residual += (f.a + f.b * f.x(m) - t) * (f.a + f.b * f.x(m) - t);
  return {f, residual};
}

/// The collectives (operation, block) of the plan's phases on communicators wider than `measured`, in order.
std::vector<std::pair<mpi::Collective, int>> wide_collectives(const ReplayPlan& plan, std::int64_t measured) {
  std::set<std::pair<mpi::Collective, int>> seen;
  std::vector<std::pair<mpi::Collective, int>> out;
  for (const PlannedPhase& p : plan.phases) {
    for (const modeler::PredictedCall& c : p.rank.calls) {
      for (const modeler::PredictedAction& a : c.actions) {
        if (a.kind != mpi::ActionKind::Collective || !moves_data(a.collective) || a.comm_size <= measured) continue;
        const std::pair<mpi::Collective, int> key{a.collective, count_of(a.block)};
        if (seen.insert(key).second) out.push_back(key);
      }
    }
  }
  return out;
}

/// The slowest member's median time of `repeats` calls of the collective on `comm` (each after a barrier), after
/// two untimed.
double time_on(mpi::Collective op, int block, MPI_Comm comm, int repeats, std::vector<char>& in,
               std::vector<char>& out) {
  int members = 1;
  MPI_Comm_size(comm, &members);
  const std::size_t room = static_cast<std::size_t>(block) * static_cast<std::size_t>(members) + 1;
  if (in.size() < room) in.resize(room);
  if (out.size() < room) out.resize(room);
  for (int i = 0; i < 2; ++i) move_data(op, in.data(), out.data(), block, 0, comm);
  // Each call apart, and their median: on a busy machine a few calls wait for a descheduled member.
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    MPI_Barrier(comm);
    const std::int64_t t0 = now_ns();
    move_data(op, in.data(), out.data(), block, 0, comm);
    times.push_back(static_cast<double>(now_ns() - t0));
  }
  std::nth_element(times.begin(), times.begin() + repeats / 2, times.end());
  double median = times[static_cast<std::size_t>(repeats / 2)];
  MPI_Allreduce(MPI_IN_PLACE, &median, 1, MPI_DOUBLE, MPI_MAX, comm);
  return median;
}

}  // namespace

bool moves_data(mpi::Collective op) {
  return op != mpi::Collective::CreateHandle && op != mpi::Collective::DestroyHandle &&
         op != mpi::Collective::Allocate && op != mpi::Collective::Deallocate &&
         op != mpi::Collective::CreateHandleAndAllocate && op != mpi::Collective::DestroyHandleAndDeallocate &&
         op != mpi::Collective::None;
}

double CollectiveFit::x(double members) const { return linear ? members : std::log2(std::max(1.0, members)); }

bool may_be_linear(mpi::Collective op) {
  switch (op) {
    case mpi::Collective::Gather:
    case mpi::Collective::Gatherv:
    case mpi::Collective::Scatter:
    case mpi::Collective::Scatterv:
    case mpi::Collective::Allgather:
    case mpi::Collective::Allgatherv:
    case mpi::Collective::Alltoall:
    case mpi::Collective::Alltoallv:
    case mpi::Collective::Alltoallw:
      return true;
    default:
      return false;
  }
}

CollectiveFit fit_collective(const std::vector<std::pair<int, double>>& points, bool linear_allowed) {
  auto [log_fit, log_residual] = least_squares(points, false);
  if (points.size() < 3 || !linear_allowed) return log_fit;
  auto [linear_fit, linear_residual] = least_squares(points, true);
  return linear_residual < log_residual ? linear_fit : log_fit;
}

CollectiveCosts CollectiveCosts::calibrate(const ReplayPlan& plan, std::int64_t measured, MPI_Comm comm, int repeats) {
  CollectiveCosts out;
  int me = 0;
  int job = 1;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &job);
  const std::vector<std::pair<mpi::Collective, int>> ops = wide_collectives(plan, measured);
  if (ops.empty() || job < 2) return out;
  std::vector<int> sizes;
  for (int m = 2; m < job; m *= 2) sizes.push_back(m);
  sizes.push_back(job);
  std::vector<char> in;
  std::vector<char> buffer;
  std::map<std::pair<mpi::Collective, int>, std::vector<std::pair<int, double>>> points;
  for (const int m : sizes) {
    MPI_Comm sub = MPI_COMM_NULL;
    MPI_Comm_split(comm, me < m ? 0 : MPI_UNDEFINED, me, &sub);
    for (const auto& key : ops) {
      double t = me < m ? time_on(key.first, key.second, sub, repeats, in, buffer) : 0.0;
      MPI_Bcast(&t, 1, MPI_DOUBLE, 0, comm);  // every rank keeps the same fits
      points[key].emplace_back(m, t);
    }
    if (sub != MPI_COMM_NULL) MPI_Comm_free(&sub);
  }
  for (const auto& [key, p] : points) out.fits_[key] = fit_collective(p, may_be_linear(key.first));
  return out;
}

std::optional<double> CollectiveCosts::extra_ns(mpi::Collective op, int block, int here, std::int64_t predicted) const {
  const auto it = fits_.find({op, block});
  if (it == fits_.end()) return std::nullopt;
  if (predicted <= here) return 0.0;
  const CollectiveFit& f = it->second;
  return f.b * (f.x(static_cast<double>(predicted)) - f.x(here));
}

std::vector<std::string> CollectiveCosts::describe() const {
  std::vector<std::string> out;
  for (const auto& [key, f] : fits_) {
    std::string sizes;
    for (const auto& [m, t] : f.measured) {
      char one[64];
      std::snprintf(one, sizeof one, "%s%.1f us on %d", sizes.empty() ? "" : ", ", t / 1e3, m);
      sizes += one;
    }
    char line[512];
    std::snprintf(line, sizeof line, "%s of %d bytes took %s ranks: %.1f us + %.2f us x %s",
                  std::string(mpi::name(key.first)).c_str(), key.second, sizes.c_str(), f.a / 1e3, f.b / 1e3,
                  f.linear ? "members" : "log2(members)");
    out.emplace_back(line);
  }
  return out;
}

}  // namespace p3s::replay::detail
