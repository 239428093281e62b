// SPDX-License-Identifier: BSD-3-Clause
// What the fitted runs showed of the process grid a phase's exchanges step along, and what that leaves unknown at
// an n where a side is longer than in every fitted run.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "p3s/modeler/model.hpp"

namespace p3s::modeler::detail {

/// One rank of one fitted run: how many calls it made in each group of the phase.
struct RankCalls {
  std::int64_t n = 0;
  std::vector<std::size_t> calls;  ///< per group
};

/// The grid the phase's exchanges step along (the frame most of its stepping groups use) as the fitted runs at
/// `fitted_n` showed it; nullopt when no group steps along one dimension of a grid.
[[nodiscard]] std::optional<GridSeen> grid_seen(const std::vector<GroupModel>& groups,
                                                const std::vector<RankCalls>& ranks,
                                                const std::vector<std::int64_t>& fitted_n);

}  // namespace p3s::modeler::detail
