// SPDX-License-Identifier: BSD-3-Clause
// Work per burst. Under strong scaling a class of ranks shares a fixed amount of work: the class's total over the
// run (weight x ranks x work per rank) stays nearly constant, and each rank's part is that total over the ranks
// and instances at n (the method's SCIC). Bursts of control code do not shrink: their work per rank stays
// constant. Each burst position is classified by which of the two is the flatter law across the fitted runs.
#include "work_model.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

namespace p3s::modeler::detail {
namespace {

/// Ranks whose work per instance is within this of each other's do alike (the method's instruction groups).
constexpr double kSimilar = 0.05;
/// Below this much work per rank and instance a burst is empty (metric units: ns or instructions).
constexpr double kEmpty = 1.0;

/// Work laws extrapolate, so they keep to a constant or a power of n: positive and smooth, where linear or
/// grid-based forms would fit the noise of a few runs and can turn negative beyond them. Work is noisy (CPU time
/// on a shared machine), so no tolerance makes a law acceptable by itself: every law but an exact constant is
/// weighed with the penalty for its parameters.
RegressionOptions work_fit() {
  RegressionOptions o;
  o.tolerance = 0;
  o.allow_linear_inverse = false;
  o.median_constant = true;
  return o;
}

/// Within this relative spread across the runs a work law is the median: with a few runs on a noisy metric,
/// a trend through them would follow one disturbed run (CPU time varies by 5-10 % from run to run of the same
/// configuration on a loaded machine, more for single ranks).
constexpr double kNoise = 0.35;

/// The median of the samples when they spread less than kNoise, else a constant (their median) or a power law,
/// whichever the penalty for parameters prefers.
RegressionLaw work_law(const std::vector<Sample>& samples) {
  RegressionOptions o = work_fit();
  const auto [lo, hi] = std::minmax_element(samples.begin(), samples.end(),
                                            [](const Sample& x, const Sample& y) { return x.value < y.value; });
  o.allow_power = !(hi->value > 0 && (hi->value - lo->value) / hi->value <= kNoise);
  return fit_regression(samples, o);
}

/// Slope of log(value) against log(n): about -1 for work shared by n ranks, 0 for work that does not shrink.
double loglog_slope(const std::vector<Sample>& s) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  double k = 0;
  for (const Sample& p : s) {
    if (p.value <= 0 || p.n <= 0) continue;
    const double x = std::log(p.n);
    const double y = std::log(p.value);
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
    ++k;
  }
  const double den = k * sxx - sx * sx;
  return k < 2 || den == 0 ? 0 : (k * sxy - sx * sy) / den;
}

/// One burst position's law for a quantity (work or time), from the class's sum over its ranks per n.
BurstLaw burst_law(const std::map<std::int64_t, double>& by_n, const std::map<std::int64_t, std::int64_t>& count,
                   const std::map<std::int64_t, std::int64_t>& weights) {
  std::vector<Sample> totals;    // the class's total: shared by its ranks
  std::vector<Sample> over_all;  // as if shared by every process (a class that is all but a root or two)
  std::vector<Sample> per_rank;
  for (const auto& [n, m] : count) {
    const auto it = by_n.find(n);
    const double sum = it == by_n.end() ? 0 : it->second;
    const double weight = static_cast<double>(weights.at(n));
    totals.push_back({static_cast<double>(n), weight * sum});
    over_all.push_back({static_cast<double>(n), weight * static_cast<double>(n) * sum / static_cast<double>(m)});
    per_rank.push_back({static_cast<double>(n), sum / static_cast<double>(m)});
  }
  BurstLaw b;
  const bool empty = std::all_of(per_rank.begin(), per_rank.end(), [](const Sample& s) { return s.value < kEmpty; });
  if (empty) {
    b.scaling = false;
    b.law = fit_regression(std::vector<Sample>{{1, 0}});
    return b;
  }
  const RegressionLaw t_class = work_law(totals);
  const RegressionLaw t_all = work_law(over_all);
  // The flatter total says who shares the work: a constant beats a trend, then the smaller error.
  const auto flatness = [](const RegressionLaw& l) {
    return std::make_pair(l.form == RegressionForm::Constant ? 0 : 1, l.max_rel_error);
  };
  const bool by_all = flatness(t_all) < flatness(t_class);
  const RegressionLaw& t = by_all ? t_all : t_class;
  const RegressionLaw p = work_law(per_rank);
  const double slope = loglog_slope(per_rank);
  if (slope <= -0.5) {
    b.scaling = true;  // the value per rank falls with n: shared work
  } else if (slope >= -0.25) {
    b.scaling = false;  // it does not: control code, or work each rank repeats
  } else {
    b.scaling = t.max_rel_error <= p.max_rel_error;
  }
  b.law = b.scaling ? t : p;
  b.shared_by_all = b.scaling && by_all;
  return b;
}

/// A class's bursts and measured rows from its members.
void add_class(LearntWork& out, const std::vector<std::uint32_t>& cases, const RankPredicate& when,
               const std::vector<const RankWork*>& members, const std::map<std::int64_t, std::int64_t>& weights) {
  WorkClass cls;
  std::vector<ScicRow> measured;
  cls.cases = cases;
  cls.when = when;
  std::map<std::int64_t, std::int64_t> count;
  std::map<BurstKey, std::map<std::int64_t, double>> sums;   // key -> n -> sum of work over the class's ranks
  std::map<BurstKey, std::map<std::int64_t, double>> times;  // key -> n -> sum of time
  for (const RankWork* r : members) {
    ++count[r->n];
    for (const auto& [key, w] : r->work) sums[key][r->n] += w;
    for (const auto& [key, t] : r->time) times[key][r->n] += t;
  }
  std::vector<Sample> class_time;  // the class's compute time over the run
  std::vector<Sample> all_time;    // the same as if every rank were of the class
  for (const auto& [n, m] : count) {
    const auto per_rank = [&, n = n, m = m](const std::map<BurstKey, std::map<std::int64_t, double>>& by_key) {
      double v = 0;
      for (const auto& [key, by_n] : by_key) {
        const auto it = by_n.find(n);
        if (it != by_n.end()) v += it->second / static_cast<double>(m);
      }
      return v;
    };
    const double work = per_rank(sums);
    const double time = per_rank(times);
    const double weight = static_cast<double>(weights.at(n));
    measured.push_back({n, m, work, weight * static_cast<double>(m) * work, time});
    class_time.push_back({static_cast<double>(n), weight * static_cast<double>(m) * time});
    all_time.push_back({static_cast<double>(n), weight * static_cast<double>(n) * time});
  }
  cls.largest_run_ranks = measured.empty() ? 0 : measured.back().ranks;
  for (const auto& [key, by_n] : sums) {
    BurstModel b;
    b.group = key.group;
    b.pattern_case = key.pattern_case;
    b.term = key.term;
    b.work = burst_law(by_n, count, weights);
    const auto t = times.find(key);
    b.time = burst_law(t == times.end() ? std::map<std::int64_t, double>{} : t->second, count, weights);
    cls.bursts.push_back(b);
  }
  if (!members.empty()) {
    // As for a burst's work: the flatter total says who shares the time. A class of a grid's edge ranks, whose
    // number follows the grid's sides, has a smooth total only as if every rank were of it.
    const RegressionLaw by_class = class_time_law(class_time);
    const RegressionLaw by_all = class_time_law(all_time);
    cls.time_shared_by_all = by_all.max_rel_error < by_class.max_rel_error;
    cls.time_fit = cls.time_shared_by_all ? by_all : by_class;
  }
  out.classes.push_back(std::move(cls));
  out.measured.push_back(std::move(measured));
}

/// Per run (n), each member's rank and value.
using ByRun = std::map<std::int64_t, std::vector<std::pair<std::int64_t, double>>>;

/// How predicate `p` splits one run's values: the two sides' means and the larger spread within a side (highest
/// less lowest); nullopt when a side is empty.
struct Sides {
  double a = 0, b = 0;  ///< the means of the ranks where p holds and of the others
  double spread = 0;    ///< the larger of the two sides' spreads
  double rel_spread = 0;
};
std::optional<Sides> sides(const RankPredicate& p, std::int64_t n,
                           const std::vector<std::pair<std::int64_t, double>>& v) {
  double sum[2] = {0, 0}, lo[2] = {1e300, 1e300}, hi[2] = {0, 0};
  int count[2] = {0, 0};
  for (const auto& [r, w] : v) {
    const int side = p.holds(r, n) ? 0 : 1;
    sum[side] += w;
    ++count[side];
    lo[side] = std::min(lo[side], w);
    hi[side] = std::max(hi[side], w);
  }
  if (count[0] == 0 || count[1] == 0) return std::nullopt;
  Sides s;
  s.a = sum[0] / count[0];
  s.b = sum[1] / count[1];
  s.spread = std::max(hi[0] - lo[0], hi[1] - lo[1]);
  s.rel_spread = std::max(hi[0] > 0 ? (hi[0] - lo[0]) / hi[0] : 0, hi[1] > 0 ? (hi[1] - lo[1]) / hi[1] : 0);
  return s;
}

/// A predicate from the rank-class family that separates the members by their work per instance in every fitted
/// run: the two sides' means differ by more than kSimilar, and each side's own spread is under half that
/// difference (so noise alone, which scatters rather than sorts ranks, does not split a class).
std::optional<RankPredicate> split_by_totals(const ByRun& totals) {
  bool spread = false;
  for (const auto& [n, v] : totals) {
    const auto [lo, hi] =
        std::minmax_element(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    spread = spread || (hi->second > 0 && (hi->second - lo->second) / hi->second > kSimilar);
  }
  if (!spread) return std::nullopt;
  for (const RankPredicate& p : rank_predicates()) {
    bool ok = true;
    for (const auto& [n, v] : totals) {
      const std::optional<Sides> s = sides(p, n, v);
      const double gap = s ? std::abs(s->a - s->b) / std::max(s->a, s->b) : 0;
      if (!s || gap <= kSimilar || s->rel_spread >= gap / 2) {
        ok = false;
        break;
      }
    }
    if (ok) return p;
  }
  return std::nullopt;
}

/// A predicate that separates the members at one burst position in every fitted run, where their totals do not
/// tell them apart (a root's serial part on a machine whose cores differ by more than it at small n): the sides
/// differ there by more than twice the spread within a side, and by more than kSimilar of a member's work per
/// instance in the largest run (where it weighs most).
std::optional<RankPredicate> split_by_position(const std::vector<const RankWork*>& members, const ByRun& totals,
                                               bool by_time) {
  std::map<BurstKey, ByRun> at;
  for (const RankWork* m : members) {
    for (const auto& [key, v] : by_time ? m->time : m->work) at[key];
  }
  for (const RankWork* m : members) {
    const std::map<BurstKey, double>& values = by_time ? m->time : m->work;
    for (auto& [key, runs] : at) {
      const auto it = values.find(key);
      runs[m->n].emplace_back(m->r, it == values.end() ? 0.0 : it->second);
    }
  }
  if (totals.empty()) return std::nullopt;
  const auto& [largest, largest_totals] = *totals.rbegin();
  double mean_total = 0;
  for (const auto& [r, w] : largest_totals) mean_total += w / static_cast<double>(largest_totals.size());
  for (const RankPredicate& p : rank_predicates()) {
    for (const auto& [key, runs] : at) {
      bool ok = true;
      for (const auto& [n, v] : runs) {
        const std::optional<Sides> s = sides(p, n, v);
        if (!s || std::abs(s->a - s->b) <= 2 * s->spread) {
          ok = false;
          break;
        }
      }
      if (!ok) continue;
      const std::optional<Sides> s = sides(p, largest, runs.at(largest));
      if (s && std::abs(s->a - s->b) > kSimilar * mean_total) return p;
    }
  }
  return std::nullopt;
}

/// A predicate from the rank-class family that separates the members by work (or by the bursts' time, `by_time`):
/// by their work per instance, else at one burst position.
std::optional<RankPredicate> work_split(const std::vector<const RankWork*>& members, bool by_time) {
  ByRun totals;
  for (const RankWork* m : members) {
    double w = 0;
    for (const auto& [key, v] : by_time ? m->time : m->work) w += v;
    totals[m->n].emplace_back(m->r, w);
  }
  if (std::optional<RankPredicate> p = split_by_totals(totals)) return p;
  return split_by_position(members, totals, by_time);
}

}  // namespace

RegressionLaw class_time_law(std::span<const Sample> samples) {
  RegressionOptions o = work_fit();
  o.allow_linear_inverse = true;                   // a part that does not shrink (Amdahl) is an offset + c*n
  o.bases = {Basis::N, Basis::Log2, Basis::Sqrt};  // smooth in n: time has no reason to follow a grid's sides
  return fit_regression(samples, o);
}

LearntWork learn_work(std::span<const RankWork> ranks, const std::map<std::int64_t, std::int64_t>& weights) {
  std::map<std::vector<std::uint32_t>, std::vector<const RankWork*>> classes;
  for (const RankWork& r : ranks) classes[r.cases].push_back(&r);
  LearntWork out;
  for (const auto& [cases, members] : classes) {
    // Work first; the bursts' time where work does not tell ranks apart (bursts that wait, or sleep, rather than
    // compute: the CPU time of every rank is then about the same).
    std::optional<RankPredicate> split = work_split(members, false);
    if (!split) split = work_split(members, true);
    if (split) {
      std::vector<const RankWork*> in;
      std::vector<const RankWork*> rest;
      for (const RankWork* m : members) (split->holds(m->r, m->n) ? in : rest).push_back(m);
      RankPredicate others = *split;
      others.negate = !others.negate;
      add_class(out, cases, *split, in, weights);
      add_class(out, cases, others, rest, weights);
    } else {
      add_class(out, cases, RankPredicate{}, members, weights);
    }
  }
  return out;
}

std::vector<BurstKey> group_positions(const GroupModel& gm, std::int32_t group, std::uint32_t which) {
  if (!gm.measured.empty()) return {BurstKey{group, 0, 0}};
  if (which >= gm.pattern.cases.size()) return {};
  std::vector<BurstKey> out;
  const std::size_t terms = gm.pattern.cases[which].program.terms.size();
  for (std::size_t t = 0; t < terms; ++t) out.push_back({group, which, static_cast<std::uint32_t>(t)});
  return out;
}

std::vector<std::vector<BurstKey>> call_candidates(std::span<const BurstKey> own, std::span<const BurstKey> potential,
                                                   const std::vector<bool>& in_loop) {
  std::vector<std::vector<BurstKey>> out;
  out.reserve(own.size());
  const auto looped = [&](const BurstKey& k) {
    return k.group >= 0 && static_cast<std::size_t>(k.group) < in_loop.size() &&
           in_loop[static_cast<std::size_t>(k.group)];
  };
  std::size_t next = 0;  // the first potential position after the previous call's
  for (const BurstKey& key : own) {
    // The call's own position, at or after the previous call's (the calls of one term share theirs).
    std::size_t at = next > 0 ? next - 1 : 0;
    while (at < potential.size() && potential[at] != key) ++at;
    if (at == potential.size() || looped(key)) {
      out.push_back({key});
      if (at < potential.size()) next = at + 1;
      continue;
    }
    // The positions skipped since the previous call, but those of loops (a loop's calls are interleaved: a call
    // standing for one would be moved into the loop), then the call's own.
    std::vector<BurstKey>& c = out.emplace_back();
    for (std::size_t k = std::min(next, at); k < at; ++k) {
      if (!looped(potential[k])) c.push_back(potential[k]);
    }
    c.push_back(key);
    next = at + 1;
  }
  return out;
}

std::vector<std::vector<BurstKey>> rank_candidates(const PhaseModel& pm, std::span<const BurstKey> own,
                                                   std::span<const std::uint32_t> cases) {
  std::vector<BurstKey> potential;
  std::vector<bool> in_loop(pm.groups.size());
  for (std::size_t g = 0, i = 0; g < pm.groups.size(); ++g) {
    const auto group = static_cast<std::int32_t>(g);
    in_loop[g] = pm.in_loop(g);
    const std::size_t begin = i;
    while (i < own.size() && own[i].group == group) ++i;
    if (pm.groups[g].role == Role::PointToPoint) {
      const std::vector<BurstKey> all = group_positions(pm.groups[g], group, cases[g]);
      potential.insert(potential.end(), all.begin(), all.end());
    } else if (begin == i) {
      potential.push_back({group, 0, 0});
    } else {
      for (std::size_t k = begin; k < i; ++k) {
        if (k == begin || own[k] != own[k - 1]) potential.push_back(own[k]);
      }
    }
  }
  return call_candidates(own, potential, in_loop);
}

BurstKey stands_for(std::span<const BurstKey> candidates, const std::function<double(const BurstKey&)>& value) {
  BurstKey best = candidates.back();
  double most = value(best);
  for (const BurstKey& c : candidates.first(candidates.size() - 1)) {
    const double v = value(c);
    if (v > most) {
      most = v;
      best = c;
    }
  }
  return best;
}

}  // namespace p3s::modeler::detail

namespace p3s::modeler {

double BurstLaw::at(std::int64_t n, std::int64_t ranks, std::int64_t weight) const {
  const double v = law.value_at(static_cast<double>(n));
  if (!scaling) return std::max(0.0, v);
  if (shared_by_all) ranks = n;
  if (ranks <= 0 || weight <= 0) return 0;
  return std::max(0.0, v / (static_cast<double>(ranks) * static_cast<double>(weight)));
}

bool has_time_laws(const Model& model) {
  if (model.schema_version < kFirstTimedModelSchemaVersion) return false;
  return std::all_of(model.phases.begin(), model.phases.end(), [](const PhaseModel& p) {
    return std::all_of(p.work.begin(), p.work.end(), [](const WorkClass& w) { return w.time_fit.has_value(); });
  });
}

double FarPoint::factor(std::int64_t at) const {
  if (at <= from_n || from_n <= 0) return 1.0;
  return std::pow(static_cast<double>(at) / static_cast<double>(from_n), exponent);
}

std::optional<double> WorkClass::time_at(std::int64_t n, std::int64_t ranks, std::int64_t weight) const {
  if (time_fit) {
    if (time_shared_by_all) ranks = n;
    if (ranks <= 0 || weight <= 0) return 0.0;
    const double total = std::max(0.0, time_fit->value_at(static_cast<double>(n)));
    return total * (far_point ? far_point->factor(n) : 1.0) /
           (static_cast<double>(ranks) * static_cast<double>(weight));
  }
  double t = 0;
  for (const BurstModel& b : bursts) {
    if (!b.time) return std::nullopt;
    t += b.time->at(n, ranks, weight);
  }
  return t;
}

}  // namespace p3s::modeler
