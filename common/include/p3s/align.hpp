// SPDX-License-Identifier: BSD-3-Clause
// Aligning two sequences on a longest common subsequence: the one implementation behind merging ranks' calls
// into a phase's shape, relating phases across runs and between a model and a run, and uniting a phase's kinds.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace p3s {

/// One step of an alignment: a pair of equal elements, or an element of one side alone (the other is kNone).
struct AlignStep {
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::size_t a = kNone;
  std::size_t b = kNone;
};

/// The same where pairs weigh differently: `weight(i, j)` is 0 where the elements do not pair, else how much the
/// pair counts; the steps pair elements of a common subsequence of the greatest total weight. Ties take a's
/// element first. O(a·b) time and memory.
template <typename Weight>
[[nodiscard]] std::vector<AlignStep> align_weighted(std::size_t a, std::size_t b, Weight weight) {
  // best(i, j): the greatest weight of a common subsequence of a[i..] and b[j..], in one block of memory.
  const std::size_t row = b + 1;
  std::vector<std::uint64_t> table((a + 1) * row, 0);
  const auto best = [&table, row](std::size_t i, std::size_t j) -> std::uint64_t& { return table[i * row + j]; };
  for (std::size_t i = a; i-- > 0;) {
    for (std::size_t j = b; j-- > 0;) {
      const std::uint64_t w = weight(i, j);
      best(i, j) = std::max({best(i + 1, j), best(i, j + 1), w > 0 ? best(i + 1, j + 1) + w : 0});
    }
  }
  std::vector<AlignStep> steps;
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a || j < b) {
    const std::uint64_t w = i < a && j < b ? weight(i, j) : 0;
    if (w > 0 && best(i, j) == best(i + 1, j + 1) + w) {
      steps.push_back({i++, j++});
    } else if (i < a && (j == b || best(i + 1, j) >= best(i, j + 1))) {
      steps.push_back({i++, AlignStep::kNone});
    } else {
      steps.push_back({AlignStep::kNone, j++});
    }
  }
  return steps;
}

/// Aligns sequences of lengths `a` and `b` whose elements `equal(i, j)` compares: the steps of their shortest
/// common supersequence in order, pairing the elements of a longest common subsequence. Ties take a's element
/// first. O(a·b) time and memory.
template <typename Equal>
[[nodiscard]] std::vector<AlignStep> align(std::size_t a, std::size_t b, Equal equal) {
  return align_weighted(a, b, [&equal](std::size_t i, std::size_t j) -> std::uint64_t { return equal(i, j) ? 1 : 0; });
}

}  // namespace p3s
