// SPDX-License-Identifier: BSD-3-Clause
// Phase detection: folds the tick sequence's tandem repeats into loops, innermost first, then reads the phases off.
//
// Definition (what the result must equal). Let r = min_repetitions and P = max_period. The reference procedure is
//   p = 1
//   while p <= P:
//     scan the current sequence left to right; at the first position i where s[i, i + r*p) has period p and the
//     body s[i, i + p) is primitive, extend the run to the right as far as period p holds, replace its k whole
//     copies by one loop symbol (body, k) and go on right after it (the partial copy left over, if any, stays);
//     p = 1 if anything was folded in this scan, else p + 1
// so the shortest period is always folded first, and leftmost first within a period (the body starts where the
// repetition starts: a loop is never rotated). Folding can create new repeats of any period (the new loop symbols
// may repeat), hence the restart from p = 1. Loop symbols are equal exactly when body and count are equal.
//
// Implementation. Running the reference literally costs O(n * P) per scan, and it restarts after every fold.
// Two mechanisms replace it, with the invariant: every foldable repeat of a period below `sweep` contains a
// pending position p with p.from <= its period.
// - Sweep of period d (when nothing is pending, so no repeat shorter than d exists anywhere): a run of period d
//   with r >= 2 copies has a streak of at least (r - 1) * d >= d positions x with s[x] == s[x + d], so the streak
//   contains a multiple of d. Testing s[x] == s[x + d] at the n / d multiples only and extending each hit both
//   ways finds every run of period d, each streak once; folding them left to right (a run that begins inside
//   the loop just folded starts right after it) is the reference scan of period d. Then sweep = d + 1.
// - Pending rounds (the reference's restart): after folds, a window that contains no new loop symbol was a
//   window of the old sequence, so every new repeat contains a new loop symbol, which becomes pending. A repeat
//   of period d containing y has s[y + d] == s[y] or s[y - d] == s[y], and its streak contains y or y - d, so
//   each pending position tests d = from, from + 1, ... below `sweep` and stops at its first repeat. The
//   smallest period found over all pending positions is the reference's next period (nothing shorter exists
//   anywhere, by the invariant), and every repeat of that period contains a pending position, so folding the
//   runs found is the reference scan of that period. A pending position that repeats only with a longer period
//   stays pending from that period; one with no repeat below `sweep` is dropped (the sweeps take over).
// A run folds in one step whatever its number of copies. Its body is primitive because no shorter repeat is
// left when it folds (were the body v^m, v would repeat at least r times with period |v|); this is checked
// anyway. Next-occurrence chains (try at j only the distances to later occurrences of s[j]) were tried first
// and dropped: a tick that recurs every few items without the stretch folding, such as the glue of an outer
// loop whose inner loop runs a varying number of times, gives every position about P / 5 candidates, and each
// round of folds resets them; the sweep's cost does not depend on how often symbols recur.
// The folds of a round are applied in place; the longest stretch between folds stays where it is and the rest
// moves towards it, so a few folds far from the bulk of the run (loops of the initialisation) stay cheap.
//
// Complexity. Numbering the tick symbols: O(n) expected (hashing). Sweeps: at most n * (ln P + 1) sample tests
// in all, plus the streak extensions, each streak once per period: a streak that folds is consumed, one that
// does not is shorter than (r - 1) * d, which costs little except on inputs with near-repeats at every period
// (the worst case is O(n * P)). Pending rounds: O(min(sweep, P)) tests per pending position and round, streaks
// shared by the positions inside them; rounds are few (about one per nesting level and per period that
// folds). Applying folds: O(run length) per fold and O(items moved) per round. Measured on a 2-core VM: 10^7
// ticks of a period-50 loop, or of three nested loops, in about 0.2 s; 10^6 distinct ticks in 0.1 s (see
// tests/bench/phase_finder_bench.cpp). Memory O(n + P): one 32-bit array over the sequence, the pending
// positions, a per-period cache, and the grammar.
//
// Phases are then read off the folded grammar (see the header): the body of a loop without inner loops is one
// phase, and every maximal stretch of ticks between loops (inside a body with inner loops, or at the top level)
// is one phase; equal tick sequences are one phase. Expanding the grammar once, in run order, yields the
// occurrences, the weights and the phase ids in order of first occurrence, in O(n) time and output size.
#include "p3s/analyzer/phase_finder.hpp"

#include "p3s/error.hpp"
#include "p3s/hash.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <unordered_map>
#include <utility>

namespace p3s::analyzer {
namespace {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
/// Positions are 32-bit; loop symbols (at most one per fold, fewer than n folds) share the id space with the
/// at most n distinct tick symbols, so n < 2^31 keeps every id below kNone.
constexpr std::uint64_t kMaxTicks = std::uint64_t{1} << 31;

/// Hash of a sequence of ids (FNV-style accumulation of mixed values).
std::uint64_t hash_ids(const std::uint32_t* ids, std::size_t length, std::uint64_t seed) {
  std::uint64_t h = mix_bits(seed ^ length);
  for (std::size_t i = 0; i < length; ++i) h = mix_bits(h ^ ids[i]) + kGoldenGamma;
  return h;
}

/// Tick symbol -> dense id in order of first appearance. Open addressing with linear probing, load <= 1/2; the
/// table holds ids only and the symbols live once in `symbols_`, so it costs about 16 bytes per distinct symbol.
class SymbolNumbering {
 public:
  std::uint32_t id_of(TickSymbol symbol) {
    if (2 * (symbols_.size() + 1) > slots_.size()) grow();
    std::size_t mask = slots_.size() - 1;
    for (std::size_t s = mix_bits(symbol) & mask;; s = (s + 1) & mask) {
      if (slots_[s] == kNone) {
        slots_[s] = static_cast<std::uint32_t>(symbols_.size());
        symbols_.push_back(symbol);
        return slots_[s];
      }
      if (symbols_[slots_[s]] == symbol) return slots_[s];
    }
  }
  [[nodiscard]] std::vector<TickSymbol>& symbols() { return symbols_; }

 private:
  void grow() {
    std::vector<std::uint32_t> slots(std::max<std::size_t>(64, 2 * slots_.size()), kNone);
    std::size_t mask = slots.size() - 1;
    for (std::uint32_t id = 0; id < symbols_.size(); ++id) {
      std::size_t s = mix_bits(symbols_[id]) & mask;
      while (slots[s] != kNone) s = (s + 1) & mask;
      slots[s] = id;
    }
    slots_ = std::move(slots);
  }

  std::vector<std::uint32_t> slots_;
  std::vector<TickSymbol> symbols_;
};

/// A loop symbol of the folded grammar.
struct Loop {
  std::uint64_t count = 0;
  std::uint64_t ticks = 0;  ///< ticks of one instance
  std::size_t body_offset = 0;
  std::uint32_t body_length = 0;
  std::uint32_t depth = 0;
  bool has_inner_loop = false;
};

/// One fold decided during a sweep or a pending round, applied at the end of it.
struct Fold {
  std::uint32_t start = 0;
  std::uint32_t period = 0;
  std::uint64_t copies = 0;
  std::uint32_t loop = 0;  ///< symbol id of the loop
};

/// The folding search. Symbol ids below `terminals_` are ticks, the others loops (id - terminals_).
class Folder {
 public:
  Folder(std::span<const TickSymbol> ticks, const PhaseFinderOptions& options) : reps_(options.min_repetitions) {
    SymbolNumbering numbering;
    buf_.resize(ticks.size());
    for (std::size_t i = 0; i < ticks.size(); ++i) buf_[i] = numbering.id_of(ticks[i]);
    end_ = buf_.size();
    symbols_ = std::move(numbering.symbols());
    terminals_ = static_cast<std::uint32_t>(symbols_.size());
    // No period longer than n / r fits in the sequence, and the sequence only shrinks.
    period_limit_ = static_cast<std::uint32_t>(std::min<std::uint64_t>(options.max_period, ticks.size() / reps_));
    streaks_.resize(std::size_t{period_limit_} + 1);
  }

  void run() {
    std::uint32_t sweep = 1;  // every period below it has been swept
    for (;;) {
      while (!pending_.empty()) pending_round(std::min(sweep - 1, period_limit_));
      if (sweep > period_limit_) return;
      sweep_period(sweep++);
    }
  }

  [[nodiscard]] std::span<const std::uint32_t> top() const { return {seq(), size()}; }
  [[nodiscard]] const std::vector<Loop>& loops() const { return loops_; }
  [[nodiscard]] const std::vector<std::uint32_t>& bodies() const { return bodies_; }
  [[nodiscard]] const std::vector<TickSymbol>& symbols() const { return symbols_; }
  [[nodiscard]] std::uint32_t terminals() const { return terminals_; }

 private:
  /// A position next to which a repeat may have appeared; no repeat of a period below `from` contains it.
  struct Pending {
    std::uint32_t position = 0;
    std::uint32_t from = 1;
  };
  /// A maximal run of the period at hand, d: [start, end) with s[x] == s[x + d] for x in [start, end - d).
  struct Run {
    std::uint64_t start = 0;
    std::uint64_t end = 0;
  };
  /// The streak of matches of one period last computed in a pending round, reused by the positions inside it.
  struct Streak {
    std::uint64_t round = 0;
    std::uint64_t start = 0;
    std::uint64_t end = 0;
  };

  [[nodiscard]] std::uint64_t size() const { return end_ - begin_; }
  [[nodiscard]] const std::uint32_t* seq() const { return buf_.data() + begin_; }

  /// The maximal interval [start, end) around x in which s[y] == s[y + d]; empty when s[x] != s[x + d].
  [[nodiscard]] Run streak(std::uint64_t x, std::uint32_t d) const {
    const std::uint32_t* s = seq();
    std::uint64_t end = x;
    while (end + d < size() && s[end] == s[end + d]) ++end;
    std::uint64_t start = x;
    if (end > x) {
      while (start > 0 && s[start - 1] == s[start - 1 + d]) --start;
    }
    return {start, end};
  }

  /// Folds, left to right, the repeats of period d with at least r copies in these runs (sorted by start), as the
  /// reference scan does: a run that begins inside the loop just folded starts right after it.
  void fold_runs(std::span<const Run> runs, std::uint32_t d) {
    std::uint64_t folded_to = 0;
    for (const Run& r : runs) {
      std::uint64_t start = std::max(r.start, folded_to);
      if (r.end < start) continue;
      std::uint64_t copies = (r.end - start) / d;
      if (copies < reps_ || !primitive(start, d)) continue;
      folds_.push_back({.start = static_cast<std::uint32_t>(start),
                        .period = d,
                        .copies = copies,
                        .loop = loop_symbol(static_cast<std::uint32_t>(start), d, copies)});
      folded_to = start + copies * d;
    }
  }

  /// The reference scan of period d over the whole sequence, when no shorter repeat is left anywhere. A run of
  /// period d with r >= 2 copies has a streak of at least d matches, so it contains a multiple of d: testing
  /// s[x] == s[x + d] at those n / d samples, and extending around the hits, finds every run.
  void sweep_period(std::uint32_t d) {
    folds_.clear();
    runs_.clear();
    const std::uint64_t needed = std::uint64_t{reps_ - 1} * d;
    for (std::uint64_t x = 0; x + d < size();) {
      if (seq()[x] != seq()[x + d]) {
        x += d;
        continue;
      }
      Run s = streak(x, d);
      if (s.end - s.start >= needed) runs_.push_back({s.start, s.end + d});
      x = (s.end / d + 1) * d;  // s.end is a mismatch; the next streak starts after it
    }
    fold_runs(runs_, d);
    if (!folds_.empty()) compact();
  }

  /// Finds the shortest period (at most `limit`) of a repeat containing a pending position, folds every repeat of
  /// that period (each contains a pending position) and re-queues what may still repeat.
  void pending_round(std::uint32_t limit) {
    ++round_;
    std::uint32_t best = kNone;
    runs_.clear();
    std::size_t kept = 0;
    for (Pending p : pending_) {
      std::uint32_t from = shortest_repeat(p, limit, best);
      if (from == kNone) continue;  // no repeat below the swept periods: the sweeps take it from here
      pending_[kept++] = {p.position, from};
    }
    pending_.resize(kept);
    if (best == kNone) {
      pending_.clear();
      return;
    }
    std::sort(runs_.begin(), runs_.end(), [](const Run& a, const Run& b) { return a.start < b.start; });
    runs_.erase(std::unique(runs_.begin(), runs_.end(),
                            [](const Run& a, const Run& b) { return a.start == b.start && a.end == b.end; }),
                runs_.end());
    folds_.clear();
    fold_runs(runs_, best);
    if (folds_.empty()) {
      // Unreachable: the leftmost run found is never truncated and its body is primitive. Stop rather than
      // find the same runs again forever.
      pending_.clear();
      return;
    }
    compact();
  }

  /// Looks for the shortest period d in [p.from, limit] of a repeat containing y = p.position. A repeat of period
  /// d containing y puts an equal symbol at y + d or y - d, and its streak then contains y or y - d. Records in
  /// runs_ the runs of the shortest period seen so far in this round (`best`), and stops at `best`. Returns the
  /// shortest period not ruled out (from which to look again next round), or kNone when none up to `limit` is left.
  std::uint32_t shortest_repeat(Pending p, std::uint32_t limit, std::uint32_t& best) {
    const std::uint64_t y = p.position;
    const std::uint32_t* s = seq();
    for (std::uint32_t d = p.from; d <= limit; ++d) {
      if (d > best) return d;
      bool found = false;
      for (std::uint64_t x : {y, y - d}) {
        if (x > y || x + d >= size() || s[x] != s[x + d]) continue;  // x > y: y - d wrapped around
        Run r = cached_streak(x, d);
        if (r.end - r.start < std::uint64_t{reps_ - 1} * d) continue;
        if (d < best) {
          best = d;
          runs_.clear();
        }
        runs_.push_back({r.start, r.end + d});
        found = true;
      }
      if (found) return d;
    }
    return kNone;
  }

  /// streak(x, d), computed once per round for all the pending positions inside it. Two per period, because
  /// the positions y and y - d of one pending position may lie in two different streaks.
  Run cached_streak(std::uint64_t x, std::uint32_t d) {
    auto& [a, b] = streaks_[d];
    for (Streak* c : {&a, &b}) {
      if (c->round == round_ && c->start <= x && x < c->end) return {c->start, c->end};
    }
    Run r = streak(x, d);
    b = a;
    a = {round_, r.start, r.end};
    return r;
  }

  /// The block s[j, j + d) is not a power of a shorter block (prefix function: its shortest period q divides d
  /// only for a power). Guaranteed by the scan order; checked because a wrong fold would corrupt the grammar.
  [[nodiscard]] bool primitive(std::uint64_t j, std::uint32_t d) {
    const std::uint32_t* s = seq() + j;
    border_.assign(d, 0);
    for (std::uint32_t i = 1; i < d; ++i) {
      std::uint32_t k = border_[i - 1];
      while (k > 0 && s[i] != s[k]) k = border_[k - 1];
      if (s[i] == s[k]) ++k;
      border_[i] = k;
    }
    std::uint32_t q = d - border_[d - 1];
    return q == d || d % q != 0;
  }

  /// The symbol of the loop (s[j, j + d), copies): an existing one when body and count are equal.
  std::uint32_t loop_symbol(std::uint32_t j, std::uint32_t d, std::uint64_t copies) {
    const std::uint32_t* body = seq() + j;
    std::uint64_t h = hash_ids(body, d, copies);
    auto [first, last] = loop_index_.equal_range(h);
    for (auto it = first; it != last; ++it) {
      const Loop& l = loops_[it->second];
      if (l.count == copies && l.body_length == d && std::equal(body, body + d, bodies_.begin() + l.body_offset)) {
        return terminals_ + it->second;
      }
    }
    Loop loop{.count = copies, .ticks = 0, .body_offset = bodies_.size(), .body_length = d};
    std::uint64_t body_ticks = 0;
    for (std::uint32_t i = 0; i < d; ++i) {
      std::uint32_t s = body[i];
      if (s < terminals_) {
        ++body_ticks;
      } else {
        const Loop& inner = loops_[s - terminals_];
        body_ticks += inner.ticks;
        loop.depth = std::max(loop.depth, inner.depth + 1);
        loop.has_inner_loop = true;
      }
    }
    loop.ticks = body_ticks * copies;
    bodies_.insert(bodies_.end(), body, body + d);
    auto index = static_cast<std::uint32_t>(loops_.size());
    loops_.push_back(loop);
    loop_index_.emplace(h, index);
    return terminals_ + index;
  }

  /// Applies the folds in place. The new loop symbols become pending (any period may now repeat around them);
  /// pending positions outside the folds stay pending, renumbered.
  void compact() {
    move_items();
    std::uint64_t removed = 0;  // items removed by the folds left of the current one
    std::size_t next = 0;
    next_pending_.clear();
    auto keep_until = [&](std::uint64_t end, std::uint64_t from) {
      for (; next < pending_.size() && pending_[next].position < end; ++next) {
        const Pending& p = pending_[next];
        if (p.position >= from) next_pending_.push_back({static_cast<std::uint32_t>(p.position - removed), p.from});
      }
    };
    std::uint64_t from = 0;
    for (const Fold& f : folds_) {
      keep_until(f.start, from);
      next_pending_.push_back({static_cast<std::uint32_t>(f.start - removed), 1});
      from = f.start + f.copies * f.period;
      removed += f.copies * f.period - 1;
    }
    keep_until(std::numeric_limits<std::uint64_t>::max(), from);
    std::swap(pending_, next_pending_);
  }

  /// Replaces each fold by its loop symbol in buf_. The longest stretch between two folds (or before the first,
  /// or after the last) stays where it is; what lies left of it moves right and what lies right of it moves
  /// left, so a few folds in a long sequence (say, loops of the initialisation before the main loop) cost the
  /// items around them, not the whole sequence.
  void move_items() {
    const std::size_t k = folds_.size();
    auto fold_end = [&](std::size_t i) -> std::uint64_t {
      return folds_[i].start + folds_[i].copies * folds_[i].period;
    };
    auto stretch_start = [&](std::size_t i) -> std::uint64_t { return i == 0 ? 0 : fold_end(i - 1); };
    auto stretch_end = [&](std::size_t i) -> std::uint64_t { return i == k ? size() : folds_[i].start; };
    std::size_t kept = 0;
    for (std::size_t i = 1; i <= k; ++i) {
      if (stretch_end(i) - stretch_start(i) > stretch_end(kept) - stretch_start(kept)) kept = i;
    }
    std::uint32_t* s = buf_.data() + begin_;
    // Left of the kept stretch, right to left: each stretch moves right by the items removed right of it.
    std::uint64_t w = stretch_start(kept);
    for (std::size_t i = kept; i-- > 0;) {
      s[--w] = folds_[i].loop;
      std::copy_backward(s + stretch_start(i), s + stretch_end(i), s + w);
      w -= stretch_end(i) - stretch_start(i);
    }
    const std::uint64_t new_begin = w;
    // Right of it, left to right.
    w = stretch_end(kept);
    for (std::size_t i = kept; i < k; ++i) {
      s[w++] = folds_[i].loop;
      std::copy(s + stretch_start(i + 1), s + stretch_end(i + 1), s + w);
      w += stretch_end(i + 1) - stretch_start(i + 1);
    }
    end_ = begin_ + w;
    begin_ += new_begin;
  }

  std::uint32_t reps_;
  std::uint32_t period_limit_ = 0;
  std::uint32_t terminals_ = 0;
  std::vector<TickSymbol> symbols_;  ///< terminal id -> tick symbol
  std::vector<std::uint32_t> buf_;   ///< the current (partly folded) sequence is buf_[begin_, end_)
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  std::vector<Pending> pending_;  ///< in position order
  std::vector<Pending> next_pending_;
  std::vector<std::pair<Streak, Streak>> streaks_;  ///< per period, the last two computed in a pending round
  std::uint64_t round_ = 0;
  std::vector<Run> runs_;
  std::vector<std::uint32_t> border_;
  std::vector<Fold> folds_;
  std::vector<Loop> loops_;
  std::vector<std::uint32_t> bodies_;  ///< loop bodies, concatenated
  std::unordered_multimap<std::uint64_t, std::uint32_t> loop_index_;
};

/// Reads the phases off the folded grammar and expands it, in run order, into the occurrences.
class PhaseReader {
 public:
  PhaseReader(const Folder& folder, std::span<const std::uint8_t> anchors)
      : folder_(folder), terminals_(folder.terminals()), flat_(folder.loops().size(), false) {
    if (!anchors.empty()) find_flat_loops(anchors);
  }

  PhaseStructure read() {
    const auto& loops = folder_.loops();
    // Loops are numbered innermost first, so inner segment lists exist before the outer ones use them.
    loop_segments_.resize(loops.size());
    for (std::size_t i = 0; i < loops.size(); ++i) {
      const Loop& l = loops[i];
      loop_segments_[i] = segment(folder_.bodies().data() + l.body_offset, l.body_length);
    }
    Range top = segment(folder_.top().data(), folder_.top().size());

    out_.loops.resize(loops.size());
    for (std::size_t i = 0; i < loops.size(); ++i) {
      out_.loops[i] = LoopInfo{.id = static_cast<std::uint32_t>(i),
                               .count = loops[i].count,
                               .body_length = loops[i].body_length,
                               .depth = loops[i].depth,
                               .ticks = loops[i].ticks,
                               .instances = 0,
                               .flattened = flat_[i]};
    }
    final_id_.assign(phase_ranges_.size(), kNone);
    for (std::size_t i = 0; i < top.length; ++i) {
      const std::uint64_t first = tick_;
      const Segment s = segments_[top.offset + i];
      expand({top.offset + i, 1});
      out_.top.push_back({first, tick_ - first, s.loop ? folder_.loops()[s.id].count : 0});
    }
    // A flattened loop is expanded as ticks of a stretch, not visited as a loop.
    for (std::size_t i = 0; i < flat_.size(); ++i) {
      if (flat_[i]) out_.loops[i].instances = flat_instances_[i];
    }
    return std::move(out_);
  }

 private:
  /// A list of segments: `length` entries from `offset` in segments_.
  struct Range {
    std::size_t offset = 0;
    std::size_t length = 0;
  };
  /// A phase occurrence (provisional phase id) or a loop instance (loop index).
  struct Segment {
    std::uint32_t id = 0;
    bool loop = false;
  };

  /// An item that is a loop kept as a loop (not flattened into the stretch around it).
  [[nodiscard]] bool kept_loop(std::uint32_t item) const { return item >= terminals_ && !flat_[item - terminals_]; }

  /// Splits a body (or the top level) into its maximal stretches (ticks and flattened loops) and its loops.
  Range segment(const std::uint32_t* items, std::size_t length) {
    Range r{.offset = segments_.size(), .length = 0};
    std::size_t i = 0;
    while (i < length) {
      if (kept_loop(items[i])) {
        segments_.push_back({.id = items[i] - terminals_, .loop = true});
        ++i;
        continue;
      }
      std::size_t end = i;
      while (end < length && !kept_loop(items[end])) ++end;
      segments_.push_back({.id = phase_of(items + i, end - i), .loop = false});
      i = end;
    }
    r.length = segments_.size() - r.offset;
    return r;
  }

  /// Provisional id of the phase with these items (equal stretches anywhere are one phase).
  std::uint32_t phase_of(const std::uint32_t* items, std::size_t length) {
    std::uint64_t h = hash_ids(items, length, 0);
    auto [first, last] = phase_index_.equal_range(h);
    for (auto it = first; it != last; ++it) {
      const Range& p = phase_ranges_[it->second];
      if (p.length == length && std::equal(items, items + length, phase_items_.begin() + p.offset)) return it->second;
    }
    auto id = static_cast<std::uint32_t>(phase_ranges_.size());
    phase_ranges_.push_back({.offset = phase_items_.size(), .length = length});
    std::uint64_t ticks = 0;
    for (std::size_t i = 0; i < length; ++i)
      ticks += items[i] < terminals_ ? 1 : folder_.loops()[items[i] - terminals_].ticks;
    phase_ticks_.push_back(ticks);
    phase_items_.insert(phase_items_.end(), items, items + length);
    phase_index_.emplace(h, id);
    return id;
  }

  /// The tick symbols of `items`, flattened loops expanded.
  void append_ticks(const std::uint32_t* items, std::size_t length, std::vector<TickSymbol>& out) const {
    for (std::size_t i = 0; i < length; ++i) {
      if (items[i] < terminals_) {
        out.push_back(folder_.symbols()[items[i]]);
        continue;
      }
      const Loop& l = folder_.loops()[items[i] - terminals_];
      for (std::uint64_t c = 0; c < l.count; ++c)
        append_ticks(folder_.bodies().data() + l.body_offset, l.body_length, out);
    }
  }

  /// Decides which loops are flattened: those fewer than half of whose iterations hold an anchor tick. Walks the
  /// grammar once in run order, O(ticks).
  void find_flat_loops(std::span<const std::uint8_t> anchors) {
    std::vector<std::uint64_t> before(anchors.size() + 1, 0);  // anchors before tick t
    for (std::size_t t = 0; t < anchors.size(); ++t) before[t + 1] = before[t] + (anchors[t] != 0 ? 1 : 0);
    std::vector<std::uint64_t> anchored(flat_.size(), 0);
    std::vector<std::uint64_t> iterations(flat_.size(), 0);
    flat_instances_.assign(flat_.size(), 0);
    std::uint64_t tick = 0;
    const auto walk = [&](const auto& self, const std::uint32_t* items, std::size_t length) -> void {
      for (std::size_t i = 0; i < length; ++i) {
        if (items[i] < terminals_) {
          ++tick;
          continue;
        }
        const std::uint32_t id = items[i] - terminals_;
        const Loop& l = folder_.loops()[id];
        const std::uint64_t iteration = l.ticks / l.count;
        for (std::uint64_t c = 0; c < l.count; ++c) {
          const std::uint64_t start = tick;
          if (l.has_inner_loop) {
            self(self, folder_.bodies().data() + l.body_offset, l.body_length);
          } else {
            tick += iteration;
          }
          if (before[tick] > before[start]) ++anchored[id];
        }
        iterations[id] += l.count;
        ++flat_instances_[id];
      }
    };
    walk(walk, folder_.top().data(), folder_.top().size());
    for (std::size_t i = 0; i < flat_.size(); ++i) flat_[i] = 2 * anchored[i] < iterations[i];
  }

  void expand(const Range& segments) {
    for (std::size_t i = 0; i < segments.length; ++i) {
      Segment s = segments_[segments.offset + i];
      if (!s.loop) {
        emit(s.id);
        continue;
      }
      ++out_.loops[s.id].instances;
      const Range inner = loop_segments_[s.id];
      const Loop& l = folder_.loops()[s.id];
      if (!l.has_inner_loop) {
        // The whole body is one phase: `count` occurrences in a row.
        for (std::uint64_t c = 0; c < l.count; ++c) emit(segments_[inner.offset].id);
      } else {
        for (std::uint64_t c = 0; c < l.count; ++c) expand(inner);
      }
    }
  }

  void emit(std::uint32_t provisional) {
    std::uint32_t& id = final_id_[provisional];
    const Range& p = phase_ranges_[provisional];
    if (id == kNone) {
      id = static_cast<std::uint32_t>(out_.phases.size());
      append_ticks(phase_items_.data() + p.offset, p.length, out_.phases.emplace_back());
      out_.weights.push_back(0);
    }
    ++out_.weights[id];
    const std::uint64_t ticks = phase_ticks_[provisional];
    out_.occurrences.push_back({.phase = id, .first_tick = tick_, .ticks = ticks});
    tick_ += ticks;
  }

  const Folder& folder_;
  std::uint32_t terminals_;
  std::vector<Segment> segments_;
  std::vector<Range> loop_segments_;
  std::vector<bool> flat_;                     ///< per loop: flattened into the stretch around it
  std::vector<std::uint64_t> flat_instances_;  ///< per loop: its instances, counted where flattening is decided
  std::vector<Range> phase_ranges_;            ///< provisional phase id -> its items in phase_items_
  std::vector<std::uint32_t> phase_items_;     ///< terminal and flattened loop ids, concatenated
  std::vector<std::uint64_t> phase_ticks_;     ///< provisional phase id -> its ticks, flattened loops expanded
  std::unordered_multimap<std::uint64_t, std::uint32_t> phase_index_;
  std::vector<std::uint32_t> final_id_;  ///< provisional -> id in order of first occurrence
  std::uint64_t tick_ = 0;
  PhaseStructure out_;
};

}  // namespace

PhaseStructure find_phases(std::span<const TickSymbol> ticks, const PhaseFinderOptions& options) {
  return find_phases(ticks, {}, options);
}

PhaseStructure find_phases(std::span<const TickSymbol> ticks, std::span<const std::uint8_t> anchors,
                           const PhaseFinderOptions& options) {
  if (!anchors.empty() && anchors.size() != ticks.size()) {
    throw std::logic_error("phase finder given " + std::to_string(anchors.size()) + " anchors for " +
                           std::to_string(ticks.size()) + " ticks");
  }
  if (options.min_repetitions < 2) {
    throw InputError("phase finder: min_repetitions is " + std::to_string(options.min_repetitions) +
                     "; a loop needs at least 2 consecutive repetitions — set it to 2 or more");
  }
  if (ticks.size() >= kMaxTicks) {
    throw InputError("phase finder: the logical trace has " + std::to_string(ticks.size()) +
                     " ticks, more than the 2^31 - 1 supported; analyse a shorter run or fewer iterations");
  }
  Folder folder(ticks, options);
  folder.run();
  return PhaseReader(folder, anchors).read();
}

std::vector<PhaseRun> phase_order(const PhaseStructure& structure) {
  std::vector<PhaseRun> runs;
  for (const PhaseOccurrence& o : structure.occurrences) {
    if (!runs.empty() && runs.back().phase == o.phase) {
      ++runs.back().count;
    } else {
      runs.push_back({.phase = o.phase, .count = 1});
    }
  }
  return runs;
}

}  // namespace p3s::analyzer
