// SPDX-License-Identifier: BSD-3-Clause
// `p3s analyze DIR DIR...`: the runs of one application at several process counts, their phases found by one
// method, so that the model relates the same phases at every n.
#include <algorithm>
#include <array>
#include <string>

#include "p3s/analyzer/analyze.hpp"
#include "p3s/error.hpp"
#include "series_level.hpp"

namespace p3s::analyzer {

namespace {

/// A phase that runs at least this many times is one of the run's iterations; rarer ones are pieces of the set-up
/// and the end, whose number can follow n and the machine's load (two set-up pieces alike by chance weigh 2).
constexpr std::uint64_t kIterationWeight = 3;

/// A phase split off by work (a loaded machine slowing a few iterations) is the phase it was split from: the runs'
/// structure is compared, which noise does not change.
std::uint32_t structural(const Signature& sig, std::uint32_t phase) {
  const std::uint32_t from = sig.phases[phase].split_from;
  return from < sig.phases.size() ? from : phase;
}

/// A structural phase's occurrences, its work variants included.
std::uint64_t structural_weight(const Signature& sig, std::uint32_t phase) {
  std::uint64_t w = 0;
  for (const SigPhase& p : sig.phases) {
    if (structural(sig, p.id) == phase) w += p.weight;
  }
  return w;
}

/// A run's iterations: their structural phases in the order each first runs, and the order they run in (counts
/// left out, consecutive repeats merged) as indices into those phases, which runs with the same iterations share.
struct Iterations {
  std::vector<std::uint32_t> phases;
  std::vector<std::size_t> order;
};

Iterations iterations_of(const Signature& sig) {
  Iterations it;
  for (const PhaseRunEntry& r : sig.order) {
    const std::uint32_t phase = structural(sig, r.phase);
    if (structural_weight(sig, phase) < kIterationWeight) continue;
    const auto k = static_cast<std::size_t>(std::find(it.phases.begin(), it.phases.end(), phase) - it.phases.begin());
    if (k == it.phases.size()) it.phases.push_back(phase);
    if (it.order.empty() || it.order.back() != k) it.order.push_back(k);
  }
  return it;
}

/// Where every run's iterations are the same phases in the same order, an iteration phase relevant in one run is
/// relevant in all, so that every run shows the same relevant iterations (a step whose share is near the
/// relevance threshold crosses it as n changes its time).
void relevant_in_any(std::vector<Signature>& sigs) {
  if (sigs.size() < 2) return;
  std::vector<Iterations> its;
  for (const Signature& s : sigs) its.push_back(iterations_of(s));
  for (const Iterations& it : its) {
    if (it.order != its.front().order) return;
  }
  for (std::size_t k = 0; k < its.front().phases.size(); ++k) {
    bool any = false;
    for (std::size_t i = 0; i < sigs.size(); ++i) any = any || sigs[i].phases[its[i].phases[k]].relevant;
    for (std::size_t i = 0; i < sigs.size(); ++i) sigs[i].phases[its[i].phases[k]].relevant = any;
  }
  for (Signature& s : sigs) {
    s.coverage = 0;
    for (const SigPhase& ph : s.phases) s.coverage += ph.relevant ? ph.share : 0;
  }
}

/// Whether the runs' iterations are the same phases in the same order, each as often at every process count.
bool same_iterations_everywhere(const std::vector<Signature>& sigs) {
  const Iterations first = iterations_of(sigs.front());
  return std::all_of(sigs.begin(), sigs.end(), [&](const Signature& s) {
    const Iterations it = iterations_of(s);
    if (it.order != first.order) return false;
    for (std::size_t k = 0; k < it.phases.size(); ++k) {
      if (structural_weight(s, it.phases[k]) != structural_weight(sigs.front(), first.phases[k])) return false;
    }
    return true;
  });
}

/// Message sizes that follow each rank's data are the code's at every count, though at some counts they happen to
/// cross no size class differently on any two ranks: where some runs found their outermost loops' iterations only on
/// the calls without their sizes and the runs' iterations differ, the others are analysed again without them too
/// (each where that still takes the outermost loops' iterations), so that every run cuts its steps alike: kept where
/// every run then has as many kinds of iteration as those that needed it.
void same_sizes(const std::vector<AnalyzeOptions>& runs, std::vector<Signature>& sigs,
                std::vector<AnalyzeStats>& local) {
  std::size_t without = 0;
  for (const Signature& s : sigs) {
    if (s.phase_method != PhaseMethod::ByRank || s.phase_level != PhaseLevel::Outermost) return;
    without += s.without_sizes ? 1 : 0;
  }
  if (without == 0 || without == sigs.size() || same_iterations_everywhere(sigs)) return;
  std::vector<Signature> tried = sigs;
  std::vector<AnalyzeStats> tried_stats = local;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (sigs[i].without_sizes) continue;
    AnalyzeOptions forced = runs[i];
    forced.signature.phase_method = PhaseMethod::ByRank;
    forced.signature.phase_level = PhaseLevel::Outermost;
    forced.signature.without_sizes = true;
    AnalyzeStats again;
    Signature sig = analyze(forced, &again);
    if (sig.phase_level != PhaseLevel::Outermost) continue;
    sig.options = runs[i].signature;
    sig.phase_method_note =
        "the series' iterations, found on the calls without their sizes: " + std::to_string(without) + " of " +
        std::to_string(runs.size()) +
        " runs need it (sizes follow each rank's data); before, this run's were found with them";
    tried[i] = std::move(sig);
    tried_stats[i] = again;
  }
  // Kept where every run then has as many kinds of iteration as those that needed it (how often each runs, and so
  // their order, may still differ with the data: one re-neighbouring more).
  const auto needed = std::find_if(sigs.begin(), sigs.end(), [](const Signature& s) { return s.without_sizes; });
  const std::size_t kinds = iterations_of(*needed).phases.size();
  for (const Signature& s : tried) {
    if (iterations_of(s).phases.size() != kinds) return;
  }
  sigs = std::move(tried);
  local = std::move(tried_stats);
}

/// Runs whose iterations differ, or run as often as the process count gives, take the program's iterations as
/// their phases (the main loops' iterations: see main_loop.hpp), found by the series' method or else by the other,
/// where these then correspond in every run: the innermost loops of a pipeline through q cells are its stages,
/// q - 1 per sweep, and a multigrid V-cycle's levels compute too little on the coarse grids for the ranks' own
/// steps to be cut alike at every count. A time step is then one phase, its inner loops loops inside it. A run
/// whose steps a loaded machine made look unlike the others' moves the series there too: phases that correspond
/// at every n, if coarser, rather than finer ones that do not.
void same_iterations(const std::vector<AnalyzeOptions>& runs, std::vector<Signature>& sigs,
                     std::vector<AnalyzeStats>& local) {
  if (sigs.size() < 2) return;
  for (const Signature& s : sigs) {
    if (s.phase_level == PhaseLevel::Outermost) return;
  }
  if (same_iterations_everywhere(sigs)) return;
  const PhaseMethod series = sigs.front().phase_method;
  const PhaseMethod other = series == PhaseMethod::ByRank ? PhaseMethod::GlobalTicks : PhaseMethod::ByRank;
  for (const PhaseMethod method : {series, other}) {
    std::vector<Signature> coarse;
    std::vector<AnalyzeStats> again(runs.size());
    bool same = true;
    for (std::size_t i = 0; i < runs.size() && same; ++i) {
      AnalyzeOptions forced = runs[i];
      forced.signature.phase_method = method;
      forced.signature.phase_level = PhaseLevel::Outermost;
      coarse.push_back(analyze(forced, &again[i]));
      same = coarse.back().phase_level == PhaseLevel::Outermost &&
             iterations_of(coarse.back()).order == iterations_of(coarse.front()).order;
    }
    if (!same) continue;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      coarse[i].options = runs[i].signature;
      coarse[i].phase_method_note =
          "the series' level, the program's iterations (" + std::string(phase_method_name(method)) +
          "): the runs' iterations differ otherwise (this run " + std::string(phase_method_name(sigs[i].phase_method)) +
          (sigs[i].phase_method_note.empty() ? "" : ": " + sigs[i].phase_method_note) + ")";
      sigs[i] = std::move(coarse[i]);
      local[i] = again[i];
    }
    return;
  }
}

/// The iterations of `it` (indices into it.phases) that run `sig` split into work variants.
std::vector<bool> split_iterations(const Signature& sig, const Iterations& it) {
  std::vector<bool> split(it.phases.size(), false);
  for (const SigPhase& p : sig.phases) {
    if (structural(sig, p.id) == p.id) continue;
    const auto k = std::find(it.phases.begin(), it.phases.end(), structural(sig, p.id)) - it.phases.begin();
    if (static_cast<std::size_t>(k) < split.size()) split[static_cast<std::size_t>(k)] = true;
  }
  return split;
}

/// An iteration that some run of the series does not split into work variants is one phase in each: its work
/// drifts or a loaded machine slowed some instances, across the threshold at some counts and not at the others
/// (a step that rebuilds a neighbour list, at 8 ranks: its first 3 instances 14 % dearer than the last 7; a sleep-mode
/// loop's first 3 of 20 iterations 3 % slower at 4 and 8 ranks, not at 2 and 16). A variant the runs do not all
/// show has no counterpart in some run, so the model could only leave its time out. A run that split such an
/// iteration is analysed again with it whole (its other variants, which every run shows, stay); the model then sees
/// the same phases, each as often, at every count. Said in the run's method note.
void same_work_variants(const std::vector<AnalyzeOptions>& runs, std::vector<Signature>& sigs,
                        std::vector<AnalyzeStats>& local) {
  if (sigs.size() < 2) return;
  std::vector<Iterations> its;
  for (const Signature& s : sigs) its.push_back(iterations_of(s));
  for (const Iterations& it : its) {
    if (it.order != its.front().order || it.phases.size() != its.front().phases.size()) return;
  }
  std::vector<std::vector<bool>> split;
  std::vector<std::size_t> runs_splitting(its.front().phases.size(), 0);
  for (std::size_t i = 0; i < sigs.size(); ++i) {
    split.push_back(split_iterations(sigs[i], its[i]));
    for (std::size_t k = 0; k < split[i].size(); ++k) runs_splitting[k] += split[i][k] ? 1 : 0;
  }
  for (std::size_t i = 0; i < sigs.size(); ++i) {
    std::vector<std::uint32_t> whole;
    for (std::size_t k = 0; k < split[i].size(); ++k) {
      if (split[i][k] && runs_splitting[k] < sigs.size()) whole.push_back(sigs[i].phases[its[i].phases[k]].structure);
    }
    if (whole.empty()) continue;
    AnalyzeOptions forced = runs[i];
    forced.signature.phase_method = sigs[i].phase_method;
    forced.signature.phase_level = sigs[i].phase_level;
    forced.signature.without_sizes = sigs[i].without_sizes;
    forced.signature.unsplit = whole;
    AnalyzeStats again;
    Signature sig = analyze(forced, &again);
    // Not the same iterations then, or the structures numbered otherwise (the split still there, or another gone):
    // left alone.
    const Iterations now = iterations_of(sig);
    if (now.order != its[i].order || now.phases.size() != split[i].size()) continue;
    const std::vector<bool> still = split_iterations(sig, now);
    bool as_meant = true;
    for (std::size_t k = 0; k < still.size(); ++k) {
      as_meant = as_meant && still[k] == (split[i][k] && runs_splitting[k] == sigs.size());
    }
    if (!as_meant) continue;
    sig.options = runs[i].signature;
    sig.phase_method_note = sigs[i].phase_method_note + (sigs[i].phase_method_note.empty() ? "" : "; ") +
                            "work variants merged: not every run of the series splits " +
                            (whole.size() == 1 ? "this iteration" : "these iterations") + " by work";
    sigs[i] = std::move(sig);
    local[i] = again;
  }
}

}  // namespace

std::vector<Signature> analyze_series(const std::vector<AnalyzeOptions>& runs, std::vector<AnalyzeStats>* stats) {
  std::vector<Signature> sigs;
  std::vector<AnalyzeStats> local(runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i) sigs.push_back(analyze(runs[i], &local[i]));
  const auto chose = [&](PhaseMethod m) {
    return static_cast<std::size_t>(
        std::count_if(sigs.begin(), sigs.end(), [m](const Signature& s) { return s.phase_method == m; }));
  };
  const std::size_t by_rank = chose(PhaseMethod::ByRank);
  const std::size_t by_ticks = chose(PhaseMethod::GlobalTicks);
  if (by_rank != 0 && by_ticks != 0) {
    // The method most runs choose on their own (a tie: the ticks, which do not depend on the machine's load);
    // the other runs are analysed again with it, unless it finds no phases there.
    const PhaseMethod series = by_rank > by_ticks ? PhaseMethod::ByRank : PhaseMethod::GlobalTicks;
    const std::string why = "the series' method: " + std::to_string(std::max(by_rank, by_ticks)) + " of " +
                            std::to_string(runs.size()) + " runs choose it on their own";
    for (std::size_t i = 0; i < runs.size(); ++i) {
      if (sigs[i].phase_method == series) continue;
      const std::string alone = "; alone, this run's would be " + std::string(phase_method_name(sigs[i].phase_method)) +
                                (sigs[i].phase_method_note.empty() ? "" : ": " + sigs[i].phase_method_note);
      AnalyzeOptions forced = runs[i];
      forced.signature.phase_method = series;
      try {
        AnalyzeStats again;
        Signature sig = analyze(forced, &again);
        sig.options.phase_method = runs[i].signature.phase_method;
        sig.phase_method_note = why + alone;
        sigs[i] = std::move(sig);
        local[i] = again;
      } catch (const InputError& e) {
        sigs[i].phase_method_note += "; not " + std::string(phase_method_name(series)) + " as the series: " + e.what();
      }
    }
  }
  detail::same_level(sigs, local, [&](std::size_t i, PhaseLevel level, AnalyzeStats& run_stats) {
    AnalyzeOptions forced = runs[i];
    forced.signature.phase_method = PhaseMethod::ByRank;
    forced.signature.phase_level = level;
    Signature sig = analyze(forced, &run_stats);
    sig.options = runs[i].signature;
    return sig;
  });
  same_sizes(runs, sigs, local);
  same_iterations(runs, sigs, local);
  same_work_variants(runs, sigs, local);
  relevant_in_any(sigs);
  if (stats != nullptr) *stats = std::move(local);
  return sigs;
}

}  // namespace p3s::analyzer
