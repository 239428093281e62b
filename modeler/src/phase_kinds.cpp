// SPDX-License-Identifier: BSD-3-Clause
// The kinds of one phase: phases of a run that are one program point whose calls followed the data, merged into
// the phase the other runs relate to.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "p3s/analyzer/kind_union.hpp"
#include "p3s/analyzer/run_time.hpp"
#include "p3s/modeler/series.hpp"
#include "p3s/table_text.hpp"

namespace p3s::modeler {
namespace {

void scale(analyzer::Stat& s, double factor) {
  s.mean *= factor;
  s.stddev *= factor;
  s.min *= factor;
  s.max *= factor;
  s.m2 *= factor * factor;
}

/// A rank's burst work and wall time in one instance of a phase (bursts before its calls and after the last).
struct RankBursts {
  double work = 0;
  double ns = 0;
};

RankBursts bursts_of(const analyzer::SigRank& r) {
  RankBursts b{r.tail_work.mean, r.tail_ns.mean};
  for (const analyzer::SigEvent& e : r.events) {
    b.work += e.burst_work.mean;
    b.ns += e.burst_ns.mean;
  }
  return b;
}

/// Merges the phases `kinds` into `into`: their instances add up, and the representative, `into`'s, stands for
/// their mean: each rank's bursts are scaled to the rank's mean over all the instances of every kind.
void merge_into(analyzer::SigPhase& into, const std::vector<const analyzer::SigPhase*>& kinds, double relevance) {
  // Per (rank, thread): the instances' bursts summed over the kinds, weighted by each kind's weight.
  std::map<std::pair<std::int32_t, std::uint32_t>, RankBursts> total;
  const auto add = [&total](const analyzer::SigPhase& p) {
    for (const analyzer::SigRank& r : p.ranks) {
      const RankBursts b = bursts_of(r);
      RankBursts& t = total[{r.rank, r.thread}];
      t.work += static_cast<double>(p.weight) * b.work;
      t.ns += static_cast<double>(p.weight) * b.ns;
    }
  };
  add(into);
  std::uint64_t weight = into.weight;
  for (const analyzer::SigPhase* k : kinds) {
    add(*k);
    weight += k->weight;
    into.time_ns = analyzer::pooled(into.time_ns, k->time_ns);
    into.work = analyzer::pooled(into.work, k->work);
    into.share += k->share;
  }
  into.weight = weight;
  into.relevant = into.relevant || into.share >= relevance;  // relevant in another run of the series stays so
  for (analyzer::SigRank& r : into.ranks) {
    const RankBursts own = bursts_of(r);
    const RankBursts& t = total[{r.rank, r.thread}];
    const RankBursts mean{t.work / static_cast<double>(weight), t.ns / static_cast<double>(weight)};
    // A rank whose representative instance has no burst at all takes its mean as the burst after its last call.
    const auto scaled = [](double own_total, double mean_total, analyzer::Stat& tail) {
      if (own_total > 0) return mean_total / own_total;
      tail.mean += mean_total;
      tail.max = std::max(tail.max, tail.mean);
      return 1.0;
    };
    const double work = scaled(own.work, mean.work, r.tail_work);
    const double ns = scaled(own.ns, mean.ns, r.tail_ns);
    for (analyzer::SigEvent& e : r.events) {
      scale(e.burst_work, work);
      scale(e.burst_ns, ns);
    }
    scale(r.tail_work, work);
    scale(r.tail_ns, ns);
  }
}

/// The kinds that are `into` with some messages empty (analyzer::united_kinds) merged into it as the union of their
/// calls, heaviest first; returns the others.
std::vector<const analyzer::SigPhase*> unite(analyzer::SigPhase& into, std::vector<const analyzer::SigPhase*> kinds,
                                             double relevance) {
  std::stable_sort(kinds.begin(), kinds.end(),
                   [](const analyzer::SigPhase* a, const analyzer::SigPhase* b) { return a->weight > b->weight; });
  std::vector<const analyzer::SigPhase*> others;
  for (const analyzer::SigPhase* k : kinds) {
    std::optional<analyzer::SigPhase> u = analyzer::united_kinds(into, *k);
    if (!u) {
      others.push_back(k);
      continue;
    }
    u->share += k->share;
    u->relevant = u->relevant || u->share >= relevance;
    into = std::move(*u);
  }
  return others;
}

/// For a kind of the time step `j` that calls other MPI functions than every related phase: the heaviest related
/// kind of the time step whose functions include all of its own (a step whose cut fell elsewhere in the stretch, so
/// that it holds the tail of a step of that kind), else `j`.
std::size_t step_kind_including(const analyzer::Signature& s, const std::vector<std::string>& calls,
                                const std::function<bool(std::size_t)>& is_related, std::size_t j) {
  std::size_t best = j;
  for (std::size_t t = 0; t < s.phases.size(); ++t) {
    if (t == j || !is_related(t) || !s.phases[t].step || !calls_include(calls[t], calls[j])) continue;
    if (best == j || s.phases[t].weight > s.phases[best].weight) best = t;
  }
  return best;
}

/// Per phase, the phase it is a kind of (itself where none): a phase without a counterpart -> the related phase of
/// the same calls it is a work variant of, else nearest before it, else after it; a kind of the time step with none
/// of those -> step_kind_including.
std::vector<std::size_t> kind_targets(const analyzer::Signature& s, const std::vector<std::string>& calls,
                                      const std::function<bool(std::size_t)>& is_related) {
  const std::size_t count = s.phases.size();
  std::vector<std::size_t> into(count);
  for (std::size_t j = 0; j < count; ++j) {
    into[j] = j;
    if (is_related(j)) continue;
    const auto same = [&](std::size_t t) { return is_related(t) && calls[t] == calls[j]; };
    const std::uint32_t base = s.phases[j].split_from;
    if (base < count && same(base)) {
      into[j] = base;
      continue;
    }
    for (std::size_t t = j; t-- > 0;) {
      if (same(t)) {
        into[j] = t;
        break;
      }
    }
    for (std::size_t t = j + 1; into[j] == j && t < count; ++t) {
      if (same(t)) into[j] = t;
    }
    if (into[j] == j && s.phases[j].step) into[j] = step_kind_including(s, calls, is_related, j);
  }
  return into;
}

}  // namespace

std::vector<std::string> merge_phase_kinds(analyzer::Signature& s, const std::vector<bool>& related) {
  const std::size_t count = s.phases.size();
  std::vector<std::string> calls;
  for (const analyzer::SigPhase& p : s.phases) calls.push_back(analyzer::phase_calls(p));
  const std::function<bool(std::size_t)> is_related = [&related](std::size_t j) {
    return j < related.size() && related[j];
  };
  const std::vector<std::size_t> into = kind_targets(s, calls, is_related);
  bool any = false;
  for (std::size_t j = 0; j < count; ++j) any = any || into[j] != j;
  if (!any) return {};
  std::vector<std::string> lines;
  for (std::size_t j = 0; j < count; ++j) {
    if (into[j] == j) continue;
    const analyzer::SigPhase& p = s.phases[j];
    lines.push_back("phase " + std::to_string(p.listed_id()) + " of the run at " + std::to_string(s.processes) + " (" +
                    calls[j] + ", weight " + std::to_string(p.weight) + ", " + fmt("%.2f", 100 * p.share) +
                    " % of its time) is a kind of its phase " + std::to_string(s.phases[into[j]].listed_id()) +
                    (into[j] == p.split_from ? ", a work variant of it" : "") +
                    (calls[into[j]] == calls[j] ? ": the same MPI functions"
                                                : ", a kind of the time step whose MPI functions include its own") +
                    ", no counterpart in the other runs; merged into it");
  }
  std::vector<std::vector<const analyzer::SigPhase*>> kinds(count);
  for (std::size_t j = 0; j < count; ++j) {
    if (into[j] != j) kinds[into[j]].push_back(&s.phases[j]);
  }
  for (std::size_t t = 0; t < count; ++t) {
    if (kinds[t].empty()) continue;
    const std::vector<const analyzer::SigPhase*> others = unite(s.phases[t], kinds[t], s.options.relevance);
    if (!others.empty()) merge_into(s.phases[t], others, s.options.relevance);
  }
  // The phases left, numbered anew in their order; the order of the run names the merged phases by their target.
  std::vector<std::uint32_t> renumbered(count);
  std::vector<analyzer::SigPhase> kept;
  for (std::size_t j = 0; j < count; ++j) {
    if (into[j] != j) continue;
    renumbered[j] = static_cast<std::uint32_t>(kept.size());
    kept.push_back(std::move(s.phases[j]));
    kept.back().listed = kept.back().listed_id();
    kept.back().id = renumbered[j];
  }
  for (std::size_t j = 0; j < count; ++j) renumbered[j] = renumbered[into[j]];
  for (analyzer::SigPhase& p : kept) {
    if (p.split_from >= count) continue;
    p.split_from = renumbered[p.split_from];
    if (p.split_from == p.id) p.split_from = analyzer::SigPhase{}.split_from;  // its base merged into it: none
  }
  s.phases = std::move(kept);
  std::vector<analyzer::PhaseRunEntry> order;
  for (analyzer::PhaseRunEntry e : s.order) {
    e.phase = e.phase < count ? renumbered[e.phase] : e.phase;
    if (!order.empty() && order.back().phase == e.phase) {
      order.back().count += e.count;
    } else {
      order.push_back(e);
    }
  }
  s.order = std::move(order);
  return lines;
}

}  // namespace p3s::modeler
