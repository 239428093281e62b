// SPDX-License-Identifier: BSD-3-Clause
// What a rank replays, from a model (evaluated by the rank itself) or from an ST4NP directory (the rank's own
// lines, found through the rank index: no rank reads the whole trace).
#include <algorithm>
#include <cstdio>
#include <sstream>

#include "made_once.hpp"
#include "p3s/error.hpp"
#include "p3s/modeler/phase_check.hpp"
#include "p3s/modeler/predict.hpp"
#include "p3s/modeler/st4np.hpp"
#include "p3s/replay/replay.hpp"

namespace p3s::replay {
namespace {

/// Whether a phase's calls ("MPI_Init MPI_Bcast") hold neither MPI_Init nor MPI_Finalize.
bool main_loop(const std::string& calls) {
  std::istringstream words(calls);
  for (std::string w; words >> w;) {
    if (detail::made_once(mpi::function_named(w))) return false;
  }
  return true;
}

/// Checks that the model predicts time (a model without compute-time laws would replay communication only), and
/// says which phases have no model of their bursts, which then take no time.
std::vector<std::string> require_time(const modeler::Model& model) {
  if (!modeler::has_time_laws(model)) {
    throw InputError(
        "the model has no compute-time laws (it was written by an earlier p3s); re-run `p3s model` on "
        "its signatures");
  }
  std::vector<std::string> notes;
  for (const modeler::PhaseModel& p : model.phases) {
    if (p.work.empty()) {
      notes.push_back("phase " + std::to_string(p.id) +
                      " has no model of its bursts (no law reproduces its calls): they take no time in the replay");
    }
  }
  return notes;
}

/// The weight at n of each phase: its instances over the order's stretches.
void weigh(ReplayPlan& plan) {
  for (const modeler::PhaseRun& e : plan.order) {
    plan.phases.at(e.phase).weight += static_cast<std::int64_t>(e.count);
  }
}

}  // namespace

namespace {

/// Refuses sizes no replay can send: not a number, below zero, or more than one MPI call carries in bytes (a count
/// is an int), which the replay would otherwise allocate, and zero-fill, on every rank. Likewise bursts: below zero,
/// not a number, or longer than any emulation (kMostBurstNs, past which a duration no longer fits a clock's count).
void check_sizes(const ReplayPlan& plan, std::int64_t rank) {
  constexpr double kMost = 2147483647.0;
  constexpr double kMostBurstNs = 1e16;  // 116 days
  const auto where = [&](const PlannedPhase& p, std::size_t c) {
    return "phase " + std::to_string(p.id) + ", rank " + std::to_string(rank) + ", call " + std::to_string(c) + " (" +
           (c < p.rank.calls.size() ? p.rank.calls[c].call : std::string("tail")) + ")";
  };
  const auto check_burst = [&](const PlannedPhase& p, std::size_t c, const std::optional<double>& ns) {
    if (!ns || (*ns >= 0 && *ns <= kMostBurstNs)) return;
    char text[96];
    std::snprintf(text, sizeof text, "%g ns", *ns);
    throw InputError(where(p, c) + " computes for " + text + " before it: no duration a replay can emulate");
  };
  for (const PlannedPhase& p : plan.phases) {
    for (std::size_t c = 0; c < p.rank.calls.size(); ++c) {
      check_burst(p, c, p.rank.calls[c].burst_ns);
      for (const modeler::PredictedAction& a : p.rank.calls[c].actions) {
        for (const double v : {a.bytes, a.block, a.bytes_received}) {
          if (v >= 0 && v <= kMost) continue;
          char text[96];
          std::snprintf(text, sizeof text, "%g bytes", v);
          throw InputError(where(p, c) + " moves " + text +
                           ", more than one MPI call carries (2^31 - 1 bytes) or no size at all");
        }
      }
    }
    check_burst(p, p.rank.calls.size(), p.rank.tail_ns);
  }
}

/// Refuses a phase order that replays nothing: no stretch, or no instance in any.
void check_order(const ReplayPlan& plan) {
  for (const modeler::PhaseRun& e : plan.order) {
    if (e.count > 0) return;
  }
  throw InputError("its phase order has no instance of any phase: there is nothing to replay");
}

}  // namespace

ReplayPlan plan_from_model(const modeler::Model& model, const std::string& path, std::int64_t n, std::int64_t rank,
                           modeler::OnInconsistency policy) {
  const modeler::ScopedDimsRule rule(model.dims_rule);
  ReplayPlan plan;
  plan.processes = n;
  plan.source = path;
  plan.application = model.application;
  plan.work_metric = model.work_metric;
  plan.dims_rule = model.dims_rule;
  plan.notes = require_time(model);
  if (const std::optional<std::string> threads = modeler::threads_note(model.limits)) plan.notes.push_back(*threads);
  std::vector<modeler::PhasePredictor> predictors;
  for (const modeler::PhaseModel& p : model.phases) predictors.emplace_back(p, n);
  // Every rank checks every phase (as `p3s predict` does), so that all refuse or repair alike without a word.
  const modeler::PredictionCheck check = modeler::check_prediction(model, predictors, n, policy);
  for (const std::string& note : check.notes()) plan.notes.push_back(note);
  for (std::size_t k = 0; k < model.phases.size(); ++k) {
    const modeler::PhaseModel& p = model.phases[k];
    modeler::PredictedRank own = predictors[k].rank(rank);
    check.phases[k].repair(own);
    plan.phases.push_back({p.id, p.calls, main_loop(p.calls), 0, std::move(own), !check.phases[k].consistent()});
    for (const modeler::GroupModel& g : p.groups) {
      if (g.role == modeler::Role::PointToPoint) plan.comms.push_back(&g.comm);
      for (const modeler::CollectiveEntry& c : g.collectives) plan.comms.push_back(&c.comm);
    }
  }
  plan.order = modeler::order_at(model, n);
  check_order(plan);
  weigh(plan);
  check_sizes(plan, rank);
  return plan;
}

ReplayPlan plan_from_st4np(const std::filesystem::path& dir, std::int64_t n, std::int64_t rank) {
  modeler::St4np trace = modeler::read_st4np(dir);
  if (trace.processes != n) {
    throw InputError("ST4NP '" + dir.string() + "': it is a trace of " + std::to_string(trace.processes) +
                     " ranks, and the job has " + std::to_string(n) + "; run p3s-replay with " +
                     std::to_string(trace.processes) + " ranks");
  }
  std::vector<modeler::PredictedRank> own = modeler::st4np_rank(trace, rank);
  ReplayPlan plan;
  plan.source = dir.string();
  plan.processes = n;
  plan.application = trace.application;
  plan.work_metric = trace.work_metric;
  plan.dims_rule = trace.dims_rule;
  plan.notes = std::move(trace.notes);
  for (std::size_t p = 0; p < trace.phases.size(); ++p) {
    const modeler::St4npPhase& ph = trace.phases[p];
    plan.phases.push_back({ph.id, ph.calls, main_loop(ph.calls), 0, std::move(own[p]), ph.repaired});
  }
  plan.order = std::move(trace.order);
  // The actions point into the communicators, which the plan now owns.
  for (auto& c : trace.comms) {
    plan.comms.push_back(c.get());
    plan.owned.push_back(std::move(c));
  }
  try {
    check_order(plan);
    weigh(plan);
    check_sizes(plan, rank);
  } catch (const InputError& e) {
    throw InputError("ST4NP '" + dir.string() + "': " + e.what());
  }
  return plan;
}

}  // namespace p3s::replay
