// SPDX-License-Identifier: BSD-3-Clause
// Groups of calls per rank, and the shape they merge into.
#include "shape.hpp"

#include "align.hpp"
#include "p3s/hash.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <tuple>

namespace p3s::modeler::detail {
namespace {

bool has_action(const analyzer::SigEvent& e, mpi::ActionKind kind) {
  return std::any_of(e.actions.begin(), e.actions.end(),
                     [kind](const analyzer::SigAction& a) { return a.kind == kind; });
}

}  // namespace

Role role_of(const analyzer::SigEvent& e) {
  if (has_action(e, mpi::ActionKind::Collective) || has_action(e, mpi::ActionKind::NbCollRequest)) {
    return Role::Collective;
  }
  const mpi::CallKind kind = mpi::kind(e.function);
  if (kind == mpi::CallKind::Completion) return Role::Completion;
  if (mpi::is_point_to_point(kind)) return Role::PointToPoint;
  // A persistent start or a function outside the vocabulary (MPI_Mrecv) is point-to-point when it moves messages.
  if (has_action(e, mpi::ActionKind::Send) || has_action(e, mpi::ActionKind::Recv) ||
      has_action(e, mpi::ActionKind::IrecvPost)) {
    return Role::PointToPoint;
  }
  return Role::Local;
}

SlotKinds slot_kinds(const analyzer::SigEvent& e) {
  switch (mpi::kind(e.function)) {
    case mpi::CallKind::Sendrecv:
      return {mpi::ActionKind::Send, mpi::ActionKind::Recv};
    case mpi::CallKind::Irecv:
      return {mpi::ActionKind::IrecvPost, std::nullopt};
    case mpi::CallKind::Recv:
      return {mpi::ActionKind::Recv, std::nullopt};
    case mpi::CallKind::Other:
      // Outside the vocabulary (MPI_Mrecv, MPI_Imrecv): what the call did says which way it went.
      if (has_action(e, mpi::ActionKind::IrecvPost)) return {mpi::ActionKind::IrecvPost, std::nullopt};
      if (has_action(e, mpi::ActionKind::Recv) && !has_action(e, mpi::ActionKind::Send)) {
        return {mpi::ActionKind::Recv, std::nullopt};
      }
      return {mpi::ActionKind::Send, std::nullopt};
    default:
      return {mpi::ActionKind::Send, std::nullopt};  // sends, and persistent starts, whose actions say more
  }
}

bool starts_requests(const analyzer::SigEvent& e) {
  const mpi::CallKind kind = mpi::kind(e.function);
  if (kind == mpi::CallKind::Isend || kind == mpi::CallKind::Irecv) return true;
  return kind == mpi::CallKind::Other && has_action(e, mpi::ActionKind::IrecvPost);
}

std::vector<RankGroup> rank_groups(const analyzer::SigRank& rank) {
  std::vector<RankGroup> out;
  for (std::size_t i = 0; i < rank.events.size(); ++i) {
    const analyzer::SigEvent& e = rank.events[i];
    const Role role = role_of(e);
    const FunctionKey key{e.function, e.call};
    if (out.empty() || out.back().function != key || out.back().role != role) out.push_back({key, role, {}});
    Call c;
    c.event = i;
    c.burst_work = e.burst_work.mean;
    c.burst_ns = e.burst_ns.mean;
    if (role == Role::PointToPoint) {
      const SlotKinds kinds = slot_kinds(e);
      for (std::size_t s = 0; s < 2; ++s) {
        for (const analyzer::SigAction& a : e.actions) {
          const bool match = kinds[s] == mpi::ActionKind::Send
                                 ? a.kind == mpi::ActionKind::Send
                                 : (a.kind == mpi::ActionKind::Recv || a.kind == mpi::ActionKind::IrecvPost);
          if (!kinds[s] || !match || a.peer < 0) continue;
          c.peers[s] = a.peer;
          c.tags[s] = a.tag;
          c.bytes[s] = a.bytes;
          c.receives[s] = kinds[s] != mpi::ActionKind::Send;
          break;
        }
      }
      const std::int64_t peer = c.peers[0] >= 0 ? c.peers[0] : c.peers[1];
      if (peer >= 0) c.offset = peer - rank.rank;
    } else if (role == Role::Completion) {
      for (const analyzer::SigAction& a : e.actions) {
        if (a.kind == mpi::ActionKind::Recv) {
          ++c.completes;
          c.completed_from = mix64(c.completed_from ^ static_cast<std::uint64_t>(a.peer + 1));
        } else if (a.kind == mpi::ActionKind::IsendComplete) {
          ++c.completes;
        }
      }
    }
    out.back().calls.push_back(c);
  }
  return out;
}

namespace {

/// The most calls a loop body may have.
constexpr std::size_t kMaxLoopBody = 16;

/// One call of a rank with the group it came from.
struct Token {
  const RankGroup* group = nullptr;
  const Call* call = nullptr;
};

bool same_function(const Token& a, const Token& b) {
  return a.group->function == b.group->function && a.group->role == b.group->role;
}

/// Whether call b repeats call a as the same step of a later loop iteration: the same point-to-point or completion
/// function in the same role, with the same slots used (the peers, sizes and tags may differ; step_iterations()
/// says how the tags must).
bool same_step(const Token& a, const Token& b) {
  if (!same_function(a, b)) return false;
  if (a.group->role != Role::PointToPoint && a.group->role != Role::Completion) return false;  // collectives: per call
  if (a.call->completes != b.call->completes) return false;
  for (std::size_t s = 0; s < 2; ++s) {
    if ((a.call->peers[s] < 0) != (b.call->peers[s] < 0)) return false;
  }
  return true;
}

/// The tag of a call's slot s, signed for stepping.
std::int64_t tag_of(const Call& c, std::size_t s) { return static_cast<std::int64_t>(c.tags[s]); }

/// How the tags of the body of `size` calls at `first` step from its first iteration to its second: 0 for
/// LoopTags::Equal; for LoopTags::Counter the step of its first tagged call, which must not be 0; nullopt when the
/// body has no such step.
std::optional<std::int64_t> tag_step(const std::vector<Token>& t, std::size_t first, std::size_t size, LoopTags rule) {
  if (rule == LoopTags::Equal) return 0;
  for (std::size_t q = first; q < first + size; ++q) {
    const Call& a = *t[q].call;
    const Call& b = *t[q + size].call;
    for (std::size_t s = 0; s < 2; ++s) {
      if (a.peers[s] < 0 || b.peers[s] < 0) continue;
      const std::int64_t step = tag_of(b, s) - tag_of(a, s);
      if (step == 0) return std::nullopt;
      return step;
    }
  }
  return std::nullopt;
}

/// Whether the tags of `later`, `c` iterations after `head`, are `head`'s plus c steps.
bool tags_on_line(const Call& head, const Call& later, std::int64_t step, std::size_t c) {
  for (std::size_t s = 0; s < 2; ++s) {
    if (head.peers[s] >= 0 && tag_of(later, s) != tag_of(head, s) + step * static_cast<std::int64_t>(c)) return false;
  }
  return true;
}

/// How many times the body of `size` single calls at `first` occurs in a row as steps of a loop (1: no
/// repetition): the same steps each time, every tag of iteration c its first iteration's plus c times one step (0,
/// or the loop counter's).
std::size_t step_iterations(const std::vector<Token>& t, std::size_t first, std::size_t size, LoopTags rule) {
  if (first + 2 * size > t.size()) return 1;
  for (std::size_t q = first; q < first + size; ++q) {
    if (!same_step(t[q], t[q + size])) return 1;
  }
  const std::optional<std::int64_t> step = tag_step(t, first, size, rule);
  if (!step) return 1;
  std::size_t c = 1;
  while (first + (c + 1) * size <= t.size()) {
    for (std::size_t q = first; q < first + size; ++q) {
      const Token& here = t[q + c * size];
      if (!same_step(t[q], here) || !tags_on_line(*t[q].call, *here.call, *step, c)) return c;
    }
    ++c;
  }
  return c;
}

/// Whether call b repeats call a as the same exchange of a later iteration: the same point-to-point or completion
/// function in the same role, to the same peers (the tags and sizes may differ).
bool same_exchange(const Token& a, const Token& b) {
  if (!same_function(a, b)) return false;
  if (a.group->role != Role::PointToPoint && a.group->role != Role::Completion) return false;
  return a.call->peers == b.call->peers && a.call->completes == b.call->completes &&
         a.call->completed_from == b.call->completed_from;
}

using Repeats = bool (*)(const Token&, const Token&);

/// How many times the body of `size` calls at `first` occurs in a row as `repeats` tells (1: no repetition).
std::size_t iterations(const std::vector<Token>& t, std::size_t first, std::size_t size, Repeats repeats) {
  for (std::size_t q = first; q < first + size; ++q) {
    if (!repeats(t[q], t[q])) return 1;
  }
  std::size_t c = 1;
  while (first + (c + 1) * size <= t.size()) {
    for (std::size_t q = 0; q < size; ++q) {
      if (!repeats(t[first + q], t[first + c * size + q])) return c;
    }
    ++c;
  }
  return c;
}

/// How many runs of calls to one function the body of `size` calls at `first` has.
std::size_t runs_in(const std::vector<Token>& t, std::size_t first, std::size_t size) {
  std::size_t runs = 1;
  for (std::size_t q = first + 1; q < first + size; ++q) runs += same_function(t[q - 1], t[q]) ? 0 : 1;
  return runs;
}

/// Whether the body of `size` calls at `first` sends to and receives from distinct ranks: a body that both sends
/// to and receives from one rank is an exchange with it, and on a side of 2 the sweep and the sweep back have the
/// same peers.
bool directed(const std::vector<Token>& t, std::size_t first, std::size_t size) {
  std::set<std::int64_t> to;
  std::set<std::int64_t> from;
  for (std::size_t q = first; q < first + size; ++q) {
    for (std::size_t s = 0; s < 2; ++s) {
      if (t[q].call->peers[s] >= 0) (t[q].call->receives[s] ? from : to).insert(t[q].call->peers[s]);
    }
  }
  return std::none_of(to.begin(), to.end(), [&](std::int64_t p) { return from.contains(p); });
}

/// The body at `first` covering the most calls (as size and iterations), the shortest on a tie (two iterations of
/// a body of 2, not one of a body of 4); {0, 1} where none repeats. A body calls two functions at least: a run of
/// calls to one function is a group, whose repetitions its pattern counts. A body whose iterations make the same
/// exchanges wins over one whose peers change: that is a loop over such loops (the sweeps of a multi-partition
/// code along each axis and back, one tag for all), whose own iterations are the stretches between them.
BodyKey body_key(const std::vector<Token>& t, std::size_t first, std::size_t size) {
  BodyKey key;
  for (std::size_t q = first; q < first + size; ++q) key.insert(t[q].group->function);
  return key;
}

std::pair<std::size_t, std::size_t> best_body(const std::vector<Token>& t, std::size_t first, const FoldRules& rules) {
  std::pair<std::size_t, std::size_t> by_step{0, 1};
  std::pair<std::size_t, std::size_t> exchanges{0, 1};
  const auto better = [](std::pair<std::size_t, std::size_t>& best, std::size_t b, std::size_t c) {
    if (c >= 2 && b * c > best.first * best.second) best = {b, c};
  };
  for (std::size_t b = 2; b <= kMaxLoopBody && first + 2 * b <= t.size(); ++b) {
    const std::size_t runs = runs_in(t, first, b);
    if (runs < 2) continue;
    // Single calls to each function (a recursive halving's steps), or the same exchanges (a wavefront's planes).
    if (rules.steps && runs == b) better(by_step, b, step_iterations(t, first, b, rules.tags));
    if (directed(t, first, b) && (rules.exchanges == nullptr || rules.exchanges->contains(body_key(t, first, b)))) {
      better(exchanges, b, iterations(t, first, b, same_exchange));
    }
  }
  return exchanges.first != 0 ? exchanges : by_step;
}

std::vector<Token> tokens_of(const std::vector<RankGroup>& groups) {
  std::vector<Token> tokens;
  for (const RankGroup& g : groups) {
    for (const Call& c : g.calls) tokens.push_back({&g, &c});
  }
  return tokens;
}

}  // namespace

std::set<BodyKey> exchange_bodies(const std::vector<RankGroup>& groups) {
  const std::vector<Token> tokens = tokens_of(groups);
  std::set<BodyKey> out;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    for (std::size_t b = 2; b <= kMaxLoopBody && i + 2 * b <= tokens.size(); ++b) {
      if (runs_in(tokens, i, b) >= 2 && directed(tokens, i, b) && iterations(tokens, i, b, same_exchange) >= 2) {
        out.insert(body_key(tokens, i, b));
      }
    }
  }
  return out;
}

std::vector<RankGroup> fold_loops(std::vector<RankGroup> groups, const FoldRules& rules) {
  const std::vector<Token> tokens = tokens_of(groups);
  std::vector<RankGroup> out;
  bool open = false;  // whether the last group of `out` may take more calls (it is no loop's)
  std::size_t i = 0;
  while (i < tokens.size()) {
    auto [body, count] = best_body(tokens, i, rules);
    // An iteration completes the requests it starts: a body is cut after its completion calls, not before. A
    // completion that ends the exchange before the loop (a transpose's MPI_Wait before a dot product's steps) is
    // no part of its first iteration, where the loop one call later covers as much.
    if (body != 0 && tokens[i].group->role == Role::Completion && i + 1 < tokens.size()) {
      const auto [later_body, later_count] = best_body(tokens, i + 1, rules);
      if (later_body * later_count >= body * count) body = 0;
    }
    if (body == 0) {
      const Token& t = tokens[i++];
      if (!open || !same_function({&out.back(), nullptr}, t)) {
        out.push_back({t.group->function, t.group->role, {}, 0, 0});
        open = true;
      }
      out.back().calls.push_back(*t.call);
      continue;
    }
    // One group per run of calls to one function in the body, holding that run's calls of every iteration.
    const std::size_t first = out.size();
    for (std::size_t q = i; q < i + body; ++q) {
      if (q == i || !same_function(tokens[q - 1], tokens[q])) {
        out.push_back({tokens[q].group->function, tokens[q].group->role, {}, 0, 0});
      }
    }
    for (std::size_t it = 0; it < count; ++it) {
      std::size_t g = first;
      for (std::size_t q = i; q < i + body; ++q) {
        if (q != i && !same_function(tokens[q - 1], tokens[q])) ++g;
        out[g].calls.push_back(*tokens[q + it * body].call);
      }
    }
    out[first].loop = static_cast<std::uint32_t>(out.size() - first);
    out[first].iterations = static_cast<std::uint32_t>(count);
    open = false;
    i += body * count;
  }
  return out;
}

Shape merge_shapes(const std::vector<const std::vector<RankGroup>*>& ranks, Alignment alignment,
                   std::span<const std::int64_t> runs) {
  // Progressive shortest common supersequence of the ranks' calls: each rank's calls are aligned with the shape
  // so far on a longest common subsequence of (function, role); its other calls are inserted where they occur,
  // and the positions of the ranks merged before are renumbered. The shape's groups are then its runs of one
  // function. Aligning calls rather than groups matters where boundary ranks skip calls: a corner rank's four
  // sends of two pipeline blocks are one run of its own, but two groups of the shape. Calls are aligned on their
  // function and direction (toward lower or higher ranks), so a sweep's receives are not taken for another's.
  // Among alignments pairing as many calls, the one pairing most calls with the same message size as the call a rank
  // of the same run placed there wins: where a rank skips some of several exchanges alike but for their sizes (a
  // multigrid level only some ranks hold), the sizes of its run tell which it skipped.
  using Key = std::tuple<FunctionKey, Role, int, Label>;
  // Every rank makes the same collectives in the same order: a pair of them outweighs any number of other pairs (a
  // phase aligns at most model_build's 4096 calls a rank), so that ranks whose point-to-point calls between them
  // differ (the boundary ranks of a reduction by hand) still line up their collectives.
  constexpr std::uint64_t kCollective = std::uint64_t{1} << 46;
  constexpr std::uint64_t kPair = std::uint64_t{1} << 32;      // a pair outweighs any number of size matches
  constexpr std::uint64_t kSameSide = std::uint64_t{1} << 16;  // and both in a loop, or both out: outweighs sizes
  std::vector<Key> shape;
  std::vector<std::map<std::int64_t, double>> sizes_at;  // per shape position: run -> the size placed there first
  // Per shape position, where a rank that folded loops placed a call first: 1 in a loop, 2 outside (0: none did).
  // Of the alignments pairing as many calls, the one pairing most calls on the same side of a loop's end wins: the
  // face's send after a wavefront goes with the others' face, not with their last plane's.
  std::vector<int> side_at;
  std::vector<std::vector<std::size_t>> positions(ranks.size());  // per rank, per call
  std::vector<std::vector<const Call*>> calls(ranks.size());
  // Per rank, per call: the rank's group it came from where that group is a step of a folded loop (else kNotStep).
  constexpr std::size_t kNotStep = SIZE_MAX;
  std::vector<std::vector<std::size_t>> step_of(ranks.size());
  struct RankLoop {
    std::size_t begin = 0;  // the rank's calls in the loop
    std::size_t end = 0;
    std::uint32_t iterations = 0;
  };
  std::vector<std::vector<RankLoop>> loops(ranks.size());  // per rank
  // The ranks with the most calls first: they make the backbone the others are subsequences of (an interior
  // rank of a pipeline, not a corner that skips half its calls).
  std::vector<std::size_t> order(ranks.size());
  std::vector<std::size_t> sizes(ranks.size(), 0);
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    order[r] = r;
    for (const RankGroup& g : *ranks[r]) sizes[r] += g.calls.size();
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return sizes[a] > sizes[b]; });
  std::vector<std::size_t> merged_ranks;
  for (const std::size_t r : order) {
    std::vector<Key> seq;
    std::vector<double> seq_bytes;
    std::vector<int> seq_side;
    const std::vector<RankGroup>& mine_groups = *ranks[r];
    const std::int64_t run = r < runs.size() ? runs[r] : 0;
    const bool folded =
        std::any_of(mine_groups.begin(), mine_groups.end(), [](const RankGroup& g) { return g.loop > 0; });
    std::size_t loop_end = 0;  // the first group after the loop the groups are in
    for (std::size_t gi = 0; gi < mine_groups.size(); ++gi) {
      const RankGroup& g = mine_groups[gi];
      if (g.loop > 0) loop_end = gi + g.loop;
      if (g.loop > 0) {
        std::size_t body_calls = 0;
        for (std::size_t q = gi; q < gi + g.loop && q < mine_groups.size(); ++q)
          body_calls += mine_groups[q].calls.size();
        loops[r].push_back({seq.size(), seq.size() + body_calls, g.iterations});
      }
      for (const Call& c : g.calls) {
        const int sign = c.offset > 0 ? 1 : c.offset < 0 ? -1 : 0;
        const int tag = static_cast<int>(c.peers[0] >= 0 ? c.tags[0] : c.tags[1]);
        const int detail = alignment == Alignment::Direction ? sign
                           : alignment == Alignment::Step    ? sign * (std::abs(c.offset) == 1 ? 1 : 2)
                           : alignment == Alignment::Tag || alignment == Alignment::TagRuns ? tag
                                                                                            : 0;
        seq.emplace_back(g.function, g.role, detail, alignment == Alignment::Label ? c.label : Label{0, 0, 0});
        seq_bytes.push_back(c.peers[0] >= 0 ? c.bytes[0] : c.bytes[1]);
        seq_side.push_back(!folded ? 0 : gi < loop_end ? 1 : 2);
        calls[r].push_back(&c);
        step_of[r].push_back(gi < loop_end ? gi : kNotStep);
      }
    }
    std::vector<Key> merged;
    std::vector<std::map<std::int64_t, double>> merged_sizes;
    std::vector<int> merged_side;
    std::vector<std::size_t> old_to_new(shape.size());
    std::vector<std::size_t> mine(seq.size());
    const auto weight = [&](std::size_t i, std::size_t j) -> std::uint64_t {
      if (shape[i] != seq[j]) return 0;
      const auto placed = sizes_at[i].find(run);
      return (std::get<1>(shape[i]) == Role::Collective ? kCollective : kPair) +
             (side_at[i] != 0 && side_at[i] == seq_side[j] ? kSameSide : 0) +
             (placed != sizes_at[i].end() && placed->second == seq_bytes[j] ? 1 : 0);
    };
    for (const AlignStep& step : align_weighted(shape.size(), seq.size(), weight)) {
      if (step.a != AlignStep::kNone) old_to_new[step.a] = merged.size();
      if (step.b != AlignStep::kNone) mine[step.b] = merged.size();
      merged.push_back(step.a != AlignStep::kNone ? shape[step.a] : seq[step.b]);
      merged_sizes.push_back(step.a != AlignStep::kNone ? std::move(sizes_at[step.a])
                                                        : std::map<std::int64_t, double>{});
      if (step.b != AlignStep::kNone) merged_sizes.back().try_emplace(run, seq_bytes[step.b]);
      const int side = step.a != AlignStep::kNone ? side_at[step.a] : 0;
      merged_side.push_back(side != 0 || step.b == AlignStep::kNone ? side : seq_side[step.b]);
    }
    sizes_at = std::move(merged_sizes);
    side_at = std::move(merged_side);
    for (const std::size_t done : merged_ranks) {
      for (std::size_t& x : positions[done]) x = old_to_new[x];
    }
    shape = std::move(merged);
    positions[r] = std::move(mine);
    merged_ranks.push_back(r);
  }
  // The shape's groups are its runs of calls to one function, cut where a rank's folded loop begins or ends: the
  // last plane's send of a wavefront and the send that follows the loop are two groups.
  // Where the ranks' calls of one loop fall apart in the shape, they take the union of their places (the ranks that
  // skip a plane's first receive start the loop later).
  std::vector<std::pair<std::size_t, std::size_t>> placed;  // each rank loop's first and last shape position
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    for (const RankLoop& l : loops[r]) {
      if (l.begin == l.end) continue;
      std::size_t lo = positions[r][l.begin];
      std::size_t hi = lo;
      for (std::size_t k = l.begin; k < l.end; ++k) {
        lo = std::min(lo, positions[r][k]);
        hi = std::max(hi, positions[r][k]);
      }
      placed.emplace_back(lo, hi);
    }
  }
  std::sort(placed.begin(), placed.end());
  std::vector<bool> cut(shape.size() + 1, false);
  for (std::size_t k = 0; k < placed.size();) {
    std::size_t hi = placed[k].second;
    std::size_t next = k + 1;
    while (next < placed.size() && placed[next].first <= hi) hi = std::max(hi, placed[next++].second);
    cut[placed[k].first] = true;
    cut[hi + 1] = true;
    k = next;
  }
  Shape out;
  std::vector<std::size_t> group_of(shape.size());
  for (std::size_t k = 0; k < shape.size(); ++k) {
    const std::pair<FunctionKey, Role> fn{std::get<0>(shape[k]), std::get<1>(shape[k])};
    const bool retagged =
        alignment == Alignment::TagRuns && k > 0 && std::get<2>(shape[k]) != std::get<2>(shape[k - 1]);
    if (out.groups.empty() || out.groups.back() != fn || cut[k] || retagged) out.groups.push_back(fn);
    group_of[k] = out.groups.size() - 1;
  }
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    std::map<std::size_t, std::size_t> group_of_step;
    for (std::size_t k = 0; k < calls[r].size(); ++k) {
      if (step_of[r][k] == kNotStep) continue;
      const std::size_t g = group_of[positions[r][k]];
      out.steps_split = out.steps_split || group_of_step.try_emplace(step_of[r][k], g).first->second != g;
    }
  }
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    std::vector<RankGroup> groups(out.groups.size());
    for (std::size_t g = 0; g < groups.size(); ++g) {
      groups[g].function = out.groups[g].first;
      groups[g].role = out.groups[g].second;
    }
    for (std::size_t k = 0; k < calls[r].size(); ++k) groups[group_of[positions[r][k]]].calls.push_back(*calls[r][k]);
    out.ranks.push_back(std::move(groups));
  }
  // Each rank's loop covers the shape groups its body's calls fall in; loops that overlap are one.
  const auto span_of = [&](std::size_t r, const RankLoop& l) {
    std::size_t lo = group_of[positions[r][l.begin]];
    std::size_t hi = lo;
    for (std::size_t k = l.begin; k < l.end; ++k) {
      lo = std::min(lo, group_of[positions[r][k]]);
      hi = std::max(hi, group_of[positions[r][k]]);
    }
    return std::make_pair(lo, hi);
  };
  std::vector<std::pair<std::size_t, std::size_t>> spans;  // first and last shape group
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    for (const RankLoop& l : loops[r]) {
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
  // The iterations each rank's folded loop made, per loop of the shape.
  out.loop_iterations.assign(out.loops.size(), std::vector<std::uint32_t>(ranks.size(), 0));
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    for (const RankLoop& l : loops[r]) {
      if (l.begin == l.end) continue;
      const std::size_t lo = span_of(r, l).first;
      for (std::size_t k = 0; k < out.loops.size(); ++k) {
        if (lo < out.loops[k].first || lo >= out.loops[k].first + out.loops[k].groups) continue;
        std::uint32_t& it = out.loop_iterations[k][r];
        it = it == 0 ? l.iterations : kNoIterations;
      }
    }
  }
  return out;
}

}  // namespace p3s::modeler::detail
