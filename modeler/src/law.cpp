// SPDX-License-Identifier: BSD-3-Clause
// Scaling-law bases, exact rationals, evaluation and printing of exact and regression laws, and their JSON form.
//
// Floor/ceil bases are computed with integer arithmetic at integer n, so that e.g. floor(log2(n)) never comes out
// one too small from a rounding error in std::log2; sqrt/cbrt/log2 of perfect squares/cubes/powers of two are
// returned exactly for the same reason. The fitters (law_fit.cpp) rely on that exactness.
#include "p3s/modeler/law.hpp"
#include "p3s/json_text.hpp"

#include "p3s/modeler/dims.hpp"

#include "p3s/error.hpp"
#include "p3s/stable_name.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>

namespace p3s::modeler {

namespace {

constexpr std::array kBases{
    Basis::One,
    Basis::N,
    Basis::NMinus1,
    Basis::Log2,
    Basis::FloorLog2,
    Basis::CeilLog2,
    Basis::Sqrt,
    Basis::FloorSqrt,
    Basis::CeilSqrt,
    Basis::Cbrt,
    Basis::FloorCbrt,
    Basis::Pow2FloorHalfLog2,
    Basis::Pow2CeilHalfLog2,
    Basis::FloorHalfLog2,
    Basis::CeilHalfLog2,
    Basis::Dims2Major,
    Basis::Dims2Minor,
    Basis::Dims3First,
    Basis::Dims3Second,
    Basis::Dims3Third,
    Basis::NLog2N,
    Basis::NSquared,
    Basis::Dims3Face0,
    Basis::Dims3Face1,
    Basis::Dims3Face2,
    Basis::Dims2MajorOver2,
    Basis::Dims2MinorOver2,
    Basis::Dims3FirstOver2,
    Basis::Dims3SecondOver2,
    Basis::Dims3ThirdOver2,
};

// Largest integer a double represents exactly together with its neighbours: the integer paths below apply up to it.
constexpr double kMaxExactInteger = 9007199254740992.0;  // 2^53

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

int floor_log2(std::uint64_t n) { return static_cast<int>(std::bit_width(n)) - 1; }
int ceil_log2(std::uint64_t n) { return n <= 1 ? 0 : static_cast<int>(std::bit_width(n - 1)); }

std::uint64_t floor_sqrt(std::uint64_t n) {
  auto r = static_cast<std::uint64_t>(std::sqrt(static_cast<double>(n)));
  while (r > 0 && r * r > n) {
    --r;
  }
  while ((r + 1) * (r + 1) <= n) {
    ++r;
  }
  return r;
}

std::uint64_t floor_cbrt(std::uint64_t n) {
  auto r = static_cast<std::uint64_t>(std::cbrt(static_cast<double>(n)));
  while (r > 0 && r * r * r > n) {
    --r;
  }
  while ((r + 1) * (r + 1) * (r + 1) <= n) {
    ++r;
  }
  return r;
}

double pow2(int k) { return std::ldexp(1.0, k); }

// g(n) at an integer n in [1, 2^53].
double integer_basis_value(Basis basis, std::uint64_t n) {
  const auto d = static_cast<double>(n);
  switch (basis) {
    case Basis::One:
      return 1;
    case Basis::N:
      return d;
    case Basis::NMinus1:
      return d - 1;
    case Basis::Log2:
      return std::has_single_bit(n) ? floor_log2(n) : std::log2(d);
    case Basis::FloorLog2:
      return floor_log2(n);
    case Basis::CeilLog2:
      return ceil_log2(n);
    case Basis::Sqrt: {
      const std::uint64_t s = floor_sqrt(n);
      return s * s == n ? static_cast<double>(s) : std::sqrt(d);
    }
    case Basis::FloorSqrt:
      return static_cast<double>(floor_sqrt(n));
    case Basis::CeilSqrt: {
      const std::uint64_t s = floor_sqrt(n);
      return static_cast<double>(s * s == n ? s : s + 1);
    }
    case Basis::Cbrt: {
      const std::uint64_t c = floor_cbrt(n);
      return c * c * c == n ? static_cast<double>(c) : std::cbrt(d);
    }
    case Basis::FloorCbrt:
      return static_cast<double>(floor_cbrt(n));
    // floor(x/2) = floor(floor(x)/2) and ceil(x/2) = ceil(ceil(x)/2) for real x.
    case Basis::Pow2FloorHalfLog2:
      return pow2(floor_log2(n) / 2);
    case Basis::Pow2CeilHalfLog2:
      return pow2((ceil_log2(n) + 1) / 2);
    case Basis::FloorHalfLog2:
      return floor_log2(n) / 2;
    case Basis::CeilHalfLog2:
      return (ceil_log2(n) + 1) / 2;
    case Basis::Dims2Major:
    case Basis::Dims2Minor:
    case Basis::Dims3First:
    case Basis::Dims3Second:
    case Basis::Dims3Third: {
      if (n > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) {
        return kNaN;
      }
      const bool two = basis == Basis::Dims2Major || basis == Basis::Dims2Minor;
      const auto index = static_cast<std::size_t>(two ? static_cast<int>(basis) - static_cast<int>(Basis::Dims2Major)
                                                      : static_cast<int>(basis) - static_cast<int>(Basis::Dims3First));
      return dims_side(static_cast<int>(n), two ? 2 : 3, index);
    }
    case Basis::NLog2N:
      return d * integer_basis_value(Basis::Log2, n);
    case Basis::NSquared:
      return d * d;
    case Basis::Dims3Face0:
    case Basis::Dims3Face1:
    case Basis::Dims3Face2: {
      if (n > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) return kNaN;
      return static_cast<double>(n) / dims_side(static_cast<int>(n), 3, *face_axis_of(basis));
    }
    case Basis::Dims2MajorOver2:
    case Basis::Dims2MinorOver2:
    case Basis::Dims3FirstOver2:
    case Basis::Dims3SecondOver2:
    case Basis::Dims3ThirdOver2: {
      const auto [dims, axis] = *side_of(basis);
      const double side = integer_basis_value(on_side(dims == 2 ? Basis::Dims2Major : Basis::Dims3First, axis), n);
      return std::isnan(side) ? kNaN : (side > 2 ? 1 : 0);
    }
  }
  return kNaN;
}

// g(n) at a non-integral (or huge) n: the real formulas; dims are undefined there.
double real_basis_value(Basis basis, double n) {
  switch (basis) {
    case Basis::One:
      return 1;
    case Basis::N:
      return n;
    case Basis::NMinus1:
      return n - 1;
    case Basis::Log2:
      return std::log2(n);
    case Basis::FloorLog2:
      return std::floor(std::log2(n));
    case Basis::CeilLog2:
      return std::ceil(std::log2(n));
    case Basis::Sqrt:
      return std::sqrt(n);
    case Basis::FloorSqrt:
      return std::floor(std::sqrt(n));
    case Basis::CeilSqrt:
      return std::ceil(std::sqrt(n));
    case Basis::Cbrt:
      return std::cbrt(n);
    case Basis::FloorCbrt:
      return std::floor(std::cbrt(n));
    case Basis::Pow2FloorHalfLog2:
      return std::exp2(std::floor(std::log2(n) / 2));
    case Basis::Pow2CeilHalfLog2:
      return std::exp2(std::ceil(std::log2(n) / 2));
    case Basis::FloorHalfLog2:
      return std::floor(std::log2(n) / 2);
    case Basis::CeilHalfLog2:
      return std::ceil(std::log2(n) / 2);
    case Basis::Dims2Major:
    case Basis::Dims2Minor:
    case Basis::Dims3First:
    case Basis::Dims3Second:
    case Basis::Dims3Third:
    case Basis::Dims3Face0:
    case Basis::Dims3Face1:
    case Basis::Dims3Face2:
    case Basis::Dims2MajorOver2:
    case Basis::Dims2MinorOver2:
    case Basis::Dims3FirstOver2:
    case Basis::Dims3SecondOver2:
    case Basis::Dims3ThirdOver2:
      return kNaN;
    case Basis::NLog2N:
      return n * std::log2(n);
    case Basis::NSquared:
      return n * n;
  }
  return kNaN;
}

// Formats a real coefficient: integers exactly, otherwise 6 significant digits (fits print readably; JSON keeps
// the full precision).
std::string format_real(double x) {
  if (!std::isfinite(x)) {
    return std::isnan(x) ? "nan" : (x > 0 ? "inf" : "-inf");
  }
  const double r = std::round(x);
  std::array<char, 64> buffer{};
  if (std::abs(x - r) <= 1e-9 * std::max(1.0, std::abs(x)) && std::abs(r) < 1e15) {
    std::snprintf(buffer.data(), buffer.size(), "%.0f", r == 0 ? 0.0 : r);
  } else if (std::abs(x) >= 1e5 && std::abs(x) < 1e15) {
    std::snprintf(buffer.data(), buffer.size(), "%.0f", r);
  } else {
    std::snprintf(buffer.data(), buffer.size(), "%.6g", x);
  }
  return buffer.data();
}

// The basis as a factor of a product: "(n-1)" needs parentheses, "n*log2(n)" does not.
std::string as_factor(Basis basis) {
  const std::string name(basis_name(basis));
  return basis == Basis::NMinus1 ? "(" + name + ")" : name;
}

// The basis as a divisor: "c/(n*log2(n))", "c/(n-1)", "c/(dims3(n)[1]*dims3(n)[2])", "c/2^floor(log2(n)/2)".
std::string as_divisor(Basis basis) {
  const std::string name(basis_name(basis));
  return basis == Basis::NMinus1 || basis == Basis::NLog2N || sizes_only(basis) ? "(" + name + ")" : name;
}

// " + x" / " - x" for a trailing constant term; empty for 0.
std::string signed_tail(bool negative, const std::string& magnitude) { return (negative ? " - " : " + ") + magnitude; }

[[noreturn]] void bad_field(std::string_view what, std::string_view field, const nlohmann::json& j,
                            std::string_view expected) {
  throw InputError(std::string(what) + " JSON: field '" + std::string(field) + "' must be " + std::string(expected) +
                   ", got " + (j.contains(field) ? json_excerpt(j.at(field)) : std::string("nothing")) +
                   "; the model file may be damaged or from another p3s version");
}

Rational rational_field(const nlohmann::json& j, std::string_view field) {
  const auto it = j.find(field);
  if (it != j.end()) {
    if (it->is_number_integer()) {
      return Rational::make(it->get<std::int64_t>());
    }
    if (it->is_string()) {
      try {
        return Rational::parse(it->get<std::string>());
      } catch (const InputError&) {
        // reported below with the field's name
      }
    }
  }
  bad_field("exact law", field, j, "an integer or a \"p/q\" string");
}

double real_field(const nlohmann::json& j, std::string_view field) {
  const auto it = j.find(field);
  if (it == j.end() || !it->is_number()) {
    bad_field("regression law", field, j, "a number");
  }
  return it->get<double>();
}

Basis basis_field(const nlohmann::json& j, std::string_view what) {
  const auto it = j.find("basis");
  if (it != j.end() && it->is_string()) {
    if (const auto basis = basis_from_name(it->get<std::string>())) {
      return *basis;
    }
  }
  bad_field(what, "basis", j, "a basis name such as \"sqrt(n)\"");
}

void check_kind(const nlohmann::json& j, std::string_view kind, std::string_view what) {
  if (!j.is_object() || !j.contains("kind") || !j.at("kind").is_string() || j.at("kind").get<std::string>() != kind) {
    throw InputError(std::string(what) + " JSON: expected an object with \"kind\": \"" + std::string(kind) +
                     "\", got " + json_excerpt(j) + "; the model file may be damaged or from another p3s version");
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// Bases

std::span<const Basis> all_bases() noexcept { return kBases; }

bool basis_rounds_at(Basis basis, std::int64_t n) noexcept {
  if (n < 1) return false;
  const auto u = static_cast<std::uint64_t>(n);
  switch (basis) {
    case Basis::FloorLog2:
    case Basis::CeilLog2:
      return !std::has_single_bit(u);
    case Basis::FloorSqrt:
    case Basis::CeilSqrt:
      return floor_sqrt(u) * floor_sqrt(u) != u;
    case Basis::FloorCbrt:
      return floor_cbrt(u) * floor_cbrt(u) * floor_cbrt(u) != u;
    default:
      // The sides of grids (dims, 2^floor(log2(n)/2) and the like) round by design: no plain function of n is
      // their unrounded form.
      return false;
  }
}

Basis face_basis(std::size_t axis) {
  if (axis > 2) throw ModelError("a 3-D grid has no dimension " + std::to_string(axis));
  return static_cast<Basis>(static_cast<int>(Basis::Dims3Face0) + static_cast<int>(axis));
}

std::optional<std::size_t> face_axis_of(Basis basis) noexcept {
  if (!sizes_only(basis)) return std::nullopt;
  return static_cast<std::size_t>(static_cast<int>(basis) - static_cast<int>(Basis::Dims3Face0));
}

std::optional<std::array<double, 2>> face_sides(Basis face, double n) {
  if (!sizes_only(face) || !(n >= 1) || n != std::floor(n) || n > std::numeric_limits<int>::max()) return std::nullopt;
  const std::vector<int> dims = dims_create(static_cast<int>(n), 3);
  const std::size_t across = *face_axis_of(face);
  std::array<double, 2> out{0, 0};
  std::size_t k = 0;
  for (std::size_t d = 0; d < 3; ++d) {
    if (d != across) out[k++] = dims[d];
  }
  return out;
}

double face_rim(Basis face, double n) {
  if (!sizes_only(face) || !(n >= 1) || n != std::floor(n) || n > std::numeric_limits<int>::max()) return kNaN;
  const std::vector<int> dims = dims_create(static_cast<int>(n), 3);
  const std::size_t across = *face_axis_of(face);
  double rim = 0;
  for (std::size_t d = 0; d < 3; ++d) {
    if (d != across) rim += 1.0 / dims[d];
  }
  return rim;
}

bool sizes_only(Basis basis) noexcept {
  return basis == Basis::Dims3Face0 || basis == Basis::Dims3Face1 || basis == Basis::Dims3Face2;
}

bool counts_only(Basis basis) noexcept {
  return basis == Basis::FloorHalfLog2 || basis == Basis::CeilHalfLog2 || longer_than_two(basis);
}

bool longer_than_two(Basis basis) noexcept {
  return basis >= Basis::Dims2MajorOver2 && basis <= Basis::Dims3ThirdOver2;
}

std::optional<std::pair<int, std::size_t>> side_of(Basis basis) noexcept {
  const auto from = [basis](Basis first) {
    return static_cast<std::size_t>(static_cast<int>(basis) - static_cast<int>(first));
  };
  if (basis == Basis::Dims2Major || basis == Basis::Dims2Minor) return std::pair{2, from(Basis::Dims2Major)};
  if (basis >= Basis::Dims3First && basis <= Basis::Dims3Third) return std::pair{3, from(Basis::Dims3First)};
  if (basis == Basis::Dims2MajorOver2 || basis == Basis::Dims2MinorOver2) {
    return std::pair{2, from(Basis::Dims2MajorOver2)};
  }
  if (basis >= Basis::Dims3FirstOver2 && basis <= Basis::Dims3ThirdOver2) {
    return std::pair{3, from(Basis::Dims3FirstOver2)};
  }
  return std::nullopt;
}

Basis on_side(Basis basis, std::size_t d) {
  const std::optional<std::pair<int, std::size_t>> side = side_of(basis);
  if (!side || d >= static_cast<std::size_t>(side->first)) {
    throw ModelError("the basis " + std::string(basis_name(basis)) + " has no counterpart along dimension " +
                     std::to_string(d));
  }
  const bool indicator = longer_than_two(basis);
  const Basis first = side->first == 2 ? (indicator ? Basis::Dims2MajorOver2 : Basis::Dims2Major)
                                       : (indicator ? Basis::Dims3FirstOver2 : Basis::Dims3First);
  return static_cast<Basis>(static_cast<int>(first) + static_cast<int>(d));
}

std::string_view basis_name(Basis basis) noexcept {
  switch (basis) {
    case Basis::One:
      return "1";
    case Basis::N:
      return "n";
    case Basis::NMinus1:
      return "n-1";
    case Basis::Log2:
      return "log2(n)";
    case Basis::FloorLog2:
      return "floor(log2(n))";
    case Basis::CeilLog2:
      return "ceil(log2(n))";
    case Basis::Sqrt:
      return "sqrt(n)";
    case Basis::FloorSqrt:
      return "floor(sqrt(n))";
    case Basis::CeilSqrt:
      return "ceil(sqrt(n))";
    case Basis::Cbrt:
      return "cbrt(n)";
    case Basis::FloorCbrt:
      return "floor(cbrt(n))";
    case Basis::Pow2FloorHalfLog2:
      return "2^floor(log2(n)/2)";
    case Basis::Pow2CeilHalfLog2:
      return "2^ceil(log2(n)/2)";
    case Basis::FloorHalfLog2:
      return "floor(log2(n)/2)";
    case Basis::CeilHalfLog2:
      return "ceil(log2(n)/2)";
    case Basis::Dims2Major:
      return "dims2(n)[0]";
    case Basis::Dims2Minor:
      return "dims2(n)[1]";
    case Basis::Dims3First:
      return "dims3(n)[0]";
    case Basis::Dims3Second:
      return "dims3(n)[1]";
    case Basis::Dims3Third:
      return "dims3(n)[2]";
    case Basis::NLog2N:
      return "n*log2(n)";
    case Basis::NSquared:
      return "n^2";
    case Basis::Dims3Face0:
      return "dims3(n)[1]*dims3(n)[2]";
    case Basis::Dims3Face1:
      return "dims3(n)[0]*dims3(n)[2]";
    case Basis::Dims3Face2:
      return "dims3(n)[0]*dims3(n)[1]";
    case Basis::Dims2MajorOver2:
      return "[dims2(n)[0] > 2]";
    case Basis::Dims2MinorOver2:
      return "[dims2(n)[1] > 2]";
    case Basis::Dims3FirstOver2:
      return "[dims3(n)[0] > 2]";
    case Basis::Dims3SecondOver2:
      return "[dims3(n)[1] > 2]";
    case Basis::Dims3ThirdOver2:
      return "[dims3(n)[2] > 2]";
  }
  return "?";
}

std::optional<Basis> basis_from_name(std::string_view name) noexcept {
  for (const Basis basis : kBases) {
    if (basis_name(basis) == name) {
      return basis;
    }
  }
  return std::nullopt;
}

bool basis_is_integral(Basis basis) noexcept {
  return basis != Basis::Log2 && basis != Basis::Sqrt && basis != Basis::Cbrt && basis != Basis::NLog2N;
}

double basis_value(Basis basis, double n) {
  if (basis == Basis::One) {
    return 1;
  }
  if (!(n >= 1)) {  // also catches NaN
    return kNaN;
  }
  if (n <= kMaxExactInteger && n == std::floor(n)) {
    return integer_basis_value(basis, static_cast<std::uint64_t>(n));
  }
  return real_basis_value(basis, n);
}

// ---------------------------------------------------------------------------------------------------------------
// Rational

Rational Rational::make(std::int64_t num, std::int64_t den) {
  if (den == 0) {
    throw ModelError("rational " + std::to_string(num) + "/0: the denominator must not be 0");
  }
  const std::int64_t g = std::gcd(num, den);  // > 0 since den != 0
  num /= g;
  den /= g;
  if (den < 0) {
    num = -num;
    den = -den;
  }
  return Rational{num, den};
}

std::string Rational::to_string() const {
  return den == 1 ? std::to_string(num) : std::to_string(num) + "/" + std::to_string(den);
}

Rational Rational::parse(std::string_view text) {
  const auto parse_int = [text](std::string_view part) {
    std::int64_t value = 0;
    bool negative = false;
    std::size_t i = 0;
    if (!part.empty() && part[0] == '-') {
      negative = true;
      i = 1;
    }
    if (i == part.size() || part.size() - i > 18) {
      throw InputError("rational '" + std::string(text) + "': expected an integer or p/q");
    }
    for (; i < part.size(); ++i) {
      if (part[i] < '0' || part[i] > '9') {
        throw InputError("rational '" + std::string(text) + "': expected an integer or p/q");
      }
      value = value * 10 + (part[i] - '0');
    }
    return negative ? -value : value;
  };
  const std::size_t slash = text.find('/');
  if (slash == std::string_view::npos) {
    return make(parse_int(text));
  }
  const std::int64_t den = parse_int(text.substr(slash + 1));
  if (den == 0) {
    throw InputError("rational '" + std::string(text) + "': the denominator must not be 0");
  }
  return make(parse_int(text.substr(0, slash)), den);
}

// ---------------------------------------------------------------------------------------------------------------
// ExactLaw

double ExactLaw::value_at(double n) const {
  if (is_constant()) {
    return (basis == Basis::One ? a.value() : 0.0) + b.value();
  }
  return a.value() * basis_value(basis, n) + b.value();
}

std::optional<std::int64_t> ExactLaw::integer_at(std::int64_t n) const {
  // Exact: value = (a.num*g*b.den + b.num*a.den) / (a.den*b.den), nullopt on 64-bit overflow.
  std::int64_t g = 1;
  if (basis != Basis::One) {
    if (a.num == 0) {
      g = 0;
    } else {
      const double gd = basis_value(basis, static_cast<double>(n));
      // An irrational g(n) (log2(6), sqrt(2)) never gives an integer with a != 0.
      if (!std::isfinite(gd) || gd != std::floor(gd) || std::abs(gd) > kMaxExactInteger) {
        return std::nullopt;
      }
      g = static_cast<std::int64_t>(gd);
    }
  }
  std::int64_t num = 0;
  std::int64_t tail = 0;
  std::int64_t den = 0;
  if (__builtin_mul_overflow(a.num, g, &num) || __builtin_mul_overflow(num, b.den, &num) ||
      __builtin_mul_overflow(b.num, a.den, &tail) || __builtin_add_overflow(num, tail, &num) ||
      __builtin_mul_overflow(a.den, b.den, &den)) {
    return std::nullopt;
  }
  if (num % den != 0) {
    return std::nullopt;
  }
  return num / den;
}

std::int64_t count_value(const ExactLaw& law, std::int64_t n) {
  const std::optional<std::int64_t> c = law.integer_at(n);
  if (!c) return std::max<std::int64_t>(0, std::llround(law.value_at(static_cast<double>(n))));
  return std::max<std::int64_t>(0, *c);
}

std::string ExactLaw::to_string() const {
  if (basis == Basis::One) {
    const Rational c = Rational::make(a.num * b.den + b.num * a.den, a.den * b.den);
    return c.to_string();
  }
  if (a.num == 0) {
    return b.to_string();
  }
  std::string text;
  if (a.den != 1) {
    text = "(" + a.to_string() + ")*";
  } else if (a.num == -1) {
    text = "-";
  } else if (a.num != 1) {
    text = a.to_string() + "*";
  }
  text += as_factor(basis);
  if (b.num != 0) {
    text += signed_tail(b.num < 0, Rational{b.num < 0 ? -b.num : b.num, b.den}.to_string());
  }
  return text;
}

// ---------------------------------------------------------------------------------------------------------------
// RegressionLaw

constexpr NameTable<RegressionForm, 6> kFormNames{{{{RegressionForm::Constant, "constant"},
                                                    {RegressionForm::Linear, "linear"},
                                                    {RegressionForm::Inverse, "inverse"},
                                                    {RegressionForm::Power, "power"},
                                                    {RegressionForm::Halo, "halo"},
                                                    {RegressionForm::Block, "block"}}}};

std::string_view form_name(RegressionForm form) noexcept { return kFormNames.name(form, "?"); }

double RegressionLaw::value_at(double n) const {
  switch (form) {
    case RegressionForm::Constant:
      return offset;
    case RegressionForm::Linear:
      return offset + coefficient * basis_value(basis, n);
    case RegressionForm::Inverse:
      return offset + coefficient / basis_value(basis, n);
    case RegressionForm::Power:
      return n > 0 ? coefficient * std::pow(n, exponent) : kNaN;
    case RegressionForm::Halo:
      return offset + coefficient / basis_value(basis, n) + coefficient2 * face_rim(basis, n);
    case RegressionForm::Block: {
      const std::optional<std::array<double, 2>> sides = face_sides(basis, n);
      if (!sides) return kNaN;
      return coefficient * (1 / (*sides)[0] + margins[0]) * (1 / (*sides)[1] + margins[1]);
    }
  }
  return kNaN;
}

int RegressionLaw::parameters() const noexcept {
  switch (form) {
    case RegressionForm::Constant:
      return 1;
    case RegressionForm::Linear:
    case RegressionForm::Inverse:
      return offset == 0 ? 1 : 2;
    case RegressionForm::Power:
      return 2;
    case RegressionForm::Halo:
      return 3;
    case RegressionForm::Block:
      return margins[0] == margins[1] ? (margins[0] == 0 ? 1 : 2) : 1 + (margins[0] != 0) + (margins[1] != 0);
  }
  return 0;
}

std::string RegressionLaw::to_string() const {
  std::string text;
  switch (form) {
    case RegressionForm::Constant:
      return format_real(offset);
    case RegressionForm::Linear:
      if (coefficient == 1) {
        text = as_factor(basis);
      } else if (coefficient == -1) {
        text = "-" + as_factor(basis);
      } else {
        text = format_real(coefficient) + "*" + as_factor(basis);
      }
      break;
    case RegressionForm::Inverse:
      text = format_real(coefficient) + "/" + as_divisor(basis);
      break;
    case RegressionForm::Power: {
      const std::string p = format_real(exponent);
      return format_real(coefficient) + "*n^" + (exponent < 0 ? "(" + p + ")" : p);
    }
    case RegressionForm::Halo: {
      // "57600/(dims3(n)[1]*dims3(n)[2]) + 10080*(1/dims3(n)[1] + 1/dims3(n)[2]) + 1752"
      const std::string name(basis_name(basis));
      const std::string rim = "1/" + name.substr(0, name.find('*')) + " + 1/" + name.substr(name.find('*') + 1);
      text = format_real(coefficient) + "/" + as_divisor(basis) +
             signed_tail(coefficient2 < 0, format_real(std::abs(coefficient2)) + "*(" + rim + ")");
      break;
    }
    case RegressionForm::Block: {
      // "32768*(1/dims3(n)[0] + 0.03125)*(1/dims3(n)[2])"
      const std::string name(basis_name(basis));
      const std::array<std::string, 2> side{name.substr(0, name.find('*')), name.substr(name.find('*') + 1)};
      text = format_real(coefficient);
      for (std::size_t k = 0; k < 2; ++k) {
        text += "*(1/" + side[k] +
                (margins[k] != 0 ? signed_tail(margins[k] < 0, format_real(std::abs(margins[k]))) : "") + ")";
      }
      return text;
    }
  }
  if (offset != 0) {
    text += signed_tail(offset < 0, format_real(std::abs(offset)));
  }
  return text;
}

// ---------------------------------------------------------------------------------------------------------------
// JSON

void to_json(nlohmann::json& j, const ExactLaw& law) {
  const auto rational = [](const Rational& r) {
    return r.is_integer() ? nlohmann::json(r.num) : nlohmann::json(r.to_string());
  };
  j = nlohmann::json{{"kind", "exact"},
                     {"basis", basis_name(law.basis)},
                     {"a", rational(law.a)},
                     {"b", rational(law.b)},
                     {"equation", law.to_string()}};
}

void from_json(const nlohmann::json& j, ExactLaw& law) {
  check_kind(j, "exact", "exact law");
  law = ExactLaw{basis_field(j, "exact law"), rational_field(j, "a"), rational_field(j, "b")};
}

void to_json(nlohmann::json& j, const RegressionLaw& law) {
  j = nlohmann::json{{"kind", "regression"},
                     {"form", form_name(law.form)},
                     {"basis", basis_name(law.basis)},
                     {"offset", law.offset},
                     {"coefficient", law.coefficient},
                     {"exponent", law.exponent},
                     {"coefficient2", law.coefficient2},
                     {"max_rel_error", law.max_rel_error},
                     {"mean_rel_error", law.mean_rel_error},
                     {"equation", law.to_string()}};
  if (law.loo_rel_error) j["loo_rel_error"] = *law.loo_rel_error;
  if (law.form == RegressionForm::Block) j["margins"] = law.margins;
}

void from_json(const nlohmann::json& j, RegressionLaw& law) {
  check_kind(j, "regression", "regression law");
  RegressionLaw out;
  const auto form = j.find("form");
  const std::optional<RegressionForm> known =
      form != j.end() && form->is_string() ? kFormNames.value(form->get<std::string>()) : std::nullopt;
  if (known) out.form = *known;
  if (!known) {
    bad_field("regression law", "form", j,
              "one of \"constant\", \"linear\", \"inverse\", \"power\", \"halo\", \"block\"");
  }
  out.basis = basis_field(j, "regression law");
  if ((out.form == RegressionForm::Halo || out.form == RegressionForm::Block) && !sizes_only(out.basis)) {
    bad_field("regression law", "basis", j, "a face of a 3-D grid for a halo or block law");
  }
  if (out.form == RegressionForm::Block) {
    const auto m = j.find("margins");
    if (m == j.end() || !m->is_array() || m->size() != 2 || !(*m)[0].is_number() || !(*m)[1].is_number()) {
      bad_field("regression law", "margins", j, "two numbers for a block law");
    }
    out.margins = {(*m)[0].get<double>(), (*m)[1].get<double>()};
  }
  out.coefficient2 = j.contains("coefficient2") ? real_field(j, "coefficient2") : 0.0;
  out.offset = real_field(j, "offset");
  out.coefficient = real_field(j, "coefficient");
  out.exponent = real_field(j, "exponent");
  // The errors describe the fit, not the law: tolerate files without them.
  out.max_rel_error = j.contains("max_rel_error") ? real_field(j, "max_rel_error") : 0.0;
  out.mean_rel_error = j.contains("mean_rel_error") ? real_field(j, "mean_rel_error") : 0.0;
  if (j.contains("loo_rel_error")) out.loo_rel_error = real_field(j, "loo_rel_error");
  law = out;
}

nlohmann::json to_json(const ExactLaw& law) {
  nlohmann::json j;
  to_json(j, law);
  return j;
}

nlohmann::json to_json(const RegressionLaw& law) {
  nlohmann::json j;
  to_json(j, law);
  return j;
}

ExactLaw exact_law_from_json(const nlohmann::json& j) {
  ExactLaw law;
  from_json(j, law);
  return law;
}

RegressionLaw regression_law_from_json(const nlohmann::json& j) {
  RegressionLaw law;
  from_json(j, law);
  return law;
}

}  // namespace p3s::modeler
