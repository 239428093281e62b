// SPDX-License-Identifier: BSD-3-Clause
// What a phase's laws give at a new n that no run can do: message sizes that are a fraction of an element where
// the data no longer divides evenly among the ranks, and sizes or work below zero.
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

/// The caveat for laws that fall below zero at `n` (a size or a burst's work, which prediction then takes as 0):
/// the law is extrapolated past where it means anything. nullopt when none does.
[[nodiscard]] std::optional<std::string> negative_laws(const PhaseModel& phase, std::int64_t n);

}  // namespace p3s::modeler::detail
