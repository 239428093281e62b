// SPDX-License-Identifier: BSD-3-Clause
#include "grid_seen.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

#include "law_caveats.hpp"
#include "p3s/modeler/dims.hpp"
#include "p3s/modeler/law.hpp"

namespace p3s::modeler {

std::optional<std::size_t> step_axis(const GroupModel& g) {
  if (g.role != Role::PointToPoint || g.pattern.cases.size() != 1) return std::nullopt;
  return step_axis(g.pattern.cases.front().program);
}

namespace {

/// Whether some term of a point-to-point group's one case steps along dimension d of a grid frame.
bool steps_along(const GroupModel& g, std::size_t d) {
  if (g.role != Role::PointToPoint || g.pattern.cases.size() != 1) return false;
  const Program& p = g.pattern.cases.front().program;
  if (frame_dims(p.frame) < 2) return false;
  for (const Term& t : p.terms) {
    for (const std::vector<IndexedLaw>& slot : t.slots) {
      if (slot.size() <= d) continue;
      const IndexedLaw& l = slot[d];
      if (l.step != 0 || !l.base.is_constant() || l.base.b != Rational::make(0)) return true;
    }
  }
  return false;
}

/// The groups of pm stepping along dimension d of the phase's grid, as "[g] call, ...".
std::string stepping_along(const PhaseModel& pm, std::size_t d) {
  const GridSeen& seen = *pm.grid_seen;
  std::string names;
  for (std::size_t g = 0; g < pm.groups.size(); ++g) {
    const GroupModel& gm = pm.groups[g];
    if (!steps_along(gm, d) || gm.pattern.cases.front().program.frame != seen.frame ||
        gm.pattern.cases.front().program.layout.box != seen.box) {
      continue;
    }
    names += (names.empty() ? "" : ", ") + ("[" + std::to_string(g) + "] " + gm.call);
  }
  return names;
}

/// The caveat on groups whose message sizes follow their law only on average or approximately, if any.
std::optional<std::string> approximate_sizes_caveat(const PhaseModel& pm) {
  const std::vector<std::uint32_t> sizes = pm.approximate_sizes();
  if (sizes.empty()) return std::nullopt;
  double miss = 0;
  double spread = 0;
  std::string names;
  for (const std::uint32_t g : sizes) {
    names += (names.empty() ? "" : ", ") + ("[" + std::to_string(g) + "] " + pm.groups[g].call);
    for (const std::vector<TermTraits>& per_case : pm.groups[g].traits) {
      for (const TermTraits& t : per_case) {
        for (std::size_t s = 0; s < 2; ++s) {
          miss = std::max(miss, t.bytes[s].max_rel_error);
          spread = std::max(spread, t.rank_spread[s]);
        }
      }
    }
  }
  char text[160];
  std::snprintf(text, sizeof text,
                "the best misses a fitted run by up to %.1f %%, and within one run the sizes differ "
                "from rank to rank by up to %.1f %%",
                100 * miss, 100 * spread);
  return "the message sizes of " + names +
         (miss > kSizeTolerance ? " follow no law in n within 0.5 % of every fitted run ("
                                : " follow their law in n only on average over the ranks (") +
         text + (spread > kSizeTolerance ? ": they depend on each rank's data, not on n alone)" : ")");
}

/// Along a periodic side of 2 a step forward and a step back reach the same rank: the fitted runs cannot show which
/// way a code steps along it. The steps are given an order (orient.hpp) and their sends and receives meet, but the
/// code may step the other way: the same messages, between mirrored ranks. One caveat per such side longer at n.
std::vector<std::string> direction_caveats(const PhaseModel& pm, std::int64_t n) {
  const GridSeen& seen = *pm.grid_seen;
  const auto dims = static_cast<std::size_t>(frame_dims(seen.frame));
  const std::vector<int> sides = grid_sides(seen.frame, n, GridLayout{0, seen.box});
  std::vector<std::string> out;
  bool longer_elsewhere = false;
  for (std::size_t d = 0; d < dims; ++d) longer_elsewhere = longer_elsewhere || seen.longest[d] > 2;
  for (std::size_t d = 0; d < dims && frame_periodic(seen.frame); ++d) {
    if (sides[d] <= 2 || seen.longest[d] > 2) continue;
    const std::string names = stepping_along(pm, d);
    if (names.empty()) continue;
    const std::string direction = longer_elsewhere ? "the one the phase's steps along its longer sides take"
                                                   : "one the fit chose, each send meeting its receive";
    out.push_back("along dimension " + std::to_string(d) + " of the " + std::string(frame_name(seen.frame)) +
                  " grid the side is " + std::to_string(sides[d]) + " at n = " + std::to_string(n) +
                  ", but at most 2 in the fitted runs, where a step either way reaches the same rank: the direction "
                  "of the steps of " +
                  names + " is " + direction +
                  "; the code may step the other way (the same messages, between mirrored ranks)");
  }
  return out;
}

/// Where a longer side added calls along one dimension, the sides longer at n than in any fitted run along the
/// others: calls inferred there (GridSeen::follows), or calls the model may miss.
std::vector<std::string> added_calls_caveats(const PhaseModel& pm, std::int64_t n) {
  const GridSeen& seen = *pm.grid_seen;
  const auto dims = static_cast<std::size_t>(frame_dims(seen.frame));
  const std::vector<int> sides = grid_sides(seen.frame, n, GridLayout{0, seen.box});
  std::vector<std::string> out;
  std::optional<std::size_t> adding;  // a dimension along which longer sides added calls
  for (std::size_t d = 0; d < dims; ++d) {
    if (seen.longer_adds_calls[d]) adding = adding.value_or(d);
  }
  if (!adding) return out;
  for (std::size_t d = 0; d < dims; ++d) {
    if (sides[d] <= 2 || seen.longest[d] > 2 || d == *adding) continue;
    const std::string names = stepping_along(pm, d);
    if (names.empty()) continue;
    const std::string where = "along dimension " + std::to_string(d) + " of the " +
                              std::string(frame_name(seen.frame)) + " grid the side is " + std::to_string(sides[d]) +
                              " at n = " + std::to_string(n) + ", but at most " + std::to_string(seen.longest[d]) +
                              " in the fitted runs; along dimension ";
    if (seen.follows[d] >= 0) {
      out.push_back(where + std::to_string(seen.follows[d]) +
                    " a side longer than 2 made more calls than a side of 2, and the same exchanges along dimension " +
                    std::to_string(d) + " (" + names + ") are predicted to make them too: inferred, not seen");
      continue;
    }
    out.push_back(where + std::to_string(*adding) +
                  " a side longer than 2 made more calls than a side of 2, so the groups stepping along dimension " +
                  std::to_string(d) + " (" + names + ") may make calls the model does not predict");
  }
  return out;
}

}  // namespace

std::vector<std::uint32_t> PhaseModel::approximate_sizes() const {
  std::vector<std::uint32_t> out;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    bool approximate = false;
    for (const std::vector<TermTraits>& per_case : groups[g].traits) {
      for (const TermTraits& t : per_case) {
        for (int s = 0; s < groups[g].slots; ++s) {
          const auto slot = static_cast<std::size_t>(s);
          // A law in n gives every rank of a case the same size: where the ranks' sizes spread within a run (the
          // atoms each holds), it is their mean, and no rank's own size.
          approximate = approximate || (!t.block[slot] && (t.bytes[slot].max_rel_error > kSizeTolerance ||
                                                           t.rank_spread[slot] > kSizeTolerance));
        }
      }
    }
    if (groups[g].role == Role::PointToPoint && approximate) out.push_back(static_cast<std::uint32_t>(g));
  }
  return out;
}

std::vector<std::string> PhaseModel::caveats(std::int64_t n, const std::vector<std::int64_t>& fitted_n) const {
  std::vector<std::string> out;
  if (calls_left_out != 0) {
    out.push_back("its calls are left out: an instance holds up to " + std::to_string(calls_left_out) +
                  " calls on one rank, more than the model aligns across ranks; only its work and time are predicted");
  }
  const bool fitted = std::find(fitted_n.begin(), fitted_n.end(), n) != fitted_n.end();
  if (step_total && !fitted) {
    out.push_back("the time step's main kind: at n = " + std::to_string(n) + " its weight is the code's steps (" +
                  std::to_string(count_value(*step_total, n)) + ") less the other kinds' weights there, " +
                  std::to_string(weight_at(n)) + " (which kind a step is is the run's data)");
  } else if (!weight_exact && !fitted) {
    out.push_back(weight_measured.empty()
                      ? "its weight follows no exact law in n: at n = " + std::to_string(n) + " it is " +
                            std::to_string(weight_at(n)) + ", a regression rounded (" + weight_fit.to_string() + ")"
                      : "its weight follows no exact law in n and differs by little across the fitted runs (a count "
                        "the run's data decides): at n = " +
                            std::to_string(n) + " it is the nearest fitted run's (n = " +
                            std::to_string(nearest_measured_weight(n)->first) + "), " + std::to_string(weight_at(n)) +
                            ", not extrapolated");
  }
  if (std::optional<std::string> uneven = detail::uneven_sizes(*this, n, fitted_n)) out.push_back(std::move(*uneven));
  if (std::optional<std::string> negative = detail::negative_laws(*this, n)) out.push_back(std::move(*negative));
  if (std::optional<std::string> sizes = approximate_sizes_caveat(*this)) out.push_back(std::move(*sizes));
  if (!grid_seen || n < 1) return out;
  const std::vector<std::string> direction = direction_caveats(*this, n);
  out.insert(out.end(), direction.begin(), direction.end());
  const std::vector<std::string> added = added_calls_caveats(*this, n);
  out.insert(out.end(), added.begin(), added.end());
  return out;
}

namespace detail {

std::optional<GridSeen> grid_seen(const std::vector<GroupModel>& groups, const std::vector<RankCalls>& ranks,
                                  const std::vector<std::int64_t>& fitted_n) {
  // The frame (and the box that cuts its grid) most stepping groups use.
  std::map<std::pair<Frame, std::array<std::int64_t, 3>>, std::size_t> frames;
  for (const GroupModel& g : groups) {
    if (!step_axis(g)) continue;
    const Program& p = g.pattern.cases.front().program;
    ++frames[{p.frame, p.layout.box}];
  }
  // Else the grid of the groups whose terms step along several of its dimensions (a halo's six neighbours in one
  // group of MPI_Irecv calls).
  for (const GroupModel& g : groups) {
    if (!frames.empty() || g.role != Role::PointToPoint || g.pattern.cases.size() != 1) continue;
    const Program& p = g.pattern.cases.front().program;
    if (frame_dims(p.frame) >= 2) ++frames[{p.frame, p.layout.box}];
  }
  if (frames.empty()) return std::nullopt;
  GridSeen seen;
  const auto most =
      std::max_element(frames.begin(), frames.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  seen.frame = most->first.first;
  seen.box = most->first.second;
  const GridLayout layout{0, seen.box};
  const auto dims = static_cast<std::size_t>(frame_dims(seen.frame));
  for (const std::int64_t n : fitted_n) {
    const std::vector<int> sides = grid_sides(seen.frame, n, layout);
    for (std::size_t d = 0; d < dims; ++d) seen.longest[d] = std::max<std::int64_t>(seen.longest[d], sides[d]);
  }
  // Per dimension, the most calls a rank made stepping along it where its side was 2, and where it was longer.
  std::array<std::size_t, 3> at_two{0, 0, 0};
  std::array<std::size_t, 3> longer{0, 0, 0};
  for (const RankCalls& r : ranks) {
    const std::vector<int> sides = grid_sides(seen.frame, r.n, layout);
    std::array<std::size_t, 3> calls{0, 0, 0};
    for (std::size_t g = 0; g < groups.size() && g < r.calls.size(); ++g) {
      const std::optional<std::size_t> axis = step_axis(groups[g]);
      const Program* p = axis ? &groups[g].pattern.cases.front().program : nullptr;
      if (p != nullptr && p->frame == seen.frame && p->layout.box == seen.box) calls[*axis] += r.calls[g];
    }
    for (std::size_t d = 0; d < dims; ++d) {
      if (sides[d] == 2) at_two[d] = std::max(at_two[d], calls[d]);
      if (sides[d] > 2) longer[d] = std::max(longer[d], calls[d]);
    }
  }
  for (std::size_t d = 0; d < dims; ++d) seen.longer_adds_calls[d] = at_two[d] > 0 && longer[d] > at_two[d];
  return seen;
}

}  // namespace detail
}  // namespace p3s::modeler
