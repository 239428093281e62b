// SPDX-License-Identifier: BSD-3-Clause
// Learning a communication pattern from what every rank did at every fitted process count.
//
// For each frame in order of simplicity (offset, ring, grid2, torus2, grid3, torus3, xor, absolute):
//  1. every peer becomes a label in the frame;
//  2. per process count, the ranks' label lists are combined into one canonical sequence: position by position
//     when every rank has the same number of communications (null communications, MPI_PROC_NULL, keep their
//     place), else by merging the lists in order (communications a rank does not make are absent);
//  3. across process counts the canonical sequences become terms: one single term per position when the length
//     does not change, else counted repetitions (count an exact law in n, labels linear or power-of-two
//     progressions in the repetition index, e.g. r ^ 2^i for i < log2(n)), alone, after or before a few single
//     terms, or several equal ones in a row;
//  4. the program is accepted only if it regenerates every rank's list at every n exactly.
// When no program fits all ranks, the ranks are split by a predicate (r == 0, r < n/2, r mod 2 == 0, a grid row or
// column, ...) and each side is learnt separately (the method's rank classes: a master and its workers). Last,
// each communication's peer may be a small integer expression in r and n found by search (a tree's parent).
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

#include "p3s/error.hpp"
#include "p3s/modeler/dims.hpp"
#include "p3s/modeler/expression.hpp"
#include "p3s/modeler/pattern.hpp"

namespace p3s::modeler {
namespace {

constexpr std::array<Frame, 13> kFrames = {
    Frame::Offset, Frame::Ring,   Frame::Grid2,   Frame::Torus2, Frame::Grid2C,   Frame::Torus2C,  Frame::Grid3,
    Frame::Torus3, Frame::Grid3C, Frame::Torus3C, Frame::Xor,    Frame::Absolute, Frame::Transpose};

/// A communication in a frame: per slot its label, or none for a null one.
using Canon = std::array<std::optional<Label>, 2>;

/// Where labels are read: a frame, and for grids its layout (Program::layout).
struct Space {
  Frame frame = Frame::Offset;
  GridLayout layout;
};

/// The period of label component d in a periodic frame at n.
std::int64_t period(const Space& sp, std::int64_t n, std::size_t d) { return label_period(sp.frame, n, d, sp.layout); }

/// How complex a law is: constants first, then by basis, then by the size of its coefficients.
std::tuple<int, std::int64_t, std::int64_t> complexity(const ExactLaw& law) {
  const std::int64_t dens = law.a.den + law.b.den;
  const std::int64_t nums = std::abs(law.a.num) + std::abs(law.b.num);
  if (law.is_constant()) return {0, law.b.den, std::abs(law.b.num)};
  const auto bases = all_bases();
  const auto pos = std::find(bases.begin(), bases.end(), law.basis) - bases.begin();
  return {1 + static_cast<int>(pos), dens, nums};
}

/// The simplest exact law that takes, at every n, one of the listed values (a periodic label has two
/// representatives, v and v - period; which one a law follows is found by trying the combinations), among those
/// that are whole numbers where the pattern will be evaluated when some are.
std::optional<ExactLaw> fit_choices(const std::map<std::int64_t, std::vector<std::int64_t>>& choices,
                                    const WholeAt& whole) {
  std::vector<std::int64_t> ns;
  std::vector<const std::vector<std::int64_t>*> opts;
  for (const auto& [n, v] : choices) {
    ns.push_back(n);
    opts.push_back(&v);
  }
  std::optional<ExactLaw> best;
  int best_rank = 6;
  std::vector<std::size_t> pick(ns.size(), 0);
  std::vector<Sample> samples(ns.size());
  while (true) {
    for (std::size_t i = 0; i < ns.size(); ++i) {
      samples[i] = {static_cast<double>(ns[i]), static_cast<double>((*opts[i])[pick[i]])};
    }
    if (std::optional<ExactLaw> law = fit_exact(samples, whole)) {
      const int rank = 2 * evaluability(*law, samples, whole) + (rounds_at_samples(*law, samples) ? 1 : 0);
      if (!best || std::make_pair(rank, complexity(*law)) < std::make_pair(best_rank, complexity(*best))) {
        best = law;
        best_rank = rank;
      }
    }
    std::size_t i = 0;
    while (i < pick.size() && ++pick[i] == opts[i]->size()) pick[i++] = 0;
    if (i == pick.size()) break;
  }
  return best;
}

/// The representatives of a label component: itself, and for periodic frames its other side.
std::vector<std::int64_t> representatives(const Space& sp, std::int64_t n, std::size_t d, std::int64_t v) {
  if (!frame_periodic(sp.frame) || v == 0) return {v};
  const std::int64_t m = period(sp, n, d);
  return {v, v - m};
}

/// A periodic label written closest to zero (for progressions in a repetition).
std::int64_t centred(const Space& sp, std::int64_t n, std::size_t d, std::int64_t v) {
  if (!frame_periodic(sp.frame)) return v;
  const std::int64_t m = period(sp, n, d);
  return v > m / 2 ? v - m : v;
}

/// The labels a centred periodic component may be written as: itself, and where it is half the period (a step
/// along a side of 2 reaches the same rank either way) the step the other way too.
using Ties = std::function<std::vector<std::int64_t>(std::int64_t n, std::int64_t v)>;

/// A law in n and in the repetition index from rows[n] = values for i = 0, 1, ... A value the same for every i
/// may be any of its `ties` (none: itself only).
std::optional<IndexedLaw> fit_indexed(const std::map<std::int64_t, std::vector<std::int64_t>>& rows,
                                      const WholeAt& whole, const Ties& ties = {}) {
  using P = IndexedLaw::Progression;
  const auto pow2 = [](std::int64_t j) { return std::int64_t{1} << j; };
  struct Candidate {
    P progression;
    bool descending;
  };
  // The same value for every i comes first; then progressions, whose step is read off a row with two values.
  std::optional<std::int64_t> steps[4];
  for (const auto& [n, v] : rows) {
    if (v.size() < 2) continue;
    const std::size_t k = v.size();
    steps[0] = v[1] - v[0];
    steps[1] = v[k - 2] - v[k - 1];
    steps[2] = v[1] - v[0];
    steps[3] = v[k - 2] - v[k - 1];
    break;
  }
  // The briefest law that reproduces the rows wins (candidates in this order on a tie): at 4, 8 and 16 the labels
  // 1 / 2, 1 / 2, 1 are floor(cbrt(n)) - i as well as 2^(count-1-i), and only the second goes on.
  const Candidate candidates[4] = {{P::Linear, false}, {P::Linear, true}, {P::Power2, false}, {P::Power2, true}};
  std::optional<IndexedLaw> best;
  for (int c = -1; c < 4; ++c) {
    std::int64_t step = 0;
    if (c >= 0) {
      if (!steps[c] || *steps[c] == 0) continue;
      step = *steps[c];
    }
    std::map<std::int64_t, std::vector<std::int64_t>> base;
    bool ok = true;
    for (const auto& [n, v] : rows) {
      const auto k = static_cast<std::int64_t>(v.size());
      if (k == 0) continue;
      std::int64_t b = 0;
      for (std::int64_t i = 0; i < k && ok; ++i) {
        std::int64_t p = 0;
        if (c >= 0) {
          const std::int64_t j = candidates[c].descending ? k - 1 - i : i;
          if (candidates[c].progression == P::Power2 && j > 61) {
            ok = false;
            break;
          }
          p = candidates[c].progression == P::Linear ? j : pow2(j);
        }
        const std::int64_t here = v[static_cast<std::size_t>(i)] - step * p;
        if (i == 0) b = here;
        ok = here == b;
      }
      if (!ok) break;
      base[n] = c < 0 && ties ? ties(n, b) : std::vector<std::int64_t>{b};
    }
    if (!ok || base.empty()) continue;
    if (std::optional<ExactLaw> law = fit_choices(base, whole)) {
      IndexedLaw out;
      out.base = *law;
      out.step = step;
      if (c >= 0) {
        out.progression = candidates[c].progression;
        out.descending = candidates[c].descending;
      }
      if (!best || description_length(out) < description_length(*best)) best = out;
    }
  }
  return best;
}

/// Canonical sequences per n: position-aligned, or merged in order. nullopt when the ranks disagree.
std::optional<std::map<std::int64_t, std::vector<Canon>>> canonical(
    const std::vector<std::pair<std::int64_t, std::vector<Canon>>>& lists, bool aligned) {
  std::map<std::int64_t, std::vector<const std::vector<Canon>*>> by_n;
  for (const auto& [n, list] : lists) by_n[n].push_back(&list);
  std::map<std::int64_t, std::vector<Canon>> out;
  for (const auto& [n, ls] : by_n) {
    std::vector<Canon>& seq = out[n];
    if (aligned) {
      seq.resize(ls.front()->size());
      for (const std::vector<Canon>* l : ls) {
        if (l->size() != seq.size()) return std::nullopt;
        for (std::size_t k = 0; k < l->size(); ++k) {
          for (std::size_t s = 0; s < 2; ++s) {
            const std::optional<Label>& x = (*l)[k][s];
            if (!x) continue;
            if (seq[k][s] && *seq[k][s] != *x) return std::nullopt;
            seq[k][s] = x;
          }
        }
      }
      continue;
    }
    // Merge: every distinct communication (and its repeat number within a list) is a node; each list orders
    // its nodes; a topological order, earliest-seen first, is the canonical sequence.
    std::map<std::pair<Canon, int>, std::size_t> ids;
    std::vector<std::pair<Canon, int>> nodes;
    std::vector<std::set<std::size_t>> next;
    std::vector<int> indegree;
    for (const std::vector<Canon>* l : ls) {
      std::map<Canon, int> seen;
      std::size_t prev = SIZE_MAX;
      for (const Canon& c : *l) {
        if (!c[0] && !c[1]) return std::nullopt;  // a null communication cannot be placed by order alone
        const std::pair<Canon, int> key{c, seen[c]++};
        auto [it, inserted] = ids.emplace(key, nodes.size());
        if (inserted) {
          nodes.push_back(key);
          next.emplace_back();
          indegree.push_back(0);
        }
        if (prev != SIZE_MAX && next[prev].insert(it->second).second) ++indegree[it->second];
        prev = it->second;
      }
    }
    std::set<std::size_t> ready;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (indegree[i] == 0) ready.insert(i);
    }
    while (!ready.empty()) {
      const std::size_t i = *ready.begin();
      ready.erase(ready.begin());
      seq.push_back(nodes[i].first);
      for (const std::size_t j : next[i]) {
        if (--indegree[j] == 0) ready.insert(j);
      }
    }
    if (seq.size() != nodes.size()) return std::nullopt;  // the ranks order them differently
  }
  return out;
}

/// A single term (one position of the canonical sequences).
std::optional<Term> fit_single(const Space& sp, int slots, const std::map<std::int64_t, std::vector<Canon>>& parts,
                               const WholeAt& whole) {
  const int dims = frame_dims(sp.frame);
  Term t;
  for (int s = 0; s < slots; ++s) {
    std::vector<IndexedLaw> slot;
    bool known = false;
    for (const auto& [n, seq] : parts) known = known || seq.front()[s].has_value();
    if (known) {
      for (int d = 0; d < dims; ++d) {
        std::map<std::int64_t, std::vector<std::int64_t>> choices;
        for (const auto& [n, seq] : parts) {
          if (seq.front()[s]) choices[n] = representatives(sp, n, static_cast<std::size_t>(d), (*seq.front()[s])[d]);
        }
        const std::optional<ExactLaw> law = fit_choices(choices, whole);
        if (!law) return std::nullopt;
        slot.push_back(IndexedLaw{*law});
      }
    }
    t.slots.push_back(std::move(slot));
  }
  return t;
}

bool is_logarithmic(Basis b) {
  return b == Basis::Log2 || b == Basis::FloorLog2 || b == Basis::CeilLog2 || b == Basis::FloorHalfLog2 ||
         b == Basis::CeilHalfLog2;
}

/// The side of MPI_Dims_create's grid that a repetition steps along: every slot's label a step along one and the same
/// dimension of a grid frame on that grid, constant in n (the same each time, or alternating one way and back). nullopt
/// otherwise (a box's grid has sides no basis names).
std::optional<Basis> side_stepped(const Space& sp, const Term& t) {
  const int dims = frame_dims(sp.frame);
  if (dims < 2 || sp.layout.boxed()) return std::nullopt;
  std::optional<int> axis;
  for (const std::vector<IndexedLaw>& slot : t.slots) {
    for (int d = 0; d < static_cast<int>(slot.size()); ++d) {
      const IndexedLaw& law = slot[static_cast<std::size_t>(d)];
      if (!law.base.is_constant()) return std::nullopt;
      if (law.base.b == Rational::make(0) && law.step == 0) continue;
      if (axis && *axis != d) return std::nullopt;
      axis = d;
    }
  }
  if (!axis) return std::nullopt;
  return on_side(dims == 2 ? Basis::Dims2Major : Basis::Dims3First, static_cast<std::size_t>(*axis));
}

/// A counted repetition: its count an exact law in n, each label a progression in the repetition index. A count
/// that follows the side of the grid its steps go along is that side's law, not another basis that agrees with it
/// on the fitted counts (2^floor(log2(n)/2) - 2 is dims3(n)[0] - 2 from 4 to 32, and 6, not 2, at 64), or whether
/// that side is longer than 2 (a second exchange along it: [dims3(n)[0] > 2], not (1/2)*dims3(n)[0] - 1, which
/// the sides 2 and 4 cannot tell from it).
std::optional<Term> fit_repeated(const Space& sp, int slots, const std::map<std::int64_t, std::vector<Canon>>& parts,
                                 const WholeAt& whole) {
  const int dims = frame_dims(sp.frame);
  Term t;
  std::vector<Sample> counts;
  for (const auto& [n, seq] : parts) counts.push_back({static_cast<double>(n), static_cast<double>(seq.size())});
  WholeAt whole_count = whole;
  whole_count.non_negative = true;
  const std::vector<ExactLaw> count_laws = fit_exact_all(counts);
  if (count_laws.empty()) return std::nullopt;
  bool powers = false;  // some label is a power-of-two progression
  for (int s = 0; s < slots; ++s) {
    bool any = false;  // some repetition has this slot
    bool all = true;   // every repetition has it
    for (const auto& [n, seq] : parts) {
      for (const Canon& c : seq) {
        any = any || c[s].has_value();
        all = all && c[s].has_value();
      }
    }
    std::vector<IndexedLaw> slot;
    if (any) {
      if (!all) return std::nullopt;  // a repetition's slot is either always there or always null
      for (int d = 0; d < dims; ++d) {
        std::map<std::int64_t, std::vector<std::int64_t>> rows;
        for (const auto& [n, seq] : parts) {
          std::vector<std::int64_t>& row = rows[n];
          for (const Canon& c : seq) row.push_back(centred(sp, n, static_cast<std::size_t>(d), (*c[s])[d]));
        }
        const Ties ties = [sp, d](std::int64_t n, std::int64_t v) {
          if (!frame_periodic(sp.frame)) return std::vector<std::int64_t>{v};
          const std::int64_t m = period(sp, n, static_cast<std::size_t>(d));
          return 2 * v == m ? std::vector<std::int64_t>{v, -v} : std::vector<std::int64_t>{v};
        };
        const std::optional<IndexedLaw> law = fit_indexed(rows, whole, ties);
        if (!law) return std::nullopt;
        powers = powers || (law->step != 0 && law->progression == IndexedLaw::Progression::Power2);
        slot.push_back(*law);
      }
    }
    t.slots.push_back(std::move(slot));
  }
  // Labels 2^i over the repetitions make the count an exponent: a logarithm of n when one reproduces the counts
  // (ceil(log2(n)/2) steps of a halving along a row, not the floor(cbrt(n)) that coincides with it up to 32).
  std::vector<ExactLaw> logarithms;
  for (const ExactLaw& law : count_laws) {
    if (law.is_constant() || is_logarithmic(law.basis)) logarithms.push_back(law);
  }
  std::vector<ExactLaw> sides;
  if (const std::optional<Basis> side = side_stepped(sp, t); side && !powers) {
    const auto [dims_of_side, axis] = *side_of(*side);
    const Basis longer = on_side(dims_of_side == 2 ? Basis::Dims2MajorOver2 : Basis::Dims3FirstOver2, axis);
    for (const ExactLaw& law : count_laws) {
      if ((law.basis == *side || law.basis == longer) && !law.is_constant()) sides.push_back(law);
    }
  }
  const std::vector<ExactLaw>& preferred = !sides.empty()                  ? sides
                                           : powers && !logarithms.empty() ? logarithms
                                                                           : count_laws;
  const std::optional<ExactLaw> count = prefer_whole(preferred, counts, whole_count);
  t.count = *count;
  return t;
}

/// Terms for a layout of the canonical sequences: single positions (false) and repetitions (true) in order;
/// at each n the repetitions share what the single positions leave, equally.
std::optional<std::vector<Term>> fit_layout(const Space& sp, int slots,
                                            const std::map<std::int64_t, std::vector<Canon>>& seqs,
                                            const std::vector<bool>& layout, const WholeAt& whole) {
  const auto singles = static_cast<std::size_t>(std::count(layout.begin(), layout.end(), false));
  const std::size_t repeats = layout.size() - singles;
  std::vector<std::map<std::int64_t, std::vector<Canon>>> parts(layout.size());
  for (const auto& [n, seq] : seqs) {
    if (seq.size() < singles) return std::nullopt;
    const std::size_t rest = seq.size() - singles;
    if (repeats == 0 ? rest != 0 : rest % repeats != 0) return std::nullopt;
    const std::size_t each = repeats == 0 ? 0 : rest / repeats;
    std::size_t at = 0;
    for (std::size_t k = 0; k < layout.size(); ++k) {
      const std::size_t len = layout[k] ? each : 1;
      parts[k][n].assign(seq.begin() + static_cast<std::ptrdiff_t>(at),
                         seq.begin() + static_cast<std::ptrdiff_t>(at + len));
      at += len;
    }
  }
  std::vector<Term> terms;
  for (std::size_t k = 0; k < layout.size(); ++k) {
    std::optional<Term> t =
        layout[k] ? fit_repeated(sp, slots, parts[k], whole) : fit_single(sp, slots, parts[k], whole);
    if (!t) return std::nullopt;
    terms.push_back(std::move(*t));
  }
  return terms;
}

/// Layouts to try, simplest first: every position single (constant length only); one repetition; single
/// positions before or after it; two to four equal repetitions (e.g. three log2(n)-step exchanges in a row).
std::vector<std::vector<bool>> layouts(std::size_t shortest, std::size_t longest) {
  std::vector<std::vector<bool>> out;
  if (shortest == longest) {
    out.emplace_back(shortest, false);
    return out;
  }
  out.push_back({true});
  for (std::size_t k = 1; k <= shortest && k <= 8; ++k) {
    std::vector<bool> before(k, false);
    before.push_back(true);
    out.push_back(before);
    std::vector<bool> after{true};
    after.insert(after.end(), k, false);
    out.push_back(after);
  }
  for (std::size_t m = 2; m <= 4; ++m) out.emplace_back(m, true);
  return out;
}

/// Whether a program, or a pattern's cases (each rank taking the first whose predicate holds), gives every observed
/// rank its list.
template <class Generator>
bool reproduces(const Generator& p, std::span<const ListObservation* const> obs) {
  try {
    for (const ListObservation* o : obs) {
      const std::vector<Entry> got = p.generate(o->r, o->n);
      if (got.size() != o->entries.size()) return false;
      for (std::size_t k = 0; k < got.size(); ++k) {
        for (std::size_t s = 0; s < 2; ++s) {
          const std::int64_t want = o->entries[k][s] < 0 ? -1 : o->entries[k][s];
          if (got[k].peers[s] != want) return false;
        }
      }
    }
  } catch (const ModelError&) {
    return false;
  }
  return true;
}

/// Whether no rank makes the communication at n: along a periodic side of 1 (no rank has that neighbour), along a
/// side no longer than the step on a grid that is not periodic (a grid of one column has no west or east
/// neighbour), or where the layout steps along one dimension only and its side is no longer than the grain.
bool unrealizable(const Space& sp, const Canon& c, std::int64_t n) {
  const auto dims = static_cast<std::size_t>(frame_dims(sp.frame));
  if (dims < 2) return false;
  const bool periodic = frame_periodic(sp.frame);
  for (const std::optional<Label>& l : c) {
    if (!l) continue;
    for (std::size_t d = 0; d < dims; ++d) {
      if ((*l)[d] == 0) continue;
      const std::int64_t side = period(sp, n, d);
      if (periodic ? side == 1 : std::abs((*l)[d]) >= side) return true;
      if (sp.layout.along_step && grid_sides(sp.frame, n, sp.layout)[d] <= sp.layout.grain) return true;
    }
  }
  return false;
}

/// Whether a periodic grid has a side of 1 at n.
bool has_unit_side(const Space& sp, std::int64_t n) {
  if (!frame_periodic(sp.frame)) return false;
  for (std::size_t d = 0; d < static_cast<std::size_t>(frame_dims(sp.frame)); ++d) {
    if (period(sp, n, d) == 1) return true;
  }
  return false;
}

/// A list's labels as stable_label() writes them (the same neighbour, the same label at every n).
std::vector<Canon> centred_labels(const Space& sp, std::int64_t n, const std::vector<Canon>& list, bool back_first) {
  std::map<Canon, int> repeats;
  std::vector<Canon> out;
  for (const Canon& raw : list) {
    const int k = repeats[raw]++;
    Canon c = raw;
    for (std::optional<Label>& l : c) {
      if (l) l = stable_label(sp.frame, n, *l, k, back_first, sp.layout);
    }
    out.push_back(c);
  }
  return out;
}

/// Labels constant in n, the simplest description a frame allows: the lists of every process count combined into
/// one sequence, each communication a single term. Tried only where every label of the sequence occurs at every n
/// (a label that appears as n grows, r ^ 16 at 32, is a repetition whose count grows, not a constant left out
/// where it falls off the range), or no rank can make it there (unrealizable(): a 3-D torus at 4 ranks is 2 x 2 x 1,
/// no messages along z). A grid app that skips its boundary calls shows no rank both neighbours of a side at
/// n = 4, so the order of the neighbours is only seen in the runs together.
std::optional<Program> learn_constant(const Space& sp, int slots, std::span<const ListObservation* const> obs,
                                      const std::vector<std::pair<std::int64_t, std::vector<Canon>>>& lists,
                                      bool keep_nulls, bool aligned, bool back_first, const WholeAt& whole) {
  std::vector<std::pair<std::int64_t, std::vector<Canon>>> pooled;
  std::map<std::int64_t, std::set<Canon>> seen;
  // Where a step along a side of 1 reaches the rank itself, its label there is 0 whichever step it is: such runs
  // are left to the check that the program reproduces them, unless no other run tells the steps.
  const auto self_steps = [&](std::int64_t n) { return sp.layout.self_on_unit_side && has_unit_side(sp, n); };
  const bool others = std::any_of(lists.begin(), lists.end(), [&](const auto& l) { return !self_steps(l.first); });
  for (const auto& [n, list] : lists) {
    std::vector<Canon> centred_list = centred_labels(sp, n, list, back_first);
    seen[n].insert(centred_list.begin(), centred_list.end());
    if (others && self_steps(n)) continue;
    pooled.emplace_back(0, std::move(centred_list));
  }
  const auto merged = canonical(pooled, aligned);
  if (!merged || merged->empty() || merged->begin()->second.empty()) return std::nullopt;
  const std::vector<Canon>& seq = merged->begin()->second;
  std::map<std::int64_t, std::vector<Canon>> seqs;
  for (const auto& [n, labels] : seen) {
    for (const Canon& c : seq) {
      if (!aligned && !labels.contains(c) && !unrealizable(sp, c, n)) return std::nullopt;
    }
    seqs[n] = seq;
  }
  std::optional<std::vector<Term>> terms = fit_layout(sp, slots, seqs, std::vector<bool>(seq.size(), false), whole);
  if (!terms) return std::nullopt;
  Program p;
  p.frame = sp.frame;
  p.layout = sp.layout;
  p.slots = slots;
  p.keep_nulls = keep_nulls;
  p.terms = std::move(*terms);
  if (!reproduces(p, obs)) return std::nullopt;
  return p;
}

std::optional<Program> learn_in_frame(const Space& sp, int slots, std::span<const ListObservation* const> obs,
                                      const WholeAt& whole) {
  const Frame frame = sp.frame;
  std::vector<std::pair<std::int64_t, std::vector<Canon>>> lists;
  bool nulls = false;
  for (const ListObservation* o : obs) {
    if (!holds_data(frame, o->r, o->n, sp.layout)) {
      if (!o->entries.empty()) return std::nullopt;  // a rank without data at this grain calls nothing
      continue;
    }
    std::vector<Canon> l;
    for (const auto& e : o->entries) {
      Canon c;
      for (std::size_t s = 0; s < 2; ++s) {
        if (e[s] < 0) continue;
        c[s] = label_of(frame, o->r, e[s], o->n, sp.layout);
        if (!c[s]) return std::nullopt;
      }
      nulls = nulls || (!c[0] && !c[1]);
      l.push_back(c);
    }
    lists.emplace_back(o->n, std::move(l));
  }
  if (lists.empty()) return std::nullopt;  // no rank holds data on this grid: nothing to learn from
  // On a side of 2 the two steps of a dimension name one rank: which came first is taken from the runs where the
  // side is longer, by trying both readings.
  for (const bool aligned : {true, false}) {
    for (const bool back_first : {true, false}) {
      if (!frame_periodic(frame) && !back_first) continue;
      if (std::optional<Program> p =
              learn_constant(sp, slots, obs, lists, aligned && nulls, aligned, back_first, whole)) {
        return p;
      }
    }
  }
  for (const bool aligned : {true, false}) {
    const auto seqs = canonical(lists, aligned);
    if (!seqs) continue;
    std::size_t shortest = SIZE_MAX;
    std::size_t longest = 0;
    for (const auto& [n, seq] : *seqs) {
      shortest = std::min(shortest, seq.size());
      longest = std::max(longest, seq.size());
    }
    Program p;
    p.frame = frame;
    p.layout = sp.layout;
    p.slots = slots;
    p.keep_nulls = aligned && nulls;
    for (const std::vector<bool>& layout : layouts(shortest, longest)) {
      std::optional<std::vector<Term>> terms = fit_layout(sp, slots, *seqs, layout, whole);
      if (!terms) continue;
      p.terms = std::move(*terms);
      if (reproduces(p, obs)) return p;
    }
  }
  return std::nullopt;
}

/// The grains a grid frame's observations suggest on the grid of `plain` (GridLayout::grain and last_holder): at a
/// process count where only some ranks make the calls, those lying at a stride from one another along a side of p
/// processes, from its first coordinate or up to its last, hold the data of a grid of p / stride points along it
/// (a multigrid code's coarse levels). Empty where every rank calls at every n.
std::vector<GridLayout> suggested_grains(Frame frame, std::span<const ListObservation* const> obs,
                                         const GridLayout& plain) {
  if (frame_dims(frame) < 2) return {};
  std::map<std::int64_t, std::vector<std::int64_t>> callers;  // n -> ranks with calls
  std::map<std::int64_t, std::size_t> ranks;                  // n -> ranks observed
  for (const ListObservation* o : obs) {
    ++ranks[o->n];
    if (!o->entries.empty()) callers[o->n].push_back(o->r);
  }
  std::set<std::pair<std::int64_t, bool>> out;
  for (const auto& [n, rs] : callers) {
    if (rs.size() == ranks[n]) continue;
    const std::vector<int> dims = grid_sides(frame, n, plain);
    for (std::size_t d = 0; d < dims.size(); ++d) {
      for (const bool last : {false, true}) {
        std::int64_t stride = dims[d];
        for (const std::int64_t r : rs) stride = std::gcd(stride, grid_coords(frame, r, dims)[d] + (last ? 1 : 0));
        if (stride > 1) out.emplace(dims[d] / stride, last);
      }
    }
  }
  std::vector<GridLayout> layouts;
  for (const auto& [grain, last] : out) layouts.push_back(GridLayout{grain, plain.box, last});
  return layouts;
}

/// Whether some rank of a periodic grid frame names itself as a peer at an n where a side of the grid is 1: a code
/// that exchanges along every side, however short (GridLayout::self_on_unit_side).
bool talks_to_itself(Frame frame, std::span<const ListObservation* const> obs, const GridLayout& plain) {
  if (frame_dims(frame) < 2 || !frame_periodic(frame)) return false;
  for (const ListObservation* o : obs) {
    const std::vector<int> dims = grid_sides(frame, o->n, plain);
    if (std::find(dims.begin(), dims.end(), 1) == dims.end()) continue;
    for (const auto& e : o->entries) {
      if (e[0] == o->r || e[1] == o->r) return true;
    }
  }
  return false;
}

/// The layouts to try for a grid frame on the grid `box` cuts (all 0: MPI_Dims_create's): the plain grid and the
/// grains the observations suggest, with steps between holders or along one dimension (GridLayout::along_step),
/// each also stepping to itself along a side of 1 where some rank does.
std::vector<GridLayout> layouts_on(Frame frame, std::span<const ListObservation* const> obs,
                                   const std::array<std::int64_t, 3>& box) {
  std::vector<GridLayout> out{GridLayout{0, box}};
  if (frame_dims(frame) < 2) return out;
  for (const GridLayout& g : suggested_grains(frame, obs, out.front())) {
    out.push_back(g);
    GridLayout along = g;
    along.along_step = true;
    out.push_back(along);
  }
  if (talks_to_itself(frame, obs, out.front())) {
    const std::size_t plain = out.size();
    for (std::size_t k = 0; k < plain; ++k) {
      GridLayout self = out[k];
      self.self_on_unit_side = true;
      out.push_back(self);
    }
  }
  return out;
}

/// The most proportion a box side may have to the shortest (a box of 1 x 1 x 8 is tried, not 1 x 1 x 9).
constexpr std::int64_t kMaxBoxSide = 8;

/// Whether every observed peer is a step of one along one side of the grid `sides` (periodic or not, as the frame
/// is): the neighbour relations of a halo exchange on that grid.
bool steps_on(Frame frame, std::span<const int> sides, const ListObservation& o,
              std::map<std::uint64_t, std::size_t>* axes = nullptr) {
  const Label c = grid_coords(frame, o.r, sides);
  for (std::size_t k = 0; k < o.entries.size(); ++k) {
    for (const std::int64_t peer : o.entries[k]) {
      if (peer < 0) continue;
      if (peer >= o.n) return false;
      const Label p = grid_coords(frame, peer, sides);
      std::optional<std::size_t> axis;
      for (std::size_t d = 0; d < sides.size(); ++d) {
        std::int64_t step = p[d] - c[d];
        if (frame_periodic(frame)) step = ((step % sides[d]) + sides[d]) % sides[d];
        const bool one = step == 1 || (frame_periodic(frame) ? step == sides[d] - 1 : step == -1);
        if (step != 0 && !one) return false;
        if (step == 0) continue;
        if (axis) return false;
        axis = d;
      }
      // The same exchange (its key) steps along the same dimension wherever it steps.
      if (axes != nullptr && axis && k < o.keys.size()) {
        const auto [it, added] = axes->try_emplace(o.keys[k], *axis);
        if (!added && it->second != *axis) return false;
      }
    }
  }
  return true;
}

/// The most boxes suggested for one frame.
constexpr std::size_t kMaxBoxes = 8;

/// The proportions of boxes whose surface-minimising grid (box_grid()) is, at every observed n, a grid on which
/// every observed peer is a step of one along one side, each exchange (ListObservation::keys) along the same side
/// at every n, simplest first (smallest largest side, then sum); none where MPI_Dims_create's grids are such.
std::vector<std::array<std::int64_t, 3>> boxes_of(Frame frame, std::span<const ListObservation* const> obs) {
  const int dims = frame_dims(frame);
  if (dims < 2) return {};
  std::map<std::int64_t, std::vector<const ListObservation*>> by_n;
  bool any = false;
  for (const ListObservation* o : obs) {
    by_n[o->n].push_back(o);
    any = any || !o->entries.empty();
  }
  if (!any) return {};
  // Whether the grids at each n (grid(n)) make every peer a step of one, each exchange along one side throughout.
  const auto fits = [&](const auto& grid) {
    std::map<std::uint64_t, std::size_t> axes;
    for (const auto& [n, os] : by_n) {
      const std::vector<int> sides = grid(n);
      for (const ListObservation* o : os) {
        if (!steps_on(frame, sides, *o, &axes)) return false;
      }
    }
    return true;
  };
  if (fits([dims](std::int64_t n) { return dims_create(static_cast<int>(n), dims); })) return {};
  // Per n, the grids (in dimension order) on which the observations alone are steps of one: what a box must cut.
  std::map<std::int64_t, std::set<std::vector<int>>> grids;
  for (const auto& [n, os] : by_n) {
    std::set<std::vector<int>>& g = grids[n];
    for (std::int64_t p0 = 1; p0 <= n; ++p0) {
      if (n % p0 != 0) continue;
      for (std::int64_t p1 = 1; p1 <= n / p0; ++p1) {
        if ((n / p0) % p1 != 0 || (dims == 2 && p0 * p1 != n)) continue;
        std::vector<int> sides{static_cast<int>(p0), static_cast<int>(p1)};
        if (dims == 3) sides.push_back(static_cast<int>(n / p0 / p1));
        if (std::all_of(os.begin(), os.end(), [&](const ListObservation* o) { return steps_on(frame, sides, *o); })) {
          g.insert(std::move(sides));
        }
      }
    }
    if (g.empty()) return {};  // the peers are no steps of one on any grid of n
  }
  // Cuts of as little surface are told apart by order, as the application does (a cube's box ties everywhere).
  using Key = std::tuple<std::int64_t, std::int64_t, std::array<std::int64_t, 3>>;
  std::vector<Key> found;
  for (std::int64_t a = 1; a <= kMaxBoxSide; ++a) {
    for (std::int64_t b = 1; b <= kMaxBoxSide; ++b) {
      for (std::int64_t c = dims == 3 ? 1 : 0; c <= (dims == 3 ? kMaxBoxSide : 0); ++c) {
        if (std::gcd(std::gcd(a, b), c) != 1) continue;  // proportions, once
        const std::array<std::int64_t, 3> box{a, b, c};
        if (!std::all_of(grids.begin(), grids.end(),
                         [&](const auto& g) { return g.second.contains(box_grid(g.first, dims, box)); })) {
          continue;
        }
        if (fits([&](std::int64_t n) { return box_grid(n, dims, box); })) {
          found.emplace_back(std::max({a, b, c}), a + b + c, box);
        }
      }
    }
  }
  std::sort(found.begin(), found.end());
  std::vector<std::array<std::int64_t, 3>> out;
  for (const Key& k : found) {
    if (out.size() == kMaxBoxes) break;
    out.push_back(std::get<2>(k));
  }
  return out;
}

/// The layouts to try for a grid frame: on MPI_Dims_create's grid (a box's grid is found for a whole phase:
/// suggested_box()).
std::vector<GridLayout> suggested_layouts(Frame frame, std::span<const ListObservation* const> obs) {
  return layouts_on(frame, obs, {0, 0, 0});
}

/// What the expression searches of one pattern may do, and whether one of them ran out of its budget.
struct SearchBudget {
  const SearchOptions& options;
  const WholeAt& whole;  ///< where the pattern's laws should be whole numbers
  bool exhausted = false;
  /// The programs learnt for each set of observations (learn_program() is a function of the set): rank classes
  /// split the same ranks again and again.
  std::map<std::vector<const ListObservation*>, std::optional<Program>> programs = {};
  /// The same for learn_expressions(), the dearest search, which the rank classes tried reach with the same ranks.
  std::map<std::vector<const ListObservation*>, std::optional<Program>> expressions = {};
};

/// The fallback: one single term per position (the same number of communications for every rank and n), each
/// slot's peer an integer expression in r and n found by search. Null communications must fall outside 0..n-1.
std::optional<Program> learn_expressions(int slots, std::span<const ListObservation* const> obs, SearchBudget& budget) {
  std::size_t length = SIZE_MAX;
  bool nulls = false;
  for (const ListObservation* o : obs) {
    if (length != SIZE_MAX && o->entries.size() != length) return std::nullopt;
    length = o->entries.size();
    for (const auto& e : o->entries) nulls = nulls || (e[0] < 0 && e[1] < 0);
  }
  if (length == 0 || length == SIZE_MAX || length > 8) return std::nullopt;
  Program p;
  p.frame = Frame::Expression;
  p.slots = slots;
  p.keep_nulls = nulls;
  for (std::size_t k = 0; k < length; ++k) {
    Term t;
    for (int s = 0; s < slots; ++s) {
      std::vector<RankSample> samples;
      for (const ListObservation* o : obs) {
        if (o->entries[k][static_cast<std::size_t>(s)] >= 0) {
          samples.push_back({o->n, o->r, o->entries[k][static_cast<std::size_t>(s)]});
        }
      }
      if (samples.empty()) {
        t.peers.emplace_back();
        continue;
      }
      SearchStats stats;
      std::optional<Expression> e = find_expression(samples, budget.options, &stats);
      budget.exhausted = budget.exhausted || stats.budget_exhausted;
      if (!e) return std::nullopt;
      t.peers.emplace_back(std::move(*e));
    }
    p.terms.push_back(std::move(t));
  }
  if (!reproduces(p, obs)) return std::nullopt;
  return p;
}

/// The program with the fewest terms over all frames (a ring is one periodic term, not an offset for most ranks
/// plus one that only the last rank can use; a recursive halving is one repetition, though at 4, 8 and 16 its 1,
/// 2, 2 steps are also two constant steps on a 3-D torus), then the shortest description (offsets constant in the
/// app's own grid, not laws that happen to give them in another numbering); frames in order of simplicity break the
/// remaining ties (a phase's groups are then moved to the phase's grid: learn_constant_pattern()).
std::optional<Program> learn_program(int slots, std::span<const ListObservation* const> obs, const WholeAt& whole) {
  std::optional<Program> best;
  std::pair<std::size_t, int> best_key;
  for (const Frame f : kFrames) {
    for (const GridLayout& layout : suggested_layouts(f, obs)) {
      std::optional<Program> p = learn_in_frame(Space{f, layout}, slots, obs, whole);
      if (!p) continue;
      const std::pair<std::size_t, int> key{p->terms.size(), description_length(*p)};
      if (!best || key < best_key) {
        best = std::move(p);
        best_key = key;
      }
    }
    if (best && best->terms.size() <= 1 && constant_in_n(*best)) break;  // one step at a fixed offset: nothing simpler
  }
  return best;
}

}  // namespace

std::vector<RankPredicate> rank_predicates() {
  using K = RankPredicate::Kind;
  const ExactLaw zero = ExactLaw::constant(Rational::make(0));
  const ExactLaw n_minus_1{Basis::N, Rational::make(1), Rational::make(-1)};
  const ExactLaw half_n{Basis::N, Rational::make(1, 2), Rational::make(0)};
  const ExactLaw columns{Basis::Dims2Minor, Rational::make(1), Rational::make(0)};
  const ExactLaw last_column{Basis::Dims2Minor, Rational::make(1), Rational::make(-1)};
  const ExactLaw two = ExactLaw::constant(Rational::make(2));
  const ExactLaw rows{Basis::Dims2Major, Rational::make(1), Rational::make(0)};
  const ExactLaw last_row{Basis::Dims2Major, Rational::make(1), Rational::make(-1)};
  return {
      {K::Equal, zero, {}, false},
      {K::Equal, n_minus_1, {}, false},
      {K::Equal, half_n, {}, false},
      {K::Less, half_n, {}, false},
      {K::Less, columns, {}, false},
      {K::ModEqual, zero, two, false},
      {K::ModEqual, zero, columns, false},
      {K::ModEqual, last_column, columns, false},
      {K::Less, rows, {}, false},
      {K::DivEqual, last_column, rows, false},
      {K::ModEqual, zero, rows, false},
      {K::ModEqual, last_row, rows, false},
      {K::DivEqual, last_row, columns, false},
  };
}

namespace {

/// learn_program() of a set of observations, once per set.
const std::optional<Program>& program_of(int slots, std::span<const ListObservation* const> obs, SearchBudget& budget) {
  std::vector<const ListObservation*> key(obs.begin(), obs.end());
  std::sort(key.begin(), key.end());
  const auto found = budget.programs.find(key);
  if (found != budget.programs.end()) return found->second;
  return budget.programs.emplace(std::move(key), learn_program(slots, obs, budget.whole)).first->second;
}

/// The holders of each coarse grid the observations suggest, as predicates to split ranks by (a group where a coarse
/// level's holders exchange among themselves while the ranks that hold none receive its data from their neighbours).
std::vector<RankPredicate> holder_predicates(std::span<const ListObservation* const> obs) {
  std::vector<RankPredicate> out;
  for (const Frame f : kFrames) {
    if (frame_dims(f) < 2) continue;
    for (const GridLayout& g : suggested_grains(f, obs, GridLayout{})) {
      // A grain of 1 is held by one rank: r == 0 and the like say it more simply.
      if (g.grain > 1) out.push_back(holders_predicate(f, g));
    }
  }
  return out;
}

/// The program of the ranks a holders predicate selects: on the predicate's coarse grid, where the holders' steps
/// count holders (they all call, so their own calls suggest no grain), else in any frame (learn_program()).
std::optional<Program> learn_on_holders(int slots, std::span<const ListObservation* const> in,
                                        const RankPredicate& when, const WholeAt& whole) {
  std::optional<Program> best;
  std::pair<std::size_t, int> best_key;
  const auto consider = [&](std::optional<Program> p) {
    if (!p) return;
    const std::pair<std::size_t, int> key{p->terms.size(), description_length(*p)};
    if (!best || key < best_key) {
      best = std::move(p);
      best_key = key;
    }
  };
  for (const Frame f : kFrames) {
    if (frame_dims(f) != frame_dims(when.frame)) continue;
    GridLayout layout = when.layout;
    consider(learn_in_frame(Space{f, layout}, slots, in, whole));
    layout.self_on_unit_side = true;
    if (frame_periodic(f)) consider(learn_in_frame(Space{f, layout}, slots, in, whole));
  }
  consider(learn_program(slots, in, whole));
  return best;
}

/// Drops each case whose ranks the cases after it describe as well (r == n/2 sending to 0 where the last case's
/// r & (r - 1) says the same at every fitted n): a class that only restates the general rule on the fitted counts
/// would decide the ranks where the two part.
void drop_redundant_cases(std::vector<Pattern::Case>& cases, std::span<const ListObservation* const> obs) {
  for (std::size_t i = 0; i + 1 < cases.size();) {
    std::vector<Pattern::Case> without = cases;
    without.erase(without.begin() + static_cast<std::ptrdiff_t>(i));
    if (reproduces(Pattern{without}, obs)) {
      cases = std::move(without);
    } else {
      ++i;
    }
  }
}

/// How a list of cases describes its ranks, briefest first: cases, those with laws in n, then their length.
std::tuple<std::size_t, std::size_t, int> cases_cost(const std::vector<Pattern::Case>& cases) {
  std::size_t varying = 0;
  int length = 0;
  for (const Pattern::Case& c : cases) {
    varying += constant_in_n(c.program) ? 0 : 1;
    length += description_length(c.program);
  }
  return {cases.size(), varying, length};
}

std::optional<std::vector<Pattern::Case>> learn_cases(int slots, std::span<const ListObservation* const> obs, int depth,
                                                      SearchBudget& budget) {
  if (const std::optional<Program>& p = program_of(slots, obs, budget)) {
    return std::vector<Pattern::Case>{{RankPredicate{}, *p}};
  }
  if (depth == 0) {
    std::vector<const ListObservation*> key(obs.begin(), obs.end());
    std::sort(key.begin(), key.end());
    auto found = budget.expressions.find(key);
    if (found == budget.expressions.end()) {
      found = budget.expressions.emplace(std::move(key), learn_expressions(slots, obs, budget)).first;
    }
    if (found->second) return std::vector<Pattern::Case>{{RankPredicate{}, *found->second}};
    return std::nullopt;
  }
  // A predicate that splits the ranks as an earlier one did gives what that one gave: tried once (the holders of a
  // coarse grid each on their own grid, whatever they split).
  std::set<std::vector<bool>> tried;
  const auto split = [&](const RankPredicate& when) -> std::optional<std::vector<Pattern::Case>> {
    const bool holders = when.kind == RankPredicate::Kind::Holds;
    std::vector<const ListObservation*> in;
    std::vector<const ListObservation*> out;
    std::vector<bool> which;
    for (const ListObservation* o : obs) {
      which.push_back(when.holds(o->r, o->n));
      (which.back() ? in : out).push_back(o);
    }
    if (in.empty() || out.empty() || (!holders && !tried.insert(which).second)) return std::nullopt;
    std::optional<Program> first =
        holders ? learn_on_holders(slots, in, when, budget.whole) : program_of(slots, in, budget);
    if (!first) return std::nullopt;
    std::optional<std::vector<Pattern::Case>> rest = learn_cases(slots, out, depth - 1, budget);
    if (!rest) return std::nullopt;
    rest->insert(rest->begin(), Pattern::Case{when, std::move(*first)});
    drop_redundant_cases(*rest, obs);
    return rest;
  };
  // Where some ranks make no calls, the holders of a coarse grid are the likeliest class; of the grids (frames and
  // grains) that split the ranks, the one that describes them most briefly (the phase's 3-D grid with constant
  // steps, not a 2-D one whose steps are laws in n at 4 to 32 ranks).
  std::optional<std::vector<Pattern::Case>> best;
  for (const RankPredicate& when : holder_predicates(obs)) {
    std::optional<std::vector<Pattern::Case>> cases = split(when);
    if (cases && (!best || cases_cost(*cases) < cases_cost(*best))) best = std::move(cases);
  }
  if (best) return best;
  // Of the rank classes that describe the ranks, the briefest: the first that fits may be a class that agrees with
  // the code's own only on the fitted counts (the first row of a grid where the code means its first column: the
  // same ranks while the grid is square), and the ranks it leaves then need laws that hold only there.
  for (const RankPredicate& when : rank_predicates()) {
    std::optional<std::vector<Pattern::Case>> cases = split(when);
    if (cases && (!best || cases_cost(*cases) < cases_cost(*best))) best = std::move(cases);
    // Cases constant in n leave nothing that holds on the fitted counts only: the search stops there.
    if (best && std::get<1>(cases_cost(*best)) == 0) break;
  }
  return best;
}

}  // namespace

std::vector<std::array<std::int64_t, 3>> suggested_boxes(Frame frame, std::span<const ListObservation> observations) {
  std::vector<const ListObservation*> obs;
  for (const ListObservation& o : observations) obs.push_back(&o);
  return boxes_of(frame, obs);
}

std::optional<Pattern> learn_constant_pattern(std::span<const ListObservation> observations, int slots, Frame frame,
                                              const std::array<std::int64_t, 3>& box, const WholeAt& whole) {
  std::optional<Pattern> p = learn_pattern_on(observations, slots, frame, box, whole);
  if (p && constant_in_n(p->cases.front().program)) return p;
  return std::nullopt;
}

std::optional<Pattern> learn_pattern_on(std::span<const ListObservation> observations, int slots, Frame frame,
                                        const std::array<std::int64_t, 3>& box, const WholeAt& whole) {
  std::vector<const ListObservation*> obs;
  for (const ListObservation& o : observations) obs.push_back(&o);
  std::optional<Program> any;
  for (const GridLayout& layout : layouts_on(frame, obs, box)) {
    std::optional<Program> p = learn_in_frame(Space{frame, layout}, slots, obs, whole);
    if (p && constant_in_n(*p)) return Pattern{{{RankPredicate{}, std::move(*p)}}};
    if (p && !any) any = std::move(p);
  }
  if (any) return Pattern{{{RankPredicate{}, std::move(*any)}}};
  return std::nullopt;
}

std::optional<Pattern> learn_pattern(std::span<const ListObservation> observations, int slots, std::string* why,
                                     const SearchOptions& search, const WholeAt& whole) {
  if (slots < 1 || slots > 2) throw ModelError("a communication has one or two peers, not " + std::to_string(slots));
  std::vector<const ListObservation*> obs;
  for (const ListObservation& o : observations) obs.push_back(&o);
  // Up to three rank classes: two predicates; expressions last, for all ranks or for the last class.
  // One expression for every rank is preferred to rank classes (a mirror n - 1 - r rather than offsets with
  // two special ranks).
  SearchBudget budget{search, whole};
  std::optional<std::vector<Pattern::Case>> cases = learn_cases(slots, obs, 2, budget);
  if (!cases || cases->size() > 1) {
    if (std::optional<Program> p = learn_expressions(slots, obs, budget)) cases = {{RankPredicate{}, std::move(*p)}};
  }
  if (!cases) {
    if (why != nullptr) {
      *why =
          "no frame (offset, ring, grid, torus, xor, absolute, transpose) with single or repeated terms, for all "
          "ranks or split by rank class, and no small integer expression in r and n reproduces every rank's peers";
      if (budget.exhausted) {
        *why += " (an expression search stopped at its budget of " + std::to_string(search.max_candidates) +
                " candidates; `p3s model --search-candidates` raises it)";
      }
    }
    return std::nullopt;
  }
  return Pattern{std::move(*cases)};
}

}  // namespace p3s::modeler
