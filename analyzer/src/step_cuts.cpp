// SPDX-License-Identifier: BSD-3-Clause
// The steps of a stretch of calls: an alignment of the calls to copies of the step's body one after another (a
// wrap-around alignment: where one copy ends, the next begins), in O(calls x body) time and one byte per cell.
#include "step_cuts.hpp"

#include <algorithm>
#include <limits>
#include <set>
#include <unordered_map>

#include "p3s/hash.hpp"

namespace p3s::analyzer {
namespace {

/// Whether aligning `calls` calls with `body` calls takes at most `most_cells` cells.
bool within(std::uint64_t calls, std::uint64_t body, std::uint64_t most_cells) {
  return calls + 1 <= most_cells / (body + 1);
}

/// What the best alignment did last to reach a cell.
enum class Move : std::uint8_t { Start, Match, Extra, Skip, Next };

/// A call the copies do not hold, or a call of the body a copy does not make.
constexpr std::uint64_t kLeftOut = 2;

/// An alignment's cost: the calls it leaves out on either side, then how early its copies begin (the sum over
/// them of the calls after their start): calls between two copies cost the same in either, and end the first.
struct Cost {
  std::uint64_t left_out = 0;
  std::uint64_t early = 0;
  friend bool operator<(const Cost& a, const Cost& b) noexcept {
    return a.left_out != b.left_out ? a.left_out < b.left_out : a.early < b.early;
  }
};
constexpr Cost kNever{std::numeric_limits<std::uint64_t>::max() / 4, 0};

/// A copy of the body: the first call it spans and how many of the body's calls it makes.
struct Copy {
  std::uint64_t begin = 0;
  std::uint64_t made = 0;
};

/// The copies along the best alignment, from the moves of every cell (row by row, p + 1 per row).
std::vector<Copy> copies_along(const std::vector<Move>& moves, std::uint64_t rows, std::uint64_t p) {
  std::vector<Copy> out{{0, 0}};
  std::uint64_t i = rows - 1;
  std::uint64_t j = p;
  while (i > 0 || j > 0) {
    switch (moves[i * (p + 1) + j]) {
      case Move::Match:
        ++out.back().made;
        --i;
        --j;
        break;
      case Move::Extra:
        --i;
        break;
      case Move::Skip:
        --j;
        break;
      case Move::Next:
        out.back().begin = i;
        out.push_back({0, 0});
        j = p;
        break;
      case Move::Start:
        i = 0;
        j = 0;
        break;
    }
  }
  std::reverse(out.begin(), out.end());
  return out;
}

/// A repeat's phases hold at least this share of the calls of the one holding the most to be the main repeat.
constexpr double kMainShare = 0.25;

/// The occurrence whose phase is the location's step (location_steps), or the count of occurrences where none is.
std::size_t step_occurrence(std::span<const std::uint64_t> phase, std::span<const std::uint64_t> first,
                            std::uint64_t end) {
  struct Repeat {
    std::uint64_t count = 0;
    std::uint64_t calls = 0;
    std::size_t first = 0;
  };
  std::unordered_map<std::uint64_t, Repeat> repeats;
  for (std::size_t k = 0; k < phase.size(); ++k) {
    Repeat& r = repeats.try_emplace(phase[k], Repeat{.first = k}).first->second;
    ++r.count;
    r.calls += (k + 1 < first.size() ? first[k + 1] : end) - first[k];
  }
  std::uint64_t most_calls = 0;
  for (const auto& [h, r] : repeats) most_calls = std::max(most_calls, r.calls);
  const Repeat* step = nullptr;
  for (const auto& [h, r] : repeats) {
    if (r.count < 2 || static_cast<double>(r.calls) < kMainShare * static_cast<double>(most_calls)) continue;
    if (step == nullptr || r.count > step->count || (r.count == step->count && r.first < step->first)) step = &r;
  }
  return step != nullptr ? step->first : phase.size();
}

/// A phase that occurs at least this often on a location is no set-up: a repeat.
constexpr std::uint64_t kRepeated = 3;

/// How many of `body`'s calls `calls` make in their order (the longest common subsequence), or 0 where that would
/// take more than `most_cells` cells.
std::uint64_t common_calls(std::span<const std::uint64_t> calls, std::span<const std::uint64_t> body,
                           std::uint64_t most_cells) {
  if (!within(calls.size(), body.size(), most_cells)) return 0;
  std::vector<std::uint64_t> prev(body.size() + 1, 0);
  std::vector<std::uint64_t> cur(body.size() + 1, 0);
  for (const std::uint64_t c : calls) {
    for (std::size_t j = 1; j <= body.size(); ++j) {
      cur[j] = c == body[j - 1] ? prev[j - 1] + 1 : std::max(prev[j], cur[j - 1]);
    }
    std::swap(prev, cur);
  }
  return prev.back();
}

/// A sequence of calls' hash (its length and each call in order).
std::uint64_t calls_hash(std::span<const std::uint64_t> calls) {
  std::uint64_t h = mix64(calls.size());
  for (const std::uint64_t c : calls) h = mix64(h ^ c) + kGoldenGamma;
  return h;
}

/// Sequences of calls that are steps, looked up at either end of a stretch.
class StepKinds {
  static constexpr std::uint64_t kMostHeld = 1u << 20;

 public:
  /// Holds `calls` as a step, where the steps held so far leave room for them (kMostHeld calls in all).
  void add(std::vector<std::uint64_t> calls) {
    if (calls.empty() || held_ + calls.size() > kMostHeld) return;
    const std::uint64_t h = calls_hash(calls);
    auto& same = by_hash_[h];
    if (std::find(same.begin(), same.end(), calls) != same.end()) return;
    lengths_.insert(calls.size());
    held_ += calls.size();
    same.push_back(std::move(calls));
  }
  /// The length of the longest step that calls [from, to) begin with (`forward`) or end with; 0 where none does.
  [[nodiscard]] std::uint64_t at(std::span<const std::uint64_t> calls, std::uint64_t from, std::uint64_t to,
                                 bool forward) const {
    for (auto l = lengths_.rbegin(); l != lengths_.rend(); ++l) {
      if (*l > to - from) continue;
      const std::span<const std::uint64_t> part = calls.subspan(forward ? from : to - *l, *l);
      const auto it = by_hash_.find(calls_hash(part));
      if (it == by_hash_.end()) continue;
      for (const std::vector<std::uint64_t>& k : it->second) {
        if (std::equal(k.begin(), k.end(), part.begin(), part.end())) return *l;
      }
    }
    return 0;
  }

 private:
  std::uint64_t held_ = 0;  // calls held, over every sequence
  std::set<std::uint64_t> lengths_;
  std::unordered_map<std::uint64_t, std::vector<std::vector<std::uint64_t>>> by_hash_;
};

}  // namespace

std::optional<std::vector<std::uint64_t>> step_cuts(std::span<const std::uint64_t> calls,
                                                    std::span<const std::uint64_t> body, std::uint64_t most_cells) {
  const std::uint64_t n = calls.size();
  const std::uint64_t p = body.size();
  if (n == 0 || p == 0 || !within(n, p, most_cells)) return std::nullopt;
  std::vector<Move> moves((n + 1) * (p + 1), Move::Start);
  std::vector<Cost> prev(p + 1);
  std::vector<Cost> cur(p + 1);
  for (std::uint64_t j = 0; j <= p; ++j) {
    prev[j] = {j * kLeftOut, 0};
    if (j > 0) moves[j] = Move::Skip;
  }
  for (std::uint64_t i = 1; i <= n; ++i) {
    Move* row = &moves[i * (p + 1)];
    const auto settle = [&](std::uint64_t j, Cost cost, Move m) {
      if (cost < cur[j]) {
        cur[j] = cost;
        row[j] = m;
      }
    };
    const auto plus = [](Cost c, std::uint64_t left_out) { return Cost{c.left_out + left_out, c.early}; };
    std::fill(cur.begin(), cur.end(), kNever);
    settle(0, plus(prev[0], kLeftOut), Move::Extra);
    for (std::uint64_t j = 1; j <= p; ++j) {
      if (calls[i - 1] == body[j - 1]) settle(j, prev[j - 1], Move::Match);
      settle(j, plus(prev[j], kLeftOut), Move::Extra);
      settle(j, plus(cur[j - 1], kLeftOut), Move::Skip);
    }
    // A copy ends here and the next begins: the calls the next copy skips at its start follow from it.
    if (i < n) {
      settle(0, {cur[p].left_out, cur[p].early + (n - i)}, Move::Next);
      if (row[0] == Move::Next) {
        for (std::uint64_t j = 1; j < p; ++j) settle(j, plus(cur[j - 1], kLeftOut), Move::Skip);
      }
    }
    std::swap(prev, cur);
  }
  const std::vector<Copy> copies = copies_along(moves, n + 1, p);
  std::vector<std::uint64_t> out;
  for (std::size_t c = 0; c < copies.size(); ++c) {
    const std::uint64_t end = c + 1 < copies.size() ? copies[c + 1].begin : n;
    const std::uint64_t spans = end - copies[c].begin;
    // More than half of the body's calls in order, and more than a third of the calls the copy spans.
    if (2 * copies[c].made <= p || 3 * copies[c].made <= spans) return std::nullopt;
    out.push_back(copies[c].begin);
  }
  return out;
}

std::vector<std::vector<std::uint64_t>> location_steps(std::span<const std::uint64_t> phase,
                                                       std::span<const std::uint64_t> first, std::uint64_t end,
                                                       const std::function<std::uint64_t(std::uint64_t)>& shape,
                                                       std::vector<std::uint8_t>* partial,
                                                       std::vector<std::uint64_t>* rest) {
  std::vector<std::vector<std::uint64_t>> out(phase.size());
  if (partial != nullptr) partial->assign(phase.size(), 0);
  if (rest != nullptr) rest->assign(phase.size(), 0);
  const std::size_t step = step_occurrence(phase, first, end);
  if (step == phase.size()) return out;
  const auto calls_of = [&](std::size_t k) {
    std::vector<std::uint64_t> calls;
    const std::uint64_t last = k + 1 < first.size() ? first[k + 1] : end;
    for (std::uint64_t i = first[k]; i < last; ++i) calls.push_back(shape(i));
    return calls;
  };
  const std::vector<std::uint64_t> body = calls_of(step);
  std::unordered_map<std::uint64_t, std::uint64_t> count;  // occurrences of each phase
  for (const std::uint64_t p : phase) ++count[p];
  struct Told {
    std::optional<std::vector<std::uint64_t>> steps;
    bool partial = false;
  };
  std::unordered_map<std::uint64_t, Told> known;  // the calls' hash -> steps
  for (std::size_t k = 0; k < phase.size(); ++k) {
    if (phase[k] == phase[step]) {
      out[k] = {first[k]};
      continue;
    }
    const std::vector<std::uint64_t> calls = calls_of(k);
    const std::uint64_t h = calls_hash(calls);
    auto it = known.find(h);
    if (it == known.end()) {
      Told told{step_cuts(calls, body)};
      if (!told.steps && count.at(phase[k]) >= kRepeated) {
        // A repeat that makes more than half of the step's calls in order is one step whatever calls of its own it
        // adds (a rank that holds particles exchanges them); one whose calls are all the step's, fewer, may be a
        // step that skips its exchanges (a rank that holds none makes the check alone).
        const std::uint64_t common = common_calls(calls, body, 1u << 22);
        if (2 * common > body.size()) told.steps = std::vector<std::uint64_t>{0};
        told.partial = !told.steps && !calls.empty() && common == calls.size();
      }
      it = known.emplace(h, std::move(told)).first;
    }
    if (partial != nullptr) (*partial)[k] = it->second.partial ? 1 : 0;
    if (!it->second.steps) continue;
    for (const std::uint64_t at : *it->second.steps) out[k].push_back(first[k] + at);
  }
  if (rest == nullptr) return out;
  // The steps the location makes, call for call: the body, and each step of a repeat.
  StepKinds kinds;
  for (std::size_t k = 0; k < phase.size(); ++k) {
    if (out[k].empty() || (phase[k] != phase[step] && count.at(phase[k]) < kRepeated)) continue;
    const std::vector<std::uint64_t> calls = calls_of(k);
    for (std::size_t i = 0; i < out[k].size(); ++i) {
      const std::uint64_t to = i + 1 < out[k].size() ? out[k][i + 1] - first[k] : calls.size();
      kinds.add({calls.begin() + static_cast<std::ptrdiff_t>(out[k][i] - first[k]),
                 calls.begin() + static_cast<std::ptrdiff_t>(to)});
    }
  }
  for (std::size_t k = 0; k < phase.size(); ++k) {
    if (!out[k].empty() || count.at(phase[k]) != 1) continue;
    const std::vector<std::uint64_t> calls = calls_of(k);
    std::vector<std::uint64_t> head{0};  // where each step at the head begins, then where they end
    while (const std::uint64_t n = kinds.at(calls, head.back(), calls.size(), true)) head.push_back(head.back() + n);
    std::vector<std::uint64_t> tail{calls.size()};  // where each step at the tail ends, then where they begin
    while (const std::uint64_t n = kinds.at(calls, head.back(), tail.back(), false)) tail.push_back(tail.back() - n);
    if (head.size() == 1 && tail.size() == 1) continue;
    // The pieces: the head's steps, the rest between them and the tail's (where it holds calls), the tail's steps.
    for (std::size_t i = 0; i + 1 < head.size(); ++i) out[k].push_back(first[k] + head[i]);
    if (head.back() < tail.back()) {
      (*rest)[k] = out[k].size() + 1;
      out[k].push_back(first[k] + head.back());
    }
    for (std::size_t i = tail.size() - 1; i > 0; --i) out[k].push_back(first[k] + tail[i]);
  }
  return out;
}

}  // namespace p3s::analyzer
