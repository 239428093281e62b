// SPDX-License-Identifier: BSD-3-Clause
#include "burst_classes.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace p3s::analyzer {
namespace {

constexpr double kBinsPerOctave = 4;
/// Classes closer than a factor of 10 are one class with a wide spread.
constexpr double kMinSeparation = 3.3219280948873622 * kBinsPerOctave;  // log2(10) octaves, in bins
constexpr double kMinLongFraction = 0.02;
/// The share of the work the compute bursts hold together.
constexpr double kComputeWorkShare = 0.9;
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
  double best_gap = 0;
  double best_long_fraction = 0;
  for (std::size_t t = 1; t < kBins; ++t) {
    count_short += static_cast<double>(counts_[t - 1]);
    sum_short += static_cast<double>(counts_[t - 1]) * static_cast<double>(t - 1);
    const double count_long = n - count_short;
    if (count_short == 0 || count_long == 0) continue;
    const double mean_short = sum_short / count_short;
    const double mean_long = (sum_all - sum_short) / count_long;
    const double between = count_short * count_long * (mean_long - mean_short) * (mean_long - mean_short);
    if (between > best) {
      best = between;
      best_t = t;
      best_gap = mean_long - mean_short;
      best_long_fraction = count_long / n;
    }
  }
  if (best_t == 0 || best_gap < kMinSeparation || best_long_fraction < kMinLongFraction) return 0;
  // One octave below the edge of the class that holds the work (never below Otsu's split).
  const double edge = static_cast<double>(std::max(best_t, dominant_class_edge()));
  return edge < kBinsPerOctave ? 0 : static_cast<std::uint64_t>(std::ceil(std::exp2(edge / kBinsPerOctave - 1)));
}

std::size_t BurstHistogram::dominant_class_edge() const noexcept {
  // From the longest bursts down, until the bursts above hold kComputeWorkShare of the work and are not rare.
  double work_all = 0;
  const auto work_in = [this](std::size_t b) {
    return static_cast<double>(counts_[b]) * std::exp2(static_cast<double>(b) / kBinsPerOctave);
  };
  for (std::size_t b = 0; b < kBins; ++b) work_all += work_in(b);
  double work = 0;
  double count = 0;
  std::size_t b = kBins;
  while (b > 0 && (work < kComputeWorkShare * work_all || count < kMinLongFraction * static_cast<double>(total_))) {
    --b;
    work += work_in(b);
    count += static_cast<double>(counts_[b]);
  }
  // Down to the lower edge of the class that bin is in.
  std::uint64_t peak = counts_[b];
  while (b > 0 && static_cast<double>(counts_[b - 1]) >= kClassEdge * static_cast<double>(peak)) {
    --b;
    peak = std::max(peak, counts_[b]);
  }
  return b;
}

}  // namespace p3s::analyzer
