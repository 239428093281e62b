// SPDX-License-Identifier: BSD-3-Clause
// Exchanges along a side no fitted run had longer than 2, made anew as the exchanges next to them along a longer
// side make them, where those make the same calls on every rank of every fitted run: on a side of 2 a step either
// way reaches the same rank, so the fit could take either order and either direction.
#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>

#include "p3s/error.hpp"
#include "p3s/modeler/dims.hpp"
#include "p3s/modeler/pattern.hpp"
#include "side_moves.hpp"

namespace p3s::modeler::detail {
namespace {

/// A moved law of sizes is taken where it misses the sizes seen along the target by at most this, or half their spread
/// over the ranks, if more.
constexpr double kMovedSizeTolerance = 0.05;

/// Whether group g is one of the block's.
bool inside(const Block& b, std::int64_t g) {
  return g >= static_cast<std::int64_t>(b.first) && g <= static_cast<std::int64_t>(b.last);
}

/// Whether a loop of the phase holds a group of the block.
bool overlaps_loop(const PhaseModel& pm, const Block& b) {
  return std::any_of(pm.loops.begin(), pm.loops.end(),
                     [&](const PhaseLoop& l) { return l.first <= b.last && l.first + l.groups > b.first; });
}

/// The blocks stepping along dimension d of the phase's grid, periodic or not (on a side of 2 a step either way reaches
/// the same rank, so the fit may have taken either), on any layout (a call only the ranks at one end of the side make
/// is a step of it too).
std::vector<Block> spans_along(const std::vector<GroupModel>& groups, const GridSeen& seen, std::size_t d) {
  std::vector<Block> out = blocks_of(groups, seen, true, true);
  std::erase_if(out, [d](const Block& b) { return b.axis != d; });
  return out;
}

/// One call as a rank makes it: the function and its peers (none for a completion).
using MadeCall = std::pair<mpi::Function, std::array<std::int64_t, 2>>;

/// The calls rank r makes at n in groups[first..] (a completion: one per request of the groups it completes started
/// at the rank, one for them all, or as many as its count), with the group (its index from `first`) of each;
/// nullopt where a law cannot be evaluated there.
std::optional<std::vector<std::pair<MadeCall, std::size_t>>> calls_made(std::span<const GroupModel> groups,
                                                                        std::size_t first, std::int64_t r,
                                                                        std::int64_t n) {
  std::vector<std::pair<MadeCall, std::size_t>> out;
  std::map<std::size_t, std::size_t> started;  // group -> requests started at r
  try {
    for (std::size_t k = 0; k < groups.size(); ++k) {
      const GroupModel& g = groups[k];
      if (g.role == Role::PointToPoint) {
        for (const Entry& e : g.pattern.generate(r, n)) {
          out.push_back({{g.function, e.peers}, k});
          started[first + k] += g.starts_requests ? 1 : 0;
        }
        continue;
      }
      std::set<std::size_t> of;
      for (const std::vector<RequestRef>& call : g.completes) {
        for (const RequestRef& ref : call) of.insert(ref.group);
      }
      std::size_t requests = 0;
      for (const std::size_t h : of) requests += started.contains(h) ? started.at(h) : 0;
      const std::optional<std::int64_t> count = g.count.integer_at(n);
      if (!g.per_request && !g.per_batch && !count) return std::nullopt;
      const std::size_t calls = g.per_request ? requests
                                : g.per_batch ? (requests > 0 ? 1 : 0)
                                              : static_cast<std::size_t>(std::max<std::int64_t>(*count, 0));
      for (std::size_t c = 0; c < calls; ++c) out.push_back({{g.function, {-1, -1}}, k});
    }
  } catch (const ModelError&) {
    return std::nullopt;
  }
  return out;
}

/// Where `copies` (numbered from span.first) make what groups[span] made on every rank at every fitted n: each group of
/// the span (its index from span.first) -> the copy that made its calls on most ranks (a rank's burst before a call
/// goes with the call); nullopt where they do not make the same calls.
std::optional<std::map<std::size_t, std::size_t>> make_the_same(std::span<const GroupModel> copies,
                                                                const std::vector<GroupModel>& groups,
                                                                const Block& span,
                                                                const std::vector<std::int64_t>& fitted_n) {
  const std::span<const GroupModel> was(groups.data() + span.first, span.last + 1 - span.first);
  std::map<std::size_t, std::map<std::size_t, std::size_t>> votes;  // span group -> copy -> calls
  for (const std::int64_t n : fitted_n) {
    for (std::int64_t r = 0; r < n; ++r) {
      const auto made = calls_made(copies, span.first, r, n);
      const auto seen = calls_made(was, span.first, r, n);
      if (!made || !seen || made->size() != seen->size()) return std::nullopt;
      for (std::size_t i = 0; i < made->size(); ++i) {
        if ((*made)[i].first != (*seen)[i].first) return std::nullopt;
        ++votes[(*seen)[i].second][(*made)[i].second];
      }
    }
  }
  std::map<std::size_t, std::size_t> out;
  for (const auto& [g, to] : votes) {
    out[g] =
        std::max_element(to.begin(), to.end(), [](const auto& x, const auto& y) { return x.second < y.second; })->first;
  }
  return out;
}

/// A law of sizes with the sides of dimensions d0 and d1 of a grid of `dims` dimensions exchanged (unchanged where it
/// follows neither, or a side of another grid).
RegressionLaw swapped_sides(RegressionLaw law, std::size_t d0, std::size_t d1, int dims) {
  const std::optional<std::pair<int, std::size_t>> side = side_of(law.basis);
  if (side && side->first == dims && (side->second == d0 || side->second == d1)) {
    law.basis = on_side(law.basis, side->second == d0 ? d1 : d0);
  }
  return law;
}

/// The sizes of a message of the source's exchange moved from dimension d0 to d1, where the source's law is c * g or
/// c / g of a side of the grid (a face across d0 follows the sides along the others): the same law of the side moved
/// likewise, its coefficient taken from the target's own messages (`own`, at the fitted n where it makes calls);
/// nullopt where the law is of another form or the moved one misses the target's sizes by more than they spread.
std::optional<RegressionLaw> moved_bytes(const RegressionLaw& source, const RegressionLaw& own, double spread,
                                         std::size_t d0, std::size_t d1, int dims,
                                         const std::vector<std::int64_t>& at) {
  const bool scaled = source.form == RegressionForm::Linear || source.form == RegressionForm::Inverse;
  const std::optional<std::pair<int, std::size_t>> side = side_of(source.basis);
  if (!scaled || source.offset != 0 || !side || side->first != dims || at.empty()) return std::nullopt;
  RegressionLaw unit = swapped_sides(source, d0, d1, dims);
  unit.coefficient = 1;
  double sum = 0;
  for (const std::int64_t n : at) sum += own.value_at(static_cast<double>(n)) / unit.value_at(static_cast<double>(n));
  RegressionLaw out = unit;
  out.coefficient = sum / static_cast<double>(at.size());
  out.max_rel_error = 0;
  out.mean_rel_error = 0;
  out.loo_rel_error = std::nullopt;
  for (const std::int64_t n : at) {
    const double want = own.value_at(static_cast<double>(n));
    const double err = std::abs(out.value_at(static_cast<double>(n)) - want) / std::abs(want);
    if (!std::isfinite(err)) return std::nullopt;
    out.max_rel_error = std::max(out.max_rel_error, err);
    out.mean_rel_error += err / static_cast<double>(at.size());
  }
  if (out.max_rel_error > std::max(kMovedSizeTolerance, spread / 2)) return std::nullopt;
  return out;
}

/// The fitted n where a group makes calls (none where a law cannot be evaluated).
std::vector<std::int64_t> making_calls(const GroupModel& g, const std::vector<std::int64_t>& fitted_n) {
  std::vector<std::int64_t> at;
  try {
    for (const std::int64_t n : fitted_n) {
      if (!silent_at(g, {n})) at.push_back(n);
    }
  } catch (const ModelError&) {
    return {};
  }
  return at;
}

/// A copy moved from d0 to d1 given the sizes and communicator of `donor`, one of `own`, the target's messages of its
/// function shaped as the copy (same_terms): each slot's law is the source's moved (moved_bytes) where it fits the
/// sizes of one of them (the one it fits best: a group the fit merged from both edges' calls may hold sizes of another
/// kind), else the donor's.
void take_sizes(GroupModel& copy, const GroupModel& donor, const std::vector<const GroupModel*>& own, std::size_t d0,
                std::size_t d1, int dims, const std::vector<std::int64_t>& fitted_n) {
  const std::vector<std::vector<TermTraits>> source = copy.traits;
  copy.traits = donor.traits;
  copy.comm = donor.comm;
  for (std::size_t t = 0; t < copy.traits.front().size() && t < source.front().size(); ++t) {
    TermTraits& tt = copy.traits.front()[t];
    for (std::size_t slot = 0; slot < tt.bytes.size(); ++slot) {
      if (tt.block[slot]) continue;  // sizes that follow each rank's block: the donor's own law of them stands
      std::optional<RegressionLaw> best;
      for (const GroupModel* g : own) {
        const TermTraits& theirs = g->traits.front()[t];
        const std::optional<RegressionLaw> law =
            moved_bytes(source.front()[t].bytes[slot], theirs.bytes[slot], theirs.rank_spread[slot], d0, d1, dims,
                        making_calls(*g, fitted_n));
        if (law && (!best || law->max_rel_error < best->max_rel_error)) best = law;
      }
      if (best) tt.bytes[slot] = *best;
    }
  }
}

/// A copy's own laws of sizes moved from d0 to d1, as the exchange it copies would carry them along d1: the sides they
/// follow and the dimension a face crosses exchanged.
void moved_sizes(GroupModel& copy, std::size_t d0, std::size_t d1, int dims) {
  for (std::vector<TermTraits>& terms : copy.traits) {
    for (TermTraits& tt : terms) {
      for (RegressionLaw& law : tt.bytes) law = swapped_sides(law, d0, d1, dims);
    }
  }
  swap_faces(copy, d0, d1);
}

/// The groups of `sources` (blocks along one dimension, in order) copied and moved to the span's dimension, to stand
/// at span.first on: their completions refer to the copies (false where one completes a request of another group).
/// Each point-to-point copy takes the sizes and communicator of the span's own messages of its function shaped alike
/// (its k-th of them, cyclically; take_sizes): what the exchange carries along that dimension was seen; without
/// any, its own laws of sizes with the sides moved.
bool moved_copies(const std::vector<GroupModel>& groups, const std::vector<Block>& sources, const Block& span, int dims,
                  const std::vector<std::int64_t>& fitted_n, std::vector<GroupModel>& out) {
  std::map<mpi::Function, std::vector<const GroupModel*>> own;
  for (std::size_t g = span.first; g <= span.last; ++g) {
    if (groups[g].role == Role::PointToPoint) own[groups[g].function].push_back(&groups[g]);
  }
  std::map<mpi::Function, std::size_t> taken;
  std::map<std::size_t, std::size_t> copy_of;  // a source group -> its copy's index in the phase
  for (const Block& b : sources) {
    for (std::size_t g = b.first; g <= b.last; ++g) {
      GroupModel copy = groups[g];
      if (copy.role == Role::PointToPoint) {
        copy.pattern = swapped(std::move(copy.pattern), b.axis, span.axis);
        std::vector<const GroupModel*> mine = own[copy.function];
        std::erase_if(mine, [&](const GroupModel* o) { return !same_terms(copy, *o); });
        if (!mine.empty()) {
          take_sizes(copy, *mine[taken[copy.function]++ % mine.size()], mine, b.axis, span.axis, dims, fitted_n);
        } else {
          moved_sizes(copy, b.axis, span.axis, dims);
        }
      } else if (!copy.per_request && !copy.per_batch) {
        copy.count = swapped(copy.count, b.axis, span.axis, dims);
      }
      copy_of[g] = span.first + out.size();
      out.push_back(std::move(copy));
    }
  }
  for (GroupModel& copy : out) {
    for (std::vector<RequestRef>& call : copy.completes) {
      for (RequestRef& ref : call) {
        if (!copy_of.contains(ref.group)) return false;
        ref.group = static_cast<std::uint32_t>(copy_of.at(ref.group));
      }
    }
  }
  return true;
}

/// Where two bursts of the span's groups go to one copy's place (two groups whose calls one copy makes), the one of
/// most work at the largest fitted n stays (the computation between exchanges, not a packing burst); returns how
/// many were left out.
std::size_t one_burst_a_place(WorkClass& w, const Renumbering& numbers, const Block& span, std::int64_t largest_n) {
  using Place = std::tuple<std::size_t, std::uint32_t, std::uint32_t>;
  std::map<Place, std::size_t> kept;  // place -> the burst kept there
  std::set<std::size_t> dropped;
  for (std::size_t k = 0; k < w.bursts.size(); ++k) {
    const BurstModel& b = w.bursts[k];
    if (!inside(span, b.group)) continue;
    const Place place{numbers.old_to_new[static_cast<std::size_t>(b.group)], b.pattern_case, b.term};
    const auto [it, fresh] = kept.emplace(place, k);
    if (fresh) continue;
    const auto work = [&](std::size_t i) { return w.bursts[i].work.at(largest_n, w.largest_run_ranks, 1); };
    std::size_t loser = k;
    if (work(k) > work(it->second)) std::swap(it->second, loser);
    dropped.insert(loser);
  }
  std::size_t k = 0;
  std::erase_if(w.bursts, [&](const BurstModel&) { return dropped.contains(k++); });
  return dropped.size();
}

/// The phase with the span's groups replaced by `copies` (numbered from span.first); false, the phase untouched, where
/// a loop or a group outside the span refers into it. A group's bursts go to the copy that made its calls (`took`,
/// from make_the_same), before its first term where the copy has not the burst's; those of a group with none, or
/// that meet a burst of more work at one place, are left out, counted in `left_out` (their work with them; the
/// class's compute-time law still gives its time to the positions that stay).
bool replace_span(PhaseModel& pm, const Block& span, std::vector<GroupModel> copies,
                  const std::map<std::size_t, std::size_t>& took, std::int64_t largest_n, std::size_t& left_out) {
  if (overlaps_loop(pm, span)) return false;
  const std::size_t old_size = pm.groups.size();
  const std::size_t span_size = span.last + 1 - span.first;
  Renumbering numbers;
  numbers.old_to_new.assign(old_size, 0);
  std::set<std::int32_t> unmatched;
  for (std::size_t g = 0; g < old_size; ++g) {
    if (g < span.first) {
      numbers.old_to_new[g] = g;
    } else if (g > span.last) {
      numbers.old_to_new[g] = g - span_size + copies.size();
      for (const std::vector<RequestRef>& call : pm.groups[g].completes) {
        for (const RequestRef& ref : call) {
          if (inside(span, ref.group)) return false;
        }
      }
    } else if (const auto to = took.find(g - span.first); to != took.end()) {
      numbers.old_to_new[g] = span.first + to->second;
    } else {
      unmatched.insert(static_cast<std::int32_t>(g));
      numbers.old_to_new[g] = span.first;
    }
  }
  for (WorkClass& w : pm.work) {
    left_out += std::erase_if(w.bursts, [&](const BurstModel& b) { return unmatched.contains(b.group); });
    for (BurstModel& b : w.bursts) {
      if (!inside(span, b.group)) continue;
      // A copy has one case and its own terms: a burst before another term of the group goes before its first.
      const GroupModel& to = copies[numbers.old_to_new[static_cast<std::size_t>(b.group)] - span.first];
      if (to.role == Role::PointToPoint && (b.pattern_case >= to.pattern.cases.size() ||
                                            b.term >= to.pattern.cases[b.pattern_case].program.terms.size())) {
        b.pattern_case = 0;
        b.term = 0;
      }
    }
    left_out += one_burst_a_place(w, numbers, span, largest_n);
  }
  std::vector<GroupModel> out(pm.groups.begin(), pm.groups.begin() + static_cast<std::ptrdiff_t>(span.first));
  for (std::size_t k = 0; k < copies.size(); ++k) {
    numbers.made[span.first + k] = span.first + k;  // a copy's completions already name the copies
    out.push_back(std::move(copies[k]));
  }
  out.insert(out.end(), pm.groups.begin() + static_cast<std::ptrdiff_t>(span.last) + 1, pm.groups.end());
  renumber_references(pm, out, numbers, {});
  pm.groups = std::move(out);
  return true;
}

/// The copies' point-to-point patterns of the functions in `functions` with dimension d taken open
/// (GridLayout::open); false where some such pattern has no grid to open, or there is none.
bool open_along(std::vector<GroupModel>& copies, std::size_t d, const std::set<mpi::Function>& functions) {
  bool any = false;
  for (GroupModel& g : copies) {
    if (g.role != Role::PointToPoint || !functions.contains(g.function)) continue;
    for (Pattern::Case& c : g.pattern.cases) {
      if (!frame_periodic(c.program.frame) || d >= static_cast<std::size_t>(frame_dims(c.program.frame))) return false;
      c.program.layout.open = static_cast<std::uint8_t>(c.program.layout.open | (1U << d));
      any = true;
    }
  }
  return any;
}

/// The most MPI functions of one exchange whose choices of open or wrapping are tried together (2^k tries).
constexpr std::size_t kMostOpenChoices = 6;

/// Where the span's dimension does not wrap (MPI_Cart_create's periods): its end ranks made only the calls toward the
/// neighbour they have, which a side of 2 shows as one call where a periodic side makes two. A code may still make
/// some calls of the exchange toward the rank across the end (the counts of what follows, to every neighbour the
/// grid would have if it wrapped), so each MPI function's calls are taken open or wrapping, all of them alike, as
/// the fitted runs' end ranks show: the most functions open first. Opens `copies` as the first choice that makes what
/// the span made on every rank of every fitted run and returns what make_the_same does, with the functions left
/// wrapping in `wrapping`; nullopt (copies as they were) where none does.
std::optional<std::map<std::size_t, std::size_t>> made_open(std::vector<GroupModel>& copies,
                                                            const std::vector<GroupModel>& groups, const Block& span,
                                                            const std::vector<std::int64_t>& fitted_n,
                                                            std::set<mpi::Function>& wrapping) {
  std::vector<mpi::Function> functions;
  for (const GroupModel& g : copies) {
    if (g.role == Role::PointToPoint && std::find(functions.begin(), functions.end(), g.function) == functions.end()) {
      functions.push_back(g.function);
    }
  }
  if (functions.empty()) return std::nullopt;
  // Bit f of a choice opens the f-th function in the exchange's order. Among choices of as many open functions,
  // those that keep the earlier functions wrapping come first; beyond kMostOpenChoices functions, all open only.
  const std::uint32_t all = (1U << std::min(functions.size(), kMostOpenChoices)) - 1;
  std::vector<std::uint32_t> choices;
  for (std::uint32_t mask = all; mask > 0; --mask) choices.push_back(mask);
  if (functions.size() > kMostOpenChoices) choices = {all};
  std::stable_sort(choices.begin(), choices.end(),
                   [](std::uint32_t a, std::uint32_t b) { return std::popcount(a) > std::popcount(b); });
  for (const std::uint32_t mask : choices) {
    std::set<mpi::Function> open;
    std::set<mpi::Function> wrap;
    for (std::size_t f = 0; f < functions.size(); ++f) {
      (mask == all || ((mask >> f) & 1U) != 0 ? open : wrap).insert(functions[f]);
    }
    std::vector<GroupModel> tried = copies;
    if (!open_along(tried, span.axis, open)) continue;
    if (auto took = make_the_same(tried, groups, span, fitted_n)) {
      copies = std::move(tried);
      wrapping = std::move(wrap);
      return took;
    }
  }
  return std::nullopt;
}

/// ", its <functions> calls still reaching the rank across the end" for the functions left wrapping, or nothing.
std::string wrapping_note(const std::set<mpi::Function>& wrapping) {
  std::string out;
  for (const mpi::Function f : wrapping) out += (out.empty() ? "" : " ") + std::string(mpi::name(f));
  return out.empty() ? out : ", its " + out + " calls still reaching the rank across the end";
}

/// The places a block can be cut without parting a completion from its requests: first, last + 1, and every group
/// before which no completion completes a request of the other side.
std::vector<std::size_t> closed_cuts(const std::vector<GroupModel>& groups, const Block& b) {
  std::vector<std::size_t> out;
  for (std::size_t c = b.first; c <= b.last + 1; ++c) {
    bool closed = true;
    for (std::size_t g = b.first; g <= b.last && closed; ++g) {
      for (const std::vector<RequestRef>& call : groups[g].completes) {
        for (const RequestRef& ref : call) closed = closed && (g < c) == (ref.group < c);
      }
    }
    if (closed) out.push_back(c);
  }
  return out;
}

/// The candidates for a span along d1, the largest first: an end of the block just before it and a beginning of the
/// one just after it (either may be empty, not both), each whole exchanges, along dimensions that were longer than 2
/// (a loop over the dimensions, forward then back, puts exchanges along d1 between them).
std::vector<std::vector<Block>> sources_for(const PhaseModel& pm, const std::vector<Block>& blocks, const Block& span) {
  const std::vector<GroupModel>& groups = pm.groups;
  const GridSeen& seen = *pm.grid_seen;
  // A block inside a loop, or of a loop's repeated calls, is made as often as the loop runs: no copy of it stands
  // outside it.
  const auto in_loop = [&](const Block& b) {
    for (std::size_t g = b.first; g <= b.last; ++g) {
      if (groups[g].iterations) return true;
    }
    return overlaps_loop(pm, b);
  };
  std::optional<Block> before;
  std::optional<Block> after;
  for (const Block& b : blocks) {
    if (b.axis == span.axis || seen.longest[b.axis] <= 2 || in_loop(b)) continue;
    if (b.last + 1 == span.first) before = b;
    if (b.first == span.last + 1) after = b;
  }
  const std::vector<std::size_t> starts = before ? closed_cuts(groups, *before) : std::vector<std::size_t>{};
  const std::vector<std::size_t> ends = after ? closed_cuts(groups, *after) : std::vector<std::size_t>{};
  std::vector<std::vector<Block>> out;
  for (std::size_t i = 0; i <= starts.size(); ++i) {
    for (std::size_t j = 0; j <= ends.size(); ++j) {
      std::vector<Block> sources;
      if (i < starts.size() && starts[i] <= before->last)
        sources.push_back(Block{starts[i], before->last, before->axis});
      if (j < ends.size() && ends[j] > after->first) sources.push_back(Block{after->first, ends[j] - 1, after->axis});
      if (!sources.empty()) out.push_back(std::move(sources));
    }
  }
  const auto size = [](const std::vector<Block>& v) {
    std::size_t n = 0;
    for (const Block& b : v) n += b.last + 1 - b.first;
    return n;
  };
  std::stable_sort(out.begin(), out.end(), [&](const auto& a, const auto& b) { return size(a) > size(b); });
  out.erase(std::unique(out.begin(), out.end(),
                        [](const auto& a, const auto& b) {
                          return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const Block& x, const Block& y) {
                            return x.first == y.first && x.last == y.last;
                          });
                        }),
            out.end());
  return out;
}

}  // namespace

/// The exchanges along a dimension no fitted run had longer than 2 made anew as the exchanges next to them along a
/// dimension that was longer, where those, moved to it, make what they made on every rank of every fitted run: a
/// side of 2 shows neither the order of the calls either way nor which of them a longer side adds. One note per
/// exchange made anew.
std::vector<std::string> remake_exchanges(PhaseModel& pm, const std::vector<std::int64_t>& fitted_n) {
  std::vector<std::string> notes;
  GridSeen& seen = *pm.grid_seen;
  const int dims = frame_dims(seen.frame);
  for (std::size_t d1 = 0; d1 < static_cast<std::size_t>(dims); ++d1) {
    if (seen.longest[d1] > 2) continue;
    // Spans from group `from` on (those made anew are not looked at again).
    for (std::size_t from = 0;;) {
      const std::vector<Block> spans = spans_along(pm.groups, seen, d1);
      const auto next = std::find_if(spans.begin(), spans.end(), [from](const Block& b) { return b.first >= from; });
      if (next == spans.end()) break;
      const Block span = *next;
      from = span.last + 1;
      // An exchange no fitted run made (one added along the dimension) was inferred whole already.
      bool seen_made = false;
      for (std::size_t g = span.first; g <= span.last; ++g) {
        seen_made =
            seen_made || (pm.groups[g].role == Role::PointToPoint && !making_calls(pm.groups[g], fitted_n).empty());
      }
      if (!seen_made) continue;
      for (const std::vector<Block>& sources : sources_for(pm, blocks_of(pm.groups, seen, false, true), span)) {
        std::vector<GroupModel> copies;
        if (!moved_copies(pm.groups, sources, span, dims, fitted_n, copies)) continue;
        std::optional<std::map<std::size_t, std::size_t>> took = make_the_same(copies, pm.groups, span, fitted_n);
        std::set<mpi::Function> wrapping;
        const bool open = !took && frame_periodic(seen.frame) &&
                          (took = made_open(copies, pm.groups, span, fitted_n, wrapping)).has_value();
        // Where a longer side made no more calls than a side of 2, the span's own fit holds what a longer side makes,
        // unless its dimension is open, which the sides of 2 along the others could not show.
        const bool adds =
            std::all_of(sources.begin(), sources.end(), [&](const Block& b) { return seen.longer_adds_calls[b.axis]; });
        if (!adds && !open) continue;
        if (!took) continue;
        const std::size_t made = copies.size();
        std::size_t left_out = 0;
        if (!replace_span(pm, span, std::move(copies), *took, fitted_n.back(), left_out)) continue;
        from = span.first + made;
        seen.follows[d1] = static_cast<int>(sources.front().axis);
        notes.push_back("the exchange of groups " + std::to_string(span.first) + "-" + std::to_string(span.last) +
                        " along dimension " + std::to_string(d1) + " (a side of at most 2 in every fitted run) is " +
                        "made as the exchange" + (sources.size() > 1 ? "s" : "") + " next to it along dimension " +
                        std::to_string(sources.front().axis) + " (groups " + std::to_string(sources.front().first) +
                        "-" + std::to_string(sources.back().last) + "), which make the same calls on every rank " +
                        "of every fitted run" +
                        (open ? std::string(" with dimension ") + std::to_string(d1) +
                                    " open (a rank at either end has no neighbour beyond it, as the fitted runs' end " +
                                    "ranks show" + wrapping_note(wrapping) + ")"
                              : std::string()) +
                        ": their order and the calls a longer side adds are inferred, not seen" +
                        (left_out == 0 ? std::string()
                                       : "; " + std::to_string(left_out) +
                                             (left_out == 1 ? " burst before a call it no longer makes is"
                                                            : " bursts before calls it no longer makes are") +
                                             " left out, with its work (its class's compute-time law still " +
                                             "gives the positions that stay their time)"));
        break;
      }
    }
  }
  return notes;
}

}  // namespace p3s::modeler::detail
