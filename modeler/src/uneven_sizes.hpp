// SPDX-License-Identifier: BSD-3-Clause
// Message sizes that no application can send at a new n: laws that give whole elements at every fitted n but a
// fraction of one where the data no longer divides evenly among the ranks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "p3s/modeler/model.hpp"

namespace p3s::modeler::detail {

/// The caveat for the phase's point-to-point sizes that are whole numbers of elements (8, 4, 2 or 1 bytes, the
/// largest dividing every fitted run's size) at every n in `fitted_n` but not at `n`: the application must cut its
/// data unevenly there (a side of 60 points over 7 ranks), so each rank's sizes differ from the law's mean.
/// nullopt when every size is whole, or `fitted_n` is empty.
[[nodiscard]] std::optional<std::string> uneven_sizes(const PhaseModel& phase, std::int64_t n,
                                                      const std::vector<std::int64_t>& fitted_n);

}  // namespace p3s::modeler::detail
