// SPDX-License-Identifier: BSD-3-Clause
// The by-rank phase method. Why per location first: the run's tick sequence mixes, at every tick, the events
// of all ranks, so in a pipeline (ranks enter a sweep one after the other) a tick holds events of different
// iterations and the fill and drain of every sweep are ticks of their own, whose number depends on n; a
// location's own sequence of calls is the program's loop structure whatever the skew between ranks.
//
// Per location:
//  1. its calls are folded (find_phases) with the calls that follow a compute burst as anchors, so the units
//     are the innermost loops whose iterations compute: a loop of calls without computation (the swaps of a
//     halo exchange, a butterfly's steps, an exchange unrolled by hand) is part of the unit that holds it, as
//     an MD code's step holds its six swaps. The call structure is exact; the timing only votes (a loop is a
//     unit when at least half of its iterations hold an anchor), so a few bursts misjudged on a loaded machine
//     change nothing;
//  2. every loop's iterations begin after a compute burst, at the same call for every loop of one body (from
//     the rotation whose loops hold the most iterations, the first call after computation). The folding
//     starts a loop where its repetition starts, which depends on the calls before it, so the same loop after
//     two different stretches would otherwise be two rotations of one body (two phases, per location another);
//  3. the calls between loops are steps too, each beginning after a compute burst: an MD code's plain steps
//     are a loop, and the steps that re-neighbour or write output between them are steps of their own kinds,
//     cut where the plain steps are.
// Then the locations' occurrences are joined by position: occurrence k of the run is the k-th of every
// location. Where the counts differ (steps whose calls depend on the data: atoms that cross), each location's
// occurrences are regrouped at the boundaries of the location with the fewest, by logical time.
// Units that overlap in logical time across locations are a pipeline (a rank begins its block k + 1 before
// another begins block k); the program's iteration is then the phase: the outermost loops' iterations where
// every location has as many, else the calls between the collectives of all processes (the points where all
// ranks agree, such as a convergence test per iteration).
#include "rank_phases.hpp"

#include "main_loop.hpp"
#include "step_cuts.hpp"

#include <algorithm>
#include <bit>
#include <map>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "p3s/hash.hpp"

namespace p3s::analyzer {
namespace {

/// The hash of a run of calls: kCallsSeed extended by every call's shape in order.
constexpr std::uint64_t kCallsSeed = mix64(kGoldenGamma);
constexpr std::uint64_t with_call(std::uint64_t h, std::uint64_t shape) noexcept {
  return mix64(h ^ shape) + kGoldenGamma;
}

/// Marks the shape of a call that follows computation.
constexpr std::uint64_t kAnchored = mix64(kGoldenGamma * 3);

/// The share of occurrences that overlap across locations above which the units are pipelined.
constexpr double kPipelinedShare = 0.25;

/// The least number of locations that make the same calls for their vote to decide which follow computation.
constexpr std::size_t kVoters = 3;

/// A fifth of the locations may differ in a combination that is still the same phase.
constexpr double kDifferingShare = 0.2;

/// The least share of calls two instances on one location have in common to be alike (DESIGN: at least 80 % of
/// the events similar make one phase).
constexpr double kAlikeShare = 0.8;

/// Steps whose peers are drawn anew: more sets of peers than a step of a grid code has directions (one way along
/// one of three dimensions), or at least kDrawnPeerSets that reach every other rank, in a run of at least
/// kDrawnPeersLeast processes (at 2 and 3 any set of peers reaches every other rank).
constexpr std::size_t kGridDirections = 6;
constexpr std::size_t kDrawnPeerSets = 3;
constexpr std::int32_t kDrawnPeersLeast = 4;

struct LocationOccurrences {
  std::vector<std::uint64_t> phase;     ///< the location's own phases: the hash of the occurrence's operations
  std::vector<std::uint64_t> first_op;  ///< first operation of each occurrence
  /// Per own phase, what its likeness is judged on.
  struct Calls {
    std::uint64_t kinds = 0;            ///< the hash of its calls' types in order
    std::vector<std::uint64_t> shapes;  ///< its calls' shapes sorted
  };
  std::unordered_map<std::uint64_t, Calls> calls;

  /// What tells its occurrences apart: the calls' shapes with their compute marks, without them, or without them
  /// and with their messages' size classes.
  enum class Told : std::uint8_t { Marked, Plain, Sized };
  Told told = Told::Marked;

  /// Calls [begin, end) of `seq` as an occurrence, told apart as `told` says.
  void add(const CallSequence& seq, std::uint64_t begin, std::uint64_t end);
  /// Occurrence k of `from` (a location's other occurrences) as its next one.
  void add_as(const LocationOccurrences& from, std::size_t k);
  /// Whether two of the location's phases are alike (DESIGN): the same calls' types in the same order, and at
  /// least kAlikeShare of the calls the same (peers included).
  [[nodiscard]] bool alike(std::uint64_t a, std::uint64_t b) const;
};

/// A stretch of one location's calls [begin, end): a loop's iterations of `period` calls each, or (period 0)
/// the calls between loops.
struct Stretch {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::uint64_t period = 0;
  bool piece = false;  ///< calls a loop's new cut left over, joined to the stretch next to them
};

/// The hash of calls [begin, end) as `values` describe them (their shapes, or their types).
template <typename T>
std::uint64_t hash_calls(const std::vector<T>& values, std::uint64_t begin, std::uint64_t end) {
  std::uint64_t h = kCallsSeed;
  for (std::uint64_t i = begin; i < end; ++i) h = with_call(h, values[i]);
  return h;
}

void LocationOccurrences::add(const CallSequence& seq, std::uint64_t begin, std::uint64_t end) {
  const auto shape = [&](std::uint64_t i) {
    switch (told) {
      case Told::Plain:
        return seq.plain_shape(i);
      case Told::Sized:
        return seq.sized()[i];
      case Told::Marked:
        break;
    }
    return seq.shapes()[i];
  };
  std::uint64_t h = kCallsSeed;
  for (std::uint64_t i = begin; i < end; ++i) h = with_call(h, shape(i));
  phase.push_back(h);
  first_op.push_back(begin);
  if (calls.contains(h)) return;
  Calls c;
  c.kinds = hash_calls(seq.regions(), begin, end);
  for (std::uint64_t i = begin; i < end; ++i) c.shapes.push_back(shape(i));
  std::sort(c.shapes.begin(), c.shapes.end());
  calls.emplace(h, std::move(c));
}

void LocationOccurrences::add_as(const LocationOccurrences& from, std::size_t k) {
  phase.push_back(from.phase[k]);
  first_op.push_back(from.first_op[k]);
  calls.try_emplace(from.phase[k], from.calls.at(from.phase[k]));
}

bool LocationOccurrences::alike(std::uint64_t a, std::uint64_t b) const {
  if (a == b) return true;
  const Calls& ca = calls.at(a);
  const Calls& cb = calls.at(b);
  if (ca.kinds != cb.kinds) return false;
  const std::vector<std::uint64_t>& x = ca.shapes;
  const std::vector<std::uint64_t>& y = cb.shapes;
  std::size_t common = 0;
  for (std::size_t i = 0, j = 0; i < x.size() && j < y.size();) {
    if (x[i] == y[j]) {
      ++common;
      ++i;
      ++j;
    } else if (x[i] < y[j]) {
      ++i;
    } else {
      ++j;
    }
  }
  return static_cast<double>(common) >= kAlikeShare * static_cast<double>(std::max(x.size(), y.size()));
}

/// The folded occurrences as stretches: consecutive occurrences of one phase are a loop, and the occurrences
/// between loops are one stretch.
std::vector<Stretch> loop_stretches(const PhaseStructure& ps) {
  std::vector<Stretch> out;
  const std::size_t count = ps.occurrences.size();
  for (std::size_t o = 0; o < count; ++o) {
    const PhaseOccurrence& occ = ps.occurrences[o];
    const std::uint64_t end = occ.first_tick + occ.ticks;
    const bool after_itself = o > 0 && ps.occurrences[o - 1].phase == occ.phase;
    const bool before_itself = o + 1 < count && ps.occurrences[o + 1].phase == occ.phase;
    if (after_itself || (!before_itself && !out.empty() && out.back().period == 0)) {
      out.back().end = end;  // a loop's next iteration, or calls between loops
    } else {
      out.push_back({occ.first_tick, end, before_itself ? occ.ticks : 0});
    }
  }
  return out;
}

/// A loop's body up to rotation: the hash of its least rotation, and where the loop's body starts in it.
struct Cycle {
  std::uint64_t key = 0;
  std::uint64_t offset = 0;
};

Cycle cycle_of(const std::vector<std::uint64_t>& shapes, const Stretch& s) {
  const std::span<const std::uint64_t> body(shapes.data() + s.begin, s.period);
  const std::size_t least = least_rotation(body);
  std::uint64_t h = kCallsSeed;
  for (std::size_t i = 0; i < body.size(); ++i) h = with_call(h, body[(least + i) % body.size()]);
  return {h, (s.period - least) % s.period};
}

/// Where a loop's period ends: past its last whole iteration, over the calls after it that continue the period
/// (up to the end of the stretch after it, if that is calls between loops).
std::uint64_t reach_of(const std::vector<Stretch>& in, std::size_t i, const std::vector<std::uint64_t>& shapes) {
  const Stretch& s = in[i];
  const std::uint64_t limit = i + 1 < in.size() && in[i + 1].period == 0 ? in[i + 1].end : s.end;
  std::uint64_t x = s.end;
  while (x < limit && shapes[x] == shapes[x - s.period]) ++x;
  return x;
}

/// Per body up to rotation, where its loops are cut, as an offset in the least rotation: where the loops' calls
/// hold the most whole iterations, so that a loop of N iterations is N instances wherever its computation falls
/// in the iteration. Among those cuts, the first call after a compute burst from where the rotation whose loops
/// hold the most iterations begins (ties: the one seen first), so that a unit begins where the calls between loops
/// are cut into steps; else (or where no such call gives as many whole iterations) the first of those cuts from
/// there. Every loop of one body is cut at the same call.
std::unordered_map<std::uint64_t, std::uint64_t> cut_offsets(const std::vector<Stretch>& stretches,
                                                             const CallSequence& calls) {
  const std::vector<std::uint64_t>& shapes = calls.shapes();
  struct Body {
    std::uint64_t period = 0;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> loops;  // (where it begins in the least rotation, calls)
    std::vector<std::uint8_t> anchored;                          // per call of the least rotation
    std::map<std::uint64_t, std::uint64_t> iterations;           // rotation (offset) -> iterations
    std::uint64_t most = 0;                                      // the rotation with the most iterations
  };
  std::unordered_map<std::uint64_t, Body> bodies;
  std::vector<std::uint64_t> seen;
  for (std::size_t i = 0; i < stretches.size(); ++i) {
    const Stretch& s = stretches[i];
    if (s.period < 2) continue;
    const Cycle c = cycle_of(shapes, s);
    const auto [it, added] = bodies.try_emplace(c.key);
    Body& b = it->second;
    if (added) {
      seen.push_back(c.key);
      b.period = s.period;
      b.most = c.offset;
      b.anchored.resize(s.period);
      for (std::uint64_t r = 0; r < s.period; ++r) b.anchored[(r + c.offset) % s.period] = calls.anchors()[s.begin + r];
    }
    b.loops.emplace_back(c.offset, reach_of(stretches, i, shapes) - s.begin);
    const std::uint64_t n = b.iterations[c.offset] += (s.end - s.begin) / s.period;
    if (n > b.iterations[b.most]) b.most = c.offset;
  }
  std::unordered_map<std::uint64_t, std::uint64_t> out;
  for (const std::uint64_t key : seen) {
    const Body& b = bodies.at(key);
    const std::uint64_t p = b.period;
    std::vector<std::uint64_t> whole(p, 0);
    for (const auto& [begin, calls_in_loop] : b.loops) {
      for (std::uint64_t r = 0; r < p; ++r) {
        const std::uint64_t skipped = (r + p - begin) % p;
        whole[r] += calls_in_loop >= skipped ? (calls_in_loop - skipped) / p : 0;
      }
    }
    const std::uint64_t best = *std::max_element(whole.begin(), whole.end());
    std::uint64_t cut = p;
    for (std::uint64_t step = 0; step < p; ++step) {
      const std::uint64_t r = (b.most + step) % p;
      if (b.anchored[r] != 0) {
        if (whole[r] == best) cut = r;
        break;
      }
    }
    for (std::uint64_t step = 0; step < p && cut == p; ++step) {
      if (whole[(b.most + step) % p] == best) cut = (b.most + step) % p;
    }
    out[key] = cut;
  }
  return out;
}

/// Every loop cut as the other loops of its body are (cut_offsets): its first calls join the stretch before
/// it, and the loop extends over the calls after it that continue its period (its last iteration's rest).
std::vector<Stretch> cut_loops(const std::vector<Stretch>& in, const CallSequence& calls) {
  const std::vector<std::uint64_t>& shapes = calls.shapes();
  const auto offsets = cut_offsets(in, calls);
  std::vector<Stretch> out;
  const auto add_piece = [&out](std::uint64_t begin, std::uint64_t end) {
    if (end <= begin) return;
    if (!out.empty() && out.back().period == 0 && out.back().end == begin) {
      out.back().end = end;
    } else {
      out.push_back({begin, end, 0, true});
    }
  };
  std::uint64_t taken = 0;  // calls before it belong to stretches already out
  for (std::size_t i = 0; i < in.size(); ++i) {
    Stretch s = in[i];
    s.begin = std::max(s.begin, taken);
    if (s.begin >= s.end) continue;
    std::uint64_t shift = 0;
    if (s.period >= 2 && s.begin == in[i].begin) {
      const Cycle c = cycle_of(shapes, s);
      shift = (offsets.at(c.key) + s.period - c.offset) % s.period;
    }
    if (shift == 0) {
      if (s.period == 0 && !out.empty() && out.back().piece && out.back().end == s.begin) {
        out.back().end = s.end;
        out.back().piece = false;
      } else {
        out.push_back(s);
      }
      taken = s.end;
      continue;
    }
    const std::uint64_t p = s.period;
    const std::uint64_t begin = s.begin + shift;
    const std::uint64_t x = reach_of(in, i, shapes);
    const std::uint64_t end = begin + (x - begin) / p * p;
    add_piece(s.begin, begin);
    if (end > begin) out.push_back({begin, end, p, false});
    add_piece(end, s.end);
    taken = std::max(end, s.end);
  }
  return out;
}

/// What a location's occurrences are: the units (the innermost loops that compute, and the steps between them),
/// the program's iterations (iterations_of, whatever their inner loops), or the calls up to each collective of all
/// processes.
using Level = PhaseLevel;

/// Between collectives of all processes, the steps of one location that make the same calls but whose peers are
/// drawn anew (a ring of a random permutation per step, as a benchmark of a network's rings draws, or a balancer's
/// partners): where its steps with the same calls but for their peers take more sets of peers than a grid has
/// directions, or at least kDrawnPeerSets that together reach every other rank of the run, they are one phase, the
/// peers its data. A grid code's step of each direction (one kind per face) stays a phase of its own.
void merge_drawn_peers(LocationOccurrences& loc, const CallSequence& calls, std::int32_t ranks) {
  if (ranks < kDrawnPeersLeast) return;
  struct Kind {
    std::vector<std::uint64_t> phases;  // the location's own phases with these calls, in order of first occurrence
    std::unordered_set<std::int32_t> peers;
  };
  std::unordered_map<std::uint64_t, Kind> kinds;  // the hash of the calls without their peers -> its phases
  std::vector<std::uint64_t> kind_of(loc.phase.size());
  for (std::size_t k = 0; k < loc.phase.size(); ++k) {
    const std::uint64_t begin = loc.first_op[k];
    const std::uint64_t end = k + 1 < loc.phase.size() ? loc.first_op[k + 1] : calls.peerless().size();
    kind_of[k] = hash_calls(calls.peerless(), begin, end);
    Kind& kind = kinds[kind_of[k]];
    if (std::find(kind.phases.begin(), kind.phases.end(), loc.phase[k]) == kind.phases.end()) {
      kind.phases.push_back(loc.phase[k]);
    }
    for (std::uint64_t i = begin; i < end; ++i) {
      if (calls.peers()[i] >= 0 && calls.peers()[i] != calls.rank()) kind.peers.insert(calls.peers()[i]);
    }
  }
  for (std::size_t k = 0; k < loc.phase.size(); ++k) {
    const Kind& kind = kinds.at(kind_of[k]);
    const bool drawn = kind.phases.size() > kGridDirections ||
                       (kind.phases.size() >= kDrawnPeerSets && std::cmp_greater_equal(kind.peers.size(), ranks - 1));
    if (drawn) {
      loc.phase[k] = kind.phases.front();
    }
  }
}

/// A location's units, or its calls up to each collective of all processes (of a run of `ranks` processes).
LocationOccurrences occurrences_of(const CallSequence& calls, const PhaseStructure& ps, Level level,
                                   std::int32_t ranks) {
  LocationOccurrences out;
  // Calls [begin, end) as occurrences, a new one beginning at every call i > begin where `starts(i)`.
  const auto add_split = [&](std::uint64_t begin, std::uint64_t end, const auto& starts) {
    std::uint64_t b = begin;
    for (std::uint64_t i = begin + 1; i < end; ++i) {
      if (starts(i)) {
        out.add(calls, b, i);
        b = i;
      }
    }
    out.add(calls, b, end);
  };
  if (level == Level::Collectives) {
    // Cut where all processes meet, and told apart by the calls alone: which of them follow computation varies
    // with the machine's load and a step's data, and no cut depends on it here.
    out.told = LocationOccurrences::Told::Plain;
    add_split(0, calls.syncs().size(), [&](std::uint64_t i) { return calls.syncs()[i - 1] != 0; });
    merge_drawn_peers(out, calls, ranks);
    return out;
  }
  for (const Stretch& st : cut_loops(loop_stretches(ps), calls)) {
    if (st.period != 0) {
      for (std::uint64_t b = st.begin; b < st.end; b += st.period) out.add(calls, b, b + st.period);
    } else {
      // Between loops, a step begins after each compute burst (an MD step that re-neighbours, one that writes
      // output): the same boundaries as the units' around it.
      add_split(st.begin, st.end, [&](std::uint64_t i) { return calls.anchors()[i] != 0; });
    }
  }
  return out;
}

/// Every location's program iterations (main_loop.hpp), found on its calls without their compute marks and, where
/// `with_sizes`, with their sizes' classes (CallSequence::unmarked): which calls follow computation varies from
/// iteration to iteration on a loaded machine, the calls do not, and a multigrid's levels differ only by their sizes.
/// The first location's iterations begin after a collective of all processes where they can; every other location's
/// where its start's logical time is nearest one of the first location's starts, so that an iteration is one program
/// point on every rank however skewed the ranks are (a pipeline's far corner starts its sweep late).
std::vector<LocationOccurrences> iterations_of(const std::vector<CallSequence>& calls,
                                               const PhaseFinderOptions& options, bool with_sizes) {
  std::vector<LocationOccurrences> out(calls.size());
  std::vector<std::uint64_t> reference;  // the first location's iteration start ticks, sorted
  for (std::size_t l = 0; l < calls.size(); ++l) {
    if (calls[l].shapes().empty()) continue;
    const CallSequence plain = calls[l].unmarked(with_sizes);
    const PhaseStructure folded = find_phases(plain.shapes(), options);
    const std::vector<std::uint64_t>& ticks = plain.ticks();
    const StartCost nearest = [&](std::uint64_t start, std::uint64_t) {
      const auto it = std::lower_bound(reference.begin(), reference.end(), ticks[start]);
      std::uint64_t d = UINT64_MAX;
      if (it != reference.end()) d = *it - ticks[start];
      if (it != reference.begin()) d = std::min(d, ticks[start] - *std::prev(it));
      return static_cast<double>(d);
    };
    const bool first = reference.empty();
    std::vector<Piece> pieces = main_loop_pieces(plain.shapes(), folded, first ? after_syncs(plain.syncs()) : nearest);
    if (pieces.empty()) pieces.push_back({0, plain.shapes().size(), false});
    out[l].told = with_sizes ? LocationOccurrences::Told::Sized : LocationOccurrences::Told::Plain;
    for (const Piece& p : pieces) {
      out[l].add(plain, p.begin, p.end);
      if (first && p.iteration) reference.push_back(ticks[p.begin]);
    }
    std::sort(reference.begin(), reference.end());
  }
  return out;
}

/// On how many locations two combinations have instances that are not alike.
std::size_t differing(const std::vector<const LocationOccurrences*>& locs, const std::vector<std::uint64_t>& a,
                      const std::vector<std::uint64_t>& b) {
  std::size_t d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d += locs[i]->alike(a[i], b[i]) ? 0 : 1;
  return d;
}

/// Whether two combinations are one step whose part passes from rank to rank (a ping-pong of rank 0 with each other
/// rank in turn, the others waiting): they differ on two locations only, which swap their kinds of calls.
bool passed_on(const std::vector<const LocationOccurrences*>& locs, const std::vector<std::uint64_t>& a,
               const std::vector<std::uint64_t>& b) {
  std::vector<std::size_t> at;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (locs[i]->alike(a[i], b[i])) continue;
    if (at.size() == 2) return false;
    at.push_back(i);
  }
  if (at.size() != 2) return false;
  const auto kind = [&](std::size_t l, std::uint64_t phase) { return locs[l]->calls.at(phase).kinds; };
  const std::size_t i = at[0];
  const std::size_t j = at[1];
  return kind(i, a[i]) != kind(j, a[j]) && kind(i, a[i]) == kind(j, b[j]) && kind(j, a[j]) == kind(i, b[i]);
}

/// Combinations of the locations' phases -> the run's phases, numbered in order of first occurrence. Locations
/// without calls (no occurrences) take no part. `passed`: combinations whose part passes from rank to rank are one
/// (passed_on()).
std::vector<std::uint32_t> join_combinations(const std::vector<LocationOccurrences>& all, std::uint32_t& phase_count,
                                             bool passed) {
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
  // A rarer combination joins the most frequent one it nearly equals (ties: the one seen first): on all but a
  // fifth of the locations, the instances are alike.
  std::vector<std::uint32_t> order(combos.size());
  for (std::uint32_t c = 0; c < order.size(); ++c) order[c] = c;
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return weight[a] > weight[b]; });
  const auto allowed = static_cast<std::size_t>(kDifferingShare * static_cast<double>(locs.size()));
  std::vector<std::uint32_t> joined(combos.size());
  std::vector<bool> is_root(combos.size(), false);
  for (std::size_t i = 0; i < order.size(); ++i) {
    const std::uint32_t c = order[i];
    joined[c] = c;
    for (std::size_t j = 0; j < i; ++j) {
      const std::uint32_t u = order[j];
      if (is_root[u] &&
          (differing(locs, combos[c], combos[u]) <= allowed || (passed && passed_on(locs, combos[c], combos[u])))) {
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

/// Whether the locations' units overlap in logical time: on more than a quarter of the occurrences k, a location
/// begins its occurrence k + 1 before another begins its occurrence k. That is a pipeline (ranks enter each
/// sweep one after the other), whose units no rank takes with the others; the ranks of a code that exchanges
/// with its neighbours every step stay within a few ticks of each other, far less than a step.
bool pipelined(const std::vector<LocationOccurrences>& locs, const std::vector<CallSequence>& calls) {
  std::size_t count = 0;
  for (const LocationOccurrences& l : locs) count = std::max(count, l.first_op.size());
  if (count < 2) return false;
  std::size_t overlapping = 0;
  for (std::size_t k = 0; k + 1 < count; ++k) {
    std::uint64_t latest_start = 0;
    std::uint64_t earliest_next = UINT64_MAX;
    for (std::size_t l = 0; l < locs.size(); ++l) {
      if (locs[l].first_op.size() != count) continue;
      latest_start = std::max(latest_start, calls[l].ticks()[locs[l].first_op[k]]);
      earliest_next = std::min(earliest_next, calls[l].ticks()[locs[l].first_op[k + 1]]);
    }
    if (earliest_next < latest_start) ++overlapping;
  }
  return static_cast<double>(overlapping) > kPipelinedShare * static_cast<double>(count - 1);
}

/// Where the location's occurrences do not correspond one to one with the reference's (data-dependent calls:
/// a step that exchanges particles with a neighbour only when some cross), its occurrences are regrouped at the
/// reference's boundaries in logical time: each of the reference's occurrences begins, on this location, at
/// the occurrence start nearest in ticks (the reference has the fewest occurrences, so occurrences are only
/// joined). Ranks of a step coupled by their exchanges are a few ticks apart, far less than a step.
void align_to(LocationOccurrences& loc, const CallSequence& calls, const LocationOccurrences& ref,
              const CallSequence& ref_calls) {
  const std::size_t count = ref.first_op.size();
  const std::size_t have = loc.first_op.size();
  std::vector<std::uint64_t> starts{loc.first_op.empty() ? 0 : loc.first_op.front()};
  std::size_t j = 0;
  for (std::size_t k = 1; k < count; ++k) {
    const std::uint64_t target = ref_calls.ticks()[ref.first_op[k]];
    const auto tick_of = [&](std::size_t o) { return calls.ticks()[loc.first_op[o]]; };
    const auto distance = [&](std::size_t o) {
      return tick_of(o) > target ? tick_of(o) - target : target - tick_of(o);
    };
    // The next start at least one past the last, leaving one start for each reference occurrence still to come.
    std::size_t o = j + 1;
    const std::size_t last = have - (count - k);
    while (o < last && distance(o + 1) <= distance(o)) ++o;
    starts.push_back(loc.first_op[o]);
    j = o;
  }
  LocationOccurrences out;
  for (std::size_t k = 0; k < count; ++k)
    out.add(calls, starts[k], k + 1 < count ? starts[k + 1] : calls.shapes().size());
  loc = std::move(out);
}

/// A phase of fewer occurrences than this, all in a row, is a piece of a stretch (the set-up), not an iteration.
constexpr std::uint64_t kPieceWeight = 3;

/// Consecutive occurrences of the stretches' pieces (phases that occur once, or twice in a row with one call on
/// every location: the set-up's pieces between its compute bursts or collectives, a pair of broadcasts of the
/// input, the run's end) are one occurrence: the stretch between the run's repeated phases, whose number of pieces
/// would otherwise follow n and the machine's load (a molecular dynamics code's set-up is one piece at 2-8 ranks, and
/// MPI_Init, two MPI_Bcast and the rest at 16). A main loop of two iterations of more than one call each stays a phase,
/// and so does a time step that occurs once right before a repeated step: a loop cut after its main computation begins
/// its first iteration after the set-up's computation, where the set-up's output among the step's calls makes it a kind
/// of its own (the code's steps are counted whole).
void join_one_offs(RunPhases& rp, std::vector<std::uint8_t>& steps) {
  const std::size_t count = rp.occurrence_phase.size();
  const std::vector<std::uint64_t> weight = phase_weights(rp);
  std::vector<std::size_t> first(rp.phase_count, SIZE_MAX);
  std::vector<std::size_t> last(rp.phase_count, 0);
  for (std::size_t k = 0; k < count; ++k) {
    const std::uint32_t p = rp.occurrence_phase[k];
    first[p] = std::min(first[p], k);
    last[p] = k;
  }
  // Whether occurrence k holds at most one call on every location (its end known: another occurrence follows).
  const auto lone = [&](std::size_t k) {
    if (k + 1 >= count) return false;
    return std::all_of(rp.first_op.begin(), rp.first_op.end(), [k](const std::vector<std::uint64_t>& ops) {
      return ops.size() <= k + 1 || ops[k + 1] - ops[k] <= 1;
    });
  };
  const auto first_step = [&](std::size_t k) {
    return !steps.empty() && steps[k] != 0 && k + 1 < count && steps[k + 1] != 0 &&
           weight[rp.occurrence_phase[k + 1]] > 1;
  };
  const auto piece = [&](std::size_t k) {
    const std::uint32_t p = rp.occurrence_phase[k];
    if (first_step(k)) return false;
    if (weight[p] == 1) return true;
    return weight[p] < kPieceWeight && last[p] - first[p] + 1 == weight[p] && lone(first[p]) && lone(last[p]);
  };
  std::vector<bool> keep(count, true);
  for (std::size_t k = 1; k < count; ++k) keep[k] = !piece(k) || !piece(k - 1);
  std::vector<std::uint32_t> id(rp.phase_count, UINT32_MAX);
  std::vector<std::uint32_t> phases;
  std::uint32_t ids = 0;
  std::size_t kept_steps = 0;
  for (std::size_t k = 0; k < count; ++k) {
    if (!keep[k]) {
      if (!steps.empty()) steps[kept_steps - 1] = 0;  // a step joined with a piece of the set-up is none
      continue;
    }
    std::uint32_t& p = id[rp.occurrence_phase[k]];
    if (p == UINT32_MAX) p = ids++;
    phases.push_back(p);
    if (!steps.empty()) steps[kept_steps++] = steps[k];
  }
  if (!steps.empty()) steps.resize(kept_steps);
  for (std::vector<std::uint64_t>& ops : rp.first_op) {
    if (ops.empty()) continue;
    std::size_t kept = 0;
    for (std::size_t k = 0; k < count; ++k) {
      if (keep[k]) ops[kept++] = ops[k];
    }
    ops.resize(kept);
  }
  rp.occurrence_phase = std::move(phases);
  rp.phase_count = ids;
}

/// Of a location's step starts `own` (ascending, the first its occurrence's), as many as `target` holds, each the
/// nearest in logical time to the target's start of the same rank (the first kept first): where an alignment found
/// more steps on this location than on another (a step that re-neighbours, on a rank next to a wall, makes more
/// calls like the plain step's), the steps are those of the location with the fewest, by logical time.
std::vector<std::uint64_t> nearest_starts(const std::vector<std::uint64_t>& own, const CallSequence& calls,
                                          const std::vector<std::uint64_t>& target, const CallSequence& target_calls) {
  std::vector<std::uint64_t> out{own.front()};
  const std::size_t count = target.size();
  std::size_t j = 0;
  for (std::size_t k = 1; k < count; ++k) {
    const std::uint64_t tick = target_calls.ticks()[target[k]];
    const auto distance = [&](std::size_t o) {
      const std::uint64_t t = calls.ticks()[own[o]];
      return t > tick ? t - tick : tick - t;
    };
    std::size_t o = j + 1;
    const std::size_t last = own.size() - (count - k);
    while (o < last && distance(o + 1) <= distance(o)) ++o;
    out.push_back(own[o]);
    j = o;
  }
  return out;
}

/// The program's time steps (step_cuts.hpp) in its iterations or its calls between collectives of all processes:
/// where occurrence k holds at least two steps on every location, it is cut into the steps of the location that
/// holds the fewest (nearest_starts), where `cut_them` (else, and where nothing is cut, the occurrences stay as they
/// are). Per occurrence after that, 1 where it is one step on every location (empty where the locations' counts of
/// occurrences differ).
std::vector<std::uint8_t> cut_steps(std::vector<LocationOccurrences>& locs, const std::vector<CallSequence>& calls,
                                    bool cut_them) {
  std::size_t count = SIZE_MAX;  // occurrences on every location with calls
  std::vector<std::size_t> with_calls;
  std::vector<std::vector<std::vector<std::uint64_t>>> steps(locs.size());
  std::vector<std::vector<std::uint8_t>> partial(locs.size());
  std::vector<std::vector<std::uint64_t>> rest(locs.size());
  for (std::size_t l = 0; l < locs.size(); ++l) {
    if (calls[l].shapes().empty()) continue;
    if (count != SIZE_MAX && locs[l].phase.size() != count) return {};
    count = locs[l].phase.size();
    with_calls.push_back(l);
    steps[l] = location_steps(
        locs[l].phase, locs[l].first_op, calls[l].shapes().size(),
        [&c = calls[l]](std::uint64_t i) { return c.plain_shape(i); }, &partial[l], cut_them ? &rest[l] : nullptr);
  }
  if (with_calls.empty()) return {};
  // Per occurrence, the location whose occurrence holds the fewest steps, of those that make a step or no part of
  // one (a location that makes part of the step, skipping what it holds no data for, is one where another makes it
  // whole), and whether a location makes part of it.
  std::vector<std::size_t> fewest(count, SIZE_MAX);
  bool any_cut = false;
  for (std::size_t k = 0; k < count; ++k) {
    bool parted = false;
    for (const std::size_t l : with_calls) {
      if (partial[l][k] != 0) {
        parted = true;
      } else if (fewest[k] == SIZE_MAX || steps[l][k].size() < steps[fewest[k]][k].size()) {
        fewest[k] = l;
      }
    }
    // A stretch of several steps is cut only where every location makes them whole.
    if (fewest[k] == SIZE_MAX || (parted && steps[fewest[k]][k].size() != 1)) fewest[k] = SIZE_MAX;
    any_cut = any_cut || (cut_them && fewest[k] != SIZE_MAX && steps[fewest[k]][k].size() >= 2);
  }
  std::vector<std::uint8_t> out;
  for (std::size_t k = 0; k < count; ++k) {
    const std::size_t held = fewest[k] == SIZE_MAX ? 0 : steps[fewest[k]][k].size();
    if (cut_them && held >= 2) {
      // A stretch that occurs once with steps at its edges, as the location with the fewest pieces cuts it: the rest
      // between them is no step.
      const std::uint64_t piece = rest[fewest[k]].empty() ? 0 : rest[fewest[k]][k];
      const std::size_t at = out.size();
      out.insert(out.end(), held, 1);
      if (piece > 0) out[at + piece - 1] = 0;
    } else {
      out.push_back(held == 1 ? 1 : 0);
    }
  }
  if (!any_cut) return out;
  for (const std::size_t l : with_calls) {
    LocationOccurrences cut;
    cut.told = locs[l].told;
    for (std::size_t k = 0; k < count; ++k) {
      if (fewest[k] == SIZE_MAX || steps[fewest[k]][k].size() < 2) {
        cut.add_as(locs[l], k);
        continue;
      }
      const std::vector<std::uint64_t>& reference = steps[fewest[k]][k];
      const std::size_t held = reference.size();
      const std::vector<std::uint64_t> at =
          steps[l][k].size() == held ? steps[l][k] : nearest_starts(steps[l][k], calls[l], reference, calls[fewest[k]]);
      const std::uint64_t end = k + 1 < count ? locs[l].first_op[k + 1] : calls[l].shapes().size();
      for (std::size_t i = 0; i < held; ++i) cut.add(calls[l], at[i], i + 1 < held ? at[i + 1] : end);
    }
    locs[l] = std::move(cut);
  }
  return out;
}

/// The run's phases from every location's occurrences at the level chosen; at the program's level, its time steps.
RunPhases finish(RunPhases& out, std::vector<LocationOccurrences>& locs, const std::vector<CallSequence>& calls) {
  // The units are the program's innermost loops that compute, which may be a time step's parts (a multigrid's
  // levels, a pipeline's stages): they are told as steps where they are, never cut.
  std::vector<std::uint8_t> steps = cut_steps(locs, calls, out.level != Level::Units);
  // Between collectives of all processes, a step's part may pass from rank to rank (the ranks of a loop's
  // instance are the step's data there; the units and the loops keep each rank's part as theirs).
  out.occurrence_phase = join_combinations(locs, out.phase_count, out.level == Level::Collectives);
  for (LocationOccurrences& l : locs) out.first_op.push_back(std::move(l.first_op));
  join_one_offs(out, steps);
  if (!steps.empty()) {
    out.step_kind.assign(out.phase_count, 1);
    for (std::size_t k = 0; k < steps.size(); ++k) {
      if (steps[k] == 0) out.step_kind[out.occurrence_phase[k]] = 0;
    }
  }
  return std::move(out);
}

}  // namespace

std::uint64_t action_shape(std::int32_t rank, const Op& op, const Action& a) noexcept {
  const auto offset = [rank](std::int32_t r) {
    return static_cast<std::uint64_t>(static_cast<std::uint32_t>(r >= 0 ? r - rank : r));
  };
  const std::uint64_t what = static_cast<std::uint64_t>(op.header.region) << 32 | a.comm;
  const std::uint64_t how = static_cast<std::uint64_t>(a.kind) << 8 | static_cast<std::uint64_t>(a.op);
  return mix64(mix64(what + kGoldenGamma * (how + 1)) ^ (offset(a.peer) << 32 | offset(a.root)));
}

std::uint64_t operation_shape(std::int32_t rank, const Op& op) noexcept {
  std::uint64_t h = mix64(static_cast<std::uint64_t>(op.header.region) + 1);
  for (const Action& a : op.actions) h = mix64(h ^ action_shape(rank, op, a));
  return h;
}

void CallSequence::reserve(std::uint64_t calls) {
  peerless_.reserve(calls);
  peers_.reserve(calls);
  ticks_.reserve(calls);
  sized_.reserve(calls);
  syncs_.reserve(calls);
  anchors_.reserve(calls);
  shapes_.reserve(calls);
  regions_.reserve(calls);
}

void CallSequence::add(const Op& op, std::uint64_t tick, bool everyone) {
  ticks_.push_back(tick);
  syncs_.push_back(everyone ? 1 : 0);
  const bool anchor = threshold_ == 0 || op.header.burst_work >= threshold_;
  if (anchor && threshold_ != 0 && op.header.burst_work / 2 < threshold_) margin_.push_back(anchors_.size());
  anchors_.push_back(anchor ? 1 : 0);
  // A call after computation is another symbol than the same call after packing a buffer, so that a step
  // made of swaps that look alike (the same neighbour in both directions) folds as the step, not as swaps.
  const std::uint64_t shape = operation_shape(rank_, op);
  shapes_.push_back(shape ^ (anchor ? kAnchored : 0));
  regions_.push_back(op.header.region);
  // Sizes by their power of two: levels of a grid hierarchy differ by factors, a drift of a few per cent does not.
  std::uint64_t sized = shape;
  for (const Action& a : op.actions) sized = mix64(sized ^ static_cast<std::uint64_t>(std::bit_width(a.bytes)));
  sized_.push_back(sized);
  std::uint64_t peerless = mix64(static_cast<std::uint64_t>(op.header.region) + 1);
  std::int32_t peer = -1;
  for (const Action& a : op.actions) {
    Action without = a;
    without.peer = -1;
    peerless = mix64(peerless ^ action_shape(rank_, op, without));
    if (peer < 0) peer = a.peer;
  }
  peerless_.push_back(static_cast<std::uint32_t>(peerless ^ (peerless >> 32)));
  peers_.push_back(peer);
}

CallSequence CallSequence::unmarked(bool with_sizes) const {
  CallSequence out = *this;
  if (with_sizes) {
    out.shapes_ = sized_;
  } else {
    for (std::size_t i = 0; i < out.shapes_.size(); ++i) out.shapes_[i] = plain_shape(i);
  }
  std::fill(out.anchors_.begin(), out.anchors_.end(), std::uint8_t{0});
  return out;
}

std::uint64_t CallSequence::plain_shape(std::uint64_t i) const noexcept {
  return shapes_[i] ^ (anchors_[i] != 0 ? kAnchored : 0);
}

void CallSequence::set_anchor(std::uint64_t i, bool anchor) {
  if ((anchors_[i] != 0) == anchor) return;
  anchors_[i] = anchor ? 1 : 0;
  shapes_[i] ^= kAnchored;
}

void CallSequence::drop_stray_marks() {
  if (margin_.empty()) return;
  std::unordered_set<std::uint64_t> computed;  // the calls a burst of a class precedes somewhere, unmarked
  std::size_t m = 0;
  for (std::uint64_t i = 0; i < anchors_.size(); ++i) {
    if (m < margin_.size() && margin_[m] == i) {
      ++m;
    } else if (anchors_[i] != 0) {
      computed.insert(shapes_[i] ^ kAnchored);
    }
  }
  for (const std::uint64_t i : margin_) {
    if (!computed.contains(shapes_[i] ^ kAnchored)) set_anchor(i, false);
  }
  margin_.clear();
  margin_.shrink_to_fit();
}

void agree_on_anchors(std::vector<CallSequence>& calls) {
  std::unordered_map<std::uint64_t, std::vector<std::size_t>> same_calls;  // the calls' types in order -> locations
  for (std::size_t l = 0; l < calls.size(); ++l) {
    const std::vector<std::uint32_t>& r = calls[l].regions();
    if (!r.empty()) same_calls[hash_calls(r, 0, r.size()) ^ r.size()].push_back(l);
  }
  for (auto& [hash, group] : same_calls) {
    // A hash collision between different sequences is left to its first location's own marks.
    const std::vector<std::uint32_t>& first = calls[group.front()].regions();
    std::erase_if(group, [&](std::size_t l) { return calls[l].regions() != first; });
    if (group.size() < kVoters) continue;
    std::vector<std::size_t> voters;
    for (const std::size_t l : group) {
      if (calls[l].tells_compute()) voters.push_back(l);
    }
    if (voters.empty()) voters = group;
    for (std::uint64_t i = 0; i < first.size(); ++i) {
      std::size_t votes = 0;
      for (const std::size_t l : voters) votes += calls[l].anchors()[i];
      for (const std::size_t l : group) calls[l].set_anchor(i, 2 * votes > voters.size());
    }
  }
}

namespace {

/// Whether every location with calls has as many occurrences; `reference` becomes the one with the fewest.
bool equal_counts(const std::vector<LocationOccurrences>& locs, const std::vector<CallSequence>& calls,
                  std::size_t& reference) {
  bool same = true;
  for (std::size_t l = 0; l < calls.size(); ++l) {
    if (calls[l].shapes().empty()) continue;
    same = same && locs[l].phase.size() == locs[reference].phase.size();
    if (locs[l].phase.size() < locs[reference].phase.size()) reference = l;
  }
  return same;
}

/// Whether some two of a location's occurrences are alike (the same calls, whichever of them the machine's load
/// made look like they follow computation).
bool any_repeat(const LocationOccurrences& loc) {
  for (std::size_t a = 0; a < loc.phase.size(); ++a) {
    for (std::size_t b = a + 1; b < loc.phase.size(); ++b) {
      if (loc.alike(loc.phase[a], loc.phase[b])) return true;
    }
  }
  return false;
}

}  // namespace

std::optional<RunPhases> phases_by_rank(std::vector<CallSequence> calls, const PhaseFinderOptions& options,
                                        std::string& why_not, std::optional<PhaseLevel> asked, bool without_sizes) {
  for (CallSequence& c : calls) c.drop_stray_marks();
  agree_on_anchors(calls);
  std::vector<PhaseStructure> folded(calls.size());
  std::size_t reference = calls.size();  // the location with the fewest occurrences
  for (std::size_t l = 0; l < calls.size(); ++l) {
    if (calls[l].shapes().empty()) continue;
    folded[l] = find_phases(calls[l].shapes(), calls[l].anchors(), options);
    if (reference == calls.size()) reference = l;
  }
  if (reference == calls.size()) {
    why_not = "no location has calls";
    return std::nullopt;
  }
  // The units where every location has as many; else the outermost loops' iterations where every location has
  // as many (a pipeline whose ranks enter each sweep of blocks at another block); else the units joined by
  // logical time (steps whose calls depend on the data).
  RunPhases out;
  out.method = PhaseMethod::ByRank;
  std::int32_t ranks = 0;
  for (const CallSequence& c : calls) ranks = std::max(ranks, c.rank() + 1);
  std::vector<LocationOccurrences> locs(calls.size());
  // Every location's occurrences at a level; whether they have as many (the reference: the fewest).
  const auto build = [&](Level level, bool with_sizes = true) {
    if (level == Level::Outermost) {
      locs = iterations_of(calls, options, with_sizes);
    } else {
      for (std::size_t l = 0; l < calls.size(); ++l) {
        if (!calls[l].shapes().empty()) locs[l] = occurrences_of(calls[l], folded[l], level, ranks);
      }
    }
    return equal_counts(locs, calls, reference);
  };
  // The units; where the locations' counts differ (steps whose calls depend on the data), joined by logical time.
  const bool equal = build(Level::Units);
  if (!equal) {
    for (std::size_t l = 0; l < calls.size(); ++l) {
      if (l != reference && !calls[l].shapes().empty()) align_to(locs[l], calls[l], locs[reference], calls[reference]);
    }
    out.method_note = "instances joined by logical time: rank " + std::to_string(calls[reference].rank()) + "'s " +
                      std::to_string(locs[reference].phase.size()) + " as the reference";
  }
  // Pipelined units give way to the program's iteration: the outermost loops' iterations where every location has
  // as many, else the calls between the collectives of all processes. (Units whose counts differ stay joined by
  // logical time: the outermost loops of an MD code are runs of plain steps and their counts differ too, or
  // worse, agree on a period of twenty steps.)
  // A series may ask for a level (the one most of its runs take): taken where every location has as many.
  if (asked == Level::Units || (!asked && !pipelined(locs, calls))) return finish(out, locs, calls);
  std::vector<LocationOccurrences> units = std::move(locs);
  const std::size_t units_reference = reference;
  locs.assign(calls.size(), {});
  // A level is taken where every location has as many occurrences and some of them repeat.
  const auto repeats = [&] { return any_repeat(locs[reference]); };
  // The iterations with their messages' sizes, else on the calls alone where that gives every location as many: sizes
  // that follow each rank's data (the atoms that crossed a boundary) cross a class on some ranks and not on others.
  bool sized = !without_sizes;
  const auto outermost = [&] {
    if (sized && build(Level::Outermost)) return true;
    sized = false;
    return build(Level::Outermost, false);
  };
  const std::string why = asked ? "the series' level" : "the units are pipelined";
  if (asked != Level::Collectives && outermost() && repeats()) {
    out.method_note = std::string("the outermost loops' iterations") +
                      (sized ? "" : ", found on the calls without their sizes (which follow each rank's data)") + ": " +
                      why;
    out.level = Level::Outermost;
    out.without_sizes = !sized;
  } else if (build(Level::Collectives) && repeats()) {
    out.method_note = "the calls between collectives of all processes: " + why;
    out.level = Level::Collectives;
  } else {
    locs = std::move(units);
    reference = units_reference;
  }
  return finish(out, locs, calls);
}

}  // namespace p3s::analyzer
