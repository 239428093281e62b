// SPDX-License-Identifier: BSD-3-Clause
// Cuts of tick occurrences moved to program points on every location: a cut in logical time falls wherever each
// rank's clock is, so the Wait that closes a rank's iteration lands in the next one on ranks whose clock runs late.
#pragma once

#include <filesystem>
#include <vector>

#include "op_log.hpp"
#include "run_phases.hpp"

namespace p3s::analyzer {

/// A location's operation and tick files.
struct LocationFiles {
  std::filesystem::path ops;
  std::filesystem::path ticks;
};

/// Gives the tick occurrences of `phases` (method GlobalTicks, `first_tick` set) a first operation per location
/// (`first_op`): the first operation at or after the occurrence's first tick, moved past the operations that only
/// complete requests started before it (an iteration's last Wait on its last Isend belongs to that iteration,
/// however late the rank's clock). The occurrences' ticks are kept.
void cut_at_program_points(RunPhases& phases, const std::vector<LocationFiles>& locations);

}  // namespace p3s::analyzer
