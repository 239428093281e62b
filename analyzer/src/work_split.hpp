// SPDX-License-Identifier: BSD-3-Clause
// Deciding, per structural phase, which instances are one phase and where the bursts at instance boundaries go:
// work populations (DESIGN's "burst work at least 90 % similar") and the PAS2P burst attribution.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <utility>
#include <vector>

#include "extract.hpp"
#include "p3s/analyzer/signature.hpp"
#include "run_phases.hpp"

namespace p3s::analyzer {

/// Sweep 1 over the operations: each occurrence's total burst work, and per structural phase the bursts found
/// at its instance boundaries.
struct InstanceWork {
  struct Boundary {
    Stat internal;  ///< bursts between consecutive instances of the phase
    Stat lead;      ///< bursts before an instance that follows another phase
    Stat trail;     ///< bursts after an instance that another phase follows
  };
  std::vector<double> occurrence_work;
  std::vector<std::uint64_t> occurrence_ticks;  ///< logical length: from the first to the last tick of its calls
  std::vector<Boundary> bounds;                 ///< per structural phase
};

/// Reads every location's operations once.
[[nodiscard]] InstanceWork measure_instances(const Extracted& extracted,
                                             const std::vector<std::filesystem::path>& tick_files,
                                             const RunPhases& phases);

/// Per structural phase: whether its instances keep the burst after their last call (trailing) instead of the
/// one before their first (leading). `floor_per_location` is the work below which differences are noise.
[[nodiscard]] std::vector<bool> trailing_phases(const InstanceWork& w, double floor_per_location);

/// The final phases: structural phases split into work populations, numbered in order of first occurrence.
struct FinalPhases {
  std::vector<std::uint32_t> phase;          ///< per occurrence
  std::vector<std::uint64_t> instance;       ///< per occurrence: its number within its final phase
  std::vector<std::uint32_t> structural_of;  ///< per final phase
  /// (structural phase, population) -> final phase id
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> final_id;
};

/// Splits each structural phase's occurrences into work populations whose totals differ by more than `tol`
/// (relative) and `floor` (absolute); the structural phases in `unsplit` are left whole.
[[nodiscard]] FinalPhases split_by_work(const RunPhases& phases, const std::vector<double>& occurrence_work, double tol,
                                        double floor, const std::vector<std::uint32_t>& unsplit = {});

}  // namespace p3s::analyzer
