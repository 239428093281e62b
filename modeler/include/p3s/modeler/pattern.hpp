// SPDX-License-Identifier: BSD-3-Clause
// Communication patterns: which peers a rank r talks to in a group of communications, as a function of r and of
// the process count n (the method's SLT destinations). A pattern is a list of cases, each a rank predicate and a
// program; a program is a frame (how a peer is written relative to r) and a list of terms, each one or a counted
// repetition of communications whose labels are exact laws in n and in the repetition index.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "p3s/modeler/expression.hpp"
#include "p3s/modeler/law.hpp"

namespace p3s::modeler {

/// How a peer is written relative to the rank r that talks to it (its label).
enum class Frame : std::uint8_t {
  Offset,    ///< peer - r; no peer outside [0, n) (the method's static displacements, non-periodic)
  Ring,      ///< peer - r modulo n (periodic displacements)
  Grid2,     ///< coordinate difference on the row-major MPI_Dims_create(n, 2) grid; no peer outside the grid
  Torus2,    ///< the same grid, periodic in both dimensions
  Grid3,     ///< as Grid2 on MPI_Dims_create(n, 3)
  Torus3,    ///< as Torus2 on MPI_Dims_create(n, 3)
  Xor,       ///< peer XOR r (hypercube, butterfly); no peer at or beyond n
  Absolute,  ///< the peer itself (a master, a root)
  /// The peer is an integer expression in r and n found by search (the fallback when no structured frame
  /// fits: a binomial tree's parent r & (r - 1), a mirror n - 1 - r); single terms only.
  Expression,
  Grid2C,   ///< as Grid2, numbered column-major (the first dimension varies fastest, as Fortran codes number)
  Torus2C,  ///< as Torus2, column-major
  Grid3C,   ///< as Grid3, column-major
  Torus3C,  ///< as Torus3, column-major
  /// peer - transpose(r) on the 2^floor(k/2) x 2^ceil(k/2) grid of n = 2^k ranks (a sparse solver's layout): a square
  /// grid's transposed position, or with twice as many columns as rows the transposed position of the pair r/2,
  /// keeping r's low bit; none where n is no power of two.
  Transpose,
};

[[nodiscard]] std::string_view frame_name(Frame frame) noexcept;
[[nodiscard]] std::optional<Frame> frame_from_name(std::string_view name) noexcept;
/// Label components of a frame (1, or the grid's dimensions).
[[nodiscard]] int frame_dims(Frame frame) noexcept;
/// Whether labels wrap around (ring, tori): a label is then taken modulo the period of its dimension.
[[nodiscard]] bool frame_periodic(Frame frame) noexcept;

/// A label: frame_dims(frame) integers.
using Label = std::array<std::int64_t, 3>;

/// How a grid frame's process grid is laid out at n, and which of its ranks take part (a Program's):
/// - `box`: all 0 for MPI_Dims_create(n, d) (the library's rule: dims.hpp); else the application's own
///   factorisation of n for a box of these proportions, the one with the least surface per rank (as particle
///   codes cut their domain: box_grid());
/// - `grain`: 0 for every rank; else the side of a global grid (grain^d points) block-distributed over the process
///   grid, of which only the ranks holding data take part, a label counting strides between them (a multigrid
///   code's coarse levels: 2^3 points on 4 x 4 x 4 processes are held by every other rank along each side);
/// - `last_holder`: with a grain, which rank of each block of stride ranks holds the data: the first (a code giving
///   coordinate c the points ceil(c g / p) .. ceil((c + 1) g / p) - 1), or the last (floor instead of ceil, the
///   more common block distribution: of 4 processes sharing 2 points, coordinates 1 and 3 hold them);
/// - `self_on_unit_side`: in a periodic grid, a step along a side of one process reaches the rank itself (what
///   MPI_Cart_shift answers there, and what a code that exchanges along every side whatever its length sends to),
///   rather than no one (a code that skips such sides).
/// - `along_step`: with a grain, a step along one dimension is made by the ranks holding data along that dimension
///   alone (whatever they hold along the others), to the neighbour one process away, and only where that side has
///   more processes than the grain: what spreads a coarse grid's data back over the finer level's ranks (a
///   multigrid code's prolongation, from the holders to their neighbours that hold none, who receive it: the first
///   rank of each block where the last one holds, with a stride of 2).
/// - `open`: in a periodic frame, the dimensions (bit d for dimension d) along which the grid does not wrap, as
///   MPI_Cart_create makes a dimension whose `periods` entry is false (a wall, a free surface): a rank at either end
///   has no neighbour beyond it, and a step there is a null communication.
struct GridLayout {
  std::int64_t grain = 0;
  std::array<std::int64_t, 3> box{0, 0, 0};
  bool last_holder = false;
  bool self_on_unit_side = false;
  bool along_step = false;
  std::uint8_t open = 0;
  [[nodiscard]] bool boxed() const noexcept { return box[0] > 0; }
  /// Whether labels along dimension d of `frame` wrap around.
  [[nodiscard]] bool wraps(Frame frame, std::size_t d) const noexcept {
    return frame_periodic(frame) && ((open >> d) & 1U) == 0;
  }
  friend auto operator<=>(const GridLayout&, const GridLayout&) = default;
};

/// The factorisation of n into `dims` (2 or 3) sides with the least surface per rank for a box of proportions
/// `box`: the sum over the pairs of dimensions of (box_a / p_a)(box_b / p_b) in 3-D, of box_a / p_a in 2-D; the
/// first such in order of p_0, then p_1 ascending (a particle code's rule for its processor grid). Sides in dimension
/// order.
[[nodiscard]] std::vector<int> box_grid(std::int64_t n, int dims, const std::array<std::int64_t, 3>& box);
/// The process grid of a grid frame at n under a layout: MPI_Dims_create's, or the box's.
[[nodiscard]] std::vector<int> grid_sides(Frame frame, std::int64_t n, const GridLayout& layout = {});
/// The coordinates of rank r on a grid of these sides, numbered as the frame numbers it.
[[nodiscard]] Label grid_coords(Frame frame, std::int64_t r, std::span<const int> sides);

/// The label of `peer` seen from rank r at n, or nullopt when the frame cannot express it (Xor never fails;
/// grids always express a difference). Periodic frames give the representative in [0, size). With a grain, a grid
/// label counts strides between the ranks that hold data, and a rank or peer that holds none has no label.
[[nodiscard]] std::optional<Label> label_of(Frame frame, std::int64_t r, std::int64_t peer, std::int64_t n,
                                            const GridLayout& layout = {});
/// The peer a label designates from rank r at n; nullopt when there is none (off a non-periodic grid or range,
/// or along a periodic dimension of side 1, where a code has no neighbour to talk to: a null communication,
/// MPI_PROC_NULL in the program; with a grain, also from a rank that holds no data).
[[nodiscard]] std::optional<std::int64_t> peer_of(Frame frame, std::int64_t r, const Label& label, std::int64_t n,
                                                  const GridLayout& layout = {});
/// Whether rank r holds data at n under the layout's grain: along a dimension of p processes, the ranks at
/// multiples of the stride p / min(p, grain) do (every rank when there is no grain or the frame is no grid).
[[nodiscard]] bool holds_data(Frame frame, std::int64_t r, std::int64_t n, const GridLayout& layout);
/// The points of the face across dimension `axis` of a rank's block at n, relative to the global face: the product
/// over the other dimensions of 1 / p, or with a grain of grain / p (at least 1: a rank holds one plane where there
/// are more processes than points) plus the ghost layers `margins` along those dimensions (the lower first).
[[nodiscard]] double face_points(Frame frame, const GridLayout& layout, std::int64_t n, std::size_t axis,
                                 const std::array<int, 2>& margins = {0, 0});
/// The period of label component d in a periodic frame at n: the ring's n, a torus's side, or with a grain the
/// ranks holding data along the side.
[[nodiscard]] std::int64_t label_period(Frame frame, std::int64_t n, std::size_t d, const GridLayout& layout = {});

/// The labels of a rank's successive peers (-1: none) such that the same neighbour has the same label at every n:
/// periodic components written closest to zero (-1, not m - 1); on a side of 2, where a step either way reaches the
/// same rank, two equal labels in the list are taken as a step each way: back first (the order MPI_Cart_shift
/// gives a send), or forward first (its receive) when `back_first` is false. nullopt for no peer.
[[nodiscard]] std::vector<std::optional<Label>> stable_labels(Frame frame, std::int64_t r, std::int64_t n,
                                                              std::span<const std::int64_t> peers,
                                                              bool back_first = true, const GridLayout& layout = {});
/// The same rule for one label, the `repeat`-th time (from 0) the list names it.
[[nodiscard]] Label stable_label(Frame frame, std::int64_t n, Label label, int repeat, bool back_first = true,
                                 const GridLayout& layout = {});

/// An integer that depends on n and, inside a repetition of `count` communications, on the index i:
/// base(n) + step * p(j) with p(j) = j (linear) or 2^j (power of two), j = i, or count - 1 - i when descending.
struct IndexedLaw {
  enum class Progression : std::uint8_t { Linear, Power2 };
  ExactLaw base;
  std::int64_t step = 0;  ///< 0: the same value for every i
  Progression progression = Progression::Linear;
  bool descending = false;

  [[nodiscard]] static IndexedLaw constant(std::int64_t value) { return {ExactLaw::constant(Rational::make(value))}; }
  /// The value at n for repetition i of count; nullopt when base is not an integer at n.
  [[nodiscard]] std::optional<std::int64_t> value_at(std::int64_t n, std::int64_t i, std::int64_t count) const;
  /// "2^i", "dims2(n)[1]", "i + 1", "2^(count-1-i)".
  [[nodiscard]] std::string to_string() const;
  friend bool operator==(const IndexedLaw&, const IndexedLaw&) = default;
};

/// One communication (count 1) or a counted repetition of communications of the same form. Each slot (the
/// send and receive of an MPI_Sendrecv are two) has a label law per frame dimension, or none when the slot is
/// always a null communication.
struct Term {
  ExactLaw count = ExactLaw::constant(Rational::make(1));
  std::vector<std::vector<IndexedLaw>> slots;  ///< [slot][dimension]; an empty slot is always null
  /// Frame::Expression: the peer per slot (none: always null); a peer outside 0..n-1 is a null communication.
  std::vector<std::optional<modeler::Expression>> peers;
  friend bool operator==(const Term&, const Term&) = default;
};

/// The most calls p3s predicts for one rank in one instance of a group (2^20, far more than any traced phase holds):
/// a law that gives more is taken too far from its runs, and is refused rather than made until memory runs out.
inline constexpr std::int64_t kMostCallsPerRank = std::int64_t{1} << 20;

/// A generated communication: its peers per slot (-1: null) and its place in the program.
struct Entry {
  std::array<std::int64_t, 2> peers{-1, -1};
  std::uint32_t term = 0;
  std::int64_t index = 0;      ///< repetition index within the term
  std::int64_t iteration = 0;  ///< in a loop whose iterations repeat the program (GroupModel::iterations): which
  [[nodiscard]] bool null() const noexcept { return peers[0] < 0 && peers[1] < 0; }
};

/// The communications of one group for every rank: a frame and terms.
struct Program {
  Frame frame = Frame::Offset;
  /// A communication without peer stays in the rank's list as a null one (the call is made with
  /// MPI_PROC_NULL) rather than being left out (the call is not made).
  bool keep_nulls = false;
  int slots = 1;
  GridLayout layout;  ///< grid frames: the process grid's factorisation and the ranks that take part
  std::vector<Term> terms;

  /// The entries of rank r at n. @throws p3s::ModelError when a law is not an integer at n.
  [[nodiscard]] std::vector<Entry> generate(std::int64_t r, std::int64_t n) const;
  [[nodiscard]] std::string to_string() const;
  friend bool operator==(const Program&, const Program&) = default;
};

/// How long a program is to write down, in bits: what decides between programs that reproduce the same runs in
/// different frames (minimum description length). A rational costs nothing when 0, else a bit for its sign and
/// the binary digits of its numerator and denominator; a law in n adds 6 bits for its basis to its coefficient
/// and constant, so `dims2(n)[1]` (8) is briefer than `-2^floor(log2(n)/2) + 3` (12); a progression in the
/// repetition index adds its step and 2 bits; an expression costs 4 bits per node; every term 2 bits; a grain and
/// each side of a box their digits and 2 bits.
[[nodiscard]] int description_length(const Program& program);

/// The bits of one label law, as description_length() counts them.
[[nodiscard]] int description_length(const IndexedLaw& law);

/// The one dimension a label's laws step along (the only one not 0 at every n and repetition), or nullopt.
[[nodiscard]] std::optional<std::size_t> label_axis(std::span<const IndexedLaw> label);
/// The one dimension every term and slot of a grid program steps along (label_axis() of each), or nullopt: the
/// axis of a halo exchange's group.
[[nodiscard]] std::optional<std::size_t> step_axis(const Program& program);

/// Whether every count and label of the program is the same at every n (offsets constant in its frame).
[[nodiscard]] bool constant_in_n(const Program& program);

/// Which ranks a case applies to.
struct RankPredicate {
  enum class Kind : std::uint8_t {
    Always,
    Equal,     ///< r == a(n)
    Less,      ///< r < a(n)
    ModEqual,  ///< r mod k(n) == a(n)
    DivEqual,  ///< r / k(n) == a(n): the a-th block of k ranks (a column of a column-major grid, a row of a row-major
               ///< one)
    Holds,     ///< r holds data on the grid of `frame` under `layout` (holds_data(): a coarse grid's holders)
  };
  Kind kind = Kind::Always;
  ExactLaw a;
  ExactLaw k;
  bool negate = false;
  Frame frame = Frame::Offset;  ///< Holds only
  GridLayout layout = {};       ///< Holds only
  [[nodiscard]] bool holds(std::int64_t r, std::int64_t n) const;
  [[nodiscard]] std::string to_string() const;
  friend bool operator==(const RankPredicate&, const RankPredicate&) = default;
};

/// A law of a pattern that cannot be evaluated at some n.
struct Unevaluable {
  std::string what;  ///< "the repetition count", "the peer law"
  ExactLaw law;
  bool count = false;  ///< a repetition count: it must not be negative either
};

/// A pattern: the first case whose predicate holds gives a rank's program.
struct Pattern {
  struct Case {
    RankPredicate when;
    Program program;
    friend bool operator==(const Case&, const Case&) = default;
  };
  std::vector<Case> cases;

  /// The entries of rank r at n (none when no case applies); the case index is stored in `which` when given.
  [[nodiscard]] std::vector<Entry> generate(std::int64_t r, std::int64_t n, std::size_t* which = nullptr) const;
  /// The first count or label law, of a case some rank uses at n, that is not a whole number there (generate()
  /// would throw); nullopt when every rank can be generated. Costs O(n) per case.
  [[nodiscard]] std::optional<Unevaluable> unevaluable_at(std::int64_t n) const;
  [[nodiscard]] std::string to_string() const;
  friend bool operator==(const Pattern&, const Pattern&) = default;
};

/// The predicates that split ranks into classes, simplest first: r == 0, r == n - 1, r == n/2, r < n/2, the
/// first row of the MPI_Dims_create(n, 2) grid, even ranks, its first and last columns; then, for the same grid
/// numbered column-major, its first and last columns and rows, and the row-major grid's last row (the ranks that
/// hold a boundary of the global domain: those that exchange a boundary face's integral along it).
[[nodiscard]] std::vector<RankPredicate> rank_predicates();
/// The ranks holding a coarse grid's data, on a grid frame under a layout with a grain (RankPredicate::Holds).
[[nodiscard]] RankPredicate holders_predicate(Frame frame, const GridLayout& layout);

/// What one rank did in a group in one run: per communication its peers per slot (-1: null).
struct ListObservation {
  std::int64_t n = 0;
  std::int64_t r = 0;
  std::vector<std::array<std::int64_t, 2>> entries;
  /// Optional, one per entry: what makes calls the same exchange at every n (their function and tag), so that a
  /// grid must step them along the same dimension at every n (suggested_boxes()).
  std::vector<std::uint64_t> keys = {};
  friend auto operator<=>(const ListObservation&, const ListObservation&) = default;
};

/// Learns the simplest pattern that reproduces every observation exactly: each frame in order, position-
/// aligned (null communications kept) or merged across ranks (absent communications), single terms or one
/// counted repetition; when no single program fits, the ranks are split by a predicate and each side learnt.
/// Returns nullopt when nothing fits; `why` then says what was tried. `search` bounds the expression search that
/// is tried last. Counts and labels are laws that are whole numbers at `whole.n` and at the process counts the
/// observations suggest whenever such laws reproduce them (fit_exact()).
[[nodiscard]] std::optional<Pattern> learn_pattern(std::span<const ListObservation> observations, int slots,
                                                   std::string* why = nullptr, const SearchOptions& search = {},
                                                   const WholeAt& whole = {});

/// The proportions of boxes whose least-surface grid (box_grid()) is, at every observed n, a grid of the frame on
/// which every observed peer is a step of one along one side: what an application that cuts its domain itself
/// (a particle code's rule for its processor grid) for a box that is not a cube may have cut. Given the peers of all of
/// a phase's groups, rank by rank, as one observation per rank and n; each side at most 8, the simplest first (the
/// smallest largest side, then sum), at most 8 of them. Which one, if any, is the phase's grid is for its groups to
/// tell: in which their steps are constant.
[[nodiscard]] std::vector<std::array<std::int64_t, 3>> suggested_boxes(Frame frame,
                                                                       std::span<const ListObservation> observations);

/// The pattern of one case whose labels and counts are constant in n in `frame` on the grid `box` cuts (all 0:
/// MPI_Dims_create's), with the grain the observations suggest if any, or nullopt: what a phase's other groups
/// make likely where learn_pattern() found a law in n in another frame (a 3-D halo's steps along z, absent where
/// the side is 1, are also a repetition counted in dims3(n)[2] on a 2-D grid; on a box's grid they are absent at
/// 8 ranks, cut 4 x 2 x 1, which the steps along x alone tell).
[[nodiscard]] std::optional<Pattern> learn_constant_pattern(std::span<const ListObservation> observations, int slots,
                                                            Frame frame, const std::array<std::int64_t, 3>& box,
                                                            const WholeAt& whole = {});

/// The pattern of one case in `frame` on the grid `box` cuts, with the grain the observations suggest if any: one
/// whose labels and counts are constant in n where there is one, else the first that reproduces them (counts that
/// are laws in n: a second exchange along a side only where it is longer than 2); nullopt where none does.
[[nodiscard]] std::optional<Pattern> learn_pattern_on(std::span<const ListObservation> observations, int slots,
                                                      Frame frame, const std::array<std::int64_t, 3>& box,
                                                      const WholeAt& whole = {});

[[nodiscard]] nlohmann::json rank_predicate_json(const RankPredicate& p);
/// @throws p3s::InputError on an unknown predicate.
[[nodiscard]] RankPredicate rank_predicate_from_json(const nlohmann::json& j);

void to_json(nlohmann::json& j, const Pattern& p);
[[nodiscard]] Pattern pattern_from_json(const nlohmann::json& j);

}  // namespace p3s::modeler
