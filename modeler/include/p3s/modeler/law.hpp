// SPDX-License-Identifier: BSD-3-Clause
// Scaling laws in the process count n: the bases g(n), exact laws a*g(n) + b with rational coefficients for
// integer quantities (weights, peers, counts, communicator sizes), and regression laws for real-valued ones
// (message bytes, work).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace p3s::modeler {

// ---------------------------------------------------------------------------------------------------------------
// Bases

/// A function g(n) of the process count, in order of simplicity: fitters prefer earlier bases when several fit.
enum class Basis : std::uint8_t {
  One,                ///< 1
  N,                  ///< n
  NMinus1,            ///< n-1 (affine in n: used by regression laws such as c/(n-1), never by exact laws)
  Log2,               ///< log2(n)
  FloorLog2,          ///< floor(log2(n))
  CeilLog2,           ///< ceil(log2(n))
  Sqrt,               ///< sqrt(n)
  FloorSqrt,          ///< floor(sqrt(n))
  CeilSqrt,           ///< ceil(sqrt(n))
  Cbrt,               ///< cbrt(n)
  FloorCbrt,          ///< floor(cbrt(n))
  Pow2FloorHalfLog2,  ///< 2^floor(log2(n)/2)
  Pow2CeilHalfLog2,   ///< 2^ceil(log2(n)/2)
  Dims2Major,         ///< dims2(n)[0], the larger side of MPI_Dims_create(n, 2)
  Dims2Minor,         ///< dims2(n)[1], the smaller side of MPI_Dims_create(n, 2)
  Dims3First,         ///< dims3(n)[0], the largest of MPI_Dims_create(n, 3)
  Dims3Second,        ///< dims3(n)[1]
  Dims3Third,         ///< dims3(n)[2], the smallest of MPI_Dims_create(n, 3)
  NLog2N,             ///< n*log2(n)
  NSquared,           ///< n^2
  FloorHalfLog2,      ///< floor(log2(n)/2), log2 of the shorter side of a 2^floor x 2^ceil grid
  CeilHalfLog2,       ///< ceil(log2(n)/2), log2 of its longer side (recursive halving along a row)
  Dims3Face0,         ///< dims3(n)[1]*dims3(n)[2], the processes of a face across the first dimension of a 3-D grid
  Dims3Face1,         ///< dims3(n)[0]*dims3(n)[2], across the second (a halo face of a block is 1 / this of the whole)
  Dims3Face2,         ///< dims3(n)[0]*dims3(n)[1], across the third
  /// [dims2(n)[0] > 2]: 1 where the larger side of MPI_Dims_create(n, 2) has more than 2 processes, else 0. On a
  /// periodic side of 1 or 2 the neighbours either way are one rank; beyond, a code that exchanges with each of them
  /// makes a second exchange (a particle code's migration both ways): a count that steps up once, not a trend.
  Dims2MajorOver2,
  Dims2MinorOver2,   ///< [dims2(n)[1] > 2]
  Dims3FirstOver2,   ///< [dims3(n)[0] > 2]
  Dims3SecondOver2,  ///< [dims3(n)[1] > 2]
  Dims3ThirdOver2,   ///< [dims3(n)[2] > 2]
};

/// Every basis, simplest first.
[[nodiscard]] std::span<const Basis> all_bases() noexcept;
/// Whether a basis describes counts only (floor/ceil(log2(n)/2): steps along a side of a power-of-two grid), never
/// a trend of measured values such as sizes or work, which it would only stair-step.
[[nodiscard]] bool counts_only(Basis basis) noexcept;
/// For a face basis (Dims3Face0..2, the product p_b p_c of two sides of MPI_Dims_create(n, 3)): 1/p_b + 1/p_c, the
/// rim of that face; NaN for other bases.
[[nodiscard]] double face_rim(Basis face, double n);
/// For a face basis, the two sides of MPI_Dims_create(n, 3) it multiplies (p_b, p_c, the lower dimension first);
/// nullopt for other bases or where n is no whole number >= 1.
[[nodiscard]] std::optional<std::array<double, 2>> face_sides(Basis face, double n);
/// Whether a basis is whether a side is longer than 2 ([dims3(n)[0] > 2] and the like).
[[nodiscard]] bool longer_than_two(Basis basis) noexcept;
/// The side of a grid a basis follows: for dims2(n)[d], dims3(n)[d] and their [... > 2] indicators, the grid's
/// dimensions (2 or 3) and d; nullopt for other bases.
[[nodiscard]] std::optional<std::pair<int, std::size_t>> side_of(Basis basis) noexcept;
/// The basis of the same kind (the side itself, or its indicator) for side d of a grid of `dims` dimensions.
/// @throws p3s::ModelError when `basis` follows no side (side_of()) or d is not a dimension of that grid.
[[nodiscard]] Basis on_side(Basis basis, std::size_t d);
/// Whether a basis describes message sizes only (the processes of a 3-D grid's face: a block's halo across a
/// dimension), never a count, a label or a trend of work: exact laws and regressions over all bases leave it out,
/// and only the sizes on a 3-D grid ask for it.
[[nodiscard]] bool sizes_only(Basis basis) noexcept;

/// The readable name of a basis as it appears in printed equations and in JSON ("sqrt(n)", "dims2(n)[1]").
[[nodiscard]] std::string_view basis_name(Basis basis) noexcept;

/// The basis with this name, or nullopt when no basis is called that.
[[nodiscard]] std::optional<Basis> basis_from_name(std::string_view name) noexcept;

/// True when g(n) is an integer at every integer n >= 1 (floor/ceil forms, powers of two, dims, n, n^2).
[[nodiscard]] bool basis_is_integral(Basis basis) noexcept;
/// True when g is the floor or ceil of log2(n), sqrt(n) or cbrt(n) and that is not a whole number at n
/// (floor(sqrt(n)) at 10, not at 9). The grid sides (dims, 2^floor(log2(n)/2), ...) never count as rounding.
[[nodiscard]] bool basis_rounds_at(Basis basis, std::int64_t n) noexcept;

/// g(n). Exact for integer n (floor/ceil forms use integer arithmetic); a quiet NaN where g is undefined:
/// n < 1, or a dims basis at a non-integral n.
[[nodiscard]] double basis_value(Basis basis, double n);

// ---------------------------------------------------------------------------------------------------------------
// Samples

/// One observation of a quantity at process count n.
struct Sample {
  double n = 0;      ///< process count
  double value = 0;  ///< the quantity measured at n
};

// ---------------------------------------------------------------------------------------------------------------
// Exact laws

/// An exact rational number num/den, always reduced with den > 0.
struct Rational {
  std::int64_t num = 0;  ///< numerator
  std::int64_t den = 1;  ///< denominator, > 0

  /// num/den reduced. @throws p3s::ModelError when den is 0.
  [[nodiscard]] static Rational make(std::int64_t num, std::int64_t den = 1);
  /// The value as a double.
  [[nodiscard]] double value() const noexcept { return static_cast<double>(num) / static_cast<double>(den); }
  /// True when den is 1.
  [[nodiscard]] bool is_integer() const noexcept { return den == 1; }
  /// "3", "-3/2".
  [[nodiscard]] std::string to_string() const;
  /// Parses "3", "-3/2" (what to_string writes). @throws p3s::InputError on anything else.
  [[nodiscard]] static Rational parse(std::string_view text);

  friend bool operator==(const Rational&, const Rational&) = default;
};

/// value(n) = a*g(n) + b with exact rational a and b. A constant law has basis One, a = 0 and value b.
struct ExactLaw {
  Basis basis = Basis::One;  ///< g
  Rational a{0, 1};          ///< coefficient of g(n)
  Rational b{0, 1};          ///< constant term

  /// The law value(n) = c (basis One, a = 0).
  [[nodiscard]] static ExactLaw constant(Rational c) noexcept { return ExactLaw{Basis::One, Rational{0, 1}, c}; }
  /// True when the value does not depend on n.
  [[nodiscard]] bool is_constant() const noexcept { return a.num == 0 || basis == Basis::One; }
  /// a*g(n) + b in floating point (NaN where g is undefined).
  [[nodiscard]] double value_at(double n) const;
  /// a*g(n) + b exactly, when it is an integer at this n (nullopt otherwise, e.g. (1/2)*n at odd n, log2(n) at
  /// n = 6, or on overflow).
  [[nodiscard]] std::optional<std::int64_t> integer_at(std::int64_t n) const;
  /// Readable equation: "251*sqrt(n) + 251", "(3/2)*n - 1", "log2(n)", "502".
  [[nodiscard]] std::string to_string() const;

  friend bool operator==(const ExactLaw&, const ExactLaw&) = default;
};

/// Every exact law of the family that reproduces the samples, in the order of preference of the family (so the
/// first one is fit_exact()'s answer when it is a whole number wherever it is evaluated); empty when none does.
/// @throws p3s::ModelError when there are no samples.
[[nodiscard]] std::vector<ExactLaw> fit_exact_all(std::span<const Sample> samples);

/// Where an exact law will be evaluated, besides the process counts its samples suggest: a law that is not a
/// whole number there (log2(n) at n = 6, n/2 at odd n) cannot give a count or a peer, so such a law is chosen
/// only when no other reproduces the samples.
struct WholeAt {
  std::vector<std::int64_t> n = {};  ///< process counts it will be evaluated at (a held-out run, a prediction)
  bool non_negative = false;         ///< a negative value is as unusable as a fraction (counts of calls)
};

/// The process counts samples suggest a law will be evaluated at: their own and the next three of their series
/// (squares after squares, the next terms of an arithmetic series, else 2, 4 and 8 times the largest: the next
/// powers of two after powers of two).
[[nodiscard]] std::vector<std::int64_t> suggested_n(std::span<const Sample> samples);

/// True when the law is a whole number (not negative, when asked) at every n of `at`.
[[nodiscard]] bool whole_at(const ExactLaw& law, std::span<const std::int64_t> at, bool non_negative = false);

/// How usable a law is where it will be evaluated: 0 when it is whole at where.n and every n the samples
/// suggest, 1 when it is whole at where.n and the samples' own n only, 2 when it is not.
[[nodiscard]] int evaluability(const ExactLaw& law, std::span<const Sample> samples, const WholeAt& where);

/// Where near n the law is a whole number (not negative, when asked), for messages: "n = 8 and n = 16", "no n up
/// to 2n". Looks down to 1 and up to 2n.
[[nodiscard]] std::string whole_nearby(const ExactLaw& law, std::int64_t n, bool non_negative = false);

/// Whether the law's basis rounds at some sample's n: a floor or ceil whose argument is not already whole there
/// (floor(log2(n)) at 9, not at 16). Of two laws that reproduce the samples, one that needs no rounding to do so
/// is the briefer description: at 4, 9 and 16, sqrt(n) - 1 rather than floor(log2(n)) - 1.
[[nodiscard]] bool rounds_at_samples(const ExactLaw& law, std::span<const Sample> samples);

/// The first of `laws` with the best evaluability(), and among those the first that does not round at its samples
/// (rounds_at_samples()); nullopt when `laws` is empty.
[[nodiscard]] std::optional<ExactLaw> prefer_whole(std::span<const ExactLaw> laws, std::span<const Sample> samples,
                                                   const WholeAt& where);

/// The law at n as a count: its value where that is a whole number, else rounded; never below 0.
[[nodiscard]] std::int64_t count_value(const ExactLaw& law, std::int64_t n);

/// The simplest exact law reproducing every sample (|law(n) - value| <= 1e-9 * max(1, |value|)) that is a whole
/// number wherever it will be evaluated (prefer_whole(): the samples' n, those they suggest, `where`), or
/// nullopt. Order of preference: a constant; then integer coefficients a, b over the bases in order; then
/// coefficients with denominators up to 12 over the bases in order. Samples with equal n and different values give
/// nullopt. With one distinct n only a constant can be claimed. Two distinct n fit almost every basis, so the answer is
/// only the simplest of many candidates there: the caller decides whether to trust it (or checks a held-out point
/// against fit_exact_all()).
/// @throws p3s::ModelError when there are no samples.
[[nodiscard]] std::optional<ExactLaw> fit_exact(std::span<const Sample> samples, const WholeAt& where = {});

// ---------------------------------------------------------------------------------------------------------------
// Regression laws

/// The shape of a regression law.
enum class RegressionForm : std::uint8_t {
  Constant,  ///< offset
  Linear,    ///< offset + coefficient*g(n)   (offset 0 for the one-parameter form c*g(n))
  Inverse,   ///< offset + coefficient/g(n)   (offset 0 for the one-parameter form c/g(n))
  Power,     ///< coefficient*n^exponent
  /// offset + coefficient/g(n) + coefficient2*(1/p_b + 1/p_c), g a face of a 3-D grid (Dims3Face0..2, = p_b p_c):
  /// a block's halo across one axis with a margin, (L_b/p_b + m)(L_c/p_c + m) expanded (ghost atoms)
  Halo,
  /// coefficient*(1/p_b + m_b)*(1/p_c + m_c), p_b and p_c the other two sides of MPI_Dims_create(n, 3) for the face
  /// `basis` crosses, m the margins (RegressionLaw::margins): a block's face of (L/p_b + g_b)(L/p_c + g_c) points
  /// with g ghost layers along each side, as a grid code that sends its ghost rows with its face does
  Block,
};

/// The readable name of a form ("constant", "linear", "inverse", "power", "halo"), as in JSON.
[[nodiscard]] std::string_view form_name(RegressionForm form) noexcept;

/// A real-valued law fitted by regression, with the relative errors of the fit on its samples.
struct RegressionLaw {
  RegressionForm form = RegressionForm::Constant;  ///< the shape
  Basis basis = Basis::One;                        ///< g for Linear and Inverse; One otherwise
  double offset = 0;                               ///< the constant term (the whole law for Constant; 0 for Power)
  double coefficient = 0;                          ///< c of c*g(n), c/g(n), c*n^p
  double exponent = 0;                             ///< p of the power law (Power only)
  double coefficient2 = 0;                         ///< the margin's coefficient (Halo only)
  /// Block only: the margins m_b, m_c along the face's two sides, the lower dimension first, relative to the
  /// global side (a ghost layer's share of it)
  std::array<double, 2> margins{0, 0};
  double max_rel_error = 0;   ///< max over the samples of |law(n) - value| / |value|
  double mean_rel_error = 0;  ///< mean of the same
  /// The law's uncertainty beyond its samples: the mean relative error of predicting each sample from the same
  /// form fitted on the others (leave-one-out); nullopt when the samples are too few to leave one out.
  std::optional<double> loo_rel_error = std::nullopt;

  /// The law at n (NaN where g is undefined; +-inf where an inverse basis is 0).
  [[nodiscard]] double value_at(double n) const;
  /// Number of fitted parameters (1 for a constant or c*g(n), 2 for two-parameter forms, 3 for a halo; a block's
  /// coefficient and its margins, equal margins counting once).
  [[nodiscard]] int parameters() const noexcept;
  /// Readable equation: "4096/2^floor(log2(n)/2)", "2.5*n + 12", "1000*n^(-0.75)".
  [[nodiscard]] std::string to_string() const;
};

/// Options of fit_regression().
struct RegressionOptions {
  /// A form is accepted when its max relative error on the samples is within this (0.005 = 0.5 %).
  double tolerance = 0.005;
  /// Consider the power law c*n^p (needs all values of one sign, nonzero, and n > 0).
  bool allow_power = true;
  /// The bases of the linear and inverse forms; empty: all of them.
  std::vector<Basis> bases = {};
  /// Consider the linear and inverse forms at all (off: a constant or a power law only).
  bool allow_linear_inverse = true;
  /// The constant is the median of the values rather than their least-squares mean (robust to one disturbed
  /// run, as work measured on a loaded machine has).
  bool median_constant = false;
  /// A face of a 3-D grid (Dims3Face0..2) whose halo with a margin is tried too (RegressionForm::Halo): the sizes
  /// of a step across that face. The halo's three parameters are claimed only from four or more distinct faces.
  std::optional<Basis> halo = std::nullopt;
  /// The first this many of `bases` are the sides of the process grid the sizes step along: their forms with an
  /// offset (a block's face and its ghost corners) are tried before the power law, which fits any two runs and
  /// says nothing of the grid (a side that stays 4 from 8 to 16 processes keeps the face, where n^p shrinks it).
  std::size_t grid_bases = 0;
};

/// The tolerance within which a size law reproduces its runs (RegressionOptions' default): a law that misses some
/// run by more is approximate.
inline constexpr double kSizeTolerance = RegressionOptions{}.tolerance;

/// The face basis across dimension `axis` of a 3-D grid (Dims3Face0 + axis), and back; nullopt for other bases.
[[nodiscard]] Basis face_basis(std::size_t axis);
[[nodiscard]] std::optional<std::size_t> face_axis_of(Basis basis) noexcept;

/// Fits a real-valued law: the simplest form whose max relative error is within options.tolerance. When none is,
/// the candidates are weighed by their leave-one-out error with a penalty for parameters: a form with more
/// parameters replaces a simpler one only when it halves the leave-one-out error and, where the samples are
/// enough to compute it, lowers AICc (on relative residuals); among forms with as many parameters the lower
/// leave-one-out error wins. So values that are constant within their noise give a constant, not a law through
/// the noise. Simplicity order: constant; one-parameter c*g(n), c/g(n) over the bases in order; the power law;
/// two-parameter offset + c*g(n), offset + c/g(n) over the bases in order.
/// Fits are least squares on relative residuals (log-log for the power law); coefficients within 1e-9 of an
/// integer are snapped to it. One distinct n gives the constant (least squares on relative residuals). A zero value is
/// compared with an absolute tolerance scaled by the largest |value| instead of a relative one.
/// @throws p3s::ModelError when there are no samples or a sample is not finite.
[[nodiscard]] RegressionLaw fit_regression(std::span<const Sample> samples, const RegressionOptions& options = {});

/// The sizes of a step across the face `face` (Dims3Face0..2) as a block's face with margins (RegressionForm::Block):
/// a margin along one of its sides, or the same along both, whichever reproduces the samples best within
/// `tolerance`; nullopt when neither does, or when the samples show fewer than three faces (p_b, p_c), where two
/// parameters would fit any samples. A margin along neither side is the inverse law c/face, for the caller to try.
[[nodiscard]] std::optional<RegressionLaw> fit_block_face(std::span<const Sample> samples, Basis face,
                                                          double tolerance = kSizeTolerance);

/// Relative error of a law's prediction `predicted` against `actual`, as fit_regression() measures it; `scale` is
/// the largest |value| of the sample set (used when actual is 0).
[[nodiscard]] double relative_error(double predicted, double actual, double scale) noexcept;

// ---------------------------------------------------------------------------------------------------------------
// JSON (objects with a "kind" of "exact" or "regression", the fields above and a readable "equation")

/// {"kind": "exact", "basis": "sqrt(n)", "a": 251, "b": "1/2", "equation": "..."}; fractions as "p/q" strings.
void to_json(nlohmann::json& j, const ExactLaw& law);
/// Reads what to_json writes ("equation" is ignored). @throws p3s::InputError naming the bad field.
void from_json(const nlohmann::json& j, ExactLaw& law);
/// {"kind": "regression", "form": "inverse", "basis": "n", "offset": 0, "coefficient": 4096, "exponent": 0,
///  "max_rel_error": ..., "mean_rel_error": ..., "equation": "..."}.
void to_json(nlohmann::json& j, const RegressionLaw& law);
/// Reads what to_json writes. @throws p3s::InputError naming the bad field.
void from_json(const nlohmann::json& j, RegressionLaw& law);

/// The same as to_json(j, law), returning the object.
[[nodiscard]] nlohmann::json to_json(const ExactLaw& law);
/// The same as to_json(j, law), returning the object.
[[nodiscard]] nlohmann::json to_json(const RegressionLaw& law);
/// The same as from_json(j, law). @throws p3s::InputError naming the bad field.
[[nodiscard]] ExactLaw exact_law_from_json(const nlohmann::json& j);
/// The same as from_json(j, law). @throws p3s::InputError naming the bad field.
[[nodiscard]] RegressionLaw regression_law_from_json(const nlohmann::json& j);

}  // namespace p3s::modeler
