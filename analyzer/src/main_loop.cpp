// SPDX-License-Identifier: BSD-3-Clause
#include "main_loop.hpp"

#include <algorithm>
#include <unordered_map>

#include "p3s/hash.hpp"

namespace p3s::analyzer {
namespace {

/// A main loop holds at least this share of the items of the largest one.
constexpr double kMainShare = 0.25;

/// At most this many main bodies are looked for (the largest first).
constexpr std::size_t kMostBodies = 8;

/// Outermost loops whose bodies are rotations of one another.
struct Family {
  std::uint64_t period = 0;
  std::vector<std::uint64_t> canonical;  ///< the least rotation of the body
  std::uint64_t items = 0;               ///< items its loops hold
  std::uint64_t largest_items = 0;
  std::uint64_t largest_first = 0;  ///< where its largest loop begins
};

std::uint64_t hash_of(std::span<const std::uint64_t> items) {
  std::uint64_t h = mix64(items.size());
  for (const std::uint64_t s : items) h = mix64(h ^ s) + kGoldenGamma;
  return h;
}

std::vector<Family> families_of(std::span<const std::uint64_t> symbols, const PhaseStructure& structure) {
  std::vector<Family> families;
  std::unordered_multimap<std::uint64_t, std::size_t> index;  // hash of the least rotation -> family
  std::vector<std::uint64_t> rotated;
  for (const TopItem& t : structure.top) {
    if (t.count < 2) continue;
    const std::uint64_t p = t.ticks / t.count;
    const std::span<const std::uint64_t> body = symbols.subspan(t.first_tick, p);
    const std::size_t least = least_rotation(body);
    rotated.assign(body.begin() + static_cast<std::ptrdiff_t>(least), body.end());
    rotated.insert(rotated.end(), body.begin(), body.begin() + static_cast<std::ptrdiff_t>(least));
    const std::uint64_t h = hash_of(rotated);
    std::size_t f = families.size();
    for (auto [it, last] = index.equal_range(h); it != last; ++it) {
      if (families[it->second].canonical == rotated) f = it->second;
    }
    if (f == families.size()) {
      families.push_back({.period = p, .canonical = rotated});
      index.emplace(h, f);
    }
    Family& fam = families[f];
    fam.items += t.ticks;
    if (t.ticks > fam.largest_items) {
      fam.largest_items = t.ticks;
      fam.largest_first = t.first_tick;
    }
  }
  return families;
}

/// Marks, left to right, the places not yet taken where `body` occurs whole (a rolling hash over the sequence,
/// every match checked).
void mark_copies(std::span<const std::uint64_t> symbols, std::span<const std::uint64_t> body,
                 std::vector<Piece>& iterations) {
  const std::uint64_t p = body.size();
  if (p == 0 || symbols.size() < p) return;
  constexpr std::uint64_t kBase = 0x9E3779B97F4A7C15ULL | 1;
  std::uint64_t top_power = 1;  // kBase^(p - 1)
  for (std::uint64_t i = 1; i < p; ++i) top_power *= kBase;
  const auto value = [](std::uint64_t s) { return mix64(s); };
  std::uint64_t target = 0;
  std::uint64_t h = 0;
  for (std::uint64_t i = 0; i < p; ++i) {
    target = target * kBase + value(body[i]);
    h = h * kBase + value(symbols[i]);
  }
  std::vector<Piece> found;
  std::size_t next_taken = 0;  // iterations (sorted) that a match must not overlap
  for (std::uint64_t i = 0;;) {
    while (next_taken < iterations.size() && iterations[next_taken].end <= i) ++next_taken;
    const bool free = next_taken == iterations.size() || iterations[next_taken].begin >= i + p;
    if (free && h == target && std::equal(body.begin(), body.end(), symbols.begin() + static_cast<std::ptrdiff_t>(i))) {
      found.push_back({i, i + p, true});
      if (i + 2 * p > symbols.size()) break;
      // Jump a whole body: recompute the window there.
      i += p;
      h = 0;
      for (std::uint64_t k = 0; k < p; ++k) h = h * kBase + value(symbols[i + k]);
      continue;
    }
    if (i + p >= symbols.size()) break;
    h = (h - value(symbols[i]) * top_power) * kBase + value(symbols[i + p]);
    ++i;
  }
  iterations.insert(iterations.end(), found.begin(), found.end());
  std::sort(iterations.begin(), iterations.end(), [](const Piece& a, const Piece& b) { return a.begin < b.begin; });
}

/// Where the body of a family's largest loop begins: the loop extended over the items before and after it that
/// continue its period, every rotation's whole iterations counted, the most of them at the least cost.
std::uint64_t body_start(std::span<const std::uint64_t> symbols, const Family& f, const StartCost& cost) {
  const std::uint64_t p = f.period;
  const std::uint64_t first = f.largest_first;
  const std::uint64_t end = first + f.largest_items;
  std::uint64_t back = 0;
  while (back < first && symbols[first - back - 1] == symbols[first - back - 1 + p]) ++back;
  std::uint64_t ahead = 0;
  while (end + ahead < symbols.size() && symbols[end + ahead] == symbols[end + ahead - p]) ++ahead;
  std::uint64_t best = first;
  std::uint64_t most = 0;
  double least = 0;
  for (std::uint64_t s = 0; s < p; ++s) {
    const std::uint64_t start = s + back >= p ? first + s - p : first + s;
    const std::uint64_t whole = (end + ahead - start) / p;
    const double c = cost ? cost(start, start + p) : 0.0;
    if (whole > most || (whole == most && (c < least || (c == least && start < best)))) {
      best = start;
      most = whole;
      least = c;
    }
  }
  return best;
}

}  // namespace

std::size_t least_rotation(std::span<const std::uint64_t> body) {
  const std::size_t n = body.size();
  std::vector<std::ptrdiff_t> failure(2 * n, -1);
  std::size_t k = 0;
  for (std::size_t j = 1; j < 2 * n; ++j) {
    const std::uint64_t sj = body[j % n];
    std::ptrdiff_t i = failure[j - k - 1];
    while (i != -1 && sj != body[(k + static_cast<std::size_t>(i) + 1) % n]) {
      if (sj < body[(k + static_cast<std::size_t>(i) + 1) % n]) k = j - static_cast<std::size_t>(i) - 1;
      i = failure[static_cast<std::size_t>(i)];
    }
    if (i == -1 && sj != body[(k + static_cast<std::size_t>(i) + 1) % n]) {
      if (sj < body[k % n]) k = j;
      failure[j - k] = -1;
    } else {
      failure[j - k] = i + 1;
    }
  }
  return n == 0 ? 0 : k % n;
}

std::vector<Piece> main_loop_pieces(std::span<const std::uint64_t> symbols, const PhaseStructure& structure,
                                    const StartCost& cost) {
  std::vector<Family> families = families_of(symbols, structure);
  if (families.empty()) return {};
  std::stable_sort(families.begin(), families.end(),
                   [](const Family& a, const Family& b) { return a.items > b.items; });
  std::vector<Piece> iterations;
  for (std::size_t f = 0; f < families.size() && f < kMostBodies; ++f) {
    if (static_cast<double>(families[f].items) < kMainShare * static_cast<double>(families.front().items)) break;
    mark_copies(symbols, symbols.subspan(body_start(symbols, families[f], cost), families[f].period), iterations);
  }
  std::vector<Piece> pieces;
  std::uint64_t at = 0;
  for (const Piece& it : iterations) {
    if (it.begin > at) pieces.push_back({at, it.begin, false});
    pieces.push_back(it);
    at = it.end;
  }
  if (at < symbols.size()) pieces.push_back({at, symbols.size(), false});
  return pieces;
}

StartCost after_syncs(std::span<const std::uint8_t> syncs) {
  return [syncs](std::uint64_t, std::uint64_t end) { return syncs[end - 1] != 0 ? 0.0 : 1.0; };
}

}  // namespace p3s::analyzer
