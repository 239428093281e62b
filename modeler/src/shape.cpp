// SPDX-License-Identifier: BSD-3-Clause
// Groups of calls per rank, and the shape they merge into.
#include "shape.hpp"

#include "align.hpp"

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
          break;
        }
      }
      const std::int64_t peer = c.peers[0] >= 0 ? c.peers[0] : c.peers[1];
      if (peer >= 0) c.offset = peer - rank.rank;
    }
    out.back().calls.push_back(c);
  }
  return out;
}

namespace {

/// The most groups a loop body may have.
constexpr std::size_t kMaxLoopBody = 8;

/// Whether group b repeats group a as the same step of a later loop iteration: one call each, to the same
/// point-to-point or completion function in the same role, with the same slots used (the peers, sizes and tags may
/// differ; iterations() says how the tags must).
bool same_step(const RankGroup& a, const RankGroup& b) {
  if (a.function != b.function || a.role != b.role || a.calls.size() != 1 || b.calls.size() != 1) return false;
  if (a.role != Role::PointToPoint && a.role != Role::Completion) return false;  // collectives are listed per call
  const Call& x = a.calls.front();
  const Call& y = b.calls.front();
  for (std::size_t s = 0; s < 2; ++s) {
    if ((x.peers[s] < 0) != (y.peers[s] < 0)) return false;
  }
  return true;
}

/// The tag of a call's slot s, signed for stepping.
std::int64_t tag_of(const Call& c, std::size_t s) { return static_cast<std::int64_t>(c.tags[s]); }

/// How the tags of the body of `size` groups at `first` step from its first iteration to its second under `rule`:
/// 0 for LoopTags::Equal; for LoopTags::Counter the step of its first tagged call, which must not be 0; nullopt
/// when the body has no such step.
std::optional<std::int64_t> tag_step(const std::vector<RankGroup>& g, std::size_t first, std::size_t size,
                                     LoopTags rule) {
  if (rule == LoopTags::Equal) return 0;
  for (std::size_t q = 0; q < size; ++q) {
    const Call& a = g[first + q].calls.front();
    const Call& b = g[first + size + q].calls.front();
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

/// How many times the body of `size` groups at `first` occurs in a row (1: no repetition), with the same functions
/// each time and every tag of iteration c its first iteration's plus c times one step (0, or the loop counter's:
/// any two iterations draw a line, so one step for the whole body is what tells a counter from a coincidence).
std::size_t iterations(const std::vector<RankGroup>& g, std::size_t first, std::size_t size, LoopTags rule) {
  if (first + 2 * size > g.size()) return 1;
  for (std::size_t q = 0; q < size; ++q) {
    if (!same_step(g[first + q], g[first + size + q])) return 1;
  }
  const std::optional<std::int64_t> step = tag_step(g, first, size, rule);
  if (!step) return 1;
  std::size_t c = 1;
  while (first + (c + 1) * size <= g.size()) {
    for (std::size_t q = 0; q < size; ++q) {
      const RankGroup& head = g[first + q];
      const RankGroup& here = g[first + c * size + q];
      if (!same_step(head, here) || !tags_on_line(head.calls.front(), here.calls.front(), *step, c)) return c;
    }
    ++c;
  }
  return c;
}

/// The loop at `first`: its body's size in groups (0: none) and its iterations; of the bodies covering the most
/// groups, the shortest (two iterations of a body of 2, not one of a body of 4).
std::pair<std::size_t, std::size_t> loop_at(const std::vector<RankGroup>& groups, std::size_t first, LoopTags tags) {
  std::size_t body = 0;
  std::size_t count = 1;
  for (std::size_t b = 2; b <= kMaxLoopBody && first + 2 * b <= groups.size(); ++b) {
    const std::size_t c = iterations(groups, first, b, tags);
    if (c >= 2 && b * c > body * count) {
      body = b;
      count = c;
    }
  }
  return {body, count};
}

}  // namespace

std::vector<RankGroup> fold_loops(std::vector<RankGroup> groups, LoopTags tags) {
  std::vector<RankGroup> out;
  std::size_t i = 0;
  while (i < groups.size()) {
    auto [body, count] = loop_at(groups, i, tags);
    // An iteration completes the requests it starts: a body is cut after its completion calls, not before. A
    // completion that ends the exchange before the loop (a transpose's MPI_Wait before a dot product's steps) is
    // no part of its first iteration, where the loop one group later covers as much.
    if (body != 0 && groups[i].role == Role::Completion && i + 1 < groups.size()) {
      const auto [later_body, later_count] = loop_at(groups, i + 1, tags);
      if (later_body * later_count >= body * count) body = 0;
    }
    if (body == 0) {
      out.push_back(std::move(groups[i++]));
      continue;
    }
    for (std::size_t q = 0; q < body; ++q) {
      RankGroup f = std::move(groups[i + q]);
      for (std::size_t t = 1; t < count; ++t) f.calls.push_back(groups[i + t * body + q].calls.front());
      f.loop = q == 0 ? static_cast<std::uint32_t>(body) : 0;
      out.push_back(std::move(f));
    }
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
  constexpr std::uint64_t kPair = std::uint64_t{1} << 32;  // a pair outweighs any number of size matches
  std::vector<Key> shape;
  std::vector<std::map<std::int64_t, double>> sizes_at;  // per shape position: run -> the size placed there first
  std::vector<std::vector<std::size_t>> positions(ranks.size());  // per rank, per call
  std::vector<std::vector<const Call*>> calls(ranks.size());
  std::vector<std::vector<std::pair<std::size_t, std::size_t>>> loops(ranks.size());  // per rank: its calls' ranges
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
    const std::vector<RankGroup>& mine_groups = *ranks[r];
    const std::int64_t run = r < runs.size() ? runs[r] : 0;
    for (std::size_t gi = 0; gi < mine_groups.size(); ++gi) {
      const RankGroup& g = mine_groups[gi];
      if (g.loop > 0) {
        std::size_t body_calls = 0;
        for (std::size_t q = gi; q < gi + g.loop && q < mine_groups.size(); ++q)
          body_calls += mine_groups[q].calls.size();
        loops[r].emplace_back(seq.size(), seq.size() + body_calls);
      }
      for (const Call& c : g.calls) {
        const int sign = c.offset > 0 ? 1 : c.offset < 0 ? -1 : 0;
        const int tag = static_cast<int>(c.peers[0] >= 0 ? c.tags[0] : c.tags[1]);
        const int detail = alignment == Alignment::Direction ? sign
                           : alignment == Alignment::Step    ? sign * (std::abs(c.offset) == 1 ? 1 : 2)
                           : alignment == Alignment::Tag     ? tag
                                                             : 0;
        seq.emplace_back(g.function, g.role, detail, alignment == Alignment::Label ? c.label : Label{0, 0, 0});
        seq_bytes.push_back(c.peers[0] >= 0 ? c.bytes[0] : c.bytes[1]);
        calls[r].push_back(&c);
      }
    }
    std::vector<Key> merged;
    std::vector<std::map<std::int64_t, double>> merged_sizes;
    std::vector<std::size_t> old_to_new(shape.size());
    std::vector<std::size_t> mine(seq.size());
    const auto weight = [&](std::size_t i, std::size_t j) -> std::uint64_t {
      if (shape[i] != seq[j]) return 0;
      const auto placed = sizes_at[i].find(run);
      return kPair + (placed != sizes_at[i].end() && placed->second == seq_bytes[j] ? 1 : 0);
    };
    for (const AlignStep& step : align_weighted(shape.size(), seq.size(), weight)) {
      if (step.a != AlignStep::kNone) old_to_new[step.a] = merged.size();
      if (step.b != AlignStep::kNone) mine[step.b] = merged.size();
      merged.push_back(step.a != AlignStep::kNone ? shape[step.a] : seq[step.b]);
      merged_sizes.push_back(step.a != AlignStep::kNone ? std::move(sizes_at[step.a])
                                                        : std::map<std::int64_t, double>{});
      if (step.b != AlignStep::kNone) merged_sizes.back().try_emplace(run, seq_bytes[step.b]);
    }
    sizes_at = std::move(merged_sizes);
    for (const std::size_t done : merged_ranks) {
      for (std::size_t& x : positions[done]) x = old_to_new[x];
    }
    shape = std::move(merged);
    positions[r] = std::move(mine);
    merged_ranks.push_back(r);
  }
  Shape out;
  std::vector<std::size_t> group_of(shape.size());
  for (std::size_t k = 0; k < shape.size(); ++k) {
    const std::pair<FunctionKey, Role> fn{std::get<0>(shape[k]), std::get<1>(shape[k])};
    if (out.groups.empty() || out.groups.back() != fn) out.groups.push_back(fn);
    group_of[k] = out.groups.size() - 1;
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
  std::vector<std::pair<std::size_t, std::size_t>> spans;  // first and last shape group
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    for (const auto& [begin, end] : loops[r]) {
      if (begin == end) continue;
      std::size_t lo = group_of[positions[r][begin]];
      std::size_t hi = lo;
      for (std::size_t k = begin; k < end; ++k) {
        lo = std::min(lo, group_of[positions[r][k]]);
        hi = std::max(hi, group_of[positions[r][k]]);
      }
      spans.emplace_back(lo, hi);
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
  return out;
}

}  // namespace p3s::modeler::detail
