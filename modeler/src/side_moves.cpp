// SPDX-License-Identifier: BSD-3-Clause
#include "side_moves.hpp"

#include <algorithm>
#include <utility>

#include "p3s/error.hpp"
#include "p3s/modeler/dims.hpp"
#include "p3s/modeler/pattern.hpp"

namespace p3s::modeler::detail {
namespace {

/// The dimension a point-to-point group steps along in the phase's grid (its one case there; on its frame, or
/// `either_periodicity`, on the same grid periodic or not), or nullopt.
std::optional<std::size_t> axis_in(const GroupModel& g, const GridSeen& seen, bool either_periodicity) {
  const std::optional<std::size_t> axis = step_axis(g);
  if (!axis || !g.measured.empty()) return std::nullopt;
  const Program& p = g.pattern.cases.front().program;
  const bool grid = either_periodicity ? same_numbering(p.frame, seen.frame) : p.frame == seen.frame;
  if (!grid || p.layout != GridLayout{0, seen.box}) return std::nullopt;
  return axis;
}

/// The dimension a single-case point-to-point group steps along in the phase's grid, on any layout of it (a coarse
/// grid's ranks that hold data too, the ranks at one end of a side), on its frame or, `either_periodicity`, on the
/// same grid periodic or not; or nullopt.
std::optional<std::size_t> axis_on_grid(const GroupModel& g, const GridSeen& seen, bool either_periodicity) {
  const std::optional<std::size_t> axis = step_axis(g);
  if (!axis || !g.measured.empty()) return std::nullopt;
  const Program& p = g.pattern.cases.front().program;
  const bool grid = either_periodicity ? same_numbering(p.frame, seen.frame) : p.frame == seen.frame;
  if (!grid || p.layout.box != seen.box) return std::nullopt;
  return axis;
}

}  // namespace

/// Whether two frames number one grid alike (the same grid, periodic or not).
bool same_numbering(Frame a, Frame b) {
  const auto grid = [](Frame f) {
    switch (f) {
      case Frame::Torus2:
        return Frame::Grid2;
      case Frame::Torus3:
        return Frame::Grid3;
      case Frame::Torus2C:
        return Frame::Grid2C;
      case Frame::Torus3C:
        return Frame::Grid3C;
      default:
        return f;
    }
  };
  return grid(a) == grid(b);
}

std::vector<Block> blocks_of(const std::vector<GroupModel>& groups, const GridSeen& seen, bool any_layout,
                             bool either_periodicity) {
  const auto axis_of = [&](const GroupModel& g) {
    return any_layout ? axis_on_grid(g, seen, either_periodicity) : axis_in(g, seen, either_periodicity);
  };
  std::vector<Block> out;
  std::size_t g = 0;
  while (g < groups.size()) {
    const std::optional<std::size_t> axis = axis_of(groups[g]);
    if (!axis) {
      ++g;
      continue;
    }
    std::size_t h = g + 1;
    for (; h < groups.size(); ++h) {
      const GroupModel& x = groups[h];
      if (x.role == Role::PointToPoint) {
        if (axis_of(x) != axis) break;
        continue;
      }
      // A completion belongs to the block where it completes requests of the block's groups alone.
      bool inside = x.role == Role::Completion && x.measured.empty() && !x.completes.empty();
      for (const std::vector<RequestRef>& call : x.completes) {
        for (const RequestRef& ref : call) inside = inside && ref.group >= g && ref.group < h;
      }
      if (!inside) break;
    }
    out.push_back(Block{g, h - 1, *axis});
    g = h;
  }
  return out;
}

/// What a law follows: kConstant, the dimension d of the grid whose side (or whether it is longer than 2) it is a
/// law of, or kOther.
int follows(const ExactLaw& law, int dims) {
  if (law.is_constant()) return kConstant;
  const std::optional<std::pair<int, std::size_t>> side = side_of(law.basis);
  if (!side || side->first != dims) return kOther;
  return static_cast<int>(side->second);
}

/// The law with dimensions d0 and d1 exchanged.
ExactLaw swapped(ExactLaw law, std::size_t d0, std::size_t d1, int dims) {
  const int d = follows(law, dims);
  if (d == static_cast<int>(d0)) law.basis = on_side(law.basis, d1);
  if (d == static_cast<int>(d1)) law.basis = on_side(law.basis, d0);
  return law;
}

/// The program stepping along d1 as `p` steps along d0 (and the other way round).
Program swapped(Program p, std::size_t d0, std::size_t d1) {
  const int dims = frame_dims(p.frame);
  for (Term& t : p.terms) {
    t.count = swapped(t.count, d0, d1, dims);
    for (std::vector<IndexedLaw>& slot : t.slots) {
      if (slot.size() <= std::max(d0, d1)) continue;
      std::swap(slot[d0], slot[d1]);
      for (IndexedLaw& l : slot) l.base = swapped(l.base, d0, d1, dims);
    }
  }
  return p;
}

/// Whether the group makes no call at any n of `at` (true for an empty list).
bool silent_at(const GroupModel& g, const std::vector<std::int64_t>& at) {
  for (const std::int64_t n : at) {
    for (std::int64_t r = 0; r < n; ++r) {
      if (!g.pattern.generate(r, n).empty()) return false;
    }
  }
  return true;
}

GroupKey key_of(const GroupModel& g) { return {g.function, g.call, g.role, g.slots}; }

/// Whether a group shaped as `model` can take `donor`'s sizes and communicator: one case and as many terms.
bool same_terms(const GroupModel& model, const GroupModel& donor) {
  return model.pattern.cases.size() == 1 && donor.pattern.cases.size() == 1 && donor.traits.size() == 1 &&
         model.pattern.cases.front().program.terms.size() == donor.pattern.cases.front().program.terms.size();
}

/// The references to groups (completions, loops, work classes' cases and bursts) renumbered; a copy's completions
/// refer to the copies of the source's requests, or to the target's counterparts of them.
void renumber_references(PhaseModel& pm, std::vector<GroupModel>& out, const Renumbering& numbers,
                         const Counterparts& counterpart) {
  const auto renumber = [&](std::uint32_t g) { return static_cast<std::uint32_t>(numbers.old_to_new[g]); };
  for (std::size_t k = 0; k < out.size(); ++k) {
    const bool copy = std::find_if(numbers.made.begin(), numbers.made.end(),
                                   [k](const auto& m) { return m.second == k; }) != numbers.made.end();
    for (std::vector<RequestRef>& call : out[k].completes) {
      for (RequestRef& ref : call) {
        if (!copy) {
          ref.group = renumber(ref.group);
        } else if (numbers.made.contains(ref.group)) {
          ref.group = static_cast<std::uint32_t>(numbers.made.at(ref.group));
        } else {
          ref.group = renumber(static_cast<std::uint32_t>(counterpart.at(ref.group)));
        }
      }
    }
  }
  for (PhaseLoop& l : pm.loops) {
    const std::uint32_t end = renumber(l.first + l.groups - 1) + 1;
    l.first = renumber(l.first);
    l.groups = end - l.first;
  }
  const std::size_t old_groups = numbers.old_to_new.size();
  for (WorkClass& w : pm.work) {
    std::vector<std::uint32_t> cases(out.size(), 0);
    for (std::size_t g = 0; g < w.cases.size() && g < old_groups; ++g) cases[numbers.old_to_new[g]] = w.cases[g];
    w.cases = std::move(cases);
    for (BurstModel& b : w.bursts) {
      if (b.group >= 0) b.group = static_cast<std::int32_t>(renumber(static_cast<std::uint32_t>(b.group)));
    }
  }
}

/// The pattern stepping along d1 as `p` steps along d0, every case.
Pattern swapped(Pattern p, std::size_t d0, std::size_t d1) {
  for (Pattern::Case& c : p.cases) c.program = swapped(std::move(c.program), d0, d1);
  return p;
}

/// Group g of block `from` in block `to`: the group of its kind (key_of) that comes as many times after the block's
/// first of that kind; nullopt where `to` has fewer of them.
std::optional<std::size_t> alike_in(const std::vector<GroupModel>& groups, const Block& from, std::size_t g,
                                    const Block& to) {
  const GroupKey key = key_of(groups[g]);
  std::size_t kth = 0;
  for (std::size_t h = from.first; h < g; ++h) kth += key_of(groups[h]) == key ? 1 : 0;
  for (std::size_t h = to.first; h <= to.last; ++h) {
    if (key_of(groups[h]) == key && kth-- == 0) return h;
  }
  return std::nullopt;
}

void swap_faces(GroupModel& g, std::size_t d0, std::size_t d1) {
  for (std::vector<TermTraits>& terms : g.traits) {
    for (TermTraits& tt : terms) {
      for (int& face : tt.face_axis) {
        if (face == static_cast<int>(d0) || face == static_cast<int>(d1)) {
          face = face == static_cast<int>(d0) ? static_cast<int>(d1) : static_cast<int>(d0);
        }
      }
    }
  }
}

}  // namespace p3s::modeler::detail
