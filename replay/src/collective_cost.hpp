// SPDX-License-Identifier: BSD-3-Clause
// What a collective costs at more ranks than a range replay step makes it on: each collective the prediction makes
// over more ranks than a step measures is timed on the job's ranks at several sizes (2, 4, 8, ... and the whole
// job), and its cost fitted as a + b x, x = log2 of the members (trees, recursive doubling) or, for the collectives
// whose algorithms may take a round per member (gathers, all-to-all), the members where that fits better; a step's
// instance of it then takes b (x(predicted members) - x(members here)) longer.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "p3s/mpi/vocabulary.hpp"
#include "p3s/replay/replay.hpp"

namespace p3s::replay::detail {

/// A fitted cost a + b x of one collective of one size.
struct CollectiveFit {
  double a = 0;
  double b = 0;
  bool linear = false;                           ///< x = members (else log2 members)
  std::vector<std::pair<int, double>> measured;  ///< members -> mean time, ns
  [[nodiscard]] double x(double members) const;
};

/// Whether a collective moves or synchronises data (not one that makes or frees a communicator): what a step times.
[[nodiscard]] bool moves_data(mpi::Collective op);

/// Whether the collective's algorithms may take rounds in proportion to its members (a gather's, a scatter's, an
/// all-to-all's, an all-gather's), not only in log2 of them.
[[nodiscard]] bool may_be_linear(mpi::Collective op);

/// Fits a + b x to (members, ns) points by least squares, x = log2(members), or, where `linear_allowed`, x =
/// members if that leaves the smaller residual (with three points or more); neither a nor b is below zero (a
/// negative a: the line through the origin).
[[nodiscard]] CollectiveFit fit_collective(const std::vector<std::pair<int, double>>& points, bool linear_allowed);

class CollectiveCosts {
 public:
  CollectiveCosts() = default;
  /// Times, on every rank of `comm` (collective over it), each collective of `plan`'s phases on a communicator of
  /// more than `measured` predicted members: at 2, 4, 8, ... members and comm's size, `repeats` times each after two
  /// untimed, the slowest member's median.
  static CollectiveCosts calibrate(const ReplayPlan& plan, std::int64_t measured, MPI_Comm comm, int repeats = 10);
  /// How much longer a collective `op` of `block` bytes takes on `predicted` members than on `here` (0 where
  /// `predicted` is not larger); nullopt where it was not calibrated.
  [[nodiscard]] std::optional<double> extra_ns(mpi::Collective op, int block, int here, std::int64_t predicted) const;
  [[nodiscard]] bool empty() const noexcept { return fits_.empty(); }
  /// One line per fitted collective, for the result's notes.
  [[nodiscard]] std::vector<std::string> describe() const;

 private:
  std::map<std::pair<mpi::Collective, int>, CollectiveFit> fits_;
};

}  // namespace p3s::replay::detail
