// SPDX-License-Identifier: BSD-3-Clause
#include "burst_classes.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <utility>

namespace p3s::analyzer {
namespace {

constexpr double kBinsPerOctave = 4;
/// Classes closer than a factor of 10 are one class with a wide spread.
constexpr double kMinSeparation = 3.3219280948873622 * kBinsPerOctave;  // log2(10) octaves, in bins
constexpr double kMinLongFraction = 0.02;
/// The least share of the long bursts' work a class of computation holds.
constexpr double kComputeClassShare = 0.1;
/// The spacing of back-to-back calls lies below 4 us (its class's last bin; bins are quarter octaves of ns).
constexpr std::size_t kMaxSpacingBin = 12 * static_cast<std::size_t>(kBinsPerOctave);
/// A class of fewer bursts is set-up or a delay, not the computation of a repeated step.
constexpr std::uint64_t kMinClassBursts = 3;
/// A bin holding less than this share of its class's fullest bin is no part of the class.
constexpr double kClassEdge = 0.05;

/// Quarter octaves from the leading bit and the two bits after it (no floating point: one call per MPI call).
std::size_t bin_of(std::uint64_t ns) noexcept {
  if (ns < 4) return 0;
  const auto top = static_cast<std::size_t>(std::bit_width(ns)) - 1;  // floor(log2 ns) >= 2
  const std::size_t quarter = static_cast<std::size_t>(ns >> (top - 2)) & 3;
  return std::min<std::size_t>(BurstHistogram::kBins - 1, top * 4 + quarter);
}

}  // namespace

void BurstHistogram::add(std::uint64_t ns) noexcept {
  ++counts_[bin_of(ns)];
  ++total_;
}

std::uint64_t BurstHistogram::compute_threshold() const noexcept {
  if (total_ < 2) return 0;
  const double n = static_cast<double>(total_);
  double sum_all = 0;
  for (std::size_t b = 0; b < kBins; ++b) sum_all += static_cast<double>(counts_[b]) * static_cast<double>(b);
  // Split before bin t: short class [0, t), long class [t, kBins).
  double count_short = 0;
  double sum_short = 0;
  double best = 0;
  std::size_t best_t = 0;
  for (std::size_t t = 1; t < kBins; ++t) {
    count_short += static_cast<double>(counts_[t - 1]);
    sum_short += static_cast<double>(counts_[t - 1]) * static_cast<double>(t - 1);
    const double count_long = n - count_short;
    if (count_short == 0 || count_long == 0) continue;
    const double mean_short = sum_short / count_short;
    const double mean_long = (sum_all - sum_short) / count_long;
    // Only splits that would pass as computation compete: where the short bursts spread into a middle class (16
    // ranks of a real code on 2 cores), Otsu's best split of all falls between short and middle, too close to pass, and
    // hid the computation above them.
    if (mean_long - mean_short < kMinSeparation || count_long / n < kMinLongFraction) continue;
    const double between = count_short * count_long * (mean_long - mean_short) * (mean_long - mean_short);
    if (between > best) {
      best = between;
      best_t = t;
    }
  }
  if (best_t == 0) return 0;
  // One octave below the lowest class of computation (never below Otsu's split).
  const double edge = static_cast<double>(compute_class_edge(best_t));
  return edge < kBinsPerOctave ? 0 : static_cast<std::uint64_t>(std::ceil(std::exp2(edge / kBinsPerOctave - 1)));
}

std::size_t BurstHistogram::compute_class_edge(std::size_t split) const noexcept {
  // Classes among the long bursts, fullest first: a class is its fullest bin and the bins next to it holding
  // at least kClassEdge of that bin's count.
  std::array<std::uint8_t, kBins> taken{};
  std::array<std::pair<std::size_t, std::size_t>, kBins> classes{};  // [low, high] bins
  std::size_t class_count = 0;
  for (;;) {
    std::size_t peak = kBins;
    for (std::size_t b = split; b < kBins; ++b) {
      if (taken[b] == 0 && counts_[b] != 0 && (peak == kBins || counts_[b] > counts_[peak])) peak = b;
    }
    if (peak == kBins) break;
    const double edge = kClassEdge * static_cast<double>(counts_[peak]);
    const auto member = [&](std::size_t b) {
      return taken[b] == 0 && counts_[b] != 0 && static_cast<double>(counts_[b]) >= edge;
    };
    std::size_t low = peak;
    std::size_t high = peak;
    while (low > split && member(low - 1)) --low;
    while (high + 1 < kBins && member(high + 1)) ++high;
    std::fill(taken.begin() + static_cast<std::ptrdiff_t>(low), taken.begin() + static_cast<std::ptrdiff_t>(high) + 1,
              std::uint8_t{1});
    classes[class_count++] = {low, high};
  }
  // The classes that repeat, and their work.
  const auto work_in = [this](std::size_t b) {
    return static_cast<double>(counts_[b]) * std::exp2(static_cast<double>(b) / kBinsPerOctave);
  };
  std::array<double, kBins> work{};
  std::array<std::uint64_t, kBins> count{};
  double work_all = 0;
  std::size_t heaviest = 0;
  for (std::size_t c = 0; c < class_count; ++c) {
    for (std::size_t b = classes[c].first; b <= classes[c].second; ++b) {
      count[c] += counts_[b];
      work[c] += work_in(b);
    }
    if (count[c] < kMinClassBursts) work[c] = 0;
    work_all += work[c];
    if (work[c] > work[heaviest]) heaviest = c;
  }
  // A class of bursts under 4 us holding most of all bursts yet ten times shorter than the class holding most of the
  // work is the spacing of the calls themselves (a cheap recorder sees 0.1-1 us between back-to-back calls, which
  // Otsu's split may cut in two), not the computation of a loop: as anchors, nearly every call would begin a unit.
  const auto spacing = [&](std::size_t c) {
    return c != heaviest && classes[c].second <= kMaxSpacingBin &&
           static_cast<double>(classes[c].second) + kMinSeparation <= static_cast<double>(classes[heaviest].first) &&
           2 * count[c] > total_;
  };
  std::size_t edge = kBins;
  for (std::size_t c = 0; c < class_count; ++c) {
    if (work[c] > 0 && work[c] >= kComputeClassShare * work_all && !spacing(c)) {
      edge = std::min(edge, classes[c].first);
    }
  }
  return edge == kBins ? split : edge;
}

}  // namespace p3s::analyzer
