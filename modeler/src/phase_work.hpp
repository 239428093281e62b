// SPDX-License-Identifier: BSD-3-Clause
// The work of a phase's bursts per class of ranks (the method's SCIC): each rank's calls placed at the burst positions
// they stand for, their work and time summed there.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "p3s/modeler/fit.hpp"
#include "p3s/modeler/model.hpp"
#include "rank_data.hpp"

namespace p3s::modeler::detail {

/// The work of the phase's bursts per class of ranks (the method's SCIC).
void fit_work(PhaseModel& pm, PhaseReport& pr, const std::vector<RankData>& ranks,
              const std::map<std::int64_t, std::int64_t>& weight_by_n);

}  // namespace p3s::modeler::detail
