// SPDX-License-Identifier: BSD-3-Clause
// The far point (the method's CRMc). Compute time fitted on a few small runs drifts as it is extrapolated: the time
// per unit of work changes with the work per process (caches), which the small runs do not show. A run of the same
// program with a reduced input at a larger process count has, per process, as little work as the full input has
// at some much larger n; its measured time there is one more point of each phase's time law.
#include <algorithm>
#include <cmath>

#include "p3s/error.hpp"
#include "p3s/modeler/fit.hpp"
#include "p3s/modeler/predict.hpp"

namespace p3s::modeler {
namespace {

/// The largest process count the search for the far point's place looks at.
constexpr std::int64_t kLargestN = std::int64_t{1} << 22;
/// The far run's work per rank must be met within this at the n found.
constexpr double kMatch = 0.10;

/// A class's predicted work per rank and instance at n, its ranks taken as the same share of n as in the largest
/// fitted run (counting a class's ranks exactly costs O(n) per n).
double class_work_at(const PhaseModel& pm, const WorkClass& cls, double share, std::int64_t n) {
  const std::int64_t ranks = std::max<std::int64_t>(1, std::llround(share * static_cast<double>(n)));
  const std::int64_t weight = pm.weight_at(n);
  double w = 0;
  for (const BurstModel& b : cls.bursts) w += b.work.at(n, ranks, weight);
  return w;
}

/// The n whose predicted work per rank is closest to `target`, by a geometric scan refined over the integers.
std::int64_t closest_n(const PhaseModel& pm, const WorkClass& cls, double share, double target) {
  const auto miss = [&](std::int64_t n) { return std::abs(class_work_at(pm, cls, share, n) - target); };
  std::int64_t best = 1;
  for (double x = 1; x <= static_cast<double>(kLargestN); x *= 1.01) {
    const auto n = static_cast<std::int64_t>(x);
    if (miss(n) < miss(best)) best = n;
  }
  const std::int64_t lo = std::max<std::int64_t>(1, best * 98 / 100);
  const std::int64_t hi = std::min(kLargestN, best * 102 / 100 + 1);
  for (std::int64_t n = lo; n <= hi; ++n) {
    if (miss(n) < miss(best)) best = n;
  }
  return best;
}

/// The program a command runs: its first word ("./bt.B" of "./bt.B 12").
std::string program_of(const std::string& command) {
  const std::string app = application_command(command);
  return app.substr(0, app.find(' '));
}

/// Calibrates one class of a phase; returns why it could not be, or an empty string.
std::string calibrate_class(const Model& m, const PhaseModel& pm, WorkClass& cls, const analyzer::SigPhase& far,
                            std::int64_t far_n, const std::string& path, const PhasePredictor& at_far, std::size_t k) {
  if (!cls.time_fit) return "the model has no compute-time law for it";
  double work = 0, time = 0;
  std::int64_t members = 0;
  for (const analyzer::SigRank& r : far.ranks) {
    if (r.thread != 0 || at_far.class_of(r.rank) != k) continue;
    ++members;
    work += r.tail_work.mean;
    time += r.tail_ns.mean;
    for (const analyzer::SigEvent& e : r.events) {
      work += e.burst_work.mean;
      time += e.burst_ns.mean;
    }
  }
  if (members == 0) return "no rank of the far run is in it";
  work /= static_cast<double>(members);
  time /= static_cast<double>(members);
  const std::int64_t top = m.limits.order_from_n;
  const double share = top > 0 ? static_cast<double>(cls.largest_run_ranks) / static_cast<double>(top) : 1.0;
  if (!(class_work_at(pm, cls, share, 2 * top) < 0.9 * class_work_at(pm, cls, share, top))) {
    return "its work per rank does not shrink with n, so no process count has the far run's work";
  }
  const std::int64_t n = closest_n(pm, cls, share, work);
  const double predicted = class_work_at(pm, cls, share, n);
  if (work <= 0 || std::abs(predicted - work) > kMatch * work) {
    return "no process count up to " + std::to_string(kLargestN) + " has the far run's work per rank (" +
           std::to_string(work) + "; closest " + std::to_string(predicted) + " at n = " + std::to_string(n) + ")";
  }
  FarPoint f{path, far_n, far.listed_id(), work, n, predicted, time};
  f.from_n = top;
  cls.far_point.reset();
  const auto ranks_at_n = std::max<std::int64_t>(1, std::llround(share * static_cast<double>(n)));
  f.fitted_ns = *cls.time_at(n, ranks_at_n, pm.weight_at(n));
  if (f.fitted_ns <= 0 || time <= 0) return "its fitted or its far compute time is zero";
  f.exponent = n > top ? std::log(time / f.fitted_ns) / std::log(static_cast<double>(n) / static_cast<double>(top)) : 0;
  if (n <= top)
    return "the far run's work per rank is that of n = " + std::to_string(n) + ", not beyond the fitted runs";
  cls.far_point = f;
  return {};
}

}  // namespace

void calibrate_with_far_point(Fit& fit, const Run& far) {
  Model& m = fit.model;
  const ScopedDimsRule rule(m.dims_rule);  // the far run's grids are cut by the series' MPI
  const std::string path = far.path.string();
  if (far.signature.work_metric != m.work_metric) {
    throw InputError("far point '" + path + "' measures work as " + far.signature.work_metric + ", the model as " +
                     m.work_metric + "; record it with the same --counters");
  }
  const std::string program = program_of(far.signature.command);
  const std::string ours = m.application.substr(0, m.application.find(' '));
  if (!program.empty() && !ours.empty() && program != ours) {
    throw InputError("far point '" + path + "' runs " + program + ", the model is of " + ours +
                     "; give a run of the same program with a reduced input");
  }
  if (!far.signature.complete) {
    throw InputError("far point '" + path + "' is of a run that did not reach MPI_Finalize; give a complete run");
  }
  // A far point is a run beyond the fitted counts, with a reduced input: one of the fitted runs again (or any run
  // within them) bends the compute-time law by its own input size, and calibrates nothing.
  const std::vector<std::int64_t> fitted = m.fitted_counts();
  const std::int64_t largest = fitted.empty() ? 0 : *std::max_element(fitted.begin(), fitted.end());
  if (far.signature.processes <= largest) {
    throw InputError("far point '" + path + "' is a run at " + std::to_string(far.signature.processes) +
                     " processes, within the fitted counts (up to " + std::to_string(largest) +
                     "); give a run at more processes than the fitted ones, with a reduced input");
  }
  const Run merged = merged_for(m, far);
  const std::vector<std::optional<std::uint32_t>> related = relate_model_phases(m, merged.signature);
  std::size_t calibrated = 0;
  std::vector<std::string> reasons;
  for (std::size_t i = 0; i < m.phases.size(); ++i) {
    PhaseModel& pm = m.phases[i];
    PhaseReport* report = nullptr;
    for (PhaseReport& r : fit.report.phases) {
      if (r.id == pm.id) report = &r;
    }
    const auto say = [&](const std::string& why) {
      const std::string line = "far point not used: " + why;
      if (report != nullptr) report->notes.push_back(line);
      reasons.push_back("phase " + std::to_string(pm.id) + ": " + why);
    };
    if (!related[i]) {
      say("the far run has no phase making the same calls at the same place in its order");
      continue;
    }
    const analyzer::SigPhase* far_phase = nullptr;
    for (const analyzer::SigPhase& p : merged.signature.phases) {
      if (p.id == *related[i]) far_phase = &p;
    }
    if (far_phase == nullptr) continue;
    std::optional<PhasePredictor> at_far;
    try {
      at_far.emplace(pm, far.n());
    } catch (const ModelError& e) {
      say(std::string("the model cannot be evaluated at the far run's ") + std::to_string(far.n()) +
          " processes: " + e.what());
      continue;
    }
    for (std::size_t k = 0; k < pm.work.size(); ++k) {
      const std::string why = calibrate_class(m, pm, pm.work[k], *far_phase, far.n(), path, *at_far, k);
      if (why.empty()) {
        ++calibrated;
      } else if (pm.relevant) {
        say("work class " + std::to_string(k) + ": " + why);
      }
    }
  }
  if (calibrated == 0) {
    throw InputError("far point '" + path + "' calibrates no phase (" +
                     (reasons.empty() ? std::string("no phase has compute-time laws") : reasons.front()) +
                     "); give a run of the same program whose phases do the same calls");
  }
}

}  // namespace p3s::modeler
