// SPDX-License-Identifier: BSD-3-Clause
#include "side_analogy.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <tuple>
#include <utility>

#include "p3s/error.hpp"
#include "p3s/modeler/dims.hpp"
#include "p3s/modeler/pattern.hpp"
#include "side_moves.hpp"

namespace p3s::modeler::detail {
namespace {

/// The dimensions a program's laws follow (kOther among them where one follows something else).
std::set<int> followed(const Program& p) {
  const int dims = frame_dims(p.frame);
  std::set<int> out;
  for (const Term& t : p.terms) {
    out.insert(follows(t.count, dims));
    for (const std::vector<IndexedLaw>& slot : t.slots) {
      for (const IndexedLaw& l : slot) out.insert(follows(l.base, dims));
    }
  }
  out.erase(kConstant);
  return out;
}

/// Every rank's peers in the group at n.
std::vector<std::vector<std::array<std::int64_t, 2>>> peers_at(const Pattern& p, std::int64_t n) {
  std::vector<std::vector<std::array<std::int64_t, 2>>> out(static_cast<std::size_t>(n));
  for (std::int64_t r = 0; r < n; ++r) {
    for (const Entry& e : p.generate(r, n)) out[static_cast<std::size_t>(r)].push_back(e.peers);
  }
  return out;
}

/// Whether the two patterns give every rank the same peers at every fitted n (false where one cannot be evaluated).
bool same_at(const Pattern& a, const Pattern& b, const std::vector<std::int64_t>& fitted_n) {
  try {
    for (const std::int64_t n : fitted_n) {
      if (peers_at(a, n) != peers_at(b, n)) return false;
    }
  } catch (const ModelError&) {
    return false;
  }
  return true;
}

using Signature = std::vector<GroupKey>;

/// What a source block is: the groups also made where the side was 2 (`base`), those made only where it was
/// longer (`extra`), and the signature of the base, which the same exchange along another dimension has.
struct Source {
  std::vector<std::size_t> base;
  std::vector<std::size_t> extra;
  Signature signature;
  bool longer_once = false;  ///< one fitted n only had the side longer than 2: the extras' sizes there, no trend
};

/// The source block's parts where its dimension's longer sides added calls that its laws follow; nullopt where they
/// do not (a count that follows n, a pattern of several cases) or it added none.
std::optional<Source> source_of(const std::vector<GroupModel>& groups, const Block& b, const GridSeen& seen,
                                const std::vector<std::int64_t>& fitted_n) {
  std::vector<std::int64_t> short_n;  // the fitted n where the block's side is 2 or less
  std::vector<std::int64_t> long_n;
  for (const std::int64_t n : fitted_n) {
    const std::vector<int> sides = grid_sides(seen.frame, n, GridLayout{0, seen.box});
    (sides[b.axis] <= 2 ? short_n : long_n).push_back(n);
  }
  if (short_n.empty() || long_n.empty()) return std::nullopt;
  Source s;
  s.longer_once = long_n.size() == 1;
  bool depends = false;
  std::set<std::size_t> extra;
  for (std::size_t g = b.first; g <= b.last; ++g) {
    const GroupModel& gm = groups[g];
    bool is_extra = false;
    if (gm.role == Role::PointToPoint) {
      const std::set<int> dims = followed(gm.pattern.cases.front().program);
      if (dims.contains(kOther) || dims.size() > 1 || (dims.size() == 1 && *dims.begin() != static_cast<int>(b.axis))) {
        return std::nullopt;
      }
      depends = depends || !dims.empty();
      try {
        is_extra = silent_at(gm, short_n) && !silent_at(gm, long_n);
      } catch (const ModelError&) {
        return std::nullopt;
      }
    } else {
      if (!gm.per_request && !gm.per_batch) {
        const int d = follows(gm.count, frame_dims(seen.frame));
        if (d != kConstant && d != static_cast<int>(b.axis)) return std::nullopt;
      }
      std::size_t of_extras = 0;
      std::size_t refs = 0;
      for (const std::vector<RequestRef>& call : gm.completes) {
        for (const RequestRef& ref : call) {
          ++refs;
          if (extra.contains(ref.group)) ++of_extras;
        }
      }
      if (of_extras != 0 && of_extras != refs) return std::nullopt;  // one call completing both: not one exchange
      is_extra = of_extras != 0;
    }
    if (is_extra) {
      extra.insert(g);
      s.extra.push_back(g);
    } else {
      s.base.push_back(g);
      s.signature.push_back(key_of(gm));
    }
  }
  if (!depends || s.extra.empty() || s.base.empty() || s.extra.front() < s.base.front()) return std::nullopt;
  return s;
}

Signature signature_of(const std::vector<GroupModel>& groups, const Block& b) {
  Signature out;
  for (std::size_t g = b.first; g <= b.last; ++g) {
    out.push_back(key_of(groups[g]));
  }
  return out;
}

/// The blocks next to block k, in a row without gaps, alike and one per dimension: the exchange along each dimension
/// of one loop over them. Alike is as the source's base (an exchange still to be given the calls) or as the whole
/// source (one given them already); a neighbour may end (on the left) or begin (on the right) with such an exchange,
/// the rest of its groups stepping along the same dimension in another exchange, which ends the row. Returns the
/// exchanges alike to the base.
std::vector<Block> sweep_of(const std::vector<GroupModel>& groups, const std::vector<Block>& blocks, std::size_t k,
                            const Signature& base) {
  const Signature whole = signature_of(groups, blocks[k]);
  std::vector<Block> out;
  std::set<std::size_t> axes{blocks[k].axis};
  // Whether the part of block i next to the row (its end when `left`) is an exchange alike; false ends the row, as
  // does a part that is not the whole block.
  const auto member = [&](std::size_t i, bool left, bool& whole_block) {
    const Block& b = blocks[i];
    if (axes.contains(b.axis)) return false;
    const Signature sig = signature_of(groups, b);
    for (const Signature* like : {&whole, &base}) {  // the longer first: an extended exchange ends as the base
      const std::size_t size = like->size();
      if (size > sig.size()) continue;
      const auto from = left ? sig.end() - static_cast<std::ptrdiff_t>(size) : sig.begin();
      if (!std::equal(like->begin(), like->end(), from)) continue;
      axes.insert(b.axis);
      whole_block = size == sig.size();
      const std::size_t first = left ? b.last + 1 - size : b.first;
      if (like == &base) out.push_back(Block{first, first + size - 1, b.axis});
      return true;
    }
    return false;
  };
  bool whole_block = true;
  for (std::size_t i = k; i > 0 && whole_block; --i) {
    if (blocks[i - 1].last + 1 != blocks[i].first || !member(i - 1, true, whole_block)) break;
  }
  whole_block = true;
  for (std::size_t i = k + 1; i < blocks.size() && whole_block; ++i) {
    if (blocks[i - 1].last + 1 != blocks[i].first || !member(i, false, whole_block)) break;
  }
  return out;
}

/// The base group of `src` before `extra` whose messages are of its function (and so its sizes), or nullopt.
std::optional<std::size_t> donor_of(const std::vector<GroupModel>& groups, const Source& src, std::size_t extra) {
  for (std::size_t i = src.base.size(); i-- > 0;) {
    const GroupModel& d = groups[src.base[i]];
    if (src.base[i] < extra && d.function == groups[extra].function && d.slots == groups[extra].slots &&
        same_terms(groups[extra], d)) {
      return i;
    }
  }
  return std::nullopt;
}

/// The target block's groups with the source's laws moved from dimension d0 to the target's; nullopt where the moved
/// laws do not make what the target made at every fitted n.
std::optional<std::vector<GroupModel>> moved_laws(const PhaseModel& pm, const Source& src, const Block& target,
                                                  std::size_t d0, const std::vector<std::int64_t>& fitted_n) {
  const std::vector<GroupModel>& groups = pm.groups;
  const std::size_t d1 = target.axis;
  std::vector<GroupModel> changed(groups.begin() + static_cast<std::ptrdiff_t>(target.first),
                                  groups.begin() + static_cast<std::ptrdiff_t>(target.last) + 1);
  for (std::size_t i = 0; i < src.base.size(); ++i) {
    const GroupModel& from = groups[src.base[i]];
    GroupModel& to = changed[i];
    if (from.role == Role::PointToPoint) {
      const Program& program = from.pattern.cases.front().program;
      if (followed(program).empty()) continue;  // the same along every side: the target's own pattern stands
      if (!same_terms(from, to)) return std::nullopt;
      const Pattern moved{{{RankPredicate{}, swapped(program, d0, d1)}}};
      if (!same_at(moved, to.pattern, fitted_n)) return std::nullopt;
      to.pattern = moved;
    } else if (!from.per_request && !from.per_batch && !from.count.is_constant()) {
      const ExactLaw moved = swapped(from.count, d0, d1, frame_dims(pm.grid_seen->frame));
      for (const std::int64_t n : fitted_n) {
        if (moved.integer_at(n) != to.count.integer_at(n)) return std::nullopt;
      }
      to.count = moved;
    }
  }
  return changed;
}

/// Where the calls only a longer side makes go: per target offset, the source extras placed after it (each after the
/// group it follows in the source block); nullopt where one would fall inside a loop's body.
std::optional<std::map<std::size_t, std::vector<std::size_t>>> extras_after(const PhaseModel& pm, const Source& src,
                                                                            const Block& target,
                                                                            const Counterparts& counterpart) {
  std::map<std::size_t, std::vector<std::size_t>> after;
  std::size_t last = target.first;
  for (std::size_t g = *std::min_element(src.base.begin(), src.base.end()); g <= src.extra.back(); ++g) {
    if (counterpart.contains(g)) {
      last = counterpart.at(g);
    } else if (std::find(src.extra.begin(), src.extra.end(), g) != src.extra.end()) {
      after[last - target.first].push_back(g);
    }
  }
  for (const PhaseLoop& l : pm.loops) {
    for (const auto& [offset, extras] : after) {
      const std::size_t at = target.first + offset;
      if (at >= l.first && at + 1 < l.first + l.groups) return std::nullopt;
    }
  }
  return after;
}

/// The groups with the target's changed, and a copy of each source extra after the target group it follows, made
/// along the target's dimension with the sizes and communicator of the target's own messages of that function.
std::vector<GroupModel> with_extras(const std::vector<GroupModel>& groups, const Source& src, const Block& target,
                                    std::size_t d0, std::vector<GroupModel> changed,
                                    const std::map<std::size_t, std::vector<std::size_t>>& after,
                                    const Counterparts& counterpart, Renumbering& numbers) {
  std::vector<GroupModel> out;
  numbers.old_to_new.assign(groups.size(), 0);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    numbers.old_to_new[g] = out.size();
    const bool in_target = g >= target.first && g <= target.last;
    out.push_back(in_target ? std::move(changed[g - target.first]) : groups[g]);
    if (!in_target) continue;
    const auto extras = after.find(g - target.first);
    if (extras == after.end()) continue;
    for (const std::size_t x : extras->second) {
      GroupModel copy = groups[x];
      if (copy.role == Role::PointToPoint) {
        copy.pattern.cases.front().program = swapped(copy.pattern.cases.front().program, d0, target.axis);
        // The target's own messages of this function: the last base group before the extra that makes them.
        if (const std::optional<std::size_t> i = donor_of(groups, src, x)) {
          const GroupModel& donor = groups[counterpart.at(src.base[*i])];
          if (same_terms(copy, donor)) {
            copy.traits = donor.traits;
            copy.comm = donor.comm;
          }
        }
      }
      numbers.made[x] = out.size();
      out.push_back(std::move(copy));
    }
  }
  return out;
}

/// The phase with the target block given the source's calls; false, the phase untouched, where that cannot be done
/// without changing what some rank of a fitted run made.
bool extend(PhaseModel& pm, const Source& src, const Block& target, std::size_t d0,
            const std::vector<std::int64_t>& fitted_n) {
  Counterparts counterpart;
  for (std::size_t i = 0; i < src.base.size(); ++i) counterpart[src.base[i]] = target.first + i;
  std::optional<std::vector<GroupModel>> changed = moved_laws(pm, src, target, d0, fitted_n);
  if (!changed) return false;
  const std::optional<std::map<std::size_t, std::vector<std::size_t>>> after =
      extras_after(pm, src, target, counterpart);
  if (!after) return false;
  Renumbering numbers;
  std::vector<GroupModel> out =
      with_extras(pm.groups, src, target, d0, std::move(*changed), *after, counterpart, numbers);
  renumber_references(pm, out, numbers, counterpart);
  pm.groups = std::move(out);
  return true;
}

/// The exchanges made only along sides longer than 2: runs of groups stepping along one dimension (with the
/// completions of their requests) that make no call at a fitted n where that side is 2 or less and some call at
/// every other (or, added along a dimension no fitted run had longer, none at all). Consecutive in the phase, each
/// with its groups first..last.
std::vector<Block> longer_only_blocks(const std::vector<GroupModel>& groups, const GridSeen& seen,
                                      const std::vector<std::int64_t>& fitted_n) {
  std::vector<Block> out;
  for (const Block& b : blocks_of(groups, seen, true)) {
    bool only_longer = true;
    bool longer_seen = false;
    for (const std::int64_t n : fitted_n) {
      const bool longer = grid_sides(seen.frame, n, GridLayout{0, seen.box})[b.axis] > 2;
      longer_seen = longer_seen || longer;
      bool silent = true;
      for (std::size_t k = b.first; k <= b.last; ++k) {
        if (groups[k].role == Role::PointToPoint) silent = silent && silent_at(groups[k], {n});
      }
      only_longer = only_longer && silent != longer;
    }
    if (only_longer && (longer_seen || seen.follows[b.axis] >= 0)) out.push_back(b);
  }
  return out;
}

/// Whether block b is block a along another dimension: the same groups, in any order of their kinds (a rank that
/// takes along a dimension does not give along it), whose patterns moved to b's dimension make what b's made at
/// every fitted n.
bool same_exchange(const std::vector<GroupModel>& groups, const Block& a, const Block& b,
                   const std::vector<std::int64_t>& fitted_n) {
  if (a.last - a.first != b.last - b.first) return false;
  for (std::size_t g = b.first; g <= b.last; ++g) {
    const std::optional<std::size_t> from = alike_in(groups, b, g, a);
    if (!from) return false;
    if (groups[g].role == Role::PointToPoint &&
        !same_at(swapped(groups[*from].pattern, a.axis, b.axis), groups[g].pattern, fitted_n)) {
      return false;
    }
  }
  return true;
}

/// The phase with a copy of `source` moved to dimension d inserted before group `at`; false, the phase untouched,
/// where the copy would make a call at a fitted n.
bool insert_moved(PhaseModel& pm, const Block& source, std::size_t d, std::size_t at,
                  const std::vector<std::int64_t>& fitted_n) {
  const int dims = frame_dims(pm.grid_seen->frame);
  std::vector<GroupModel> copies;
  for (std::size_t g = source.first; g <= source.last; ++g) {
    GroupModel copy = pm.groups[g];
    if (copy.role == Role::PointToPoint) {
      copy.pattern = swapped(std::move(copy.pattern), source.axis, d);
      if (!silent_at(copy, fitted_n)) return false;
      swap_faces(copy, source.axis, d);
    } else if (!copy.per_request && !copy.per_batch) {
      copy.count = swapped(copy.count, source.axis, d, dims);
    }
    copies.push_back(std::move(copy));
  }
  Renumbering numbers;
  numbers.old_to_new.assign(pm.groups.size(), 0);
  std::vector<GroupModel> out;
  for (std::size_t g = 0; g <= pm.groups.size(); ++g) {
    if (g == at) {
      for (std::size_t k = 0; k < copies.size(); ++k) {
        numbers.made[source.first + k] = out.size();
        out.push_back(std::move(copies[k]));
      }
    }
    if (g == pm.groups.size()) break;
    numbers.old_to_new[g] = out.size();
    out.push_back(std::move(pm.groups[g]));
  }
  renumber_references(pm, out, numbers, {});
  pm.groups = std::move(out);
  return true;
}

/// Rows of exchanges made only along longer sides: two or more alike (same_exchange), next to each other, along
/// different dimensions in one order of them (a loop over the dimensions); `descending` says which order.
struct Row {
  std::vector<Block> blocks;
  bool descending = false;
};

std::vector<Row> rows_of(const PhaseModel& pm, const std::vector<std::int64_t>& fitted_n) {
  const std::vector<Block> blocks = longer_only_blocks(pm.groups, *pm.grid_seen, fitted_n);
  std::vector<Row> out;
  for (std::size_t first = 0; first < blocks.size();) {
    Row row{{blocks[first]}, false};
    while (first + row.blocks.size() < blocks.size()) {
      const Block& last = row.blocks.back();
      const Block& next = blocks[first + row.blocks.size()];
      if (last.last + 1 != next.first || last.axis == next.axis ||
          (row.blocks.size() > 1 && (last.axis > next.axis) != row.descending) ||
          !same_exchange(pm.groups, last, next, fitted_n)) {
        break;
      }
      row.descending = last.axis > next.axis;
      row.blocks.push_back(next);
    }
    first += row.blocks.size();
    if (row.blocks.size() > 1) out.push_back(std::move(row));
  }
  return out;
}

/// One exchange made only along longer sides added along a dimension no fitted run had longer than 2, where a row of
/// such exchanges along other dimensions shows where it goes; the note saying so, or nullopt where none is added.
std::optional<std::string> add_one_exchange(PhaseModel& pm, const std::vector<std::int64_t>& fitted_n) {
  GridSeen& seen = *pm.grid_seen;
  const auto dims = static_cast<std::size_t>(frame_dims(seen.frame));
  for (const Row& row : rows_of(pm, fitted_n)) {
    for (std::size_t d = 0; d < dims; ++d) {
      const bool in_row =
          std::any_of(row.blocks.begin(), row.blocks.end(), [d](const Block& b) { return b.axis == d; });
      if (in_row || seen.longest[d] > 2 || seen.follows[d] >= 0) continue;
      // Its place in the row's order, and the exchange next to it there, which it copies.
      std::size_t k = 0;
      while (k < row.blocks.size() && (row.descending ? row.blocks[k].axis > d : row.blocks[k].axis < d)) ++k;
      const Block& source = row.blocks[std::min(k, row.blocks.size() - 1)];
      const std::size_t at = k < row.blocks.size() ? row.blocks[k].first : row.blocks.back().last + 1;
      if (!insert_moved(pm, source, d, at, fitted_n)) continue;
      seen.follows[d] = static_cast<int>(source.axis);
      return "an exchange along dimension " + std::to_string(d) +
             " (a side of at most 2 in every fitted run) is made before group " + std::to_string(at) +
             " as the same exchange along dimension " + std::to_string(source.axis) + " (groups " +
             std::to_string(source.first) + "-" + std::to_string(source.last) +
             " as fitted), which only sides longer than 2 make: inferred where that side is longer, not seen";
    }
  }
  return std::nullopt;
}

/// A message of an exchange along `axis` at n, rank r's, of `bytes`.
struct FaceSample {
  std::int64_t n = 0;
  std::int64_t r = 0;
  std::size_t axis = 0;
  std::int64_t bytes = 0;
};

/// The block law of a face across `axis`: `bytes` per point of the rank's block along each other dimension, of q
/// processes, with `plus` points more (its ghost layers).
BlockLaw face_law(std::int64_t bytes, std::int64_t extent, std::int64_t plus, std::size_t axis, std::size_t dims) {
  BlockLaw law;
  law.bytes = bytes;
  for (std::size_t d = 0; d < dims; ++d) {
    if (d == axis) continue;
    BlockFactor f;
    f.axis = static_cast<std::uint8_t>(d);
    f.extent = extent;
    f.plus = plus;
    f.coef[d] = 1;
    law.factors.push_back(f);
  }
  return law;
}

/// The simplest face law (fewest points added, then the shortest extent) giving every sample, along whichever
/// dimension it was sent, where the samples are of two sizes or more; nullopt where none does.
std::optional<std::pair<std::int64_t, std::array<std::int64_t, 2>>> fit_face(std::span<const FaceSample> samples,
                                                                             Frame frame, std::size_t dims) {
  std::set<std::int64_t> sizes;
  for (const FaceSample& s : samples) sizes.insert(s.bytes);
  if (sizes.size() < 2) return std::nullopt;
  constexpr std::int64_t kMostPlus = 4;
  constexpr std::int64_t kMostExtent = 64;
  for (std::int64_t plus = 0; plus <= kMostPlus; ++plus) {
    for (std::int64_t extent = 1; extent <= kMostExtent; ++extent) {
      std::optional<std::int64_t> per_point;
      bool fits = true;
      for (const FaceSample& s : samples) {
        const BlockLaw unit = face_law(1, extent, plus, s.axis, dims);
        const auto points = static_cast<std::int64_t>(unit.at(frame, {}, s.n, s.r, 0));
        if (points <= 0 || s.bytes % points != 0) {
          fits = false;
          break;
        }
        per_point = per_point.value_or(s.bytes / points);
        if (*per_point != s.bytes / points) {
          fits = false;
          break;
        }
      }
      if (fits) return std::make_pair(*per_point, std::array<std::int64_t, 2>{extent, plus});
    }
  }
  return std::nullopt;
}

/// The sizes of a slot of a group along one exchange of the row: those its law gives each rank that makes it at
/// the fitted n; false where the law does not give every rank's size exactly (sizes that spread over ranks,
/// change within a repetition, or follow a law of another kind).
bool face_samples(const GroupModel& g, std::size_t t, std::size_t slot, std::size_t axis,
                  const std::vector<std::int64_t>& fitted_n, std::vector<FaceSample>& out) {
  const TermTraits& tt = g.traits.front()[t];
  if (tt.rank_spread[slot] > 0 || tt.bytes_step_factor[slot] != 1 || tt.bytes[slot].max_rel_error > kSizeTolerance) {
    return false;
  }
  for (const std::int64_t n : fitted_n) {
    for (std::int64_t r = 0; r < n; ++r) {
      if (g.pattern.generate(r, n).empty()) continue;
      const double bytes = g.message_bytes(0, t, slot, n, 0, r);
      if (bytes <= 0 || std::abs(bytes - std::round(bytes)) > 1e-6) return false;
      out.push_back({n, r, axis, std::llround(bytes)});
    }
  }
  return true;
}

/// Each slot of the row's exchanges given the face law its sizes along all the row's dimensions follow together:
/// the same code cuts every side alike, so what a side longer along one dimension did to the face along another it
/// does along each (one size seen along a dimension is then no law of its own). Returns the slots given one.
std::size_t fit_row_faces(PhaseModel& pm, const Row& row, const std::vector<std::int64_t>& fitted_n) {
  const Frame frame = pm.grid_seen->frame;
  const auto dims = static_cast<std::size_t>(frame_dims(frame));
  const Block& first = row.blocks.front();
  std::size_t given = 0;
  for (std::size_t g = first.first; g <= first.last; ++g) {
    GroupModel& model = pm.groups[g];
    if (model.role != Role::PointToPoint || model.traits.size() != 1) continue;
    // The same group in every exchange of the row.
    std::vector<std::size_t> alike;
    for (const Block& b : row.blocks) {
      if (const std::optional<std::size_t> h = alike_in(pm.groups, first, g, b)) alike.push_back(*h);
    }
    if (alike.size() != row.blocks.size()) continue;
    for (std::size_t t = 0; t < model.traits.front().size(); ++t) {
      for (std::size_t s = 0; s < static_cast<std::size_t>(model.slots); ++s) {
        if (!model.slot_kinds[s]) continue;
        std::vector<FaceSample> samples;
        bool usable = true;
        for (std::size_t k = 0; k < alike.size() && usable; ++k) {
          const GroupModel& a = pm.groups[alike[k]];
          usable = a.traits.size() == 1 && t < a.traits.front().size() &&
                   face_samples(a, t, s, row.blocks[k].axis, fitted_n, samples);
        }
        if (!usable) continue;
        const auto law = fit_face(samples, frame, dims);
        if (!law) continue;
        for (std::size_t k = 0; k < alike.size(); ++k) {
          pm.groups[alike[k]].traits.front()[t].block[s] =
              face_law(law->first, law->second[0], law->second[1], row.blocks[k].axis, dims);
        }
        ++given;
      }
    }
  }
  return given;
}

}  // namespace

std::vector<std::string> extend_along_shorter_sides(PhaseModel& pm, const std::vector<std::int64_t>& fitted_n) {
  std::vector<std::string> notes;
  if (!pm.grid_seen || pm.grid_seen->box[0] > 0) return notes;  // a box's grid has sides no law names
  GridSeen& seen = *pm.grid_seen;
  std::set<std::pair<std::size_t, std::size_t>> tried;  // (source block's first group, target's), as numbered then
  // Each exchange is extended once (it is then alike to its source, no longer to the base); the bound guards that.
  constexpr std::size_t kMostExtensions = 256;
  std::size_t made = 0;
  for (bool again = true; again && made < kMostExtensions; ++made) {
    again = false;
    const std::vector<Block> blocks = blocks_of(pm.groups, seen);
    for (std::size_t k = 0; k < blocks.size() && !again; ++k) {
      const std::size_t d0 = blocks[k].axis;
      if (!seen.longer_adds_calls[d0]) continue;
      const std::optional<Source> src = source_of(pm.groups, blocks[k], seen, fitted_n);
      if (!src) continue;
      if (src->longer_once) {
        // Sizes seen at one n have no trend: the second exchange each way carries what the first does, whose sizes
        // the runs show at every n.
        for (const std::size_t x : src->extra) {
          const std::optional<std::size_t> i = donor_of(pm.groups, *src, x);
          if (pm.groups[x].role == Role::PointToPoint && i) pm.groups[x].traits = pm.groups[src->base[*i]].traits;
        }
      }
      for (const Block& target : sweep_of(pm.groups, blocks, k, src->signature)) {
        if (seen.longest[target.axis] > 2 || !tried.insert({blocks[k].first, target.first}).second) continue;
        if (!extend(pm, *src, target, d0, fitted_n)) continue;
        seen.follows[target.axis] = static_cast<int>(d0);
        notes.push_back("the exchange of groups " + std::to_string(target.first) + "-" + std::to_string(target.last) +
                        " along dimension " + std::to_string(target.axis) +
                        " (a side of at most 2 in every fitted run) makes the calls that a longer side added to the " +
                        "same exchange along dimension " + std::to_string(d0) + " (groups " +
                        std::to_string(blocks[k].first) + "-" + std::to_string(blocks[k].last) +
                        " as fitted): inferred where that side is longer than 2, not seen");
        tried.clear();  // the groups are numbered anew
        again = true;
        break;
      }
    }
  }
  return notes;
}

}  // namespace p3s::modeler::detail

namespace p3s::modeler::detail {

std::vector<std::string> add_exchanges_along_shorter_sides(PhaseModel& pm, const std::vector<std::int64_t>& fitted_n) {
  std::vector<std::string> notes;
  if (!pm.grid_seen || pm.grid_seen->box[0] > 0) return notes;
  // A dimension once given an exchange follows another (seen.follows) and is given no second.
  while (std::optional<std::string> note = add_one_exchange(pm, fitted_n)) notes.push_back(std::move(*note));
  for (std::string& note : remake_exchanges(pm, fitted_n)) notes.push_back(std::move(note));
  for (const Row& row : rows_of(pm, fitted_n)) {
    if (const std::size_t given = fit_row_faces(pm, row, fitted_n); given > 0) {
      notes.push_back("the sizes of " + std::to_string(given) + " messages of the exchanges of groups " +
                      std::to_string(row.blocks.front().first) + "-" + std::to_string(row.blocks.back().last) +
                      ", one per dimension, are each a face of the blocks along the other dimensions, one law for " +
                      "all: fitted on the sizes along every dimension together");
    }
  }
  return notes;
}

}  // namespace p3s::modeler::detail
