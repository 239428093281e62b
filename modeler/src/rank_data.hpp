// SPDX-License-Identifier: BSD-3-Clause
// One rank of one fitted run in the phase being fitted: its calls merged into the groups of the phase's shape, what
// every pass of the phase's fit reads.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "p3s/modeler/law.hpp"
#include "shape.hpp"

namespace p3s::modeler::detail {

/// One rank of one run in one phase.
struct RankData {
  std::int64_t n = 0;
  std::int64_t r = 0;
  const analyzer::Signature* signature = nullptr;
  const analyzer::SigRank* rank = nullptr;
  std::vector<RankGroup> groups;
  std::vector<const RankGroup*> at;  ///< per shape position, its group or nullptr
};

/// Rank d's calls in group g in one iteration: all of them, or in a loop whose iterations repeat the same calls
/// (`iterations` at d.n of them), the first iteration's.
inline std::span<const Call> one_iteration(const RankData& d, std::size_t g,
                                           const std::optional<ExactLaw>& iterations) {
  if (d.at[g] == nullptr) return {};
  const std::vector<Call>& calls = d.at[g]->calls;
  if (!iterations) return calls;
  const auto times = static_cast<std::size_t>(std::max<std::int64_t>(1, count_value(*iterations, d.n)));
  return std::span<const Call>(calls).first(calls.size() / times);
}

/// The first call of group g of the first rank that makes one (every group has a rank that calls it).
inline const analyzer::SigEvent& first_call(const std::vector<RankData>& ranks, std::size_t g) {
  for (const RankData& d : ranks) {
    if (d.at[g] != nullptr) return d.rank->events[d.at[g]->calls.front().event];
  }
  throw std::logic_error("group " + std::to_string(g) + " of a phase's shape has no call");
}

}  // namespace p3s::modeler::detail
