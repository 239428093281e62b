// SPDX-License-Identifier: BSD-3-Clause
// Block laws of message sizes: their value at a rank, the bounded search that fits one to a term's messages, and
// their JSON.
#include "p3s/modeler/block.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <set>

#include <nlohmann/json.hpp>

#include "p3s/error.hpp"

namespace p3s::modeler {
namespace {

/// A rank's place: the sides of its grid and its coordinates; a frame without a grid is one side of n.
struct Place {
  std::array<std::int64_t, 3> sides{1, 1, 1};
  std::array<std::int64_t, 3> coords{0, 0, 0};
  std::size_t dims = 1;
};

Place place_of(Frame frame, const GridLayout& layout, std::int64_t n, std::int64_t r) {
  Place p;
  if (frame_dims(frame) < 2) {
    p.sides[0] = n;
    p.coords[0] = r;
    return p;
  }
  // The blocks are those of the whole grid: a grain (the ranks that hold a coarse level) does not change them.
  const std::vector<int> sides = grid_sides(frame, n, GridLayout{0, layout.box});
  const Label c = grid_coords(frame, r, sides);
  p.dims = sides.size();
  for (std::size_t d = 0; d < p.dims && d < 3; ++d) {
    p.sides[d] = sides[d];
    p.coords[d] = c[d];
  }
  return p;
}

std::int64_t positive_mod(std::int64_t a, std::int64_t q) {
  const std::int64_t m = a % q;
  return m < 0 ? m + q : m;
}

/// The factor's block index at a place, for iteration i and cell u.
std::int64_t index_of(const BlockFactor& f, const Place& p, std::int64_t q, std::int64_t i, std::int64_t u) {
  std::int64_t x = f.step * i + f.cell * u + f.shift;
  for (std::size_t d = 0; d < 3; ++d) x += f.coef[d] * p.coords[d];
  return positive_mod(x, q);
}

/// The factor's value for block x of q.
std::int64_t points(const BlockFactor& f, std::int64_t q, std::int64_t x) {
  if (f.kind == BlockFactor::Kind::Inner) return x == (f.edge == 0 ? 0 : q - 1) ? 0 : 1;
  // The block rule: floor(L / q) points each, and one more for the first L mod q blocks.
  std::int64_t b = f.extent / q + (x < f.extent % q ? 1 : 0) + f.plus;
  if (x == 0) b -= f.trim[0];
  if (x == q - 1) b -= f.trim[1];
  return std::max<std::int64_t>(b, 0);  // a block shorter than its trims holds nothing
}

/// The points a law gives at a place and iteration.
std::int64_t law_points(const BlockLaw& law, const Place& p, std::int64_t i) {
  const auto product = [&](std::int64_t u) {
    std::int64_t v = 1;
    for (const BlockFactor& f : law.factors) {
      const std::int64_t q = std::max<std::int64_t>(1, p.sides[f.axis]);
      v *= points(f, q, index_of(f, p, q, i, u));
      if (v == 0) break;
    }
    return v;
  };
  if (!law.cells) return product(0);
  std::int64_t sum = 0;
  for (std::int64_t u = 0; u < p.sides[0]; ++u) sum += product(u);
  return sum;
}

// ---------------------------------------------------------------------------------------------------------------
// Fitting

/// A sample where the search reads it: its place, iteration and points (bytes over the law's bytes per point).
struct Prepared {
  Place place;
  std::int64_t i = 0;
  std::int64_t bytes = 0;
  std::int64_t points = 0;
};

/// The coordinates a factor may take, simplest first (fewest terms, then in a fixed order).
std::vector<BlockFactor> index_maps(std::size_t dims, bool axes, bool indexed, bool cells) {
  std::vector<BlockFactor> out;
  const std::array<std::int64_t, 3> unit{0, 1, -1};
  // A loop's messages may take a block one or two iterations away (a sweep's receive is the next stage's cell).
  const std::vector<std::int64_t> shifts =
      indexed ? std::vector<std::int64_t>{0, 1, -1, 2, -2} : std::vector<std::int64_t>{0, 1, -1};
  const std::size_t axis_count = axes ? dims : 1;
  for (std::size_t axis = 0; axis < axis_count; ++axis) {
    for (std::size_t c0 = 0; c0 < 3; ++c0) {
      for (std::size_t c1 = 0; c1 < (dims > 1 ? 3U : 1U); ++c1) {
        for (std::size_t c2 = 0; c2 < (dims > 2 ? 3U : 1U); ++c2) {
          for (std::size_t st = 0; st < (indexed ? 3U : 1U); ++st) {
            for (std::size_t ce = 0; ce < (cells ? 3U : 1U); ++ce) {
              for (const std::int64_t shift : shifts) {
                BlockFactor f;
                f.axis = static_cast<std::uint8_t>(axis);
                f.coef = {unit[c0], unit[c1], unit[c2]};
                f.step = unit[st];
                f.cell = unit[ce];
                f.shift = shift;
                out.push_back(f);
              }
            }
          }
        }
      }
    }
  }
  const auto terms = [](const BlockFactor& f) {
    return (f.coef[0] != 0) + (f.coef[1] != 0) + (f.coef[2] != 0) + (f.step != 0) + (f.cell != 0) +
           static_cast<int>(std::abs(f.shift));
  };
  std::stable_sort(out.begin(), out.end(),
                   [&](const BlockFactor& a, const BlockFactor& b) { return terms(a) < terms(b); });
  return out;
}

/// What a search tries: how many blocks are multiplied, whether over the rank's cells, and whether one cell's face
/// is left out at an end of the grid.
struct Structure {
  int blocks = 1;
  bool cells = false;
  bool inner = false;
};

/// An interval of extents L, empty when lo > hi.
struct Extents {
  std::int64_t lo = 1;
  std::int64_t hi = std::numeric_limits<std::int64_t>::max();
  [[nodiscard]] bool empty() const noexcept { return lo > hi; }
  void meet(std::int64_t a, std::int64_t b) {
    lo = std::max(lo, a);
    hi = std::min(hi, b);
  }
};

/// The largest extent a search considers for these samples: no block is longer than the points of a message.
std::int64_t most_extent(std::span<const Prepared> samples) {
  std::int64_t most = 1;
  for (const Prepared& p : samples) {
    std::int64_t q = 1;
    for (std::size_t d = 0; d < p.place.dims; ++d) q = std::max(q, p.place.sides[d]);
    most = std::max(most, (p.points + 4) * q);
  }
  return most;
}

/// The extents at which the law (its blocks' extent left to set) gives a sample's points: the law's points do not
/// decrease as the extent grows (every block grows or stays), so they are an interval, found by bisection.
Extents extents_for(BlockLaw& law, const Prepared& s, std::int64_t most) {
  const auto at = [&](std::int64_t extent) {
    for (BlockFactor& f : law.factors) {
      if (f.kind == BlockFactor::Kind::Block) f.extent = extent;
    }
    return law_points(law, s.place, s.i);
  };
  // The first extent whose points pass `points` (or reach it, with `reach`).
  const auto first_past = [&](std::int64_t from, std::int64_t points, bool reach) {
    std::int64_t lo = from;
    std::int64_t hi = most + 1;
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      const std::int64_t v = at(mid);
      if (reach ? v >= points : v > points) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    return lo;
  };
  const std::int64_t first = first_past(1, s.points, true);
  return {first, first_past(first, s.points, false) - 1};
}

/// Sets the extent of the law's blocks.
void set_extent(BlockLaw& law, std::int64_t extent) {
  for (BlockFactor& f : law.factors) {
    if (f.kind == BlockFactor::Kind::Block) f.extent = extent;
  }
}

/// Whether the law gives every sample's points at some extent within `within` (the smallest such is set).
bool common_extent(BlockLaw& law, std::span<const Prepared> samples, std::int64_t most, Extents within) {
  for (const Prepared& s : samples) {
    const Extents one = extents_for(law, s, most);
    within.meet(one.lo, one.hi);
    if (within.empty()) return false;
  }
  set_extent(law, within.lo);
  return true;
}

/// The extents at which one block gives each sample's points: block(L, q, x) = b holds for L in
/// [b q - q + x + 1, b q + x] (floor(L / q) = b with x at or past L mod q, or b - 1 with x before it).
std::optional<std::int64_t> single_extent(const BlockFactor& f, std::span<const Prepared> samples, Extents e) {
  for (const Prepared& s : samples) {
    const std::int64_t q = std::max<std::int64_t>(1, s.place.sides[f.axis]);
    const std::int64_t x = index_of(f, s.place, q, s.i, 0);
    const std::int64_t b = s.points - f.plus + (x == 0 ? f.trim[0] : 0) + (x == q - 1 ? f.trim[1] : 0);
    e.meet(b * q - q + x + 1, b * q + x);
    if (e.empty()) return std::nullopt;
  }
  return e.lo;
}

/// Whether some run's sizes differ more than a product of two blocks can: within one run a block takes at most four
/// values (b, b + 1 for the first L mod q, less a trim at each end), so where the smallest size is m > 0 points, no
/// product of two blocks exceeds (f1 + 3)(f2 + 3) <= 4m + 12 points (f1 f2 = m). Sizes that differ more (a small
/// message and a large one in one group) rule out every law of one or two blocks at once, before a search through
/// every pair of index maps that would take minutes. Cells summed over are not bounded so.
bool spread_too_wide(std::span<const BlockSample> samples) {
  std::map<std::int64_t, std::pair<double, double>> range;  // per run: the smallest and largest size
  for (const BlockSample& s : samples) {
    auto [it, fresh] = range.try_emplace(s.n, s.bytes, s.bytes);
    it->second = {std::min(it->second.first, s.bytes), std::max(it->second.second, s.bytes)};
  }
  std::int64_t unit = 0;
  for (const BlockSample& s : samples) unit = std::gcd(unit, static_cast<std::int64_t>(std::round(s.bytes)));
  if (unit == 0) return false;
  const auto u = static_cast<double>(unit);
  return std::any_of(range.begin(), range.end(), [u](const auto& r) {
    const double least = r.second.first / u;  // points, at the finest bytes per point a law may take
    return least >= 1 && r.second.second / u > 4 * least + 12;
  });
}

/// The first law of a structure, bytes per point and `plus` that fits, over trims and index maps; with a grid, only
/// laws of its extent, trims and points added.
std::optional<BlockLaw> search(std::span<const Prepared> samples, const Structure& s, std::int64_t bytes,
                               std::int64_t plus, const std::vector<BlockFactor>& maps,
                               const std::optional<BlockGrid>& grid = std::nullopt) {
  if (grid && grid->plus != plus) return std::nullopt;
  Extents within;
  if (grid) within = {grid->extent, grid->extent};
  BlockLaw law;
  law.bytes = bytes;
  law.cells = s.cells;
  const std::int64_t most = most_extent(samples);
  // The cells summed over: with the cell index u as the last block's own index (any other numbering of the cells
  // is the same sum), the others' indices relative to it.
  BlockFactor own;
  own.cell = 1;
  const std::array<std::array<std::int64_t, 2>, 4> trims{{{0, 0}, {1, 1}, {1, 0}, {0, 1}}};
  for (const std::array<std::int64_t, 2>& trim : trims) {
    if (grid && grid->trim != trim) continue;
    const auto block = [&](BlockFactor f) {
      f.kind = BlockFactor::Kind::Block;
      f.plus = plus;
      f.trim = trim;
      return f;
    };
    if (s.blocks == 1 && !s.cells) {
      for (const BlockFactor& a : maps) {
        law.factors = {block(a)};
        if (const std::optional<std::int64_t> extent = single_extent(law.factors.front(), samples, within)) {
          law.factors.front().extent = *extent;
          return law;
        }
      }
      continue;
    }
    if (!s.cells) {
      for (std::size_t x = 0; x < maps.size(); ++x) {
        for (std::size_t y = x; y < maps.size(); ++y) {
          law.factors = {block(maps[x]), block(maps[y])};
          if (common_extent(law, samples, most, within)) return law;
        }
      }
      continue;
    }
    for (const BlockFactor& a : maps) {
      if (!s.inner) {
        law.factors = {block(a), block(own)};
        if (common_extent(law, samples, most, within)) return law;
        continue;
      }
      for (const BlockFactor& e : maps) {
        for (const std::uint8_t edge : {std::uint8_t{1}, std::uint8_t{0}}) {
          BlockFactor inner = e;
          inner.kind = BlockFactor::Kind::Inner;
          inner.edge = edge;
          law.factors = {inner, block(a), block(own)};
          if (common_extent(law, samples, most, within)) return law;
        }
      }
    }
  }
  return std::nullopt;
}

}  // namespace

double BlockLaw::at(Frame frame, const GridLayout& layout, std::int64_t n, std::int64_t r, std::int64_t i) const {
  return static_cast<double>(bytes) * static_cast<double>(law_points(*this, place_of(frame, layout, n, r), i));
}

std::vector<BlockGrid> block_grids(const BlockLaw& law) {
  std::vector<BlockGrid> out;
  for (const BlockFactor& f : law.factors) {
    if (f.kind != BlockFactor::Kind::Block) continue;
    const BlockGrid g{f.extent, f.trim, f.plus};
    if (std::find(out.begin(), out.end(), g) == out.end()) out.push_back(g);
  }
  return out;
}

std::optional<BlockLaw> fit_block_law(std::span<const BlockSample> samples, Frame frame, const GridLayout& layout,
                                      std::span<const BlockGrid> prefer, bool only_preferred) {
  std::vector<Prepared> prepared;
  std::set<std::int64_t> runs;
  bool indexed = false;
  std::int64_t unit = 0;  // the gcd of the sizes: bytes per point, or a multiple of it
  for (const BlockSample& s : samples) {
    const double whole = std::round(s.bytes);
    if (s.bytes < 0 || std::abs(s.bytes - whole) > 1e-6) return std::nullopt;
    Prepared p{place_of(frame, layout, s.n, s.r), s.i, static_cast<std::int64_t>(whole), 0};
    unit = std::gcd(unit, p.bytes);
    indexed = indexed || s.i != 0;
    runs.insert(s.n);
    prepared.push_back(p);
  }
  // A law of blocks needs runs that split the grid differently to be told from others.
  if (unit == 0 || runs.size() < 3) return std::nullopt;
  const bool spread = spread_too_wide(samples);
  // The largest runs first: their sizes differ most, so a wrong law fails on the first samples.
  std::stable_sort(prepared.begin(), prepared.end(), [](const Prepared& a, const Prepared& b) {
    return a.place.sides[0] * a.place.sides[1] * a.place.sides[2] >
           b.place.sides[0] * b.place.sides[1] * b.place.sides[2];
  });
  const std::size_t dims = prepared.front().place.dims;
  bool square = dims >= 2;  // every side alike: a cell grid of q x q ranks
  bool axes = false;        // some run's sides differ: which side a block is along matters
  for (const Prepared& p : prepared) {
    for (std::size_t d = 1; d < p.place.dims; ++d) {
      square = square && p.place.sides[d] == p.place.sides[0];
      axes = axes || p.place.sides[d] != p.place.sides[0];
    }
  }
  const std::vector<BlockFactor> plain = index_maps(dims, axes, indexed, false);
  const std::vector<BlockFactor> celled = square ? index_maps(dims, false, indexed, true) : std::vector<BlockFactor>{};
  const std::array<Structure, 4> structures{Structure{1, false, false}, Structure{2, false, false},
                                            Structure{2, true, false}, Structure{2, true, true}};
  // Each structure in turn, with bytes per point the gcd of the sizes or a small divisor of it (where every block
  // count shares a factor); each preferred grid first.
  const auto first = [&](const std::optional<BlockGrid>& grid) -> std::optional<BlockLaw> {
    for (const Structure s : structures) {
      if ((s.cells && !square) || (!s.cells && spread)) continue;
      for (std::int64_t divisor = 1; divisor <= 4; ++divisor) {
        if (unit % divisor != 0) continue;
        const std::int64_t bytes = unit / divisor;
        for (Prepared& p : prepared) p.points = p.bytes / bytes;
        for (const std::int64_t plus : {std::int64_t{0}, std::int64_t{1}, std::int64_t{2}}) {
          if (std::optional<BlockLaw> law = search(prepared, s, bytes, plus, s.cells ? celled : plain, grid)) {
            return law;
          }
        }
      }
    }
    return std::nullopt;
  };
  for (const BlockGrid& grid : prefer) {
    if (std::optional<BlockLaw> law = first(grid)) return law;
  }
  if (only_preferred) return std::nullopt;
  if (std::optional<BlockLaw> law = first(std::nullopt)) return law;
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------------------------
// Text and JSON

namespace {

/// "c1 - u + 1", "q - 1" for a constant index, "0".
std::string index_text(const BlockFactor& f) {
  std::string out;
  const auto term = [&](std::int64_t k, const std::string& name) {
    if (k == 0) return;
    if (out.empty()) {
      out = (k < 0 ? "-" : "") + name;
    } else {
      out += (k < 0 ? " - " : " + ") + name;
    }
  };
  for (std::size_t d = 0; d < 3; ++d) term(f.coef[d], "c" + std::to_string(d));
  term(f.step, "i");
  term(f.cell, "u");
  if (out.empty()) return f.shift < 0 ? "q - 1" : std::to_string(f.shift);
  if (f.shift != 0) out += (f.shift < 0 ? " - " : " + ") + std::to_string(std::abs(f.shift));
  return out;
}

std::string factor_text(const BlockFactor& f) {
  const std::string x = index_text(f);
  if (f.kind == BlockFactor::Kind::Inner) return "[" + x + (f.edge == 0 ? " != 0]" : " != q - 1]");
  std::string out = "blk(" + std::to_string(f.extent) + " over side " + std::to_string(f.axis) + " at " + x;
  if (f.trim[0] != 0 && f.trim[1] != 0) {
    out += ", less " + std::to_string(f.trim[0]) + " at both ends";
  } else if (f.trim[0] != 0) {
    out += ", less " + std::to_string(f.trim[0]) + " at the first";
  } else if (f.trim[1] != 0) {
    out += ", less " + std::to_string(f.trim[1]) + " at the last";
  }
  out += ")";
  if (f.plus != 0) out = "(" + out + " + " + std::to_string(f.plus) + ")";
  return out;
}

}  // namespace

std::string BlockLaw::to_string() const {
  std::string product;
  for (const BlockFactor& f : factors) product += "*" + factor_text(f);
  return std::to_string(bytes) + (cells ? "*sum(u < q: " + product.substr(1) + ")" : product);
}

void to_json(nlohmann::json& j, const BlockLaw& law) {
  nlohmann::json factors = nlohmann::json::array();
  for (const BlockFactor& f : law.factors) {
    factors.push_back({{"kind", f.kind == BlockFactor::Kind::Inner ? "inner" : "block"},
                       {"axis", f.axis},
                       {"extent", f.extent},
                       {"plus", f.plus},
                       {"trim", f.trim},
                       {"edge", f.edge},
                       {"coef", f.coef},
                       {"step", f.step},
                       {"cell", f.cell},
                       {"shift", f.shift}});
  }
  j = {{"bytes", law.bytes}, {"cells", law.cells}, {"factors", std::move(factors)}, {"equation", law.to_string()}};
}

BlockLaw block_law_from_json(const nlohmann::json& j) {
  try {
    BlockLaw law;
    law.bytes = j.at("bytes").get<std::int64_t>();
    law.cells = j.at("cells").get<bool>();
    for (const nlohmann::json& jf : j.at("factors")) {
      BlockFactor f;
      const std::string kind = jf.at("kind").get<std::string>();
      if (kind != "block" && kind != "inner") throw InputError("a block law factor of unknown kind '" + kind + "'");
      f.kind = kind == "inner" ? BlockFactor::Kind::Inner : BlockFactor::Kind::Block;
      f.axis = jf.at("axis").get<std::uint8_t>();
      f.extent = jf.at("extent").get<std::int64_t>();
      f.plus = jf.at("plus").get<std::int64_t>();
      f.trim = jf.at("trim").get<std::array<std::int64_t, 2>>();
      f.edge = jf.at("edge").get<std::uint8_t>();
      f.coef = jf.at("coef").get<std::array<std::int64_t, 3>>();
      f.step = jf.at("step").get<std::int64_t>();
      f.cell = jf.at("cell").get<std::int64_t>();
      f.shift = jf.at("shift").get<std::int64_t>();
      if (f.axis > 2 || f.edge > 1 || f.extent < 0) throw InputError("a block law factor out of range");
      law.factors.push_back(f);
    }
    if (law.bytes < 0 || law.factors.empty()) throw InputError("a block law without factors or with negative bytes");
    return law;
  } catch (const nlohmann::json::exception& e) {
    throw InputError(std::string("a malformed block law in a model: ") + e.what());
  }
}

}  // namespace p3s::modeler
