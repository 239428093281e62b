// SPDX-License-Identifier: BSD-3-Clause
// Which bursts of a location are computation: the long bursts that separate the steps of a program, told
// apart from the short bursts between the calls of one exchange (packing buffers, bookkeeping).
#pragma once

#include <array>
#include <cstdint>

namespace p3s::analyzer {

/// Histogram of a location's burst durations on a log scale (quarter-octave bins from 1 ns), filled while
/// the operations are extracted; a fixed 1 KiB whatever the trace's length.
class BurstHistogram {
 public:
  static constexpr std::size_t kBins = 256;
  void add(std::uint64_t ns) noexcept;

  /// The shortest burst that counts as computation, or 0 when the bursts do not fall into two classes.
  ///
  /// Method: Otsu's split of the log-durations (the threshold that maximises the variance between the two
  /// classes), among the splits whose classes are clearly apart (the long class's geometric mean at least 10x
  /// the short class's, and at least 2 % of the bursts in it; a few delays of the operating system are not a
  /// class), decides whether there is computation at all: none where no split is that clear. The long bursts are then
  /// split into classes (a peak of the histogram and the bins next to it holding 5 % of the peak's count at least), and
  /// computation is every class that repeats (3 bursts at least: a set-up is not a step) and holds at least 10 % of the
  /// long bursts' work: the steps' main computation, and each level of a nest of loops that each compute; not the short
  /// loops between the swaps of an exchange nor the integration after a force computation, whose share of the work is
  /// small and changes with n, nor the scattered delays between the classes, which together may hold much but
  /// no class of them does. The threshold is one octave below the lowest such class's lower edge, so that a
  /// burst does not change class from one repetition to the next.
  [[nodiscard]] std::uint64_t compute_threshold() const noexcept;

 private:
  /// The lowest bin of the classes of computation among the bins from `split` up (see compute_threshold).
  [[nodiscard]] std::size_t compute_class_edge(std::size_t split) const noexcept;
  std::array<std::uint64_t, kBins> counts_{};
  std::uint64_t total_ = 0;
};

}  // namespace p3s::analyzer
