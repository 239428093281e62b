// SPDX-License-Identifier: BSD-3-Clause
// A phase's shape: each rank's calls merged into groups by the alignment, frame and folding of loops that model the
// phase best, with each group's peers learnt (phase_grid.hpp) and its calls counted.
#pragma once

#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "p3s/modeler/fit.hpp"
#include "p3s/modeler/model.hpp"
#include "p3s/modeler/series.hpp"
#include "rank_data.hpp"

namespace p3s::modeler::detail {

/// A phase's ranks cut into the groups of one shape, with the groups' models.
struct Shaped {
  std::vector<RankData> ranks;
  std::vector<GroupModel> groups;
  std::vector<PhaseLoop> loops;
  std::vector<std::string> notes;
  /// Per completion group whose number of calls follows no law: the note, unless one call per request holds.
  std::map<std::size_t, std::string> completion_notes;
  /// How good the shape is for modelling: point-to-point groups left unmodelled, then pattern cases in all,
  /// then the patterns' description length, then groups (fewer and shorter is better).
  [[nodiscard]] std::tuple<std::size_t, std::size_t, int, std::size_t> cost() const {
    std::size_t failed = 0;
    std::size_t cases = 0;
    int length = 0;
    for (const GroupModel& g : groups) {
      if (g.role != Role::PointToPoint) continue;
      failed += g.pattern.cases.empty() ? 1 : 0;
      cases += g.pattern.cases.size();
      for (const Pattern::Case& c : g.pattern.cases) length += description_length(c.program);
    }
    return {failed, cases, length, groups.size()};
  }
  /// Whether every point-to-point group is one case whose peers are constant offsets: nothing aligns better.
  [[nodiscard]] bool constant_offsets() const {
    for (const GroupModel& g : groups) {
      if (g.role != Role::PointToPoint) continue;
      if (g.pattern.cases.size() != 1 || !constant_in_n(g.pattern.cases.front().program)) return false;
    }
    return true;
  }
};

/// The phase's shape (its calls merged into groups) that models best, with each rank's groups.
[[nodiscard]] Shaped best_shape(std::span<const Run> runs, const RelatedPhase& rel, const FitOptions& options);

}  // namespace p3s::modeler::detail
