// SPDX-License-Identifier: BSD-3-Clause
// Groups of calls per rank, and the loops they fold into (the shape they merge into: shape_merge.cpp).
#include "shape.hpp"

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

namespace {

/// How many of the requests open before it a completion call completes: those its actions name, else one for a
/// single wait (a receive from MPI_PROC_NULL names no message) and every one for a wait on all.
std::int64_t completed_requests(const analyzer::SigEvent& e, const Call& c, std::int64_t open) {
  if (c.completes > 0) return c.completes;
  switch (mpi::info(e.function).completes) {
    case mpi::Completes::One:
      return 1;
    case mpi::Completes::All:
      return open;
    default:
      return 0;
  }
}

/// Sets each call's Call::exchange. An exchange is a run of calls that starts where no request is open and ends
/// where the requests its calls started are all complete (a blocking call while none is open is one alone); its
/// hash mixes every call's function, role and first tag, in order.
void mark_exchanges(const analyzer::SigRank& rank, std::vector<RankGroup>& groups) {
  std::vector<Call*> pending;  // the calls of the exchange not closed yet
  std::uint64_t hash = 0;
  std::int64_t open = 0;
  const auto close = [&] {
    for (Call* p : pending) p->exchange = hash;
    pending.clear();
    hash = 0;
  };
  for (RankGroup& g : groups) {
    for (Call& c : g.calls) {
      const analyzer::SigEvent& e = rank.events[c.event];
      hash = mix64(hash ^ (static_cast<std::uint64_t>(e.function) << 40) ^ (static_cast<std::uint64_t>(g.role) << 32) ^
                   c.first_tag());
      pending.push_back(&c);
      if (starts_requests(e)) {
        ++open;
      } else if (g.role == Role::Completion) {
        open = std::max<std::int64_t>(0, open - completed_requests(e, c, open));
      }
      if (open == 0) close();
    }
  }
  close();
}

}  // namespace

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
  mark_exchanges(rank, out);
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
    // The cheap test first: most bodies do not repeat.
    const std::size_t repeated = iterations(t, first, b, same_exchange);
    if (repeated >= 2 && directed(t, first, b) &&
        (rules.exchanges == nullptr || rules.exchanges->contains(body_key(t, first, b)))) {
      better(exchanges, b, repeated);
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
      if (runs_in(tokens, i, b) >= 2 && iterations(tokens, i, b, same_exchange) >= 2 && directed(tokens, i, b)) {
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

}  // namespace p3s::modeler::detail
