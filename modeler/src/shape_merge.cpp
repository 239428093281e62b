// SPDX-License-Identifier: BSD-3-Clause
// The shape a phase's ranks merge into: a progressive shortest common supersequence of their calls, cut into groups
// (runs of one function, ends of folded loops), with each rank's calls in them and the loops they fall in.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <tuple>

#include "p3s/align.hpp"
#include "shape.hpp"

namespace p3s::modeler::detail {
namespace {

using Key = std::tuple<FunctionKey, Role, int, Label, std::uint64_t>;

// Every rank makes the same collectives in the same order: a pair of them outweighs any number of other pairs (a
// phase aligns at most model_build's 4096 calls a rank), so that ranks whose point-to-point calls between them
// differ (the boundary ranks of a reduction by hand) still line up their collectives.
constexpr std::uint64_t kCollective = std::uint64_t{1} << 46;
constexpr std::uint64_t kPair = std::uint64_t{1} << 32;      // a pair outweighs any number of size matches
constexpr std::uint64_t kSameSide = std::uint64_t{1} << 16;  // and both in a loop, or both out: outweighs sizes
/// A call that is no step of a folded loop (RankSequence::step_of).
constexpr std::size_t kNotStep = SIZE_MAX;

/// A rank's folded loop: its calls [begin, end) and its iterations.
struct RankLoop {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::uint32_t iterations = 0;
};

/// A rank's calls as the merge aligns them.
struct RankSequence {
  std::vector<Key> keys;
  std::vector<std::uint32_t> ids;  ///< each key's number (Interned): the alignment compares numbers
  std::vector<double> bytes;       ///< the first slot's size
  /// Where a rank folded loops: 1 in a loop, 2 outside (0: the rank folded none).
  std::vector<int> side;
  std::vector<const Call*> calls;
  std::vector<std::size_t> step_of;  ///< the rank's group the call came from where it is a loop's step, else kNotStep
  std::vector<RankLoop> loops;
};

/// The detail a call is aligned on besides its function: its direction, step, tag or nothing.
int aligned_detail(const Call& c, Alignment alignment) {
  const int sign = c.offset > 0 ? 1 : c.offset < 0 ? -1 : 0;
  const int tag = static_cast<int>(c.first_tag());
  switch (alignment) {
    case Alignment::Direction:
      return sign;
    case Alignment::Step:
      return sign * (std::abs(c.offset) == 1 ? 1 : 2);
    case Alignment::Tag:
    case Alignment::TagRuns:
    case Alignment::TagExchange:
      return tag;
    default:
      return 0;
  }
}

RankSequence rank_sequence(const std::vector<RankGroup>& groups, Alignment alignment) {
  RankSequence out;
  const bool folded = std::any_of(groups.begin(), groups.end(), [](const RankGroup& g) { return g.loop > 0; });
  std::size_t loop_end = 0;  // the first group after the loop the groups are in
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const RankGroup& g = groups[gi];
    if (g.loop > 0) {
      loop_end = gi + g.loop;
      std::size_t body_calls = 0;
      for (std::size_t q = gi; q < gi + g.loop && q < groups.size(); ++q) body_calls += groups[q].calls.size();
      out.loops.push_back({out.keys.size(), out.keys.size() + body_calls, g.iterations});
    }
    for (const Call& c : g.calls) {
      out.keys.emplace_back(g.function, g.role, aligned_detail(c, alignment),
                            alignment == Alignment::Label ? c.label : Label{0, 0, 0},
                            alignment == Alignment::TagExchange ? c.exchange : 0);
      out.bytes.push_back(c.peers[0] >= 0 ? c.bytes[0] : c.bytes[1]);
      out.side.push_back(!folded ? 0 : gi < loop_end ? 1 : 2);
      out.calls.push_back(&c);
      out.step_of.push_back(gi < loop_end ? gi : kNotStep);
    }
  }
  return out;
}

/// The distinct keys of all ranks' calls, numbered, and whether each is a collective's (a pair of them weighs more).
struct Interned {
  std::vector<Key> keys;
  std::vector<bool> collective;

  explicit Interned(std::vector<RankSequence>& seqs) {
    std::map<Key, std::uint32_t> number;
    for (RankSequence& seq : seqs) {
      seq.ids.reserve(seq.keys.size());
      for (const Key& k : seq.keys) {
        const auto [it, added] = number.try_emplace(k, static_cast<std::uint32_t>(keys.size()));
        if (added) {
          keys.push_back(k);
          collective.push_back(std::get<1>(k) == Role::Collective);
        }
        seq.ids.push_back(it->second);
      }
    }
  }
};

/// The supersequence of the ranks merged so far, as key numbers (Interned).
struct Supersequence {
  std::vector<std::uint32_t> keys;
  std::vector<std::map<std::int64_t, double>> sizes_at;  ///< per position: run -> the size placed there first
  /// Per position, where a rank that folded loops placed a call first: 1 in a loop, 2 outside (0: none did). Of the
  /// alignments pairing as many calls, the one pairing most calls on the same side of a loop's end wins: the face's
  /// send after a wavefront goes with the others' face, not with their last plane's.
  std::vector<int> side_at;
  std::vector<std::vector<std::size_t>> positions;  ///< per rank, per call (ranks not merged yet: none)
  std::vector<std::size_t> merged_ranks;

  /// Rank r's calls (seq, of run `run`) aligned with the supersequence, the others inserted where they occur, and
  /// the positions of the ranks merged before renumbered. Among alignments pairing as many calls, the one pairing
  /// most calls with the same message size as the call a rank of the same run placed there wins: where a rank skips
  /// some of several exchanges alike but for their sizes (a multigrid level only some ranks hold), the sizes of its
  /// run tell which it skipped.
  void merge(std::size_t r, const RankSequence& seq, std::int64_t run, const Interned& interned) {
    std::vector<std::uint32_t> merged;
    std::vector<std::map<std::int64_t, double>> merged_sizes;
    std::vector<int> merged_side;
    std::vector<std::size_t> old_to_new(keys.size());
    std::vector<std::size_t> mine(seq.keys.size());
    // The size a rank of this run placed at each position, looked up once.
    std::vector<std::optional<double>> placed(keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (const auto it = sizes_at[i].find(run); it != sizes_at[i].end()) placed[i] = it->second;
    }
    const auto weight = [&](std::size_t i, std::size_t j) -> std::uint64_t {
      if (keys[i] != seq.ids[j]) return 0;
      return (interned.collective[keys[i]] ? kCollective : kPair) +
             (side_at[i] != 0 && side_at[i] == seq.side[j] ? kSameSide : 0) +
             (placed[i] && *placed[i] == seq.bytes[j] ? 1 : 0);
    };
    for (const AlignStep& step : align_weighted(keys.size(), seq.keys.size(), weight)) {
      const bool ours = step.a != AlignStep::kNone;
      if (ours) old_to_new[step.a] = merged.size();
      if (step.b != AlignStep::kNone) mine[step.b] = merged.size();
      merged.push_back(ours ? keys[step.a] : seq.ids[step.b]);
      merged_sizes.push_back(ours ? std::move(sizes_at[step.a]) : std::map<std::int64_t, double>{});
      if (step.b != AlignStep::kNone) merged_sizes.back().try_emplace(run, seq.bytes[step.b]);
      const int side = ours ? side_at[step.a] : 0;
      merged_side.push_back(side != 0 || step.b == AlignStep::kNone ? side : seq.side[step.b]);
    }
    sizes_at = std::move(merged_sizes);
    side_at = std::move(merged_side);
    for (const std::size_t done : merged_ranks) {
      for (std::size_t& x : positions[done]) x = old_to_new[x];
    }
    keys = std::move(merged);
    positions[r] = std::move(mine);
    merged_ranks.push_back(r);
  }
};

/// The calls of a position moved to another of the same key, where every rank's calls stay in their order: the
/// progressive merge places exchanges that no rank makes both of (a take or a give along each axis) in the order
/// the ranks came, and one made after different others twice (give-y, give-z, take-y, take-z, give-z again, where
/// take-y, give-y, take-z, give-z holds every rank). Two positions of one key are one where the ranks of the earlier
/// make no call up to the later (they move there), or those of the later none from the earlier on (they move back).
/// Calls of a folded loop stay where they are, as do calls on different sides of a loop's end.
void fold_duplicates(Supersequence& m, const std::vector<RankSequence>& seqs) {
  const std::size_t size = m.keys.size();
  std::vector<std::vector<std::pair<std::size_t, std::size_t>>> at(size);  // (rank, call) per position
  std::vector<bool> fixed(size, false);
  for (const std::size_t r : m.merged_ranks) {
    for (std::size_t k = 0; k < m.positions[r].size(); ++k) {
      at[m.positions[r][k]].emplace_back(r, k);
      if (seqs[r].step_of[k] != kNotStep) fixed[m.positions[r][k]] = true;
    }
  }
  std::map<std::uint32_t, std::vector<std::size_t>> of_key;
  for (std::size_t i = 0; i < size; ++i) of_key[m.keys[i]].push_back(i);
  std::vector<bool> dead(size, false);
  const auto move = [&](std::size_t from, std::size_t to) {
    for (const auto& [r, k] : at[from]) m.positions[r][k] = to;
    at[to].insert(at[to].end(), at[from].begin(), at[from].end());
    at[from].clear();
    m.sizes_at[to].merge(m.sizes_at[from]);
    dead[from] = true;
  };
  const auto next_after = [&](std::size_t i, std::size_t j) {
    return std::all_of(at[i].begin(), at[i].end(), [&](const auto& rk) {
      const auto& [r, k] = rk;
      return k + 1 == m.positions[r].size() || m.positions[r][k + 1] > j;
    });
  };
  const auto previous_before = [&](std::size_t j, std::size_t i) {
    return std::all_of(at[j].begin(), at[j].end(), [&](const auto& rk) {
      const auto& [r, k] = rk;
      return k == 0 || m.positions[r][k - 1] < i;
    });
  };
  const auto foldable = [&](std::size_t i, std::size_t j) {
    return !dead[i] && !dead[j] && !fixed[i] && !fixed[j] && m.side_at[i] == m.side_at[j];
  };
  for (bool changed = true; changed;) {
    changed = false;
    // The other places of the key, nearest first: once a rank's next (previous) call comes before (after) one, it
    // does before (after) all further ones.
    for (std::size_t i = size; i-- > 0;) {
      if (dead[i] || fixed[i]) continue;
      const std::vector<std::size_t>& same = of_key[m.keys[i]];
      for (auto j = std::upper_bound(same.begin(), same.end(), i); j != same.end() && next_after(i, *j); ++j) {
        if (!foldable(i, *j)) continue;
        move(i, *j);
        changed = true;
        break;
      }
    }
    for (std::size_t j = 0; j < size; ++j) {
      if (dead[j] || fixed[j]) continue;
      const std::vector<std::size_t>& same = of_key[m.keys[j]];
      for (auto i = std::make_reverse_iterator(std::lower_bound(same.begin(), same.end(), j));
           i != same.rend() && previous_before(j, *i); ++i) {
        if (!foldable(*i, j)) continue;
        move(j, *i);
        changed = true;
        break;
      }
    }
  }
  std::vector<std::size_t> old_to_new(size, 0);
  std::size_t kept = 0;
  for (std::size_t i = 0; i < size; ++i) {
    old_to_new[i] = kept;
    if (dead[i]) continue;
    m.keys[kept] = m.keys[i];
    m.sizes_at[kept] = std::move(m.sizes_at[i]);
    m.side_at[kept] = m.side_at[i];
    ++kept;
  }
  m.keys.resize(kept);
  m.sizes_at.resize(kept);
  m.side_at.resize(kept);
  for (const std::size_t r : m.merged_ranks) {
    for (std::size_t& x : m.positions[r]) x = old_to_new[x];
  }
}

/// Per supersequence position (and one past the end), whether a group starts there because a rank's folded loop
/// begins or ends: the last plane's send of a wavefront and the send that follows the loop are two groups. Where the
/// ranks' calls of one loop fall apart in the shape, they take the union of their places (the ranks that skip a
/// plane's first receive start the loop later).
std::vector<bool> loop_cuts(const Supersequence& merged, const std::vector<RankSequence>& seqs) {
  std::vector<std::pair<std::size_t, std::size_t>> placed;  // each rank loop's first and last shape position
  for (std::size_t r = 0; r < seqs.size(); ++r) {
    for (const RankLoop& l : seqs[r].loops) {
      if (l.begin == l.end) continue;
      const auto [lo, hi] = std::minmax_element(merged.positions[r].begin() + static_cast<std::ptrdiff_t>(l.begin),
                                                merged.positions[r].begin() + static_cast<std::ptrdiff_t>(l.end));
      placed.emplace_back(*lo, *hi);
    }
  }
  std::sort(placed.begin(), placed.end());
  std::vector<bool> cut(merged.keys.size() + 1, false);
  for (std::size_t k = 0; k < placed.size();) {
    std::size_t hi = placed[k].second;
    std::size_t next = k + 1;
    while (next < placed.size() && placed[next].first <= hi) hi = std::max(hi, placed[next++].second);
    cut[placed[k].first] = true;
    cut[hi + 1] = true;
    k = next;
  }
  return cut;
}

/// The shape's groups (its runs of calls to one function, cut where loop_cuts() says or, for Alignment::TagRuns,
/// where the tag changes, for Alignment::TagExchange where the exchange does), and the group of each supersequence
/// position.
std::vector<std::size_t> cut_groups(const Supersequence& merged, const Interned& interned, const std::vector<bool>& cut,
                                    Alignment alignment, Shape& out) {
  std::vector<std::size_t> group_of(merged.keys.size());
  const auto key = [&](std::size_t k) -> const Key& { return interned.keys[merged.keys[k]]; };
  for (std::size_t k = 0; k < merged.keys.size(); ++k) {
    const std::pair<FunctionKey, Role> fn{std::get<0>(key(k)), std::get<1>(key(k))};
    const bool retagged =
        k > 0 && ((alignment == Alignment::TagRuns && std::get<2>(key(k)) != std::get<2>(key(k - 1))) ||
                  (alignment == Alignment::TagExchange && std::get<4>(key(k)) != std::get<4>(key(k - 1))));
    if (out.groups.empty() || out.groups.back() != fn || cut[k] || retagged) out.groups.push_back(fn);
    group_of[k] = out.groups.size() - 1;
  }
  return group_of;
}

/// Each rank's calls in the shape's groups, and whether a step of a rank's folded loop fell into several groups.
void fill_ranks(const std::vector<RankSequence>& seqs, const Supersequence& merged,
                const std::vector<std::size_t>& group_of, Shape& out) {
  for (std::size_t r = 0; r < seqs.size(); ++r) {
    std::map<std::size_t, std::size_t> group_of_step;
    for (std::size_t k = 0; k < seqs[r].calls.size(); ++k) {
      if (seqs[r].step_of[k] == kNotStep) continue;
      const std::size_t g = group_of[merged.positions[r][k]];
      out.steps_split = out.steps_split || group_of_step.try_emplace(seqs[r].step_of[k], g).first->second != g;
    }
  }
  for (std::size_t r = 0; r < seqs.size(); ++r) {
    std::vector<RankGroup> groups(out.groups.size());
    for (std::size_t g = 0; g < groups.size(); ++g) {
      groups[g].function = out.groups[g].first;
      groups[g].role = out.groups[g].second;
    }
    for (std::size_t k = 0; k < seqs[r].calls.size(); ++k) {
      groups[group_of[merged.positions[r][k]]].calls.push_back(*seqs[r].calls[k]);
    }
    out.ranks.push_back(std::move(groups));
  }
}

/// The shape's loops: each rank's loop covers the shape groups its body's calls fall in; loops that overlap are
/// one. Then the iterations each rank's folded loop made, per loop of the shape.
void shape_loops(const std::vector<RankSequence>& seqs, const Supersequence& merged,
                 const std::vector<std::size_t>& group_of, Shape& out) {
  const auto span_of = [&](std::size_t r, const RankLoop& l) {
    std::size_t lo = group_of[merged.positions[r][l.begin]];
    std::size_t hi = lo;
    for (std::size_t k = l.begin; k < l.end; ++k) {
      lo = std::min(lo, group_of[merged.positions[r][k]]);
      hi = std::max(hi, group_of[merged.positions[r][k]]);
    }
    return std::make_pair(lo, hi);
  };
  std::vector<std::pair<std::size_t, std::size_t>> spans;  // first and last shape group
  for (std::size_t r = 0; r < seqs.size(); ++r) {
    for (const RankLoop& l : seqs[r].loops) {
      if (l.begin != l.end) spans.push_back(span_of(r, l));
    }
  }
  std::sort(spans.begin(), spans.end());
  for (const auto& [lo, hi] : spans) {
    if (!out.loops.empty() && lo <= out.loops.back().first + out.loops.back().groups - 1) {
      PhaseLoop& last = out.loops.back();
      last.groups = static_cast<std::uint32_t>(std::max<std::size_t>(last.first + last.groups, hi + 1) - last.first);
    } else if (hi > lo) {
      out.loops.push_back({static_cast<std::uint32_t>(lo), static_cast<std::uint32_t>(hi - lo + 1)});
    }
  }
  out.loop_iterations.assign(out.loops.size(), std::vector<std::uint32_t>(seqs.size(), 0));
  for (std::size_t r = 0; r < seqs.size(); ++r) {
    for (const RankLoop& l : seqs[r].loops) {
      if (l.begin == l.end) continue;
      const std::size_t lo = span_of(r, l).first;
      for (std::size_t k = 0; k < out.loops.size(); ++k) {
        if (lo < out.loops[k].first || lo >= out.loops[k].first + out.loops[k].groups) continue;
        std::uint32_t& it = out.loop_iterations[k][r];
        it = it == 0 ? l.iterations : kNoIterations;
      }
    }
  }
}

}  // namespace

Shape merge_shapes(const std::vector<const std::vector<RankGroup>*>& ranks, Alignment alignment,
                   std::span<const std::int64_t> runs) {
  // Each rank's calls are aligned with the shape so far on a longest common subsequence of (function, role); its
  // other calls are inserted where they occur. The shape's groups are then its runs of one function. Aligning calls
  // rather than groups matters where boundary ranks skip calls: a corner rank's four sends of two pipeline blocks are
  // one run of its own, but two groups of the shape. Calls are aligned on their function and direction (toward lower
  // or higher ranks), so a sweep's receives are not taken for another's.
  std::vector<RankSequence> seqs;
  for (const std::vector<RankGroup>* groups : ranks) seqs.push_back(rank_sequence(*groups, alignment));
  // The ranks with the most calls first: they make the backbone the others are subsequences of (an interior rank of
  // a pipeline, not a corner that skips half its calls).
  std::vector<std::size_t> order(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) order[r] = r;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return seqs[a].calls.size() > seqs[b].calls.size(); });
  const Interned interned(seqs);
  Supersequence merged;
  merged.positions.resize(ranks.size());
  for (const std::size_t r : order) merged.merge(r, seqs[r], r < runs.size() ? runs[r] : 0, interned);
  fold_duplicates(merged, seqs);
  Shape out;
  const std::vector<std::size_t> group_of = cut_groups(merged, interned, loop_cuts(merged, seqs), alignment, out);
  fill_ranks(seqs, merged, group_of, out);
  shape_loops(seqs, merged, group_of, out);
  return out;
}

}  // namespace p3s::modeler::detail
