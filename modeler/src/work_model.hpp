// SPDX-License-Identifier: BSD-3-Clause
// The work of a phase's bursts as a function of n, per class of ranks (the method's SCIC).
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
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

/// The burst positions of a point-to-point group for a rank in pattern case `which`: one per term of the case's
/// program (one for a group whose calls were kept as measured; none when no case applies).
[[nodiscard]] std::vector<BurstKey> group_positions(const GroupModel& gm, std::int32_t group, std::uint32_t which);

/// The positions each of a rank's calls may stand for. A rank skips calls that the other ranks of its class make (a
/// grid's boundary has no neighbour on one side, a pipeline's first rank receives nothing): its burst before its next
/// call is then the computation the others make before one of the skipped calls or before that call, and the laws
/// of the position it goes to are the class's. `own` holds the calls' own positions and `potential` every position
/// of the rank's groups, both group by group in the phase's order; a call's candidates are the positions it skipped
/// since its previous call, then its own. Calls of loops stand for their own (their calls are interleaved).
[[nodiscard]] std::vector<std::vector<BurstKey>> call_candidates(std::span<const BurstKey> own,
                                                                 std::span<const BurstKey> potential,
                                                                 const std::vector<bool>& in_loop);

/// call_candidates for a rank of phase `pm` with these pattern cases, its calls' own positions listed group by group:
/// every position of its groups (a group it makes no call of has its first), and which groups are loops.
[[nodiscard]] std::vector<std::vector<BurstKey>> rank_candidates(const PhaseModel& pm, std::span<const BurstKey> own,
                                                                 std::span<const std::uint32_t> cases);

/// The position a call stands for among its candidates: the one where the class computes most (`value`: a
/// position's mean burst), its own on a tie. Fitting and prediction choose alike, so that a boundary rank's
/// computation goes where the other ranks make theirs.
[[nodiscard]] BurstKey stands_for(std::span<const BurstKey> candidates,
                                  const std::function<double(const BurstKey&)>& value);

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
