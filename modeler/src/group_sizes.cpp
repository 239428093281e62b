// SPDX-License-Identifier: BSD-3-Clause
// The sizes and tags of a point-to-point group's messages: a law in n per term's slot (a grid's sides and faces first,
// a block's face with its ghost layers, sizes per point of a coarse grid's face), and block laws where sizes differ
// from rank to rank.
#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "group_fit.hpp"

namespace p3s::modeler::detail {
namespace {

/// The one dimension a term's constant label steps along in slot s of a grid program, or nullopt.
std::optional<std::size_t> crossed_axis(const Program& p, std::size_t term, std::size_t slot) {
  if (frame_dims(p.frame) < 2 || term >= p.terms.size() || slot >= p.terms[term].slots.size()) return std::nullopt;
  const std::vector<IndexedLaw>& label = p.terms[term].slots[slot];
  if (!std::all_of(label.begin(), label.end(),
                   [](const IndexedLaw& l) { return l.step == 0 && l.base.is_constant(); })) {
    return std::nullopt;
  }
  return label_axis(label);
}

/// The most ghost layers a coarse grid's face is tried with along each of its sides (a stencil's halo is 1 or 2).
constexpr int kMaxGhostLayers = 2;

/// The ghost layers to try along a face's two sides, fewest first: none, then up to `most` each.
std::vector<std::array<int, 2>> ghost_margins(int most) {
  std::vector<std::array<int, 2>> out;
  for (int sum = 0; sum <= 2 * most; ++sum) {
    for (int a = 0; a <= most; ++a) {
      if (sum - a >= 0 && sum - a <= most) out.push_back({a, sum - a});
    }
  }
  return out;
}

/// The messages of one term's slot over all runs.
struct SlotSizes {
  std::map<std::int64_t, std::pair<double, std::int64_t>> bytes;  ///< n -> (sum, count)
  std::map<std::int64_t, std::pair<double, double>> range;        ///< n -> (smallest, largest)
  std::map<std::int64_t, std::vector<double>> first_row;          ///< n -> bytes by index, one rank
  std::map<std::int64_t, std::int64_t> tags;                      ///< tag -> occurrences
  std::vector<BlockSample> samples;                               ///< every message, for a block law
};

/// The messages of group g per (pattern case, term, slot), of the ranks whose calls its pattern generates.
std::map<SlotKey, SlotSizes> slot_sizes(const GroupModel& gm, const std::vector<RankData>& ranks, std::size_t g) {
  std::map<SlotKey, SlotSizes> out;
  for (const RankData& d : ranks) {
    const RankGroup* rg = d.at[g];
    if (rg == nullptr) continue;
    std::size_t which = 0;
    const std::vector<Entry> entries = gm.entries(d.r, d.n, &which);
    if (entries.size() != rg->calls.size()) continue;
    std::set<SlotKey> first_seen;
    for (std::size_t k = 0; k < entries.size(); ++k) {
      for (int s = 0; s < gm.slots; ++s) {
        if (rg->calls[k].peers[static_cast<std::size_t>(s)] < 0) continue;
        const SlotKey key{which, entries[k].term, s};
        SlotSizes& a = out[key];
        const double bytes = rg->calls[k].bytes[static_cast<std::size_t>(s)];
        a.samples.push_back({d.n, d.r, gm.size_index(entries[k]), bytes});
        auto& b = a.bytes[d.n];
        b.first += bytes;
        ++b.second;
        const auto [range, added] = a.range.try_emplace(d.n, bytes, bytes);
        range->second.first = std::min(range->second.first, bytes);
        range->second.second = std::max(range->second.second, bytes);
        ++a.tags[rg->calls[k].tags[static_cast<std::size_t>(s)]];
        if (d.r == 0 || first_seen.insert(key).second) {
          auto& row = a.first_row[d.n];
          if (static_cast<std::int64_t>(row.size()) == gm.size_index(entries[k])) row.push_back(bytes);
        }
      }
    }
  }
  return out;
}

/// Sizes within a repetition: equal (1), or halving (1/2) / doubling (2) step by step (recursive halving, doubling).
double step_factor(const SlotSizes& a) {
  double factor = 1;
  for (const auto& [n, row] : a.first_row) {
    if (row.size() < 2 || row[0] <= 0) continue;
    factor = row[1] / row[0];
    break;
  }
  return std::abs(factor - 0.5) > 1e-9 && std::abs(factor - 2) > 1e-9 ? 1 : factor;
}

/// A step across one axis of MPI_Dims_create's 3-D grid whose sizes no one-parameter law reproduces: a block's face
/// with its ghost layers, (L/p_b + g_b)(L/p_c + g_c) points, where it reproduces them. It comes before laws of any
/// other form, which fit as well where the fitted grids tell too little apart (at 4 to 32 ranks, 1 x 2 x 2 to
/// 2 x 4 x 4, a margin along both sides is also c/face + d, which misses 4 x 4 x 4 by 5 %).
void try_block_face(RegressionLaw& law, const std::map<std::int64_t, double>& first, const Program& p,
                    std::size_t axis) {
  if (axis >= 3 || frame_dims(p.frame) != 3 || p.layout.grain != 0 || p.layout.boxed()) return;
  if (law.parameters() <= 1 && law.max_rel_error <= kSizeTolerance) return;
  if (std::optional<RegressionLaw> block = fit_block_face(samples_of(first), face_basis(axis))) law = std::move(*block);
}

/// A halo across one axis of a 3-D grid whose sizes no simpler law reproduces: the block's face with a margin of
/// ghost cells or atoms, (L_b/p_b + m)(L_c/p_c + m) expanded, where it reproduces them (a molecular dynamics code's
/// ghost atoms: 79512, 45672, 26232, 26232 bytes at 2-16 ranks, and 16512 at 32).
void try_halo(RegressionLaw& law, const std::map<std::int64_t, double>& first, const Program& p, std::size_t axis) {
  if (axis >= 3 || frame_dims(p.frame) != 3 || law.max_rel_error <= kSizeTolerance) return;
  const Basis face = face_basis(axis);
  RegressionLaw halo = fit_regression(
      samples_of(first),
      RegressionOptions{.allow_power = false, .bases = {face}, .allow_linear_inverse = false, .halo = face});
  if (halo.form == RegressionForm::Halo && halo.max_rel_error <= kSizeTolerance) law = std::move(halo);
}

/// On a grid of the program's own layout, sizes that are the same per point of the block's face at every n are
/// that: on a coarse grid (a grain) a face is grain / p points along each other side but one plane where a side has
/// more processes than points (16, 8, 8, 8 bytes at 4 to 32 ranks, not 16/dims3(n)[2], which gives 4 at 64); on the
/// grid an application cuts for its box, the global face over the processes of the face. A coarse grid's face may
/// carry ghost layers along its other sides (a code that exchanges its dimensions one after the other sends the
/// ghost rows the earlier ones filled): the fewest that make the size per point the same at every n (3 x 3 points of
/// a 1-point block with two ghost layers each way).
void try_per_face_point(TermTraits& tt, std::size_t slot, const std::map<std::int64_t, double>& first, const Program& p,
                        std::size_t axis) {
  if (p.layout.grain == 0 && !p.layout.boxed()) return;
  for (const std::array<int, 2>& margins : ghost_margins(p.layout.grain > 0 ? kMaxGhostLayers : 0)) {
    std::map<std::int64_t, double> per_point;
    for (const auto& [n, b] : first) per_point[n] = b / face_points(p.frame, p.layout, n, axis, margins);
    RegressionLaw law =
        fit_regression(samples_of(per_point), RegressionOptions{.allow_power = false, .allow_linear_inverse = false});
    if (law.max_rel_error <= kSizeTolerance) {
      tt.bytes[slot] = std::move(law);
      tt.face_axis[slot] = static_cast<int>(axis);
      tt.face_margins[slot] = margins;
      return;
    }
  }
}

/// The size law of slot `slot` of a term of program p from its first repetition's size per n: a regression in the
/// frame's bases, then, for a step along one axis, a block's face, a halo, or a size per point of the face.
void fit_size_law(TermTraits& tt, std::size_t slot, const std::map<std::int64_t, double>& first, const Program& p,
                  std::optional<std::size_t> axis) {
  tt.bytes[slot] = fit_regression(samples_of(first), volume_fit(p.frame, axis));
  if (!axis) return;
  try_block_face(tt.bytes[slot], first, p, *axis);
  try_halo(tt.bytes[slot], first, p, *axis);
  try_per_face_point(tt, slot, first, p, *axis);
}

}  // namespace

RegressionOptions volume_fit(Frame frame, std::optional<std::size_t> axis) {
  RegressionOptions o;
  const int dims = frame_dims(frame);
  const bool pow2 = frame == Frame::Xor || frame == Frame::Transpose;
  if (dims == 1 && !pow2) return o;
  std::vector<Basis> first = pow2        ? std::vector<Basis>{Basis::Pow2CeilHalfLog2, Basis::Pow2FloorHalfLog2}
                             : dims == 2 ? std::vector<Basis>{Basis::Dims2Minor, Basis::Dims2Major}
                                         : std::vector<Basis>{Basis::Dims3Third, Basis::Dims3Second, Basis::Dims3First,
                                                              Basis::Dims3Face0, Basis::Dims3Face1,  Basis::Dims3Face2};
  if (dims == 3 && axis && *axis < 3) {
    const Basis face = face_basis(*axis);
    first.erase(std::find(first.begin(), first.end(), face));
    first.insert(first.begin(), face);
    o.halo = face;
  }
  o.bases = first;
  o.grid_bases = first.size();
  for (const Basis b : all_bases()) {
    if (!counts_only(b) && !sizes_only(b) && std::find(first.begin(), first.end(), b) == first.end()) {
      o.bases.push_back(b);
    }
  }
  return o;
}

BlockSamples fit_traits(GroupModel& gm, const std::vector<RankData>& ranks, std::size_t g) {
  std::map<SlotKey, SlotSizes> sizes = slot_sizes(gm, ranks, g);
  BlockSamples wanting;
  // A measured group is one case of one term.
  const bool measured = !gm.measured.empty();
  gm.traits.assign(measured ? 1 : gm.pattern.cases.size(), {});
  for (std::size_t c = 0; c < gm.traits.size(); ++c) {
    gm.traits[c].resize(measured ? 1 : gm.pattern.cases[c].program.terms.size());
  }
  for (auto& [key, a] : sizes) {
    const auto [c, t, s] = key;
    TermTraits& tt = gm.traits[c][t];
    const auto slot = static_cast<std::size_t>(s);
    const double factor = step_factor(a);
    tt.bytes_step_factor[slot] = factor;
    std::map<std::int64_t, double> first;  // size of the first repetition (the mean when all are equal)
    for (const auto& [n, sc] : a.bytes) first[n] = sc.first / static_cast<double>(sc.second);
    for (const auto& [n, r] : a.range) {
      if (factor == 1 && first[n] > 0) {
        tt.rank_spread[slot] = std::max(tt.rank_spread[slot], (r.second - r.first) / first[n]);
      }
    }
    if (factor != 1) {
      for (const auto& [n, row] : a.first_row) {
        if (!row.empty()) first[n] = row[0];
      }
    }
    if (measured) {
      tt.bytes[slot] = fit_regression(samples_of(first), volume_fit(Frame::Offset));
    } else {
      fit_size_law(tt, slot, first, gm.pattern.cases[c].program, crossed_axis(gm.pattern.cases[c].program, t, slot));
    }
    if (!measured && factor == 1 && tt.face_axis[slot] < 0 &&
        (tt.bytes[slot].max_rel_error > kSizeTolerance || tt.rank_spread[slot] > 0)) {
      wanting[key] = std::move(a.samples);
    }
    const auto most = std::max_element(a.tags.begin(), a.tags.end(),
                                       [](const auto& x, const auto& y) { return x.second < y.second; });
    tt.tag[slot] = most->first;
    tt.tag_varies[slot] = a.tags.size() > 1;
  }
  return wanting;
}

void fit_block_laws(std::vector<GroupModel>& groups, const std::vector<BlockSamples>& wanting) {
  std::map<BlockGrid, std::size_t> seen;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (const auto& [key, samples] : wanting[g]) {
      const auto [c, t, s] = key;
      const Program& p = groups[g].pattern.cases[c].program;
      std::optional<BlockLaw>& law = groups[g].traits[c][t].block[static_cast<std::size_t>(s)];
      law = fit_block_law(samples, p.frame, p.layout);
      if (law) {
        for (const BlockGrid& grid : block_grids(*law)) seen[grid] += samples.size();
      }
    }
  }
  std::vector<std::pair<std::size_t, BlockGrid>> ranked;
  for (const auto& [grid, count] : seen) ranked.emplace_back(count, grid);
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<BlockGrid> prefer;
  for (const auto& [count, grid] : ranked) prefer.push_back(grid);
  if (prefer.size() < 2) return;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (const auto& [key, samples] : wanting[g]) {
      const auto [c, t, s] = key;
      const Program& p = groups[g].pattern.cases[c].program;
      std::optional<BlockLaw>& law = groups[g].traits[c][t].block[static_cast<std::size_t>(s)];
      if (law && block_grids(*law).front() == prefer.front()) continue;
      if (std::optional<BlockLaw> better = fit_block_law(samples, p.frame, p.layout, prefer, true)) law = better;
    }
  }
}

}  // namespace p3s::modeler::detail
