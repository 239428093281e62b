// SPDX-License-Identifier: BSD-3-Clause
// Message sizes that follow the blocks of data each rank holds: where an application splits a side of L points over
// q processes, the first L mod q blocks one point longer (the block rule of most codes that split a grid
// themselves), the sizes of one run differ from rank to rank, and from run to run as L over q
// rounds. A block law writes a message's size as a product of such blocks, at coordinates that are linear in the
// rank's place on its process grid, in the index of a loop's iteration and, where a rank holds several cells of the
// grid (a multi-partition: a diagonal of q cells of a q x q x q grid on each of q x q ranks), in the cell, summed
// over the rank's cells.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "p3s/modeler/pattern.hpp"

namespace p3s::modeler {

/// One factor of a block law: the points of one block along a side of the grid, or whether a cell is not at one
/// end of it.
struct BlockFactor {
  enum class Kind : std::uint8_t {
    Block,  ///< the block's points: floor(L / q) + (x < L mod q) + plus, less trim[0] at x = 0 and trim[1] at x = q - 1
    Inner,  ///< 1 where x is not `edge` (0: the first block, 1: the last), 0 there: a face no neighbour takes
  };
  Kind kind = Kind::Block;
  std::uint8_t axis = 0;                   ///< the side of the grid the blocks are along (q is its number of processes)
  std::int64_t extent = 0;                 ///< L, the points of the global grid along it (Block)
  std::int64_t plus = 0;                   ///< added to every block (a buffer sized for the longest block and one more)
  std::array<std::int64_t, 2> trim{0, 0};  ///< points the first and the last block leave out (a global boundary)
  std::uint8_t edge = 0;                   ///< Inner: which end
  /// The block's index x = (sum_d coef[d] * c_d + step * i + cell * u + shift) mod q, c the rank's grid
  /// coordinates, i the iteration (or repetition) index, u the cell summed over.
  std::array<std::int64_t, 3> coef{0, 0, 0};
  std::int64_t step = 0;
  std::int64_t cell = 0;
  std::int64_t shift = 0;
  friend bool operator==(const BlockFactor&, const BlockFactor&) = default;
};

/// A message's size as `bytes` times the product of its factors, or where `cells` is set, the sum of that product
/// over the q cells u < q a rank holds (q the side of axis 0).
struct BlockLaw {
  std::int64_t bytes = 0;  ///< bytes per point
  bool cells = false;
  std::vector<BlockFactor> factors;

  /// The size at rank r at n in a term of a program of this frame and layout, at iteration (or repetition) i.
  [[nodiscard]] double at(Frame frame, const GridLayout& layout, std::int64_t n, std::int64_t r, std::int64_t i) const;
  /// "40*blk(33 over side 1 at c1, less 1 at both ends)".
  [[nodiscard]] std::string to_string() const;
  friend bool operator==(const BlockLaw&, const BlockLaw&) = default;
};

/// What the blocks of a law are: the extent of the grid's side, the trims at its ends and the points added; the
/// same for every message an application sends of its grid.
struct BlockGrid {
  std::int64_t extent = 0;
  std::array<std::int64_t, 2> trim{0, 0};
  std::int64_t plus = 0;
  friend auto operator<=>(const BlockGrid&, const BlockGrid&) = default;
};

/// The grids of a law's blocks.
[[nodiscard]] std::vector<BlockGrid> block_grids(const BlockLaw& law);

/// One message of a term: its run, its rank, its iteration (or repetition) index and its size.
struct BlockSample {
  std::int64_t n = 0;
  std::int64_t r = 0;
  std::int64_t i = 0;
  double bytes = 0;
};

/// The simplest block law that gives every sample's size exactly on the grid of `frame` and `layout` (a frame
/// without a grid is one side of n processes, the rank its coordinate), or nullopt. Simplest: one block before two,
/// two before a sum over cells; no trim nor offset before them; then coordinates with fewer terms. Asked where no
/// law in n reproduces the sizes: runs whose sides all divide evenly fit many laws alike, and tell nothing of how
/// an application splits its data. The search is bounded: coefficients -1, 0 or 1, offsets up to 2 along a loop's
/// iterations. With `prefer`, laws whose blocks are one of those grids come first, in that order: the grid the
/// application's other messages show, where the runs leave several laws open for one; with `only_preferred`, those
/// alone.
[[nodiscard]] std::optional<BlockLaw> fit_block_law(std::span<const BlockSample> samples, Frame frame,
                                                    const GridLayout& layout = {},
                                                    std::span<const BlockGrid> prefer = {},
                                                    bool only_preferred = false);

void to_json(nlohmann::json& j, const BlockLaw& law);
/// @throws p3s::InputError on a malformed law.
[[nodiscard]] BlockLaw block_law_from_json(const nlohmann::json& j);

}  // namespace p3s::modeler
