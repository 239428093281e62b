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
// Implementation. Running the reference literally costs O(n * P) per scan. Instead every position j keeps
// cand[j], the next period still to try at j: a period d can start a repeat at j only if s[j + d] == s[j], so
// the candidates are the distances along the next-occurrence chain j -> next[j] -> next[next[j]] ..., and
// the one after d is next[j + d] - j. Positions wait in bucket cand[j]; the smallest non-empty bucket d is the
// next period of the reference procedure, because every smaller candidate of every position has been tried
// and failed. Scanning bucket d in position order is the reference scan of period d: a candidate that fails
// moves to its next candidate (a larger bucket); one that succeeds folds its whole run in one step, whatever
// the number of copies. The body of such a run is primitive (were it v^m, a repeat of period |v| < d would
// start at j, and that candidate would have succeeded), which is checked anyway.
// After a scan that folded, the sequence is compacted and a position keeps its state only when no fold starts
// within r * cand[j] (r * P when it has no candidate left) after it: every window it compared lies before the
// first change, so its failures still hold and its chain up to cand[j] is unchanged. Every other position, and
// every new loop symbol, starts its chain again; then the buckets are rebuilt and the search resumes at the
// smallest one, which is the reference's restart from p = 1.
//
// Complexity. Let n be the sequence length. A fold costs O(run length) and consumes its run; a scan that folded
// costs O(n_current + P) for the compaction and the rebuild. A failed candidate costs the comparisons up to the
// first mismatch. So: distinct symbols (no chain) O(n); a loop of period p (whatever the count) O(n) after the
// O(n) symbol numbering; nested loops O(n) per level, on a sequence that shrinks at every level. In general the
// time is O(n * F + T), F the number of scans that fold (at most the number of distinct periods folded, in the
// order of the nesting depth for real codes) and T the comparisons of failed candidates, which is at most
// O(n * r * P * P / sigma) for random symbols over an alphabet of size sigma and small for structured traces.
// Memory is O(n + P): four 32-bit arrays over the sequence (symbols, next occurrence, candidate, bucket entry).
//
// Phases are then read off the folded grammar (see the header): the body of a loop without inner loops is one
// phase, and every maximal stretch of ticks between loops (inside a body with inner loops, or at the top level)
// is one phase; equal tick sequences are one phase. Expanding the grammar once, in run order, yields the
// occurrences, the weights and the phase ids in order of first occurrence, in O(n) time and output size.
#include "p3s/analyzer/phase_finder.hpp"

#include "p3s/error.hpp"

#include <algorithm>
#include <cassert>
#include <limits>
#include <unordered_map>
#include <utility>

namespace p3s::analyzer {
namespace {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
/// cand[j] value of a position whose chain must be walked again from its start (periods are >= 1).
constexpr std::uint32_t kRestart = 0;
/// Positions are 32-bit; loop symbols (at most one per fold, fewer than n folds) share the id space with the
/// at most n distinct tick symbols, so n < 2^31 keeps every id below kNone.
constexpr std::uint64_t kMaxTicks = std::uint64_t{1} << 31;

/// splitmix64's finaliser: a cheap hash that spreads consecutive or structured symbols.
std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

/// Hash of a sequence of ids (FNV-style accumulation of mixed values).
std::uint64_t hash_ids(const std::uint32_t* ids, std::size_t length, std::uint64_t seed) {
  std::uint64_t h = mix(seed ^ length);
  for (std::size_t i = 0; i < length; ++i) h = mix(h ^ ids[i]) + 0x9e3779b97f4a7c15ULL;
  return h;
}

/// Tick symbol -> dense id in order of first appearance. Open addressing with linear probing, load <= 1/2; the
/// table holds ids only and the symbols live once in `symbols_`, so it costs about 16 bytes per distinct symbol.
class SymbolNumbering {
 public:
  std::uint32_t id_of(TickSymbol symbol) {
    if (2 * (symbols_.size() + 1) > slots_.size()) grow();
    std::size_t mask = slots_.size() - 1;
    for (std::size_t s = mix(symbol) & mask;; s = (s + 1) & mask) {
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
      std::size_t s = mix(symbols_[id]) & mask;
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

/// One fold decided during a scan, applied at the next compaction.
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
    seq_.resize(ticks.size());
    for (std::size_t i = 0; i < ticks.size(); ++i) seq_[i] = numbering.id_of(ticks[i]);
    symbols_ = std::move(numbering.symbols());
    terminals_ = static_cast<std::uint32_t>(symbols_.size());
    // No period longer than n / r fits in the sequence, and the sequence only shrinks.
    period_limit_ = static_cast<std::uint32_t>(
        std::min<std::uint64_t>(options.max_period, ticks.size() / std::max<std::uint32_t>(reps_, 1)));
    buckets_.resize(std::size_t{period_limit_} + 1);
    cand_.assign(seq_.size(), kRestart);
    last_.assign(terminals_, kNone);
  }

  void run() {
    if (period_limit_ == 0) return;
    link_chains();
    std::uint32_t d = 1;
    for (;;) {
      while (d <= period_limit_ && buckets_[d].empty()) ++d;
      if (d > period_limit_) return;
      if (scan(d)) {
        compact();
        link_chains();
        d = 1;  // the new loop symbols may repeat with any period
      }
    }
  }

  [[nodiscard]] const std::vector<std::uint32_t>& top() const { return seq_; }
  [[nodiscard]] const std::vector<Loop>& loops() const { return loops_; }
  [[nodiscard]] const std::vector<std::uint32_t>& bodies() const { return bodies_; }
  [[nodiscard]] const std::vector<TickSymbol>& symbols() const { return symbols_; }
  [[nodiscard]] std::uint32_t terminals() const { return terminals_; }

 private:
  [[nodiscard]] std::size_t size() const { return seq_.size(); }

  /// True when a repeat of period d with at least r copies fits at j.
  [[nodiscard]] bool fits(std::uint32_t j, std::uint64_t d) const { return j + std::uint64_t{reps_} * d <= size(); }

  /// The first candidate period at j, from the chain's start.
  [[nodiscard]] std::uint32_t first_candidate(std::uint32_t j) const { return candidate_at(j, next_[j]); }

  /// The candidate after period d at j: the next occurrence of s[j] after j + d.
  [[nodiscard]] std::uint32_t candidate_after(std::uint32_t j, std::uint32_t d) const {
    return candidate_at(j, next_[j + d]);
  }

  [[nodiscard]] std::uint32_t candidate_at(std::uint32_t j, std::uint32_t occurrence) const {
    if (occurrence == kNone) return kNone;
    std::uint32_t d = occurrence - j;
    // Later chain entries are farther still, so the first one out of range ends the chain.
    return d <= period_limit_ && fits(j, d) ? d : kNone;
  }

  /// Recomputes next occurrences, walks the chains of positions marked kRestart and refills the buckets.
  void link_chains() {
    next_.resize(size());
    for (std::size_t j = size(); j-- > 0;) {
      std::uint32_t s = seq_[j];
      next_[j] = last_[s];
      last_[s] = static_cast<std::uint32_t>(j);
    }
    for (std::uint32_t s : seq_) last_[s] = kNone;  // leave `last_` all kNone for the next call
    for (auto& bucket : buckets_) {
      // A bucket that once held most of a long sequence would otherwise keep that memory to the end.
      if (bucket.capacity() > 2 * size() + 64) {
        std::vector<std::uint32_t>().swap(bucket);
      } else {
        bucket.clear();
      }
    }
    for (std::uint32_t j = 0; j < size(); ++j) {
      if (cand_[j] == kRestart) cand_[j] = first_candidate(j);
      if (cand_[j] != kNone) buckets_[cand_[j]].push_back(j);
    }
  }

  /// The reference scan of period d over the positions waiting for it. Returns whether anything folded.
  bool scan(std::uint32_t d) {
    scratch_.clear();
    std::swap(scratch_, buckets_[d]);
    // Entries arrive from the rebuild (sorted) and from earlier scans (each sorted); restore position order.
    if (!std::is_sorted(scratch_.begin(), scratch_.end())) std::sort(scratch_.begin(), scratch_.end());
    folds_.clear();
    std::uint64_t folded_to = 0;  // positions before this belong to a loop folded in this scan
    for (std::uint32_t j : scratch_) {
      if (j < folded_to) continue;  // removed by the compaction
      assert(cand_[j] == d);
      if (repeats(j, d) && primitive(j, d)) {
        std::uint64_t end = j + std::uint64_t{reps_} * d;
        while (end < size() && seq_[end] == seq_[end - d]) ++end;
        std::uint64_t copies = (end - j) / d;
        folds_.push_back({.start = j, .period = d, .copies = copies, .loop = loop_symbol(j, d, copies)});
        folded_to = j + copies * d;
        continue;
      }
      cand_[j] = candidate_after(j, d);
      if (cand_[j] != kNone) buckets_[cand_[j]].push_back(j);
    }
    return !folds_.empty();
  }

  /// s[j, j + r*d) has period d.
  [[nodiscard]] bool repeats(std::uint32_t j, std::uint32_t d) const {
    const std::uint32_t* s = seq_.data() + j;
    std::uint64_t compared = std::uint64_t{reps_ - 1} * d;
    for (std::uint64_t t = 0; t < compared; ++t) {
      if (s[t] != s[t + d]) return false;
    }
    return true;
  }

  /// The block s[j, j + d) is not a power of a shorter block (prefix function: its shortest period q divides d
  /// only for a power). Guaranteed by the scan order; checked because a wrong fold would corrupt the grammar.
  [[nodiscard]] bool primitive(std::uint32_t j, std::uint32_t d) {
    const std::uint32_t* s = seq_.data() + j;
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
    const std::uint32_t* body = seq_.data() + j;
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
    last_.push_back(kNone);
    return terminals_ + index;
  }

  /// Applies this scan's folds in place and marks the positions whose state the folds invalidate.
  void compact() {
    std::size_t write = 0;
    std::size_t read = 0;
    auto keep_until = [&](std::size_t end, std::uint64_t change) {
      for (; read < end; ++read, ++write) {
        std::uint32_t c = cand_[read];
        // Every window this position compared, and its chain up to c, lie within the next r*c (r*P) items.
        std::uint64_t window = std::uint64_t{reps_} * (c == kNone ? period_limit_ : c);
        seq_[write] = seq_[read];
        cand_[write] = change - read < window ? kRestart : c;
      }
    };
    for (const Fold& f : folds_) {
      keep_until(f.start, f.start);
      seq_[write] = f.loop;
      cand_[write] = kRestart;
      ++write;
      read = f.start + f.copies * f.period;
    }
    keep_until(size(), std::numeric_limits<std::uint64_t>::max());
    seq_.resize(write);
    cand_.resize(write);
  }

  std::uint32_t reps_;
  std::uint32_t period_limit_ = 0;
  std::uint32_t terminals_ = 0;
  std::vector<TickSymbol> symbols_;  ///< terminal id -> tick symbol
  std::vector<std::uint32_t> seq_;   ///< the current (partly folded) sequence
  std::vector<std::uint32_t> next_;  ///< next position with the same symbol, or kNone
  std::vector<std::uint32_t> cand_;  ///< next period to try at each position, kNone or kRestart
  std::vector<std::uint32_t> last_;  ///< per symbol id, scratch of link_chains (all kNone between calls)
  std::vector<std::vector<std::uint32_t>> buckets_;  ///< period -> positions whose candidate it is
  std::vector<std::uint32_t> scratch_;
  std::vector<std::uint32_t> border_;
  std::vector<Fold> folds_;
  std::vector<Loop> loops_;
  std::vector<std::uint32_t> bodies_;  ///< loop bodies, concatenated
  std::unordered_multimap<std::uint64_t, std::uint32_t> loop_index_;
};

/// Reads the phases off the folded grammar and expands it, in run order, into the occurrences.
class PhaseReader {
 public:
  explicit PhaseReader(const Folder& folder) : folder_(folder), terminals_(folder.terminals()) {}

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
                               .instances = 0};
    }
    final_id_.assign(phase_ranges_.size(), kNone);
    expand(top);
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

  /// Splits a body (or the top level) into its maximal tick stretches and its loops.
  Range segment(const std::uint32_t* items, std::size_t length) {
    Range r{.offset = segments_.size(), .length = 0};
    std::size_t i = 0;
    while (i < length) {
      if (items[i] >= terminals_) {
        segments_.push_back({.id = items[i] - terminals_, .loop = true});
        ++i;
        continue;
      }
      std::size_t end = i;
      while (end < length && items[end] < terminals_) ++end;
      segments_.push_back({.id = phase_of(items + i, end - i), .loop = false});
      i = end;
    }
    r.length = segments_.size() - r.offset;
    return r;
  }

  /// Provisional id of the phase with these ticks (equal stretches anywhere are one phase).
  std::uint32_t phase_of(const std::uint32_t* ticks, std::size_t length) {
    std::uint64_t h = hash_ids(ticks, length, 0);
    auto [first, last] = phase_index_.equal_range(h);
    for (auto it = first; it != last; ++it) {
      const Range& p = phase_ranges_[it->second];
      if (p.length == length && std::equal(ticks, ticks + length, phase_ticks_.begin() + p.offset)) return it->second;
    }
    auto id = static_cast<std::uint32_t>(phase_ranges_.size());
    phase_ranges_.push_back({.offset = phase_ticks_.size(), .length = length});
    phase_ticks_.insert(phase_ticks_.end(), ticks, ticks + length);
    phase_index_.emplace(h, id);
    return id;
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
      std::vector<TickSymbol>& ticks = out_.phases.emplace_back(p.length);
      for (std::size_t t = 0; t < p.length; ++t) ticks[t] = folder_.symbols()[phase_ticks_[p.offset + t]];
      out_.weights.push_back(0);
    }
    ++out_.weights[id];
    out_.occurrences.push_back({.phase = id, .first_tick = tick_, .ticks = p.length});
    tick_ += p.length;
  }

  const Folder& folder_;
  std::uint32_t terminals_;
  std::vector<Segment> segments_;
  std::vector<Range> loop_segments_;
  std::vector<Range> phase_ranges_;         ///< provisional phase id -> its ticks in phase_ticks_
  std::vector<std::uint32_t> phase_ticks_;  ///< terminal ids, concatenated
  std::unordered_multimap<std::uint64_t, std::uint32_t> phase_index_;
  std::vector<std::uint32_t> final_id_;  ///< provisional -> id in order of first occurrence
  std::uint64_t tick_ = 0;
  PhaseStructure out_;
};

}  // namespace

PhaseStructure find_phases(std::span<const TickSymbol> ticks, const PhaseFinderOptions& options) {
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
  return PhaseReader(folder).read();
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
