// SPDX-License-Identifier: BSD-3-Clause
// The work of a phase's bursts as a function of n, per class of ranks (the method's SCIC).
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "p3s/modeler/fit.hpp"
#include "p3s/modeler/model.hpp"

namespace p3s::modeler::detail {

/// Where a burst is in a phase (see BurstModel).
struct BurstKey {
  std::int32_t group = -1;
  std::uint32_t pattern_case = 0;
  std::uint32_t term = 0;
  auto operator<=>(const BurstKey&) const = default;
};

/// One rank's work per phase instance in one run, by burst position.
struct RankWork {
  std::int64_t n = 0;
  std::int64_t r = 0;
  std::vector<std::uint32_t> cases;  ///< its work class
  std::map<BurstKey, double> work;
  std::map<BurstKey, double> time;  ///< the bursts' wall-clock time (ns), by the same positions
};

/// A phase's work classes with their burst models, and per class the measured rows of the SCIC.
struct LearntWork {
  std::vector<WorkClass> classes;
  std::vector<std::vector<ScicRow>> measured;
};

/// Work classes with their burst models and measured SCIC rows. `weights` maps n to the phase's weight.
[[nodiscard]] LearntWork learn_work(std::span<const RankWork> ranks,
                                    const std::map<std::int64_t, std::int64_t>& weights);

/// A class's compute time over the run versus n (the method's CRMi): a constant under perfect strong scaling, a
/// power law where time per unit of work changes with n, offset + c*n where a part does not shrink; a trend only
/// where it predicts the samples clearly better than their mean (times are noisy).
[[nodiscard]] RegressionLaw class_time_law(std::span<const Sample> samples);

}  // namespace p3s::modeler::detail
