// SPDX-License-Identifier: BSD-3-Clause
// What the rules that carry exchanges from one dimension of a phase's grid to another share (side_analogy.cpp,
// exchange_remake.cpp): the blocks of groups stepping along one dimension, laws and patterns moved between
// dimensions, and the phase's references renumbered after groups are inserted or replaced.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "p3s/modeler/model.hpp"

namespace p3s::modeler::detail {

/// Consecutive groups stepping along one dimension of the phase's grid, with the completions of their requests:
/// groups first..last.
struct Block {
  std::size_t first = 0;
  std::size_t last = 0;
  std::size_t axis = 0;
};

/// What a law follows (follows()): no side (a constant), or something other than a side of the grid.
constexpr int kConstant = -1;
constexpr int kOther = -2;

/// What makes two groups the same calls of an exchange, whatever dimension it steps along.
using GroupKey = std::tuple<mpi::Function, std::string, Role, int>;

/// A source group of a block -> the target's (by old index).
using Counterparts = std::map<std::size_t, std::size_t>;

/// The phase's groups renumbered: where each old group went, and each inserted copy of a source extra.
struct Renumbering {
  std::vector<std::size_t> old_to_new;
  /// A copy made of a group -> its new index (a copy's completions refer to copies through it; a span made anew maps
  /// each copy's new index to itself, its completions naming the copies already).
  std::map<std::size_t, std::size_t> made;
};

/// Whether two frames number one grid alike (the same grid, periodic or not).
[[nodiscard]] bool same_numbering(Frame a, Frame b);

/// The blocks of the groups stepping along one dimension of the phase's grid on its own layout (on any layout where
/// `any_layout`: a coarse grid's too), on its frame or, `either_periodicity`, on the same grid periodic or not (on a
/// side of 2 a step either way reaches the same rank, so the fit may have taken either).
[[nodiscard]] std::vector<Block> blocks_of(const std::vector<GroupModel>& groups, const GridSeen& seen,
                                           bool any_layout = false, bool either_periodicity = false);

/// What a law follows: kConstant, the dimension d of the grid whose side (or whether it is longer than 2) it is a
/// law of, or kOther.
[[nodiscard]] int follows(const ExactLaw& law, int dims);

/// The law with dimensions d0 and d1 exchanged.
[[nodiscard]] ExactLaw swapped(ExactLaw law, std::size_t d0, std::size_t d1, int dims);

/// The program stepping along d1 as `p` steps along d0 (and the other way round).
[[nodiscard]] Program swapped(Program p, std::size_t d0, std::size_t d1);

/// The pattern stepping along d1 as `p` steps along d0, every case.
[[nodiscard]] Pattern swapped(Pattern p, std::size_t d0, std::size_t d1);

/// A point-to-point group's messages moved from d0 to d1: the dimension each face crosses (TermTraits::face_axis)
/// exchanged.
void swap_faces(GroupModel& g, std::size_t d0, std::size_t d1);

/// Whether the group makes no call at any n of `at` (true for an empty list).
[[nodiscard]] bool silent_at(const GroupModel& g, const std::vector<std::int64_t>& at);

[[nodiscard]] GroupKey key_of(const GroupModel& g);

/// Whether a group shaped as `model` can take `donor`'s sizes and communicator: one case and as many terms.
[[nodiscard]] bool same_terms(const GroupModel& model, const GroupModel& donor);

/// Group g of block `from` in block `to`: the group of its kind (key_of) that comes as many times after the block's
/// first of that kind; nullopt where `to` has fewer of them.
[[nodiscard]] std::optional<std::size_t> alike_in(const std::vector<GroupModel>& groups, const Block& from,
                                                  std::size_t g, const Block& to);

/// The references to groups (completions, loops, work classes' cases and bursts) renumbered; a copy's completions
/// refer to the copies of the source's requests, or to the target's counterparts of them.
void renumber_references(PhaseModel& pm, std::vector<GroupModel>& out, const Renumbering& numbers,
                         const Counterparts& counterpart);

/// The exchanges along a dimension no fitted run had longer than 2 made anew from the exchanges next to them along a
/// longer one (exchange_remake.cpp); one note per exchange made anew.
[[nodiscard]] std::vector<std::string> remake_exchanges(PhaseModel& pm, const std::vector<std::int64_t>& fitted_n);

}  // namespace p3s::modeler::detail
