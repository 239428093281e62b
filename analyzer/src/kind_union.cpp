// SPDX-License-Identifier: BSD-3-Clause
// Kinds that differ only by messages left out, merged: a longest common subsequence of each rank's calls (align.hpp),
// the calls outside it all messages.
#include "p3s/analyzer/kind_union.hpp"

#include <algorithm>
#include <cmath>

#include "p3s/align.hpp"

namespace p3s::analyzer {
namespace {

/// Whether two actions are the same but for their size.
bool same_action(const SigAction& x, const SigAction& y) {
  return x.kind == y.kind && x.peer == y.peer && x.tag == y.tag && x.comm == y.comm && x.collective == y.collective &&
         x.root == y.root && x.request == y.request;
}

bool message_action(const SigAction& a) {
  using mpi::ActionKind;
  return a.kind == ActionKind::Send || a.kind == ActionKind::Recv || a.kind == ActionKind::IrecvPost ||
         a.kind == ActionKind::IsendComplete;
}

/// A call that completes requests, and only point-to-point messages (maybe none: a wait on no request).
bool message_completion(const SigEvent& e) {
  return mpi::info(e.function).completes != mpi::Completes::None &&
         std::all_of(e.actions.begin(), e.actions.end(), message_action);
}

/// A call that only sends, receives or completes point-to-point messages.
bool message_call(const SigEvent& e) {
  return (!e.actions.empty() && std::all_of(e.actions.begin(), e.actions.end(), message_action)) ||
         message_completion(e);
}

/// Whether two calls are the same call of the program: the function and every action but its size; or two
/// completions of messages by the same function (at the same call site where both know theirs): the wait that
/// completes whichever of its exchange's messages were not empty.
bool same_call(const SigEvent& a, const SigEvent& b) {
  if (a.function != b.function || a.call != b.call) return false;
  if (a.actions.size() == b.actions.size() &&
      std::equal(a.actions.begin(), a.actions.end(), b.actions.begin(), same_action)) {
    return true;
  }
  if (!message_completion(a) || !message_completion(b)) return false;
  return a.callsite.empty() || b.callsite.empty() || a.callsite == b.callsite;
}

/// `count` samples of 0.
Stat zeros(std::uint64_t count) {
  Stat s;
  s.n = count;
  return s;
}

/// A statistic counted as `weight` samples, its mean and spread kept: the kinds' instances weigh, whatever number
/// of them a rank's statistic counted.
Stat counted(const Stat& s, std::uint64_t weight) {
  Stat out = s;
  out.n = weight;
  const double sd = s.stddev > 0 || s.n < 2 ? s.stddev : std::sqrt(s.m2 / static_cast<double>(s.n - 1));
  out.m2 = weight > 1 ? sd * sd * static_cast<double>(weight - 1) : 0;
  return out;
}

/// The statistic of both kinds' instances; a side without the call (`nullptr`) adds `weight` zeros.
Stat pooled_or_zeros(const Stat* a, std::uint64_t a_weight, const Stat* b, std::uint64_t b_weight) {
  return pooled(a != nullptr ? counted(*a, a_weight) : zeros(a_weight),
                b != nullptr ? counted(*b, b_weight) : zeros(b_weight));
}

/// The weighted mean of two means, one of them 0 where its side lacks the call.
double mean_of(const double* a, std::uint64_t a_weight, const double* b, std::uint64_t b_weight) {
  const double wa = static_cast<double>(a_weight);
  const double wb = static_cast<double>(b_weight);
  return wa + wb > 0 ? ((a != nullptr ? *a * wa : 0) + (b != nullptr ? *b * wb : 0)) / (wa + wb) : 0;
}

/// Where a merged call's requests began: each side's call index -> the merged list's.
struct Indices {
  const std::vector<std::int32_t>* a = nullptr;
  const std::vector<std::int32_t>* b = nullptr;
};

/// The merged index of a side's call `s` (-1: none, or one before the instance).
std::int32_t merged_index(std::int32_t s, const std::vector<std::int32_t>& to) {
  return s >= 0 && static_cast<std::size_t>(s) < to.size() ? to[static_cast<std::size_t>(s)] : -1;
}

/// An action of the merged call from `x` (of `a`'s instances) and `y` (of `b`'s), either missing, not both; the
/// call that started its request named by its merged index.
SigAction merged_action(const SigAction* x, std::uint64_t a_weight, const SigAction* y, std::uint64_t b_weight,
                        const Indices& index) {
  SigAction out = x != nullptr ? *x : *y;
  out.bytes = mean_of(x != nullptr ? &x->bytes : nullptr, a_weight, y != nullptr ? &y->bytes : nullptr, b_weight);
  out.bytes_received = mean_of(x != nullptr ? &x->bytes_received : nullptr, a_weight,
                               y != nullptr ? &y->bytes_received : nullptr, b_weight);
  if (x != nullptr && y != nullptr) {
    out.bytes_min = std::min(x->bytes_min, y->bytes_min);
    out.bytes_max = std::max(x->bytes_max, y->bytes_max);
  } else {
    out.bytes_min = 0;
  }
  out.started = merged_index(out.started, x != nullptr ? *index.a : *index.b);
  return out;
}

/// Whether two actions complete requests that the same merged call started (or neither names its start): an
/// Isend's completion names no peer, so only its start tells which send it completes.
bool same_start(const SigAction& lead, const SigAction& other, bool a_leads, const Indices& index) {
  const SigAction& x = a_leads ? lead : other;
  const SigAction& y = a_leads ? other : lead;
  return merged_index(x.started, *index.a) == merged_index(y.started, *index.b);
}

/// The calls an event stands for, over `weight` instances (1 each where never counted).
Stat counted_calls(const Stat& s, std::uint64_t weight) {
  if (s.n != 0) return counted(s, weight);
  Stat one;
  one.n = weight;
  one.mean = one.min = one.max = 1;
  return one;
}

/// One call of the merged rank: `a`'s and `b`'s (either may be missing, not both); its actions are both calls'
/// (those alike once).
SigEvent merged_call(const SigEvent* a, std::uint64_t a_weight, const SigEvent* b, std::uint64_t b_weight,
                     const Indices& index) {
  SigEvent out = a != nullptr ? *a : *b;
  const auto stat = [&](Stat SigEvent::*field) {
    return pooled_or_zeros(a != nullptr ? &(a->*field) : nullptr, a_weight, b != nullptr ? &(b->*field) : nullptr,
                           b_weight);
  };
  out.burst_work = stat(&SigEvent::burst_work);
  out.burst_ns = stat(&SigEvent::burst_ns);
  out.call_ns = stat(&SigEvent::call_ns);
  // The calls an event stands for count where it was made.
  if (a != nullptr && b != nullptr)
    out.calls = pooled(counted_calls(a->calls, a_weight), counted_calls(b->calls, b_weight));
  // The actions in the order of the call that makes more of them, each matched with one alike of the other.
  const bool a_leads = b == nullptr || (a != nullptr && a->actions.size() >= b->actions.size());
  const SigEvent* lead = a_leads ? a : b;
  const SigEvent* other = a_leads ? b : a;
  const std::size_t count = other != nullptr ? other->actions.size() : 0;
  std::vector<bool> used(count, false);
  const auto add = [&](const SigAction* from_lead, const SigAction* from_other) {
    const SigAction* x = a_leads ? from_lead : from_other;
    const SigAction* y = a_leads ? from_other : from_lead;
    out.actions.push_back(merged_action(x, a_weight, y, b_weight, index));
  };
  out.actions.clear();
  for (const SigAction& x : lead->actions) {
    const SigAction* y = nullptr;
    for (std::size_t q = 0; q < count && y == nullptr; ++q) {
      if (!used[q] && same_action(x, other->actions[q]) && same_start(x, other->actions[q], a_leads, index)) {
        used[q] = true;
        y = &other->actions[q];
      }
    }
    add(&x, y);
  }
  for (std::size_t q = 0; q < count; ++q) {
    if (!used[q]) add(nullptr, &other->actions[q]);
  }
  return out;
}

}  // namespace

std::optional<SigRank> merge_rank_calls(const SigRank& a, std::uint64_t a_weight, const SigRank& b,
                                        std::uint64_t b_weight, std::uint64_t most_cells) {
  const std::size_t n = a.events.size();
  const std::size_t m = b.events.size();
  if (n + 1 > most_cells / (m + 1)) return std::nullopt;
  const std::vector<AlignStep> steps =
      align(n, m, [&](std::size_t i, std::size_t j) { return same_call(a.events[i], b.events[j]); });
  for (const AlignStep& s : steps) {
    if (s.a == AlignStep::kNone && !message_call(b.events[s.b])) return std::nullopt;
    if (s.b == AlignStep::kNone && !message_call(a.events[s.a])) return std::nullopt;
  }
  SigRank out;
  out.rank = a.rank;
  out.thread = a.thread;
  std::vector<std::int32_t> index_a(n, -1);
  std::vector<std::int32_t> index_b(m, -1);
  for (std::size_t k = 0; k < steps.size(); ++k) {
    if (steps[k].a != AlignStep::kNone) index_a[steps[k].a] = static_cast<std::int32_t>(k);
    if (steps[k].b != AlignStep::kNone) index_b[steps[k].b] = static_cast<std::int32_t>(k);
  }
  const Indices index{&index_a, &index_b};
  for (const AlignStep& s : steps) {
    const SigEvent* x = s.a != AlignStep::kNone ? &a.events[s.a] : nullptr;
    const SigEvent* y = s.b != AlignStep::kNone ? &b.events[s.b] : nullptr;
    out.events.push_back(merged_call(x, a_weight, y, b_weight, index));
  }
  out.tail_work = pooled_or_zeros(&a.tail_work, a_weight, &b.tail_work, b_weight);
  out.tail_ns = pooled_or_zeros(&a.tail_ns, a_weight, &b.tail_ns, b_weight);
  out.mismatched_instances = a.mismatched_instances + b.mismatched_instances;
  return out;
}

std::optional<SigPhase> united_kinds(const SigPhase& into, const SigPhase& from) {
  SigPhase out = into;
  out.ranks.clear();
  const auto find = [](const SigPhase& p, const SigRank& like) -> const SigRank* {
    for (const SigRank& r : p.ranks) {
      if (r.rank == like.rank && r.thread == like.thread) return &r;
    }
    return nullptr;
  };
  const auto none_like = [](const SigRank& like) {
    SigRank r;
    r.rank = like.rank;
    r.thread = like.thread;
    return r;
  };
  // A rank without calls in one kind makes none of the other's there.
  for (const SigRank& r : into.ranks) {
    const SigRank* other = find(from, r);
    std::optional<SigRank> m = merge_rank_calls(r, into.weight, other != nullptr ? *other : none_like(r), from.weight);
    if (!m) return std::nullopt;
    out.ranks.push_back(std::move(*m));
  }
  for (const SigRank& r : from.ranks) {
    if (find(into, r) != nullptr) continue;
    std::optional<SigRank> m = merge_rank_calls(none_like(r), into.weight, r, from.weight);
    if (!m) return std::nullopt;
    out.ranks.push_back(std::move(*m));
  }
  std::sort(out.ranks.begin(), out.ranks.end(), [](const SigRank& x, const SigRank& y) {
    return x.rank != y.rank ? x.rank < y.rank : x.thread < y.thread;
  });
  out.weight = into.weight + from.weight;
  out.ticks = std::max(into.ticks, from.ticks);
  out.time_ns = pooled_or_zeros(&into.time_ns, into.weight, &from.time_ns, from.weight);
  out.work = pooled_or_zeros(&into.work, into.weight, &from.work, from.weight);
  return out;
}

}  // namespace p3s::analyzer
