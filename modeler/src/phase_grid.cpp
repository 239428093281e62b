// SPDX-License-Identifier: BSD-3-Clause
#include "phase_grid.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "p3s/hash.hpp"

namespace p3s::modeler::detail {
namespace {

/// The tolerance within which the sizes of a phase's halos must give its box's proportions.
constexpr double kBoxTolerance = 0.02;

/// Whether the halos of the groups stepping along one axis each (`axis_of[g]`, their mean sizes per run in
/// `sizes[g]`) fit a grid cut for `box`: a halo across x is the block's face, (L_y/p_y)(L_z/p_z), so the sizes
/// across two axes a, b at one n give L_a / L_b = (p_a / p_b)(size_b / size_a). Several boxes cut the fitted counts
/// alike (at 4, 8 and 16 ranks a 4:2:1 box and simpler ones); the block's faces tell them apart.
bool sizes_fit_box(Frame frame, const std::array<std::int64_t, 3>& box,
                   const std::vector<std::optional<std::size_t>>& axis_of,
                   const std::vector<std::map<std::int64_t, double>>& sizes) {
  std::map<std::int64_t, std::map<std::size_t, double>> per_n;  // n -> axis -> a halo's size
  for (std::size_t g = 0; g < axis_of.size(); ++g) {
    if (!axis_of[g]) continue;
    for (const auto& [n, s] : sizes[g]) {
      if (s > 0) per_n[n].try_emplace(*axis_of[g], s);
    }
  }
  for (const auto& [n, across] : per_n) {
    const std::vector<int> p = grid_sides(frame, n, GridLayout{0, box});
    for (const auto& [a, sa] : across) {
      for (const auto& [b, sb] : across) {
        if (a >= b) continue;
        const double seen = static_cast<double>(p[a]) / p[b] * (sb / sa);
        const double cut = static_cast<double>(box[a]) / static_cast<double>(box[b]);
        if (std::abs(seen - cut) > kBoxTolerance * cut) return false;
      }
    }
  }
  return true;
}

/// Each point-to-point group's observations (one per rank and run: its peers in one iteration) and slots.
struct Observed {
  std::vector<std::vector<ListObservation>> lists;
  std::vector<int> slots;
};

Observed observe(const std::vector<RankData>& ranks, const Shape& shape,
                 const std::vector<std::optional<ExactLaw>>& iterations) {
  Observed o{std::vector<std::vector<ListObservation>>(shape.groups.size()), std::vector<int>(shape.groups.size(), 1)};
  for (std::size_t g = 0; g < shape.groups.size(); ++g) {
    if (shape.groups[g].second != Role::PointToPoint) continue;
    for (const RankData& d : ranks) {
      ListObservation l{d.n, d.r, {}};
      for (const Call& c : one_iteration(d, g, iterations[g])) l.entries.push_back(c.peers);
      o.lists[g].push_back(std::move(l));
    }
    o.slots[g] = slot_kinds(first_call(ranks, g))[1] ? 2 : 1;
  }
  return o;
}

/// Each group's mean message size per run, for the boxes' proportions.
std::vector<std::map<std::int64_t, double>> mean_sizes(const std::vector<RankData>& ranks, std::size_t groups) {
  std::vector<std::map<std::int64_t, double>> sizes(groups);
  for (std::size_t g = 0; g < groups; ++g) {
    std::map<std::int64_t, std::pair<double, std::size_t>> sum;
    for (const RankData& d : ranks) {
      if (d.at[g] == nullptr) continue;
      for (const Call& c : d.at[g]->calls) {
        auto& [total, count] = sum[d.n];
        total += c.peers[0] >= 0 ? c.bytes[0] : c.bytes[1];
        ++count;
      }
    }
    for (const auto& [n, tc] : sum) sizes[g][n] = tc.first / static_cast<double>(tc.second);
  }
  return sizes;
}

/// A group's one-case program, or nullptr.
const Program* single(const LearntPeers& l) {
  return l.pattern && l.pattern->cases.size() == 1 ? &l.pattern->cases.front().program : nullptr;
}

bool in_grid(const Program& p, const PhaseBox& grid) { return p.frame == grid.first && p.layout.box == grid.second; }

/// The phase's grid and what choosing it found: per group, its pattern with constant labels there.
struct GridChoice {
  std::optional<PhaseBox> grid;
  std::size_t constant_groups = 0;                                  ///< the groups with constant labels there
  std::map<std::pair<PhaseBox, std::size_t>, Pattern> constant_in;  ///< (grid, group) -> its constant pattern there
};

/// The phase's grid: the frame and box in which the most groups have labels constant in n (their own pattern, or
/// one learnt there with constant labels); on a tie, the one that most patterns are in already. A box the steps of one
/// group reveal (x: 4 x 2 x 1 at 8 ranks) also places the groups that step where only that box has a side (z: none
/// at 8, a side of 2 at 16). Candidates: the grids the groups' patterns are in, then the boxes applications cut
/// (phase_boxes()) where some group's steps are not constant in n on MPI_Dims_create's grid.
GridChoice choose_grid(const std::vector<RankData>& ranks, const Shape& shape, const Observed& observed,
                       const std::vector<LearntPeers>& out, std::span<const PhaseBox> boxes, const WholeAt& whole) {
  std::set<PhaseBox> used;
  bool all_constant = true;
  for (std::size_t g = 0; g < shape.groups.size(); ++g) {
    if (shape.groups[g].second != Role::PointToPoint) continue;
    const Program* p = single(out[g]);
    if (p != nullptr) used.insert({p->frame, p->layout.box});
    if (p == nullptr || !constant_in_n(*p)) all_constant = false;
  }
  std::vector<PhaseBox> candidates(used.begin(), used.end());
  if (!all_constant) candidates.insert(candidates.end(), boxes.begin(), boxes.end());
  const std::vector<std::map<std::int64_t, double>> sizes = mean_sizes(ranks, shape.groups.size());
  GridChoice choice;
  std::pair<std::size_t, std::size_t> best{0, 0};
  for (const PhaseBox& grid : candidates) {
    std::pair<std::size_t, std::size_t> score{0, 0};
    std::vector<std::optional<std::size_t>> axis_of(shape.groups.size());
    for (std::size_t g = 0; g < shape.groups.size(); ++g) {
      if (shape.groups[g].second != Role::PointToPoint) continue;
      const Program* p = single(out[g]);
      if (p != nullptr && in_grid(*p, grid)) {
        ++score.second;
        if (constant_in_n(*p)) ++score.first;
        if (constant_in_n(*p)) axis_of[g] = step_axis(*p);
        continue;
      }
      if (std::optional<Pattern> c =
              learn_constant_pattern(observed.lists[g], observed.slots[g], grid.first, grid.second, whole)) {
        ++score.first;
        axis_of[g] = step_axis(c->cases.front().program);
        choice.constant_in.emplace(std::make_pair(grid, g), std::move(*c));
      }
    }
    if (grid.second[0] > 0 && !sizes_fit_box(grid.first, grid.second, axis_of, sizes)) continue;
    if (!choice.grid || score > best) {
      choice.grid = grid;
      best = score;
    }
  }
  choice.constant_groups = best.first;
  return choice;
}

/// Moves the groups to the phase's grid where their patterns there are constant and no longer to write down.
void take_constant(const Shape& shape, const GridChoice& choice, std::vector<LearntPeers>& out) {
  const PhaseBox& grid = *choice.grid;
  for (std::size_t g = 0; g < shape.groups.size(); ++g) {
    if (shape.groups[g].second != Role::PointToPoint) continue;
    const Program* p = single(out[g]);
    if (p != nullptr && in_grid(*p, grid)) continue;
    const auto c = choice.constant_in.find({grid, g});
    if (c == choice.constant_in.end()) continue;
    // Constant there and no pattern or several cases here; constant in both and no longer to write down but for the
    // layout, which the phase's grid says once for all its groups; or a law in n here, longer than the constant
    // steps there with the group's share of the layout (two steps along z of a box's grid, absent at 8 ranks, are
    // no description of a halving along a row whose steps grow as log2(n) / 2, which a box fits at 4, 8 and 16).
    const auto bare = [](Program q) {
      q.layout = {};
      return description_length(q);
    };
    const Program& there = c->second.cases.front().program;
    const double share = static_cast<double>(description_length(there) - bare(there)) /
                         static_cast<double>(std::max<std::size_t>(choice.constant_groups, 1));
    const bool take = p == nullptr || (constant_in_n(*p) ? bare(there) <= bare(*p)
                                                         : static_cast<double>(bare(there)) + share <= bare(*p));
    if (take) out[g].pattern = c->second;
  }
}

/// A group stepping along one side of another grid with a count that is a law in n (an exchange made only where a
/// side is longer than 2, seen at one n) is written in the phase's grid where it steps along one of its sides there
/// too, no longer: the phase's other exchanges then tell which side it is.
void take_stepping(const Observed& observed, const PhaseBox& grid, const WholeAt& whole,
                   std::vector<LearntPeers>& out) {
  for (std::size_t g = 0; g < out.size(); ++g) {
    const Program* p = single(out[g]);
    if (p == nullptr || constant_in_n(*p) || !step_axis(*p) || in_grid(*p, grid)) continue;
    std::optional<Pattern> there =
        learn_pattern_on(observed.lists[g], observed.slots[g], grid.first, grid.second, whole);
    if (!there) continue;
    const Program& q = there->cases.front().program;
    if (step_axis(q) && q.terms.size() == p->terms.size() && description_length(q) <= description_length(*p)) {
      out[g].pattern = std::move(there);
    }
  }
}

}  // namespace

std::vector<PhaseBox> phase_boxes(std::span<const Run> runs, const RelatedPhase& rel) {
  std::vector<ListObservation> all;
  for (std::size_t k = 0; k < runs.size(); ++k) {
    for (const analyzer::SigRank& r : runs[k].signature.phases[rel.ids[k]].ranks) {
      if (r.thread != 0) continue;
      ListObservation o{runs[k].n(), r.rank, {}};
      // Each exchange with each peer once: whether the peers are steps on a grid does not depend on how often a rank
      // makes them (a pipeline's rank makes hundreds of calls to its two or four neighbours).
      std::set<std::pair<std::array<std::int64_t, 2>, std::uint64_t>> seen;
      for (const RankGroup& g : rank_groups(r)) {
        if (g.role != Role::PointToPoint) continue;
        for (const Call& c : g.calls) {
          // An exchange is its function and tags, the same at every n.
          const std::uint64_t key =
              mix64(static_cast<std::uint64_t>(g.function.function) ^ mix64(c.tags[0]) ^ mix64(c.tags[1] + 1));
          if (!seen.insert({c.peers, key}).second) continue;
          o.entries.push_back(c.peers);
          o.keys.push_back(key);
        }
      }
      all.push_back(std::move(o));
    }
  }
  std::vector<PhaseBox> out;
  for (const Frame f : {Frame::Torus3, Frame::Torus3C, Frame::Grid3, Frame::Grid3C, Frame::Torus2, Frame::Torus2C,
                        Frame::Grid2, Frame::Grid2C}) {
    for (const std::array<std::int64_t, 3>& box : suggested_boxes(f, all)) out.emplace_back(f, box);
  }
  return out;
}

std::vector<LearntPeers> learn_phase_peers(const std::vector<RankData>& ranks, const Shape& shape,
                                           const std::vector<std::optional<ExactLaw>>& iterations,
                                           std::span<const PhaseBox> boxes, const SearchOptions& search,
                                           const WholeAt& whole) {
  const Observed observed = observe(ranks, shape, iterations);
  std::vector<LearntPeers> out(shape.groups.size());
  // A pattern is a function of its observations: groups whose ranks made the same peers in every run (a send and
  // its receive on a ring, one exchange repeated for each message size) are learnt once.
  std::map<std::pair<int, std::vector<ListObservation>>, std::size_t> learnt;
  for (std::size_t g = 0; g < shape.groups.size(); ++g) {
    if (shape.groups[g].second != Role::PointToPoint) continue;
    const auto [at, first] = learnt.try_emplace({observed.slots[g], observed.lists[g]}, g);
    if (!first) {
      out[g] = out[at->second];
      continue;
    }
    out[g].pattern = learn_pattern(observed.lists[g], observed.slots[g], &out[g].why, search, whole);
  }
  const GridChoice choice = choose_grid(ranks, shape, observed, out, boxes, whole);
  if (!choice.grid) return out;
  take_constant(shape, choice, out);
  take_stepping(observed, *choice.grid, whole, out);
  return out;
}

}  // namespace p3s::modeler::detail
