// SPDX-License-Identifier: BSD-3-Clause
#include "p3s/analyzer/run_time.hpp"

#include <algorithm>
#include <set>

#include "p3s/mpi/vocabulary.hpp"

namespace p3s::analyzer {

PhaseRunTime phase_run_time(const SigPhase& p, std::int64_t processes) {
  double inside = 0;  // time inside MPI_Init and MPI_Finalize per instance, summed over ranks
  bool holds = false;
  for (const SigRank& r : p.ranks) {
    for (const SigEvent& e : r.events) {
      const mpi::CallKind k = mpi::kind(e.function);
      if (r.thread != 0 || (k != mpi::CallKind::Init && k != mpi::CallKind::Finalize)) continue;
      inside += e.call_ns.mean;
      holds = true;
    }
  }
  const double per_instance = processes > 0 ? inside / static_cast<double>(processes) : 0;
  const auto weight = static_cast<double>(p.weight);
  return {weight * p.time_ns.mean - weight * per_instance, weight * per_instance, holds};
}

double phase_compute_ns(const SigPhase& p, std::int64_t processes) {
  double total = 0;
  for (const SigRank& r : p.ranks) {
    if (r.thread != 0) continue;
    total += r.tail_ns.mean;
    for (const SigEvent& e : r.events) total += e.burst_ns.mean;
  }
  return processes > 0 ? total / static_cast<double>(processes) : 0;
}

double phase_compute_max_ns(const SigPhase& p) {
  double most = 0;
  for (const SigRank& r : p.ranks) {
    if (r.thread != 0) continue;
    double mine = r.tail_ns.mean;
    for (const SigEvent& e : r.events) mine += e.burst_ns.mean;
    most = std::max(most, mine);
  }
  return most;
}

std::string phase_calls(const SigPhase& p) {
  std::set<std::string> calls;
  for (const SigRank& r : p.ranks) {
    for (const SigEvent& e : r.events) calls.insert(e.call);
  }
  std::string out;
  for (const std::string& c : calls) out += (out.empty() ? "" : " ") + c;
  return out;
}

RunTime run_time(const Signature& s) {
  RunTime out;
  for (const SigPhase& p : s.phases) {
    const PhaseRunTime t = phase_run_time(p, s.processes);
    out.apart_ns += t.apart_ns;
    out.excluded_ns += t.excluded_ns;
    if (!t.init_or_finalize) out.main_ns += t.apart_ns;
  }
  return out;
}

}  // namespace p3s::analyzer
