// SPDX-License-Identifier: BSD-3-Clause
// Communication patterns: frames, generation of a rank's communications, readable equations, JSON.
#include "p3s/modeler/pattern.hpp"

#include <bit>
#include <map>

#include <nlohmann/json.hpp>

#include "p3s/error.hpp"
#include "p3s/modeler/dims.hpp"

namespace p3s::modeler {
namespace {

using nlohmann::json;

constexpr std::array<std::string_view, 14> kFrameNames = {"offset",  "ring",   "grid2",    "torus2",     "grid3",
                                                          "torus3",  "xor",    "absolute", "expression", "grid2c",
                                                          "torus2c", "grid3c", "torus3c",  "transpose"};

/// The process grid of d dimensions at n: MPI_Dims_create's under the current rule, or a box's (box_grid()),
/// remembered for the last n and layout asked (generation asks for the same n many times).
const std::vector<int>& grid_dims(std::int64_t n, int d, const std::array<std::int64_t, 3>& box = {0, 0, 0}) {
  thread_local std::int64_t cached_n[4] = {0, 0, 0, 0};
  thread_local DimsRule cached_rule[4] = {};
  thread_local std::array<std::int64_t, 3> cached_box[4] = {};
  thread_local std::vector<int> cached[4];
  if (cached_n[d] != n || cached_rule[d] != current_dims_rule() || cached_box[d] != box) {
    cached[d] = box[0] > 0 ? box_grid(n, d, box) : dims_create(static_cast<int>(n), d);
    cached_n[d] = n;
    cached_rule[d] = current_dims_rule();
    cached_box[d] = box;
  }
  return cached[d];
}

bool column_major(Frame f) {
  return f == Frame::Grid2C || f == Frame::Torus2C || f == Frame::Grid3C || f == Frame::Torus3C;
}

/// The dimension visited at step k of a rank's decomposition: the fastest-varying first.
std::size_t fastest(Frame f, std::size_t k, std::size_t dims) { return column_major(f) ? k : dims - 1 - k; }

/// Coordinates of r on the grid: row-major (the last dimension varies fastest, as MPI_Cart_create numbers ranks)
/// or column-major (the first varies fastest).
Label coords(Frame f, std::int64_t r, std::span<const int> dims) {
  Label c{0, 0, 0};
  for (std::size_t k = 0; k < dims.size(); ++k) {
    const std::size_t i = fastest(f, k, dims.size());
    c[i] = r % dims[i];
    r /= dims[i];
  }
  return c;
}

std::int64_t modulo(std::int64_t a, std::int64_t m) { return ((a % m) + m) % m; }

/// Along one dimension of p processes, the ranks holding data of a grid of `grain` points (0: every rank): how many,
/// the stride between them and the coordinate of the first.
struct Holders {
  std::int64_t count = 1;
  std::int64_t stride = 1;
  std::int64_t first = 0;
};

Holders holders(std::int64_t p, const GridLayout& layout) {
  const std::int64_t grain = layout.grain;
  if (grain <= 0 || grain >= p) return {p, 1, 0};
  const std::int64_t stride = p / grain;
  return {grain, stride, layout.last_holder ? stride - 1 : 0};
}

/// The coordinate c along a dimension written as the index of a holder (c - first) / stride, or nullopt when c
/// holds no data there.
std::optional<std::int64_t> holder_index(std::int64_t c, const Holders& h) {
  if (c < h.first || (c - h.first) % h.stride != 0 || (c - h.first) / h.stride >= h.count) return std::nullopt;
  return (c - h.first) / h.stride;
}

/// The one dimension a label steps along, or nullopt (none, or several).
std::optional<std::size_t> single_axis(const Label& l, std::size_t dims) {
  std::optional<std::size_t> axis;
  for (std::size_t d = 0; d < dims; ++d) {
    if (l[d] == 0) continue;
    if (axis) return std::nullopt;
    axis = d;
  }
  return axis;
}

/// Whether a rank at coordinate c along a side of p processes takes part in a step along that side under a layout
/// whose steps go along it alone (GridLayout::along_step): the side has more processes than the grain and c holds
/// data.
bool steps_along(std::int64_t c, std::int64_t p, const GridLayout& layout) {
  const Holders h = holders(p, layout);
  return h.count < p && holder_index(c, h).has_value();
}

/// Whether coordinates c on the grid `dims` are those of a rank holding data (see holds_data()).
bool holding(const Label& c, const std::vector<int>& dims, const GridLayout& layout) {
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (!holder_index(c[d], holders(dims[d], layout))) return false;
  }
  return true;
}

/// r's transposed position on the 2^floor(k/2) x 2^ceil(k/2) grid of n = 2^k ranks (Frame::Transpose): the low
/// bit of r (when k is odd) stays, the two halves of the other bits swap; nullopt when n is no power of two.
std::optional<std::int64_t> transposed(std::int64_t r, std::int64_t n) {
  if (n < 1 || (n & (n - 1)) != 0 || r < 0 || r >= n) return std::nullopt;
  const auto k = static_cast<int>(std::bit_width(static_cast<std::uint64_t>(n))) - 1;
  const int half = k / 2;
  const std::int64_t pair = std::int64_t{1} << (k % 2);
  const std::int64_t side = std::int64_t{1} << half;
  const std::int64_t cell = r / pair;
  return ((cell % side) * side + cell / side) * pair + r % pair;
}

std::string law_text(const ExactLaw& law) {
  const std::string s = law.to_string();
  return law.is_constant() || s.find_first_of("+- ") == std::string::npos ? s : "(" + s + ")";
}

/// `origin` plus a label: "r", "r + 1", "transpose(r) - 2".
std::string shifted(const std::string& origin, const IndexedLaw& label) {
  const std::string v = label.to_string();
  return v == "0" ? origin : v.front() == '-' ? origin + " - " + v.substr(1) : origin + " + " + v;
}

/// "r + 1", "r - dims2(n)[1]", "(r + 1) mod n", "r ^ 2^i", "i + 1", "grid2(r) + (-1, 0)".
std::string label_text(Frame frame, const std::vector<IndexedLaw>& label) {
  if (label.empty()) return "null";
  std::string parts;
  for (std::size_t d = 0; d < label.size(); ++d) parts += (d ? ", " : "") + label[d].to_string();
  switch (frame) {
    case Frame::Offset:
    case Frame::Ring: {
      const std::string s = shifted("r", label[0]);
      return frame == Frame::Ring ? "(" + s + ") mod n" : s;
    }
    case Frame::Xor:
      return "r ^ " + parts;
    case Frame::Absolute:
      return parts;
    case Frame::Transpose:
      return shifted("transpose(r)", label[0]);
    default:
      return std::string(frame_name(frame)) + "(r) + (" + parts + ")";
  }
}

json indexed_to_json(const IndexedLaw& l) {
  json j{{"base", to_json(l.base)}};
  if (l.step != 0) {
    j["step"] = l.step;
    j["progression"] = l.progression == IndexedLaw::Progression::Linear ? "linear" : "power2";
    j["descending"] = l.descending;
  }
  return j;
}

IndexedLaw indexed_from_json(const json& j) {
  IndexedLaw l;
  l.base = exact_law_from_json(j.at("base"));
  l.step = j.value("step", std::int64_t{0});
  const std::string p = j.value("progression", std::string("linear"));
  if (p != "linear" && p != "power2") throw InputError("unknown progression '" + p + "' in a model pattern");
  l.progression = p == "linear" ? IndexedLaw::Progression::Linear : IndexedLaw::Progression::Power2;
  l.descending = j.value("descending", false);
  return l;
}

}  // namespace

json rank_predicate_json(const RankPredicate& p) {
  static constexpr std::array<const char*, 6> kinds = {"always", "equal", "less", "mod_equal", "div_equal", "holds"};
  json j{{"kind", kinds[static_cast<std::size_t>(p.kind)]}};
  if (p.kind == RankPredicate::Kind::Holds) {
    j["frame"] = frame_name(p.frame);
    j["grain"] = p.layout.grain;
    if (p.layout.last_holder) j["last_holder"] = true;
    if (p.layout.boxed()) j["box"] = p.layout.box;
  } else if (p.kind != RankPredicate::Kind::Always) {
    j["a"] = to_json(p.a);
  }
  if (p.kind == RankPredicate::Kind::ModEqual || p.kind == RankPredicate::Kind::DivEqual) j["k"] = to_json(p.k);
  if (p.negate) j["negate"] = true;
  return j;
}

RankPredicate holders_predicate(Frame frame, const GridLayout& layout) {
  RankPredicate p;
  p.kind = RankPredicate::Kind::Holds;
  p.frame = frame;
  p.layout = GridLayout{layout.grain, layout.box, layout.last_holder};
  return p;
}

RankPredicate rank_predicate_from_json(const json& j) {
  RankPredicate p;
  const std::string kind = j.at("kind").get<std::string>();
  if (kind == "always") {
    p.kind = RankPredicate::Kind::Always;
  } else if (kind == "equal") {
    p.kind = RankPredicate::Kind::Equal;
  } else if (kind == "less") {
    p.kind = RankPredicate::Kind::Less;
  } else if (kind == "mod_equal") {
    p.kind = RankPredicate::Kind::ModEqual;
  } else if (kind == "div_equal") {
    p.kind = RankPredicate::Kind::DivEqual;
  } else if (kind == "holds") {
    const std::optional<Frame> f = frame_from_name(j.at("frame").get<std::string>());
    GridLayout layout{j.at("grain").get<std::int64_t>(), j.value("box", std::array<std::int64_t, 3>{0, 0, 0}),
                      j.value("last_holder", false)};
    if (!f || frame_dims(*f) < 2 || layout.grain < 1) {
      throw InputError("a rank predicate on the holders of a grid needs a grid frame and a grain of at least 1");
    }
    p = holders_predicate(*f, layout);
  } else {
    throw InputError("unknown rank predicate '" + kind + "' in a model pattern");
  }
  if (j.contains("a")) p.a = exact_law_from_json(j.at("a"));
  if (j.contains("k")) p.k = exact_law_from_json(j.at("k"));
  p.negate = j.value("negate", false);
  return p;
}

std::string_view frame_name(Frame frame) noexcept { return kFrameNames[static_cast<std::size_t>(frame)]; }

std::optional<Frame> frame_from_name(std::string_view name) noexcept {
  for (std::size_t i = 0; i < kFrameNames.size(); ++i) {
    if (kFrameNames[i] == name) return static_cast<Frame>(i);
  }
  return std::nullopt;
}

bool frame_periodic(Frame f) noexcept {
  return f == Frame::Ring || f == Frame::Torus2 || f == Frame::Torus3 || f == Frame::Torus2C || f == Frame::Torus3C;
}

int frame_dims(Frame frame) noexcept {
  switch (frame) {
    case Frame::Grid2:
    case Frame::Torus2:
    case Frame::Grid2C:
    case Frame::Torus2C:
      return 2;
    case Frame::Grid3:
    case Frame::Torus3:
    case Frame::Grid3C:
    case Frame::Torus3C:
      return 3;
    default:
      return 1;
  }
}

namespace {

/// A label under a layout whose steps go along one dimension (GridLayout::along_step): the difference of the
/// coordinates a to b, processes apart, where it is a step along one dimension that a takes part in.
std::optional<Label> step_label(Frame frame, const Label& a, const Label& b, const std::vector<int>& dims,
                                const GridLayout& layout) {
  Label l{0, 0, 0};
  for (std::size_t d = 0; d < dims.size(); ++d)
    l[d] = frame_periodic(frame) ? modulo(b[d] - a[d], dims[d]) : b[d] - a[d];
  const std::optional<std::size_t> axis = single_axis(l, dims.size());
  if (!axis || !steps_along(a[*axis], dims[*axis], layout)) return std::nullopt;
  return l;
}

}  // namespace

std::optional<Label> label_of(Frame frame, std::int64_t r, std::int64_t peer, std::int64_t n,
                              const GridLayout& layout) {
  const std::int64_t grain = layout.grain;
  switch (frame) {
    case Frame::Offset:
      return Label{peer - r, 0, 0};
    case Frame::Ring:
      return Label{modulo(peer - r, n), 0, 0};
    case Frame::Xor:
      return Label{peer ^ r, 0, 0};
    case Frame::Absolute:
    case Frame::Expression:
      return Label{peer, 0, 0};
    case Frame::Transpose: {
      const std::optional<std::int64_t> t = transposed(r, n);
      if (!t) return std::nullopt;
      return Label{peer - *t, 0, 0};
    }
    default:
      break;
  }
  const std::vector<int>& dims = grid_dims(n, frame_dims(frame), layout.box);
  const Label a = coords(frame, r, dims);
  const Label b = coords(frame, peer, dims);
  if (grain > 0 && layout.along_step) return step_label(frame, a, b, dims, layout);
  if (grain > 0 && (!holding(a, dims, layout) || !holding(b, dims, layout))) return std::nullopt;
  Label l{0, 0, 0};
  for (std::size_t d = 0; d < dims.size(); ++d) {
    const Holders h = holders(dims[d], layout);
    const std::int64_t step = (b[d] - a[d]) / h.stride;
    l[d] = layout.wraps(frame, d) ? modulo(step, h.count) : step;
  }
  return l;
}

bool holds_data(Frame frame, std::int64_t r, std::int64_t n, const GridLayout& layout) {
  // Along a step's own dimension, each step says whether a rank takes part in it (peer_of()).
  if (layout.grain <= 0 || frame_dims(frame) < 2 || layout.along_step) return true;
  const std::vector<int>& dims = grid_dims(n, frame_dims(frame), layout.box);
  return holding(coords(frame, r, dims), dims, layout);
}

double face_points(Frame frame, const GridLayout& layout, std::int64_t n, std::size_t axis,
                   const std::array<int, 2>& margins) {
  const std::vector<int>& dims = grid_dims(n, frame_dims(frame), layout.box);
  double points = 1;
  std::size_t other = 0;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (d == axis) continue;
    const double side = layout.grain > 0 ? std::max(1.0, static_cast<double>(layout.grain) / dims[d]) : 1.0 / dims[d];
    points *= side + (other < margins.size() ? margins[other] : 0);
    ++other;
  }
  return points;
}

std::int64_t label_period(Frame frame, std::int64_t n, std::size_t d, const GridLayout& layout) {
  if (frame == Frame::Ring) return n;
  if (layout.along_step) return grid_dims(n, frame_dims(frame), layout.box)[d];
  return holders(grid_dims(n, frame_dims(frame), layout.box)[d], layout).count;
}

std::vector<int> grid_sides(Frame frame, std::int64_t n, const GridLayout& layout) {
  return grid_dims(n, frame_dims(frame), layout.box);
}

Label grid_coords(Frame frame, std::int64_t r, std::span<const int> sides) { return coords(frame, r, sides); }

namespace {

/// The least-surface cut of n for a box: the first in order (box_grid()).
struct BoxCut {
  std::vector<int> sides;
};

BoxCut cut_box(std::int64_t n, int dims, const std::array<std::int64_t, 3>& box) {
  if (n < 1 || dims < 2 || dims > 3) throw ModelError("a box grid has 2 or 3 dimensions and n >= 1");
  // Asked for the same few n and boxes again and again while a pattern's box is searched.
  thread_local std::map<std::tuple<std::int64_t, int, std::array<std::int64_t, 3>>, BoxCut> cache;
  const auto [it, added] = cache.try_emplace({n, dims, box});
  if (!added) return it->second;
  BoxCut& out = it->second;
  double least = 0;
  const auto consider = [&](std::vector<int> sides) {
    double surface = 0;
    if (dims == 2) {
      surface = static_cast<double>(box[0]) / sides[0] + static_cast<double>(box[1]) / sides[1];
    } else {
      const double a = static_cast<double>(box[0]) / sides[0];
      const double b = static_cast<double>(box[1]) / sides[1];
      const double c = static_cast<double>(box[2]) / sides[2];
      surface = a * b + b * c + a * c;
    }
    if (out.sides.empty() || surface < least * (1 - 1e-12)) {
      out.sides = std::move(sides);
      least = surface;
    }
  };
  for (std::int64_t p0 = 1; p0 <= n; ++p0) {
    if (n % p0 != 0) continue;
    if (dims == 2) {
      consider({static_cast<int>(p0), static_cast<int>(n / p0)});
      continue;
    }
    for (std::int64_t p1 = 1; p1 <= n / p0; ++p1) {
      if ((n / p0) % p1 == 0) consider({static_cast<int>(p0), static_cast<int>(p1), static_cast<int>(n / p0 / p1)});
    }
  }
  return out;
}

}  // namespace

std::vector<int> box_grid(std::int64_t n, int dims, const std::array<std::int64_t, 3>& box) {
  return cut_box(n, dims, box).sides;
}

std::optional<std::int64_t> peer_of(Frame frame, std::int64_t r, const Label& label, std::int64_t n,
                                    const GridLayout& layout) {
  const std::int64_t grain = layout.grain;
  const auto in_range = [n](std::int64_t p) -> std::optional<std::int64_t> {
    if (p < 0 || p >= n) return std::nullopt;
    return p;
  };
  switch (frame) {
    case Frame::Offset:
      return in_range(r + label[0]);
    case Frame::Ring:
      if (n == 1 && label[0] != 0) return std::nullopt;
      return modulo(r + label[0], n);
    case Frame::Xor:
      return label[0] < 0 ? std::nullopt : in_range(r ^ label[0]);
    case Frame::Absolute:
    case Frame::Expression:
      return in_range(label[0]);
    case Frame::Transpose: {
      const std::optional<std::int64_t> t = transposed(r, n);
      if (!t) return std::nullopt;
      return in_range(*t + label[0]);
    }
    default:
      break;
  }
  const std::vector<int>& dims = grid_dims(n, frame_dims(frame), layout.box);
  const Label c = coords(frame, r, dims);
  if (grain > 0 && layout.along_step) {
    const std::optional<std::size_t> axis = single_axis(label, dims.size());
    if (!axis || !steps_along(c[*axis], dims[*axis], layout)) return std::nullopt;
    return peer_of(frame, r, label, n, GridLayout{0, layout.box});
  }
  if (grain > 0 && !holding(c, dims, layout)) return std::nullopt;
  std::int64_t peer = 0;
  for (std::size_t k = dims.size(); k-- > 0;) {  // the slowest-varying dimension first
    const std::size_t d = fastest(frame, k, dims.size());
    const Holders h = holders(dims[d], layout);
    std::int64_t x = *holder_index(c[d], h) + label[d];
    if (layout.wraps(frame, d)) {
      // A side of 1: no neighbour along it, or the rank itself where the code exchanges along it all the same.
      if (h.count == 1 && label[d] != 0 && !layout.self_on_unit_side) return std::nullopt;
      x = modulo(x, h.count);
    } else if (x < 0 || x >= h.count) {
      return std::nullopt;
    }
    peer = peer * dims[d] + h.first + x * h.stride;
  }
  return peer;
}

Label stable_label(Frame frame, std::int64_t n, Label label, int repeat, bool back_first, const GridLayout& layout) {
  if (!frame_periodic(frame)) return label;
  for (std::size_t d = 0; d < static_cast<std::size_t>(frame_dims(frame)); ++d) {
    if (!layout.wraps(frame, d)) continue;
    const std::int64_t m = label_period(frame, n, d, layout);
    std::int64_t& v = label[d];
    if (2 * v == m) {
      v = (repeat % 2 == 0) == back_first ? -v : v;
    } else if (v > m / 2) {
      v -= m;
    }
  }
  return label;
}

std::vector<std::optional<Label>> stable_labels(Frame frame, std::int64_t r, std::int64_t n,
                                                std::span<const std::int64_t> peers, bool back_first,
                                                const GridLayout& layout) {
  std::map<Label, int> repeats;
  std::vector<std::optional<Label>> out;
  for (const std::int64_t peer : peers) {
    std::optional<Label> l = peer < 0 ? std::nullopt : label_of(frame, r, peer, n, layout);
    if (l) l = stable_label(frame, n, *l, repeats[*l]++, back_first, layout);
    out.push_back(l);
  }
  return out;
}

std::optional<std::int64_t> IndexedLaw::value_at(std::int64_t n, std::int64_t i, std::int64_t count) const {
  const std::optional<std::int64_t> b = base.integer_at(n);
  if (!b) return std::nullopt;
  if (step == 0) return b;
  const std::int64_t j = descending ? count - 1 - i : i;
  if (j < 0 || (progression == Progression::Power2 && j > 61)) return std::nullopt;
  return *b + step * (progression == Progression::Linear ? j : std::int64_t{1} << j);
}

std::string IndexedLaw::to_string() const {
  if (step == 0) return base.to_string();
  const std::string j = descending ? "(count-1-i)" : "i";
  std::string term = progression == Progression::Linear ? j : "2^" + j;
  if (step == -1) {
    term = "-" + term;
  } else if (step != 1) {
    term = std::to_string(step) + "*" + term;
  }
  const std::string b = base.to_string();
  if (b == "0") return term;
  return term.front() == '-' ? law_text(base) + " - " + term.substr(1) : law_text(base) + " + " + term;
}

namespace {

int bits(const Rational& q) {
  if (q.num == 0) return 0;
  const auto digits = [](std::int64_t v) { return static_cast<int>(std::bit_width(static_cast<std::uint64_t>(v))); };
  return 1 + digits(q.num < 0 ? -q.num : q.num) + (q.den > 1 ? digits(q.den) : 0);
}

int bits(const ExactLaw& law) {
  if (law.is_constant()) return bits(law.b);
  return 6 + bits(law.a) + bits(law.b);
}

}  // namespace

int description_length(const IndexedLaw& l) {
  return bits(l.base) + (l.step == 0 ? 0 : 2 + bits(Rational::make(l.step)));
}

int description_length(const Program& program) {
  int total = program.layout.grain > 0 ? 2 + bits(Rational::make(program.layout.grain)) : 0;
  // Which rank of a block holds the data, and a step to the rank itself along a side of 1: a bit each.
  total += (program.layout.last_holder ? 1 : 0) + (program.layout.self_on_unit_side ? 1 : 0) +
           (program.layout.along_step ? 1 : 0) + std::popcount(program.layout.open);
  if (program.layout.boxed()) {
    for (const std::int64_t side : program.layout.box) total += side > 0 ? 2 + bits(Rational::make(side)) : 0;
  }
  for (const Term& t : program.terms) {
    total += 2 + bits(t.count);
    for (const auto& slot : t.slots) {
      for (const IndexedLaw& l : slot) total += description_length(l);
    }
    for (const auto& peer : t.peers) total += peer ? 4 * static_cast<int>(peer->size()) : 0;
  }
  return total;
}

std::optional<std::size_t> label_axis(std::span<const IndexedLaw> label) {
  std::optional<std::size_t> axis;
  for (std::size_t d = 0; d < label.size(); ++d) {
    const IndexedLaw& l = label[d];
    if (l.step == 0 && l.base.is_constant() && l.base.b == Rational::make(0)) continue;
    if (axis) return std::nullopt;
    axis = d;
  }
  return axis;
}

std::optional<std::size_t> step_axis(const Program& program) {
  if (frame_dims(program.frame) < 2) return std::nullopt;
  std::optional<std::size_t> axis;
  for (const Term& t : program.terms) {
    for (const std::vector<IndexedLaw>& slot : t.slots) {
      if (slot.empty()) continue;
      const std::optional<std::size_t> a = label_axis(slot);
      if (!a || (axis && *axis != *a)) return std::nullopt;
      axis = a;
    }
  }
  return axis;
}

bool constant_in_n(const Program& p) {
  for (const Term& t : p.terms) {
    if (!t.count.is_constant()) return false;
    for (const auto& slot : t.slots) {
      for (const IndexedLaw& l : slot) {
        if (!l.base.is_constant()) return false;
      }
    }
  }
  return true;
}

std::vector<Entry> Program::generate(std::int64_t r, std::int64_t n) const {
  std::vector<Entry> out;
  if (!holds_data(frame, r, n, layout)) return out;  // a rank without data at this grain makes none of the calls
  for (std::uint32_t t = 0; t < terms.size(); ++t) {
    const Term& term = terms[t];
    const std::optional<std::int64_t> count = term.count.integer_at(n);
    if (!count) {  // below zero, no call (as count_value() reads a count)
      throw ModelError("the repetition count " + term.count.to_string() +
                       " is not a whole number at n = " + std::to_string(n) + "; the model cannot be evaluated there");
    }
    // Bounded before anything is made: a count law taken far past its runs would fill the memory (2^20 calls of 48
    // bytes each per rank and instance are far more than any traced phase holds).
    if (*count > kMostCallsPerRank || static_cast<std::int64_t>(out.size()) + *count > kMostCallsPerRank) {
      throw ModelError("the repetition count " + term.count.to_string() + " gives rank " + std::to_string(r) + " " +
                       std::to_string(*count) + " calls in one instance at n = " + std::to_string(n) +
                       ", more than p3s predicts for one rank (" + std::to_string(kMostCallsPerRank) +
                       "); the law does not hold this far from its runs");
    }
    for (std::int64_t i = 0; i < *count; ++i) {
      Entry e;
      e.term = t;
      e.index = i;
      if (frame == Frame::Expression) {
        for (std::size_t s = 0; s < term.peers.size() && s < e.peers.size(); ++s) {
          if (!term.peers[s]) continue;
          const std::optional<std::int64_t> p = term.peers[s]->evaluate(n, r);
          if (p && *p >= 0 && *p < n) e.peers[s] = *p;
        }
        if (keep_nulls || !e.null()) out.push_back(e);
        continue;
      }
      for (std::size_t s = 0; s < term.slots.size() && s < e.peers.size(); ++s) {
        if (term.slots[s].empty()) continue;
        Label label{0, 0, 0};
        for (std::size_t d = 0; d < term.slots[s].size(); ++d) {
          const std::optional<std::int64_t> v = term.slots[s][d].value_at(n, i, *count);
          if (!v) {
            throw ModelError("the peer law " + term.slots[s][d].to_string() + " is not a whole number at n = " +
                             std::to_string(n) + "; the model cannot be evaluated there");
          }
          label[d] = *v;
        }
        if (const std::optional<std::int64_t> p = peer_of(frame, r, label, n, layout)) e.peers[s] = *p;
      }
      if (keep_nulls || !e.null()) out.push_back(e);
    }
  }
  return out;
}

std::string Program::to_string() const {
  if (terms.empty()) return "none";
  std::string out;
  for (const Term& t : terms) {
    if (!out.empty()) out += "; ";
    std::string slots_text;
    for (std::size_t s = 0; s < t.slots.size(); ++s) {
      slots_text += (s ? " / " : "") + label_text(frame, t.slots[s]);
    }
    for (std::size_t s = 0; s < t.peers.size(); ++s) {
      slots_text += (s ? " / " : "") + (t.peers[s] ? t.peers[s]->to_string() : std::string("null"));
    }
    const bool single = t.count.is_constant() && t.count.b == Rational::make(1);
    out += single ? slots_text : "[" + slots_text + " for i < " + t.count.to_string() + "]";
  }
  if (keep_nulls) out += " (null where absent)";
  if (layout.boxed()) {
    std::string box;
    for (int d = 0; d < frame_dims(frame); ++d)
      box += (d ? ":" : "") + std::to_string(layout.box[static_cast<std::size_t>(d)]);
    out += " (the grid cut for a " + box + " box)";
  }
  if (layout.grain > 0) {
    const std::string side = std::to_string(layout.grain);
    std::string cube = side;
    for (int d = 1; d < frame_dims(frame); ++d) cube += "x" + side;
    if (layout.along_step) {
      out += std::string(" (along a side longer than ") + side + ", the " + (layout.last_holder ? "last" : "first") +
             " rank of each block of it, one step)";
    } else {
      out += " (the ranks holding a " + cube + " grid" + (layout.last_holder ? ", the last of each block" : "") +
             ", steps between them)";
    }
  }
  if (layout.self_on_unit_side) out += " (a side of 1: to itself)";
  for (std::size_t d = 0; d < static_cast<std::size_t>(frame_dims(frame)); ++d) {
    if (frame_periodic(frame) && !layout.wraps(frame, d)) out += " (dimension " + std::to_string(d) + " open)";
  }
  return out;
}

bool RankPredicate::holds(std::int64_t r, std::int64_t n) const {
  bool v = true;
  switch (kind) {
    case Kind::Always:
      break;
    case Kind::Equal: {
      const std::optional<std::int64_t> x = a.integer_at(n);
      v = x && r == *x;
      break;
    }
    case Kind::Less:
      v = static_cast<double>(r) < a.value_at(static_cast<double>(n));
      break;
    case Kind::ModEqual: {
      const std::optional<std::int64_t> m = k.integer_at(n);
      const std::optional<std::int64_t> x = a.integer_at(n);
      v = m && x && *m > 0 && modulo(r, *m) == modulo(*x, *m);
      break;
    }
    case Kind::DivEqual: {
      const std::optional<std::int64_t> m = k.integer_at(n);
      const std::optional<std::int64_t> x = a.integer_at(n);
      v = m && x && *m > 0 && r / *m == *x;
      break;
    }
    case Kind::Holds:
      v = holds_data(frame, r, n, layout);
      break;
  }
  return v != negate;
}

std::string RankPredicate::to_string() const {
  switch (kind) {
    case Kind::Always:
      return negate ? "never" : "all ranks";
    case Kind::Equal:
      return std::string("r ") + (negate ? "!=" : "==") + " " + a.to_string();
    case Kind::Less:
      return std::string("r ") + (negate ? ">=" : "<") + " " + a.to_string();
    case Kind::ModEqual:
      return "r mod " + law_text(k) + (negate ? " != " : " == ") + a.to_string();
    case Kind::DivEqual:
      return "r / " + law_text(k) + (negate ? " != " : " == ") + a.to_string();
    case Kind::Holds: {
      const std::string side = std::to_string(layout.grain);
      std::string cube = side;
      for (int d = 1; d < frame_dims(frame); ++d) cube += "x" + side;
      return std::string("r ") + (negate ? "holds no part of" : "holds part of") + " a " + cube + " grid on " +
             std::string(frame_name(frame)) + (layout.last_holder ? " (the last rank of each block)" : "");
    }
  }
  return "?";
}

std::vector<Entry> Pattern::generate(std::int64_t r, std::int64_t n, std::size_t* which) const {
  for (std::size_t c = 0; c < cases.size(); ++c) {
    if (!cases[c].when.holds(r, n)) continue;
    if (which != nullptr) *which = c;
    return cases[c].program.generate(r, n);
  }
  if (which != nullptr) *which = cases.size();
  return {};
}

std::optional<Unevaluable> Pattern::unevaluable_at(std::int64_t n) const {
  for (const Case& c : cases) {
    bool used = false;
    for (std::int64_t r = 0; r < n && !used; ++r) used = c.when.holds(r, n);
    if (!used) continue;
    for (const Term& t : c.program.terms) {
      const std::optional<std::int64_t> count = t.count.integer_at(n);
      if (!count) return Unevaluable{"the repetition count", t.count, true};
      // A term that makes no call at n needs no peer there; a count below zero is none (negative_laws() says so).
      if (*count <= 0) continue;
      for (const auto& slot : t.slots) {
        for (const IndexedLaw& l : slot) {
          if (!l.base.integer_at(n)) return Unevaluable{"the peer law", l.base, false};
        }
      }
    }
  }
  return std::nullopt;
}

std::string Pattern::to_string() const {
  if (cases.size() == 1 && cases[0].when.kind == RankPredicate::Kind::Always) return cases[0].program.to_string();
  std::string out;
  for (const Case& c : cases) {
    if (!out.empty()) out += " | ";
    out += c.when.to_string() + ": " + c.program.to_string();
  }
  return out;
}

void to_json(json& j, const Pattern& p) {
  json cases = json::array();
  for (const Pattern::Case& c : p.cases) {
    json terms = json::array();
    for (const Term& t : c.program.terms) {
      json slots = json::array();
      for (const auto& slot : t.slots) {
        json dims = json::array();
        for (const IndexedLaw& l : slot) dims.push_back(indexed_to_json(l));
        slots.push_back(std::move(dims));
      }
      json jt{{"count", to_json(t.count)}, {"slots", std::move(slots)}};
      if (!t.peers.empty()) {
        json peers = json::array();
        for (const auto& e : t.peers) peers.push_back(e ? json(e->to_string()) : json(nullptr));
        jt["peers"] = std::move(peers);
      }
      terms.push_back(std::move(jt));
    }
    json jc{{"when", rank_predicate_json(c.when)},
            {"frame", frame_name(c.program.frame)},
            {"keep_nulls", c.program.keep_nulls},
            {"slots", c.program.slots},
            {"terms", std::move(terms)}};
    if (c.program.layout.grain > 0) jc["grain"] = c.program.layout.grain;
    if (c.program.layout.boxed()) jc["box"] = c.program.layout.box;
    if (c.program.layout.last_holder) jc["last_holder"] = true;
    if (c.program.layout.self_on_unit_side) jc["self_on_unit_side"] = true;
    if (c.program.layout.along_step) jc["along_step"] = true;
    if (c.program.layout.open != 0) jc["open"] = c.program.layout.open;
    cases.push_back(std::move(jc));
  }
  j = json{{"cases", std::move(cases)}, {"equation", p.to_string()}};
}

Pattern pattern_from_json(const json& j) {
  Pattern p;
  try {
    for (const json& jc : j.at("cases")) {
      Pattern::Case c;
      c.when = rank_predicate_from_json(jc.at("when"));
      const std::string frame = jc.at("frame").get<std::string>();
      const std::optional<Frame> f = frame_from_name(frame);
      if (!f) throw InputError("unknown frame '" + frame + "' in a model pattern");
      c.program.frame = *f;
      c.program.keep_nulls = jc.at("keep_nulls").get<bool>();
      c.program.slots = jc.at("slots").get<int>();
      if (c.program.slots < 1 || c.program.slots > 2) throw InputError("a model pattern with other than 1 or 2 slots");
      c.program.layout.grain = jc.value("grain", std::int64_t{0});
      if (c.program.layout.grain < 0) throw InputError("a negative grain in a model pattern");
      c.program.layout.last_holder = jc.value("last_holder", false);
      c.program.layout.self_on_unit_side = jc.value("self_on_unit_side", false);
      c.program.layout.along_step = jc.value("along_step", false);
      const int open = jc.value("open", 0);
      if (open < 0 || open >= (1 << frame_dims(c.program.frame)) || (open != 0 && !frame_periodic(c.program.frame))) {
        throw InputError("open dimensions " + std::to_string(open) + " that the model pattern's " +
                         std::string(frame_name(c.program.frame)) + " frame does not have");
      }
      c.program.layout.open = static_cast<std::uint8_t>(open);
      if (c.program.layout.along_step && c.program.layout.grain == 0) {
        throw InputError("a model pattern steps along one dimension of a grain without a grain");
      }
      if (jc.contains("box")) {
        c.program.layout.box = jc.at("box").get<std::array<std::int64_t, 3>>();
        const auto& b = c.program.layout.box;
        const int dims = frame_dims(c.program.frame);
        if (dims < 2 || b[0] < 1 || b[1] < 1 || (dims == 3 ? b[2] < 1 : b[2] != 0)) {
          throw InputError("a box in a model pattern needs a side of at least 1 per dimension of a grid frame");
        }
      }
      for (const json& jt : jc.at("terms")) {
        Term t;
        t.count = exact_law_from_json(jt.at("count"));
        for (const json& js : jt.at("slots")) {
          std::vector<IndexedLaw> slot;
          for (const json& jl : js) slot.push_back(indexed_from_json(jl));
          // A label has a law per dimension of its frame, and a call at most two slots (an MPI_Sendrecv's).
          if (slot.size() > static_cast<std::size_t>(frame_dims(c.program.frame)) || t.slots.size() >= 2) {
            throw InputError("a model pattern's term has more slots or label dimensions than its frame has");
          }
          t.slots.push_back(std::move(slot));
        }
        for (const json& jp : jt.value("peers", json::array())) {
          if (t.peers.size() >= 2) throw InputError("a model pattern's term has more than 2 peers");
          t.peers.push_back(jp.is_null() ? std::nullopt : std::optional(Expression::parse(jp.get<std::string>())));
        }
        c.program.terms.push_back(std::move(t));
      }
      p.cases.push_back(std::move(c));
    }
  } catch (const json::exception& e) {
    throw InputError(std::string("a model pattern is malformed: ") + e.what());
  }
  return p;
}

}  // namespace p3s::modeler
