// SPDX-License-Identifier: BSD-3-Clause
// Fitting an application model: phases related across runs, each phase's shape (groups of calls), and per group
// the laws of its communications; then the work of the bursts per class of ranks.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <span>

#include "grid_seen.hpp"
#include "group_fit.hpp"
#include "orient.hpp"
#include "p3s/error.hpp"
#include "p3s/hash.hpp"
#include "p3s/modeler/fit.hpp"
#include "p3s/modeler/model.hpp"
#include "p3s/table_text.hpp"
#include "p3s/utc_date.hpp"
#include "p3s/version.hpp"
#include "phase_shape.hpp"
#include "phase_work.hpp"
#include "rank_data.hpp"
#include "side_analogy.hpp"
#include "work_model.hpp"

namespace p3s::modeler {
namespace {

using detail::RankData;
using detail::samples_of;

/// A phase's model and what its fit saw.
struct PhaseFit {
  PhaseModel model;
  PhaseReport report;
};

/// The most calls of one rank in one instance whose ranks the modeler aligns: an alignment costs the product of two
/// ranks' calls in time and memory (4096 x 4096 cells, 128 MiB), and is made for every rank of every run.
constexpr std::uint64_t kMostAlignedCalls = 4096;

/// The most a weight that follows no exact law may differ across the fitted runs (of the largest) to be taken as a
/// count the run's data decides rather than a trend in n: how often a step takes a data-dependent branch (a
/// re-neighbouring, an output, one more sweep) moves by a few percent from one count to the next, as rounding
/// moves the trajectory; a trend fitted to that runs away from the fitted counts (below zero, or many times
/// them) a few doublings out, where the nearest fitted run's count misses by as much as the runs differ.
constexpr double kDataWeightSpread = 0.10;
/// The note on a weight that a regression rounded gives, its law following.
constexpr std::string_view kWeightTrendNote = "the weight follows no exact law in n; fitted ";

/// "2 4 8": the process counts of a map's keys.
std::string fitted_list(const std::map<std::int64_t, std::int64_t>& by_n) {
  std::string s;
  for (const auto& [n, v] : by_n) s += (s.empty() ? "" : " ") + std::to_string(n);
  return s;
}

/// The most calls a rank makes in one instance of the phase, over the runs.
std::uint64_t longest_instance(std::span<const Run> runs, const RelatedPhase& rel) {
  std::uint64_t most = 0;
  for (std::size_t k = 0; k < runs.size(); ++k) {
    for (const analyzer::SigRank& r : runs[k].signature.phases[rel.ids[k]].ranks) {
      most = std::max<std::uint64_t>(most, r.events.size());
    }
  }
  return most;
}

/// A phase too long to align, kept as measured: its work and time per rank and instance, as one burst each rank
/// makes (the phase's tail), learnt as any phase's work is; no groups. Its weight is learnt already.
void kept_as_work(std::span<const Run> runs, const RelatedPhase& rel,
                  const std::map<std::int64_t, std::int64_t>& weight_by_n, std::uint64_t longest, PhaseFit& out) {
  std::vector<detail::RankWork> work;
  const detail::BurstKey tail{-1, 0, 0};
  for (std::size_t k = 0; k < runs.size(); ++k) {
    for (const analyzer::SigRank& r : runs[k].signature.phases[rel.ids[k]].ranks) {
      if (r.thread != 0) continue;
      detail::RankWork& w = work.emplace_back(detail::RankWork{runs[k].n(), r.rank, {}, {}, {}});
      double& units = w.work[tail];
      double& ns = w.time[tail];
      for (const analyzer::SigEvent& e : r.events) {
        units += e.burst_work.mean;
        ns += e.burst_ns.mean;
      }
      units += r.tail_work.mean;
      ns += r.tail_ns.mean;
    }
  }
  detail::LearntWork learnt = detail::learn_work(work, weight_by_n);
  out.model.work = std::move(learnt.classes);
  out.model.calls_left_out = longest;
  out.report.measured = std::move(learnt.measured);
  out.report.laws = law_fits(out.model);
  out.report.notes.push_back("an instance holds up to " + std::to_string(longest) +
                             " calls on one rank, more than the " + std::to_string(kMostAlignedCalls) +
                             " whose ranks the model aligns (no loop folds them: analyze the runs with "
                             "--phase-level outermost-loops, or fewer iterations per instance); kept as measured: "
                             "its work and time per rank, its calls left out of predictions");
}

/// The phase's weight: an exact law of its instances in n where one reproduces the runs, else a rounded regression.
/// Returns the instances per fitted n.
std::map<std::int64_t, std::int64_t> fit_weight(std::span<const Run> runs, const RelatedPhase& rel,
                                                const WholeAt& whole, PhaseModel& pm, PhaseReport& pr) {
  std::map<std::int64_t, double> weights;
  std::map<std::int64_t, std::int64_t> weight_by_n;
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const auto w = static_cast<std::int64_t>(runs[k].signature.phases[rel.ids[k]].weight);
    weights[runs[k].n()] = static_cast<double>(w);
    weight_by_n[runs[k].n()] = w;
  }
  if (std::optional<ExactLaw> w = fit_exact(samples_of(weights), whole)) {
    pm.weight = *w;
  } else {
    pm.weight_exact = false;
    pm.weight_fit = fit_regression(samples_of(weights));
    const auto [least, most] = std::minmax_element(weight_by_n.begin(), weight_by_n.end(),
                                                   [](const auto& a, const auto& b) { return a.second < b.second; });
    const double spread =
        most->second > 0 ? static_cast<double>(most->second - least->second) / static_cast<double>(most->second) : 0;
    if (spread <= kDataWeightSpread) {
      pm.weight_measured = weight_by_n;
      pr.notes.push_back("the weight follows no exact law in n and differs across the fitted runs by " +
                         fmt("%.1f", 100 * spread) + " % (a count the run's data decides, as how often a step " +
                         "takes a branch, not n): kept as measured at n = " + fitted_list(weight_by_n) +
                         " (at any other n the nearest fitted run's, not extrapolated: approximate; a trend " +
                         "would give " + pm.weight_fit.to_string() + ")");
    } else {
      pr.notes.push_back(std::string(kWeightTrendNote) + pm.weight_fit.to_string() + " (rounded)");
    }
  }
  return weight_by_n;
}

/// How many calls each rank of each run made in each group.
std::vector<detail::RankCalls> rank_calls(const std::vector<RankData>& ranks, std::size_t groups) {
  std::vector<detail::RankCalls> calls;
  for (const RankData& d : ranks) {
    detail::RankCalls& c = calls.emplace_back(detail::RankCalls{d.n, std::vector<std::size_t>(groups, 0)});
    for (std::size_t g = 0; g < groups; ++g) c.calls[g] = d.at[g] != nullptr ? d.at[g]->calls.size() : 0;
  }
  return calls;
}

/// A phase's model: weight, shape, groups, grid, work (or its work alone where an instance holds more calls than are
/// aligned), and the fit's report on it.
PhaseFit model_phase(std::span<const Run> runs, const RelatedPhase& rel, std::uint32_t id, const FitOptions& options) {
  PhaseFit out;
  const WholeAt whole{options.evaluate_at};
  PhaseModel& pm = out.model;
  PhaseReport& pr = out.report;
  pm.id = pr.id = id;
  pm.calls = pr.calls = rel.calls;
  pr.total_work_spread = rel.total_work_spread();
  pm.step = true;
  for (std::size_t k = 0; k < runs.size(); ++k) {
    pm.relevant = pm.relevant || runs[k].signature.phases[rel.ids[k]].relevant;
    pm.step = pm.step && runs[k].signature.phases[rel.ids[k]].step;
  }
  pr.relevant = pm.relevant;
  pr.share = runs.back().signature.phases[rel.ids.back()].share;
  const std::map<std::int64_t, std::int64_t> weight_by_n = fit_weight(runs, rel, whole, pm, pr);
  const std::uint64_t longest = longest_instance(runs, rel);
  if (longest > kMostAlignedCalls) {
    kept_as_work(runs, rel, weight_by_n, longest, out);
    return out;
  }
  detail::Shaped shaped = detail::best_shape(runs, rel, options);
  pm.groups = std::move(shaped.groups);
  pm.loops = std::move(shaped.loops);
  std::vector<std::int64_t> fitted_n;
  for (const Run& run : runs) fitted_n.push_back(run.n());
  detail::orient_steps(pm.groups, fitted_n);
  detail::meet_steps(pm.groups, fitted_n);
  pr.notes.insert(pr.notes.end(), shaped.notes.begin(), shaped.notes.end());
  detail::fit_groups(pm, pr, shaped.ranks, shaped.completion_notes, whole);
  pm.grid_seen = detail::grid_seen(pm.groups, rank_calls(shaped.ranks, pm.groups.size()), fitted_n);
  detail::fit_work(pm, pr, shaped.ranks, weight_by_n);
  std::vector<std::string> extended = detail::extend_along_shorter_sides(pm, fitted_n);
  for (std::string& note : detail::add_exchanges_along_shorter_sides(pm, fitted_n)) extended.push_back(std::move(note));
  if (!extended.empty()) {
    // Steps that paired across exchanges where one was cut short now pair within them.
    detail::orient_steps(pm.groups, fitted_n);
    detail::meet_steps(pm.groups, fitted_n);
    pr.notes.insert(pr.notes.end(), extended.begin(), extended.end());
  }
  pr.laws = law_fits(pm);
  for (std::size_t g = 0; g < pm.groups.size(); ++g) {
    if (!pm.groups[g].measured.empty()) pr.approximate_groups.push_back(static_cast<std::uint32_t>(g));
  }
  return out;
}

/// Whether a kind's exact weight law rests on more than its own parameters: constant, or its basis takes more
/// distinct values over the fitted runs than the law has coefficients (a law through two distinct points of a
/// basis, as 2^floor(log2(n)/2) at 2, 4 and 8, fits any two weights).
bool confirmed_by_runs(const ExactLaw& law, const std::map<std::int64_t, std::int64_t>& weight_by_n) {
  if (law.is_constant()) return true;
  const ExactLaw basis{law.basis, Rational{1, 1}, Rational{0, 1}};
  std::set<double> values;
  for (const auto& [n, w] : weight_by_n) values.insert(basis.value_at(static_cast<double>(n)));
  return values.size() > 2;
}

/// Where the time step has several kinds in the model and the code's steps (the kinds' weights added) follow an
/// exact law over the fitted runs, the heaviest kind (at the largest fitted n) takes the steps the others leave.
/// Which kind a step is, is the run's data: another kind whose law misses one of its fitted weights (a rounded
/// regression of counts that jump with the data), or whose exact law the fitted runs do not confirm
/// (confirmed_by_runs), keeps its weights as measured, so that the kinds still add up to the code's steps at every
/// fitted n and no kind is carried away by a law that only joins its points.
void fit_time_step(std::span<const Run> runs, const PhaseRelation& rel, const WholeAt& whole,
                   std::vector<PhaseModel>& phases, std::vector<PhaseReport>& reports) {
  std::map<std::int64_t, double> steps;
  std::vector<std::map<std::int64_t, std::int64_t>> measured(phases.size());  // each kind's weight by fitted n
  std::size_t heaviest = phases.size();
  std::size_t kinds = 0;
  for (std::size_t p = 0; p < phases.size(); ++p) {
    if (!phases[p].step) continue;
    ++kinds;
    for (std::size_t k = 0; k < runs.size(); ++k) {
      const auto w = static_cast<std::int64_t>(runs[k].signature.phases[rel.phases[p].ids[k]].weight);
      measured[p][runs[k].n()] = w;
      steps[runs[k].n()] += static_cast<double>(w);
    }
    if (heaviest == phases.size() || measured[p].at(runs.back().n()) > measured[heaviest].at(runs.back().n())) {
      heaviest = p;
    }
  }
  if (kinds < 2) return;
  PhaseModel* main = &phases[heaviest];
  main->step_total = fit_exact(samples_of(steps), whole);
  if (!main->step_total) return;
  for (std::size_t p = 0; p < phases.size(); ++p) {
    PhaseModel& kind = phases[p];
    if (!kind.step || p == heaviest || !kind.weight_measured.empty()) continue;
    std::string why = "no law reproduces";
    if (kind.weight_exact) {
      if (confirmed_by_runs(kind.weight, measured[p])) continue;
      why = "the law " + kind.weight.to_string() +
            " only joins, its basis taking no more distinct values there than the law has coefficients";
      kind.weight_exact = false;
      const std::map<std::int64_t, double> weights(measured[p].begin(), measured[p].end());
      kind.weight_fit = fit_regression(samples_of(weights));
    } else if (std::all_of(measured[p].begin(), measured[p].end(),
                           [&kind](const auto& w) { return kind.weight_at(w.first) == w.second; })) {
      continue;
    }
    kind.weight_measured = measured[p];
    std::vector<std::string>& notes = reports[p].notes;
    std::erase_if(notes, [](const std::string& line) { return line.starts_with(kWeightTrendNote); });
    notes.push_back("a kind of the time step whose weights " + why +
                    " (which kind a step is, is the run's data): kept as measured at n = " + fitted_list(measured[p]) +
                    " (at any other n the nearest fitted run's), the main kind taking the code's other steps");
  }
  link_time_step(phases);
  // The other kinds' laws must give their fitted weights: else the main kind's own.
  for (const auto& [n, w] : measured[heaviest]) {
    if (main->weight_at(n) != w) {
      main->step_total.reset();
      main->other_kinds.clear();
      return;
    }
  }
}

/// What the model leaves out: its threads, and the phases whose counts it takes from the largest run's order.
ModelLimits limits_of(const Model& m, std::span<const Run> runs) {
  ModelLimits l;
  l.order_from_n = runs.back().n();
  // The calls each run made, instances times calls per instance, and those of other threads than the first.
  for (const Run& run : runs) {
    double all = 0;
    double others = 0;
    for (const analyzer::SigPhase& p : run.signature.phases) {
      for (const analyzer::SigRank& r : p.ranks) {
        const double calls = static_cast<double>(p.weight) * static_cast<double>(r.events.size());
        all += calls;
        if (r.thread != 0) others += calls;
      }
    }
    if (all > 0) l.other_threads_share = std::max(l.other_threads_share, others / all);
  }
  std::map<std::uint32_t, int> stretches;
  for (const PhaseRun& e : m.order) ++stretches[e.phase];
  for (const auto& [phase, count] : stretches) {
    if (count > 1) l.fixed_count_phases.push_back(phase);
  }
  return l;
}

}  // namespace

bool PhaseModel::in_loop(std::size_t g) const {
  return std::any_of(loops.begin(), loops.end(),
                     [g](const PhaseLoop& l) { return g >= l.first && g - l.first < l.groups; });
}

namespace {

/// A weight at n by its own laws (WeightLaw, PhaseModel's weight fields).
std::int64_t weight_value(const ExactLaw& exact_law, bool exact, const RegressionLaw& fit,
                          const std::map<std::int64_t, std::int64_t>& measured, std::int64_t n) {
  if (exact) return count_value(exact_law, n);
  if (!measured.empty()) {
    return nearest_by_n(measured.begin(), measured.end(), n, [](const auto& w) { return w.first; })->second;
  }
  return std::max<std::int64_t>(0, std::llround(fit.value_at(static_cast<double>(n))));
}

}  // namespace

std::int64_t WeightLaw::at(std::int64_t n) const { return weight_value(exact_law, exact, fit, measured, n); }

std::int64_t PhaseModel::weight_at(std::int64_t n) const {
  if (!step_total) return weight_value(weight, weight_exact, weight_fit, weight_measured, n);
  std::int64_t rest = count_value(*step_total, n);
  for (const WeightLaw& k : other_kinds) rest -= k.at(n);
  return std::max<std::int64_t>(0, rest);
}

void link_time_step(std::vector<PhaseModel>& phases) {
  PhaseModel* main = nullptr;
  for (PhaseModel& p : phases) {
    if (!p.step_total) continue;
    if (main != nullptr || !p.step) {
      throw InputError("phase " + std::to_string(p.id) + ": step_total " +
                       (p.step ? "on a second phase (only the time step's main kind has it)"
                               : "on a phase that is no kind of the time step"));
    }
    main = &p;
  }
  if (main == nullptr) return;
  main->other_kinds.clear();
  for (const PhaseModel& p : phases) {
    if (p.step && &p != main) main->other_kinds.push_back(p.own_weight());
  }
  if (main->other_kinds.empty()) {
    throw InputError("phase " + std::to_string(main->id) + ": step_total on the time step's only kind");
  }
}

Fit fit_model(std::span<const Run> runs, const FitOptions& options) {
  Fit fit;
  Model& m = fit.model;
  FitReport& report = fit.report;
  m.options = options;
  m.tool = report.tool = std::string("p3s ") + p3s::kVersion;
  m.date = report.date = utc_now();
  m.work_metric = runs.front().signature.work_metric;
  m.application = application_command(runs.front().signature.command);
  m.mpi_library = series_mpi_library(runs);
  m.dims_rule = dims_rule_of_library(m.mpi_library).value_or(DimsRule::OpenMpi);
  const ScopedDimsRule rule(m.dims_rule);
  for (const Run& r : runs) {
    m.inputs.push_back({std::filesystem::absolute(r.path).string(), r.n(), r.signature.command, r.signature.date});
    report.fitted_on.push_back(r.n());
  }
  const PhaseRelation rel = relate_phases(runs);
  report.unrelated = rel.unrelated;
  std::map<std::uint32_t, std::uint32_t> last_run_id;  // the largest run's phase id -> model phase id
  for (std::size_t p = 0; p < rel.phases.size(); ++p) {
    PhaseFit phase = model_phase(runs, rel.phases[p], static_cast<std::uint32_t>(p), options);
    m.phases.push_back(std::move(phase.model));
    report.phases.push_back(std::move(phase.report));
    last_run_id[rel.phases[p].ids.back()] = static_cast<std::uint32_t>(p);
  }
  fit_time_step(runs, rel, WholeAt{options.evaluate_at}, m.phases, report.phases);
  for (std::size_t p = 0; p < m.phases.size(); ++p) {
    if (!m.phases[p].step_total) continue;
    report.phases[p].notes.push_back("the time step's main kind: at any n its weight is the code's steps (" +
                                     m.phases[p].step_total->to_string() +
                                     ", the kinds' weights added in every fitted run) less the other kinds' weights");
  }
  for (const analyzer::PhaseRunEntry& e : runs.back().signature.order) {
    const auto it = last_run_id.find(e.phase);
    if (it != last_run_id.end()) m.order.push_back({it->second, e.count});
  }
  m.limits = limits_of(m, runs);
  return fit;
}

namespace {

/// The fit, calibrated with the far point when one is given.
Fit calibrated(Fit fit, const ModelOptions& options) {
  if (!options.far_point) return fit;
  const std::vector<Run> far = load_runs(std::span(&*options.far_point, 1), 1);
  calibrate_with_far_point(fit, far.front());
  return fit;
}

Fit fitted_and_validated(std::span<const std::filesystem::path> signatures, const ModelOptions& options);

}  // namespace

Fit build_model(std::span<const std::filesystem::path> signatures, const ModelOptions& options) {
  return calibrated(fitted_and_validated(signatures, options), options);
}

namespace {

/// Nothing of a run's time is left out unsaid: a phase of at least the series' relevance threshold with no
/// counterpart in another run stops the fit, unless asked to go on without it.
void check_nothing_relevant_left_out(std::span<const Run> runs, const ModelOptions& options) {
  if (options.allow_missing) return;
  const std::vector<UnrelatedPhase> missing =
      relevant_left_out(relate_phases(runs), runs.front().signature.options.relevance);
  if (missing.empty()) return;
  const std::string more = missing.size() > 1 ? " (and " + std::to_string(missing.size() - 1) + " more)" : "";
  throw InputError(missing.front().line + more +
                   ": the model would leave that time out; analyze the runs together (p3s analyze DIR DIR...) so "
                   "that their phases correspond, or pass --allow-missing to model the series without it");
}

/// The runs with the kinds of their phases merged (relate_phases_merging_kinds) as these runs alone relate them;
/// what was merged, one line each, into `lines` where given.
std::vector<Run> with_kinds_merged(std::vector<Run> runs, std::vector<std::string>* lines = nullptr) {
  PhaseRelation rel = relate_phases_merging_kinds(runs);
  if (lines != nullptr) *lines = std::move(rel.kinds);
  return runs;
}

Fit fitted_and_validated(std::span<const std::filesystem::path> signatures, const ModelOptions& options) {
  std::vector<Run> loaded = load_runs(signatures, 3);
  // The runs as loaded are kept only for a fit without the largest (a signature can take hundreds of MB).
  const bool holding_out = options.hold_out_largest && !options.validate_with;
  std::vector<std::string> kinds;
  const std::vector<Run> runs = with_kinds_merged(holding_out ? loaded : std::move(loaded), &kinds);
  check_nothing_relevant_left_out(runs, options);
  const auto with_kinds = [&kinds](Fit fit) {
    fit.report.kinds_merged = kinds;
    return fit;
  };
  // The model compared with a run is evaluated at that run's n: its laws should be whole numbers there.
  const auto validating = [&options](std::int64_t n) {
    FitOptions o = options.fit;
    o.evaluate_at.push_back(n);
    return o;
  };
  if (options.validate_with) {
    const std::vector<Run> held = load_runs(std::span(&*options.validate_with, 1), 1);
    Fit fit = fit_model(runs, validating(held.front().n()));
    fit.report.validation = compare_with(fit.model, held.front());
    return with_kinds(std::move(fit));
  }
  if (!options.hold_out_largest) return with_kinds(fit_model(runs, options.fit));
  // The held-out run is the validation's alone: the fitted runs' kinds are merged as they relate without it.
  const std::vector<Run> fitted = with_kinds_merged({loaded.begin(), loaded.end() - 1});
  const Fit first = fit_model(fitted, validating(loaded.back().n()));
  Fit fit = fit_model(runs, options.fit);  // the held-out run folded in
  fit.report.validation = compare_with(first.model, loaded.back());
  return with_kinds(std::move(fit));
}

}  // namespace
}  // namespace p3s::modeler
