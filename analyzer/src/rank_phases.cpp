// SPDX-License-Identifier: BSD-3-Clause
// The by-rank phase method. Why per location first: the run's tick sequence mixes, at every tick, the events
// of all ranks, so in a pipeline (ranks enter a sweep one after the other) a tick holds events of different
// iterations and the fill and drain of every sweep are ticks of their own, whose number depends on n; a
// location's own sequence of steps is the program's loop structure whatever the skew between ranks.
// Joining by position relies on SPMD codes running the same steps on every rank; where they do not (a master
// and its workers, data-dependent exchanges), the locations' occurrence counts differ and the caller falls back
// to the global method.
#include "rank_phases.hpp"

#include <algorithm>
#include <map>

#include "p3s/hash.hpp"

namespace p3s::analyzer {
namespace {

/// The hash of a run of calls: kCallsSeed extended by every call's shape in order (steps and occurrences alike).
constexpr std::uint64_t kCallsSeed = mix64(kGoldenGamma);
constexpr std::uint64_t with_call(std::uint64_t h, std::uint64_t shape) noexcept {
  return mix64(h ^ shape) + kGoldenGamma;
}

/// A fifth of the locations may differ in a combination that is still the same phase.
constexpr double kDifferingShare = 0.2;

struct LocationOccurrences {
  std::vector<std::uint64_t> phase;     ///< the location's own phases: the hash of the occurrence's operations
  std::vector<std::uint64_t> first_op;  ///< first operation of each occurrence
};

/// A stretch of one location's operations [begin, end): a loop's iterations of `period` operations each, or
/// (period 0) the calls between loops.
struct Stretch {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::uint64_t period = 0;
};

/// How a location's calls are grouped before folding: into steps between compute bursts, or one call each.
enum class Grouping : std::uint8_t { Steps, Calls };

/// The first call of item `i` of the folded sequence (the number of calls past the end).
std::uint64_t call_at(const StepSequence& steps, Grouping g, std::uint64_t i) {
  const std::uint64_t ops = steps.shapes().size();
  if (g == Grouping::Calls) return std::min(i, ops);
  return i < steps.first_op().size() ? steps.first_op()[i] : ops;
}

/// The location's outermost loops' iterations and the stretches between them.
std::vector<Stretch> top_stretches(const PhaseStructure& ps, const StepSequence& steps, Grouping g) {
  std::vector<Stretch> out;
  for (const TopItem& t : ps.top) {
    const std::uint64_t begin = call_at(steps, g, t.first_tick);
    const std::uint64_t end = call_at(steps, g, t.first_tick + t.ticks);
    // Iterations of one loop are the same steps, so they have the same number of calls.
    out.push_back({begin, end, t.count == 0 ? 0 : (end - begin) / t.count});
  }
  return out;
}

/// The location's occurrences from the step folding as stretches: consecutive occurrences of one phase that
/// have the same calls are one loop.
std::vector<Stretch> inner_stretches(const PhaseStructure& ps, const StepSequence& steps, Grouping g) {
  std::vector<Stretch> out;
  const std::size_t count = ps.occurrences.size();
  for (std::size_t o = 0; o < count; ++o) {
    const PhaseOccurrence& occ = ps.occurrences[o];
    const std::uint64_t begin = call_at(steps, g, occ.first_tick);
    const std::uint64_t end = call_at(steps, g, occ.first_tick + occ.ticks);
    const bool after_itself = o > 0 && ps.occurrences[o - 1].phase == occ.phase;
    const bool before_itself = o + 1 < count && ps.occurrences[o + 1].phase == occ.phase;
    if (after_itself && out.back().period == end - begin) {
      out.back().end = end;
    } else {
      out.push_back({begin, end, after_itself || before_itself ? end - begin : 0});
    }
  }
  return out;
}

/// Steps begin at compute bursts, so a loop found on steps begins its iterations at a compute burst even where
/// the program's iteration begins with calls; and a stretch between loops holds the calls that have no compute
/// burst between them and the loop (a final reduction joins the last iteration's step). Two corrections, call by
/// call, as the tick sequence's folding would make them: a loop begins where its repetition begins (it extends
/// to the left as far as the calls repeat with its period: the leftmost rotation), and whole iterations at either
/// end of a stretch between loops are iterations of the loop next to them.
std::vector<Stretch> align_loops(const std::vector<std::uint64_t>& shapes, std::vector<Stretch> in) {
  for (std::size_t i = 1; i < in.size(); ++i) {
    Stretch& loop = in[i];
    Stretch& before = in[i - 1];
    if (loop.period == 0 || before.period != 0) continue;
    std::uint64_t x = loop.begin;
    while (x > before.begin && shapes[x - 1] == shapes[x - 1 + loop.period]) --x;
    const std::uint64_t shift = (loop.begin - x) % loop.period;
    if (x == loop.begin) continue;
    // Whole iterations found before the loop join it; a part of one moves the loop's boundaries back.
    before.end = x;
    loop.begin = x;
    const std::uint64_t cut = loop.end - shift;  // the last iteration's calls past the period go to what follows
    if (i + 1 < in.size() && in[i + 1].period == 0) {
      in[i + 1].begin = cut;
    } else if (shift != 0) {
      in.insert(in.begin() + static_cast<std::ptrdiff_t>(i + 1), Stretch{cut, loop.end, 0});
    }
    loop.end = cut;
  }
  for (std::size_t i = 0; i + 1 < in.size(); ++i) {
    Stretch& loop = in[i];
    Stretch& after = in[i + 1];
    if (loop.period == 0 || after.period != 0) continue;
    std::uint64_t x = loop.end;
    while (x < after.end && shapes[x] == shapes[x - loop.period]) ++x;
    const std::uint64_t whole = (x - loop.end) / loop.period * loop.period;
    loop.end += whole;
    after.begin += whole;
  }
  std::vector<Stretch> out;
  for (const Stretch& st : in) {
    if (st.end > st.begin) out.push_back(st);
  }
  return out;
}

LocationOccurrences occurrences_of(const StepSequence& steps, const PhaseStructure& ps, Grouping g, bool outermost) {
  const std::vector<std::uint64_t>& shapes = steps.shapes();
  LocationOccurrences out;
  const auto add = [&](std::uint64_t begin, std::uint64_t end) {
    std::uint64_t h = kCallsSeed;
    for (std::uint64_t i = begin; i < end; ++i) h = with_call(h, shapes[i]);
    out.phase.push_back(h);
    out.first_op.push_back(begin);
  };
  for (const Stretch& st :
       align_loops(shapes, outermost ? top_stretches(ps, steps, g) : inner_stretches(ps, steps, g))) {
    if (st.period == 0) {
      add(st.begin, st.end);
      continue;
    }
    for (std::uint64_t b = st.begin; b < st.end; b += st.period) add(b, b + st.period);
  }
  return out;
}

std::size_t differing(const std::vector<std::uint64_t>& a, const std::vector<std::uint64_t>& b) {
  std::size_t d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d += a[i] != b[i] ? 1 : 0;
  return d;
}

/// Combinations of the locations' phases -> the run's phases, numbered in order of first occurrence. Locations
/// without calls (no occurrences) take no part.
std::vector<std::uint32_t> join_combinations(const std::vector<LocationOccurrences>& all, std::uint32_t& phase_count) {
  std::vector<const LocationOccurrences*> locs;
  for (const LocationOccurrences& l : all) {
    if (!l.phase.empty()) locs.push_back(&l);
  }
  const std::size_t count = locs.empty() ? 0 : locs.front()->phase.size();
  std::map<std::vector<std::uint64_t>, std::uint32_t> ids;
  std::vector<std::vector<std::uint64_t>> combos;
  std::vector<std::uint64_t> weight;
  std::vector<std::uint32_t> combo_of(count);
  std::vector<std::uint64_t> key(locs.size());
  for (std::size_t k = 0; k < count; ++k) {
    for (std::size_t l = 0; l < locs.size(); ++l) key[l] = locs[l]->phase[k];
    const auto [it, added] = ids.emplace(key, static_cast<std::uint32_t>(combos.size()));
    if (added) {
      combos.push_back(key);
      weight.push_back(0);
    }
    ++weight[it->second];
    combo_of[k] = it->second;
  }
  // A rarer combination joins the most frequent one it nearly equals (ties: the one seen first).
  std::vector<std::uint32_t> order(combos.size());
  for (std::uint32_t c = 0; c < order.size(); ++c) order[c] = c;
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return weight[a] > weight[b]; });
  const auto allowed = static_cast<std::size_t>(kDifferingShare * static_cast<double>(locs.size()));
  std::vector<std::uint32_t> joined(combos.size());
  std::vector<bool> is_root(combos.size(), false);
  for (std::size_t i = 0; i < order.size(); ++i) {
    const std::uint32_t c = order[i];
    joined[c] = c;
    for (std::size_t j = 0; j < i && allowed > 0; ++j) {
      const std::uint32_t u = order[j];
      if (is_root[u] && differing(combos[c], combos[u]) <= allowed) {
        joined[c] = u;
        break;
      }
    }
    is_root[c] = joined[c] == c;
  }
  std::vector<std::uint32_t> final_id(combos.size(), UINT32_MAX);
  std::vector<std::uint32_t> phase(count);
  phase_count = 0;
  for (std::size_t k = 0; k < count; ++k) {
    const std::uint32_t root = joined[combo_of[k]];
    if (final_id[root] == UINT32_MAX) final_id[root] = phase_count++;
    phase[k] = final_id[root];
  }
  return phase;
}

}  // namespace

std::uint64_t action_shape(std::int32_t rank, const Op& op, const Action& a) noexcept {
  std::uint64_t h = mix64(static_cast<std::uint64_t>(op.header.region) << 8 | static_cast<std::uint64_t>(a.kind));
  h = mix64(h ^ static_cast<std::uint64_t>(static_cast<std::uint32_t>(a.peer >= 0 ? a.peer - rank : a.peer)));
  h = mix64(h ^ static_cast<std::uint64_t>(a.comm) << 32);
  return mix64(
      h ^ (static_cast<std::uint64_t>(a.op) << 32 | static_cast<std::uint32_t>(a.root >= 0 ? a.root - rank : a.root)));
}

std::uint64_t operation_shape(std::int32_t rank, const Op& op) noexcept {
  std::uint64_t h = mix64(static_cast<std::uint64_t>(op.header.region) + 1);
  for (const Action& a : op.actions) h = mix64(h ^ action_shape(rank, op, a));
  return h;
}

void StepSequence::add(std::uint64_t index, const Op& op, bool alone) {
  const bool boundary = !open_ || closed_ || alone || threshold_ == 0 || op.header.burst_work >= threshold_;
  closed_ = alone;
  if (boundary) {
    finish();
    first_op_.push_back(index);
    current_ = kCallsSeed;
    open_ = true;
  }
  shapes_.push_back(operation_shape(rank_, op));
  current_ = with_call(current_, shapes_.back());
}

void StepSequence::finish() {
  if (!open_ || symbols_.size() == first_op_.size()) return;
  symbols_.push_back(current_);
}

namespace {

/// Every location's occurrences at one level; empty (and `why_not` set) when their numbers differ.
std::vector<LocationOccurrences> occurrences_at(const std::vector<StepSequence>& steps,
                                                const std::vector<PhaseStructure>& folded, Grouping g, bool outermost,
                                                const std::vector<std::int32_t>& ranks, std::string& why_not) {
  std::vector<LocationOccurrences> locs(steps.size());
  std::size_t first = steps.size();
  for (std::size_t l = 0; l < steps.size(); ++l) {
    if (steps[l].symbols().empty()) continue;
    locs[l] = occurrences_of(steps[l], folded[l], g, outermost);
    if (first == steps.size()) first = l;
    if (locs[l].phase.size() != locs[first].phase.size()) {
      why_not = std::string(g == Grouping::Steps ? "steps" : "calls") + ", " + (outermost ? "outer" : "inner") +
                " loops: rank " + std::to_string(ranks[l]) + " has " + std::to_string(locs[l].phase.size()) +
                " instances, rank " + std::to_string(ranks[first]) + " " + std::to_string(locs[first].phase.size());
      return {};
    }
  }
  if (first == steps.size()) {
    why_not = "no location has calls";
    return {};
  }
  return locs;
}

/// Every location's sequence folded, its calls grouped as asked.
std::vector<PhaseStructure> fold_all(const std::vector<StepSequence>& steps, Grouping g,
                                     const PhaseFinderOptions& options) {
  std::vector<PhaseStructure> folded(steps.size());
  for (std::size_t l = 0; l < steps.size(); ++l) {
    if (steps[l].symbols().empty()) continue;
    folded[l] = find_phases(g == Grouping::Steps ? steps[l].symbols() : steps[l].shapes(), options);
  }
  return folded;
}

}  // namespace

std::optional<RunPhases> phases_by_rank(const std::vector<StepSequence>& steps, const std::vector<std::int32_t>& ranks,
                                        const PhaseFinderOptions& options, std::string& why_not) {
  // The outermost loops' iterations first: an inner loop's count may depend on n (log2 n exchanges of a
  // butterfly, the pipeline steps of a sweep) or be an exchange unrolled by hand, while the outer iterations are
  // the program's. Then the innermost loops; steps before single calls (where compute bursts do not tell the
  // steps apart alike on every rank, as on an oversubscribed machine). The first level at which every location
  // has as many instances is taken.
  std::vector<LocationOccurrences> locs;
  std::string notes;
  const bool one_call_per_step = std::all_of(
      steps.begin(), steps.end(), [](const StepSequence& s) { return s.symbols().size() == s.shapes().size(); });
  for (const Grouping g : {Grouping::Steps, Grouping::Calls}) {
    if (g == Grouping::Calls && one_call_per_step) break;  // the same sequences, already folded
    const std::vector<PhaseStructure> folded = fold_all(steps, g, options);
    for (const bool outermost : {true, false}) {
      std::string why;
      locs = occurrences_at(steps, folded, g, outermost, ranks, why);
      if (!locs.empty()) break;
      notes += (notes.empty() ? "" : "; ") + why;
    }
    if (!locs.empty()) break;
  }
  if (locs.empty()) {
    why_not = notes;
    return std::nullopt;
  }
  RunPhases out;
  out.method = PhaseMethod::ByRank;
  out.method_note = notes.empty() ? "" : "levels tried first: " + notes;
  out.occurrence_phase = join_combinations(locs, out.phase_count);
  for (LocationOccurrences& l : locs) out.first_op.push_back(std::move(l.first_op));
  return out;
}

}  // namespace p3s::analyzer
