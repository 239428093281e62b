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
  /// classes) decides whether there is computation at all: only when the classes are clearly apart (the long
  /// class's geometric mean at least 10x the short class's, and at least 2 % of the bursts in it; a few delays
  /// of the operating system are not a class). Computation is then the class of bursts that, with the longer
  /// ones, holds 90 % of the work (and 2 % of the bursts at least, so that a long set-up is not all of it): the
  /// steps' main computation, not the short loops between the swaps of an exchange, whose share of the work
  /// changes with n. The threshold is one octave below that class's lower edge, so that a burst does not change
  /// class from one repetition to the next.
  [[nodiscard]] std::uint64_t compute_threshold() const noexcept;

 private:
  /// The lowest bin of the class that holds most of the work (see compute_threshold).
  [[nodiscard]] std::size_t dominant_class_edge() const noexcept;
  std::array<std::uint64_t, kBins> counts_{};
  std::uint64_t total_ = 0;
};

}  // namespace p3s::analyzer
