// SPDX-License-Identifier: BSD-3-Clause
// Fitting scaling laws to samples: exact laws for integer quantities, regression laws for real-valued ones.
//
// Exact fit. Samples at equal n are merged first (they must agree). For each basis g the line through the two
// samples with the smallest and the largest g(n) gives a candidate a = dv/dg and b = v - a*g; both are snapped to
// the nearest rational with a small denominator, and the candidate is kept only if it reproduces every sample.
// Two passes over the bases (integer coefficients, then denominators up to 12) give the order of preference. This
// is a direct test of each member of a small family, not a search: it costs O(bases * samples).
//
// Regression fit. Every candidate form (constant, c*g, c/g, c*n^p, a + c*g, a + c/g over every basis) is fitted by
// least squares on relative residuals (weights 1/value^2: a law is judged by relative error, and message sizes
// span orders of magnitude) or, for the power law, in log-log space. The simplest candidate within the tolerance
// wins. Otherwise the candidates are weighed with a penalty for their parameters (leave-one-out error, and AICc,
// Hurvich & Tsai 1989, where the samples allow it): with three or four noisy runs, the least in-sample error
// always belongs to the law with most parameters, which then extrapolates the noise.
#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <string>

#include "p3s/error.hpp"
#include "p3s/modeler/dims.hpp"
#include "p3s/modeler/law.hpp"

namespace p3s::modeler {

namespace {

// A sample matches an exact law when |law(n) - value| <= kExactTolerance * max(1, |value|): values are integers in
// practice, so this only absorbs the rounding of irrational bases such as sqrt(n).
constexpr double kExactTolerance = 1e-9;

// Largest denominator of an exact coefficient: halves, thirds, quarters... up to twelfths cover the laws seen in
// practice ((3/2)*n, n/4, 251/12) without letting arbitrary reals pass as rationals.
constexpr std::int64_t kMaxDenominator = 12;

// Zero values are compared with an absolute tolerance of kZeroFloor times the largest |value| of the sample set.
constexpr double kZeroFloor = 1e-6;

// Fitted coefficients this close (relative) to an integer are snapped to it, so that 4096.0000000001/n prints and
// evaluates as 4096/n.
constexpr double kSnapTolerance = 1e-9;

// A form with more parameters must at least halve the leave-one-out error of a simpler one: with four noisy runs
// of a constant, a power law through them beats the constant's leave-one-out error by that much in under one case
// in ten, while a real trend of n^0.5 over 4..32 does so in most.
constexpr double kLooGain = 0.5;

// Sum of squared relative residuals below which two fits are equally exact (AICc takes its logarithm).
constexpr double kRssFloor = 1e-20;

// The steepest power of n a law may claim. Nothing an MPI code does per process, per message or per instance grows
// or shrinks faster than n^2 (the pairs of an all-to-all; a block's face or volume shrinks as n^-1/2 to n^-1): a
// power beyond is samples that follow the run's data, not n (a size that varies from chunk to chunk, drawn at three
// counts), and extrapolates them by orders of magnitude (n^4.4 is 400 times larger at 16 than at 4).
constexpr double kSteepestPower = 2;

bool close_exact(double predicted, double value) {
  return std::abs(predicted - value) <= kExactTolerance * std::max(1.0, std::abs(value));
}

// The rational p/q with the smallest q <= max_den equal to x within kExactTolerance, if any.
std::optional<Rational> to_rational(double x, std::int64_t max_den) {
  for (std::int64_t q = 1; q <= max_den; ++q) {
    const double scaled = x * static_cast<double>(q);
    if (!(std::abs(scaled) < 1e15)) {  // beyond exact doubles (and NaN)
      return std::nullopt;
    }
    const double p = std::round(scaled);
    if (std::abs(scaled - p) <= kExactTolerance * std::max(1.0, std::abs(scaled))) {
      return Rational::make(static_cast<std::int64_t>(p), q);
    }
  }
  return std::nullopt;
}

void check_samples(std::span<const Sample> samples, const char* what) {
  if (samples.empty()) {
    throw ModelError(std::string(what) +
                     ": no samples; a law needs the quantity measured at one process count at "
                     "least");
  }
  // No measured time, size or count comes near 1e24 (ns: 30 million years; bytes: a yottabyte); past it the fits'
  // sums of squares overflow, so such a value is damage in the signature, not a measurement.
  constexpr double kMost = 1e24;
  for (const Sample& s : samples) {
    if (!std::isfinite(s.n) || !std::isfinite(s.value)) {
      throw ModelError(std::string(what) + ": sample (n = " + std::to_string(s.n) +
                       ", value = " + std::to_string(s.value) + ") is not finite; check the signature it came from");
    }
    if (std::abs(s.value) > kMost || s.n < 0 || s.n > kMost) {
      char text[160];
      std::snprintf(text, sizeof text, ": sample (n = %g, value = %g) is beyond any measurement (%g at most)", s.n,
                    s.value, kMost);
      throw ModelError(std::string(what) + text + "; check the signature it came from");
    }
  }
}

// The samples sorted by n with equal n merged; nullopt when two samples at one n disagree.
std::optional<std::vector<Sample>> merge_exact(std::span<const Sample> samples) {
  std::vector<Sample> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end(), [](const Sample& x, const Sample& y) { return x.n < y.n; });
  std::vector<Sample> merged;
  for (const Sample& s : sorted) {
    if (!merged.empty() && merged.back().n == s.n) {
      if (!close_exact(s.value, merged.back().value)) {
        return std::nullopt;
      }
      continue;
    }
    merged.push_back(s);
  }
  return merged;
}

// The law through the samples with basis g, coefficients with denominators up to max_den, if it reproduces all.
std::optional<ExactLaw> exact_candidate(Basis basis, std::span<const Sample> points, std::int64_t max_den) {
  std::vector<double> g(points.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    g[i] = basis_value(basis, points[i].n);
    if (!std::isfinite(g[i])) {
      return std::nullopt;
    }
  }
  const auto [lo, hi] = std::minmax_element(g.begin(), g.end());
  if (*lo == *hi) {
    return std::nullopt;  // g is constant on these n: it cannot be told from the constant law
  }
  const auto ilo = static_cast<std::size_t>(lo - g.begin());
  const auto ihi = static_cast<std::size_t>(hi - g.begin());
  const auto a = to_rational((points[ihi].value - points[ilo].value) / (*hi - *lo), max_den);
  if (!a || a->num == 0) {
    return std::nullopt;  // a = 0 is the constant law, tried first
  }
  // b from the sample with the smallest |g|, where a's rounding error is multiplied least.
  const auto ismall = static_cast<std::size_t>(
      std::min_element(g.begin(), g.end(), [](double x, double y) { return std::abs(x) < std::abs(y); }) - g.begin());
  const auto b = to_rational(points[ismall].value - a->value() * g[ismall], max_den);
  if (!b) {
    return std::nullopt;
  }
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (!close_exact(a->value() * g[i] + b->value(), points[i].value)) {
      return std::nullopt;
    }
  }
  return ExactLaw{basis, *a, *b};
}

// ---------------------------------------------------------------------------------------------------------------
// Regression

struct Candidate {
  RegressionForm form;
  Basis basis;
  bool with_offset;
};

// A fitted candidate with its AICc (nullopt: too few samples for its parameters).
struct Scored {
  RegressionLaw law;
  std::optional<double> aicc;
};

double snap(double x) {
  const double r = std::round(x);
  return std::abs(x) >= 1 && std::abs(x - r) <= kSnapTolerance * std::abs(x) ? r : x;
}

// Weighted least squares of v ~ offset + c*h (or v ~ c*h without offset). Returns false when singular.
bool weighted_fit(std::span<const double> h, std::span<const Sample> samples, std::span<const double> w,
                  bool with_offset, double& offset, double& c) {
  double sw = 0;
  double swh = 0;
  double swv = 0;
  double swhh = 0;
  for (std::size_t i = 0; i < h.size(); ++i) {
    sw += w[i];
    swh += w[i] * h[i];
    swv += w[i] * samples[i].value;
    swhh += w[i] * h[i] * h[i];
  }
  if (!with_offset) {
    if (!(swhh > 0)) {
      return false;
    }
    double swhv = 0;
    for (std::size_t i = 0; i < h.size(); ++i) {
      swhv += w[i] * h[i] * samples[i].value;
    }
    offset = 0;
    c = swhv / swhh;
    return std::isfinite(c);
  }
  // Centred on the weighted mean of h for conditioning.
  const double hbar = swh / sw;
  double sxx = 0;
  double sxv = 0;
  for (std::size_t i = 0; i < h.size(); ++i) {
    sxx += w[i] * (h[i] - hbar) * (h[i] - hbar);
    sxv += w[i] * (h[i] - hbar) * samples[i].value;
  }
  // h (nearly) constant over the samples: the offset and c cannot be separated.
  if (!(sxx > 1e-12 * swhh)) {
    return false;
  }
  c = sxv / sxx;
  offset = (swv - c * swh) / sw;
  return std::isfinite(c) && std::isfinite(offset);
}

double median_of(std::span<const Sample> samples) {
  std::vector<double> v;
  for (const Sample& s : samples) v.push_back(s.value);
  std::sort(v.begin(), v.end());
  const std::size_t k = v.size() / 2;
  return v.size() % 2 == 1 ? v[k] : (v[k - 1] + v[k]) / 2;
}

// Weighted least squares of v ~ x0 + c1*h1 + c2*h2 (three unknowns, the normal equations solved by LU with full
// pivoting). Returns false when the samples do not determine them.
bool weighted_fit3(std::span<const double> h1, std::span<const double> h2, std::span<const Sample> samples,
                   std::span<const double> w, std::array<double, 3>& x) {
  Eigen::Matrix3d normal = Eigen::Matrix3d::Zero();
  Eigen::Vector3d right = Eigen::Vector3d::Zero();
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const Eigen::Vector3d f(1.0, h1[i], h2[i]);
    normal += w[i] * f * f.transpose();
    right += w[i] * samples[i].value * f;
  }
  Eigen::FullPivLU<Eigen::Matrix3d> lu(normal);
  lu.setThreshold(1e-12);  // the features are not independent here
  if (!lu.isInvertible()) return false;
  const Eigen::Vector3d solved = lu.solve(right);
  for (std::size_t r = 0; r < 3; ++r) x[r] = solved(static_cast<Eigen::Index>(r));
  return std::all_of(x.begin(), x.end(), [](double v) { return std::isfinite(v); });
}

// The halo form's parameters (offset, coefficient, coefficient2) by least squares; false where it does not apply.
bool fit_halo(RegressionLaw& law, std::span<const Sample> samples, std::span<const double> w, double scale) {
  std::vector<double> h1(samples.size());
  std::vector<double> h2(samples.size());
  for (std::size_t i = 0; i < samples.size(); ++i) {
    h1[i] = 1.0 / basis_value(law.basis, samples[i].n);
    h2[i] = face_rim(law.basis, samples[i].n);
    if (!std::isfinite(h1[i]) || !std::isfinite(h2[i])) return false;
  }
  // Three parameters fit any three faces exactly: the halo is claimed only from four or more.
  std::set<std::pair<double, double>> faces;
  for (std::size_t i = 0; i < samples.size(); ++i) faces.insert({h1[i], h2[i]});
  if (faces.size() < 4) return false;
  std::array<double, 3> x{};
  if (!weighted_fit3(h1, h2, samples, w, x)) return false;
  law.offset = std::abs(x[0]) <= kSnapTolerance * scale ? 0.0 : snap(x[0]);
  law.coefficient = snap(x[1]);
  law.coefficient2 = snap(x[2]);
  return law.coefficient != 0 && law.coefficient2 != 0;  // else a simpler form, tried before
}

// The power form c*n^p: log|v| = log|c| + p*log(n), which needs values of one sign, none zero, n > 0, and
// |p| <= kSteepestPower.
bool fit_power(RegressionLaw& law, std::span<const Sample> samples) {
  const double sign = samples[0].value < 0 ? -1.0 : 1.0;
  double sx = 0;
  double sy = 0;
  for (const Sample& s : samples) {
    if (!(s.n > 0) || !(s.value * sign > 0)) return false;
    sx += std::log(s.n);
    sy += std::log(s.value * sign);
  }
  const auto count = static_cast<double>(samples.size());
  const double xbar = sx / count;
  const double ybar = sy / count;
  double sxx = 0;
  double sxy = 0;
  for (const Sample& s : samples) {
    sxx += (std::log(s.n) - xbar) * (std::log(s.n) - xbar);
    sxy += (std::log(s.n) - xbar) * (std::log(s.value * sign) - ybar);
  }
  if (!(sxx > 0) || !(std::abs(sxy / sxx) <= kSteepestPower + 1e-9)) return false;
  law.exponent = sxy / sxx;
  law.coefficient = snap(sign * std::exp(ybar - law.exponent * xbar));
  return true;
}

// The constant, linear and inverse forms (offset + c*g(n), offset + c/g(n)); false where they do not apply.
bool fit_linear(RegressionLaw& law, const Candidate& cand, std::span<const Sample> samples, std::span<const double> w,
                double scale, bool median) {
  std::vector<double> h(samples.size(), 1.0);
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const double g = basis_value(cand.basis, samples[i].n);
    h[i] = cand.form == RegressionForm::Inverse ? 1.0 / g : g;
    if (!std::isfinite(h[i])) return false;  // g undefined, or an inverse basis that is 0 at some n (log2(1), n-1 at 1)
  }
  double offset = 0;
  double c = 0;
  if (cand.form == RegressionForm::Constant) {
    if (!weighted_fit(h, samples, w, false, offset, c)) return false;
    law.offset = snap(median ? median_of(samples) : c);
    return true;
  }
  if (!weighted_fit(h, samples, w, cand.with_offset, offset, c)) return false;
  law.coefficient = snap(c);
  // An offset that is rounding noise next to the values is no offset.
  law.offset = std::abs(offset) <= kSnapTolerance * scale ? 0.0 : snap(offset);
  return law.coefficient != 0;  // else that is the constant law, tried first
}

// Fits one candidate form; nullopt when it does not apply to these samples.
std::optional<RegressionLaw> fit_candidate(const Candidate& cand, std::span<const Sample> samples,
                                           std::span<const double> w, double scale, bool median) {
  RegressionLaw law;
  law.form = cand.form;
  law.basis = cand.basis;
  const bool fitted = cand.form == RegressionForm::Halo    ? fit_halo(law, samples, w, scale)
                      : cand.form == RegressionForm::Power ? fit_power(law, samples)
                                                           : fit_linear(law, cand, samples, w, scale, median);
  if (!fitted) return std::nullopt;
  double sum = 0;
  for (const Sample& s : samples) {
    const double e = relative_error(law.value_at(s.n), s.value, scale);
    if (!std::isfinite(e)) return std::nullopt;
    law.max_rel_error = std::max(law.max_rel_error, e);
    sum += e;
  }
  law.mean_rel_error = sum / static_cast<double>(samples.size());
  return law;
}

// The candidate forms, simplest first.
std::vector<Candidate> candidates(std::size_t distinct_n, const RegressionOptions& options) {
  const bool allow_power = options.allow_power;
  std::vector<Candidate> out{{RegressionForm::Constant, Basis::One, false}};
  if (distinct_n < 2) {
    return out;  // one process count: only a constant can be claimed
  }
  // Every basis but One and those of counts or sizes only, or the caller's choice.
  std::vector<Basis> bases;
  const bool chosen = !options.bases.empty();
  for (const Basis b : chosen ? std::span<const Basis>(options.bases) : all_bases().subspan(1)) {
    if (!chosen && sizes_only(b)) continue;
    if (b != Basis::One && options.allow_linear_inverse && (chosen || !counts_only(b))) bases.push_back(b);
  }
  for (const Basis b : bases) {
    out.push_back({RegressionForm::Linear, b, false});
    out.push_back({RegressionForm::Inverse, b, false});
  }
  // The grid's sides with an offset, before the power law (RegressionOptions::grid_bases): a block's face shrinks
  // as a side grows, so c/side first, then c*side (two runs fit both; the second falls below zero further out).
  const std::size_t grid = chosen ? std::min(options.grid_bases, bases.size()) : 0;
  for (std::size_t i = 0; i < grid; ++i) out.push_back({RegressionForm::Inverse, bases[i], true});
  for (std::size_t i = 0; i < grid; ++i) out.push_back({RegressionForm::Linear, bases[i], true});
  if (allow_power) {
    out.push_back({RegressionForm::Power, Basis::One, false});
  }
  for (std::size_t i = grid; i < bases.size(); ++i) {
    if (bases[i] != Basis::NMinus1) {  // offset + c*(n-1) is offset' + c*n
      out.push_back({RegressionForm::Linear, bases[i], true});
    }
    out.push_back({RegressionForm::Inverse, bases[i], true});
  }
  // A halo with a margin, only where the caller asks for it (sizes of a step across one face of a 3-D grid), even
  // without the linear and inverse forms.
  if (options.halo && sizes_only(*options.halo)) out.push_back({RegressionForm::Halo, *options.halo, true});
  return out;
}

// Fits candidates to the samples, or to all samples but one (leave-one-out).
struct Fitter {
  std::span<const Sample> samples;
  double scale = 0;  // the largest |value| of all the samples, for relative errors of zero values
  bool median = false;

  [[nodiscard]] std::optional<RegressionLaw> fit(const Candidate& cand, std::span<const Sample> subset) const {
    // Weights of the relative residuals; zero values get the absolute floor relative_error() uses.
    std::vector<double> w;
    for (const Sample& s : subset) {
      const double d = std::max(std::abs(s.value), scale > 0 ? kZeroFloor * scale : 1.0);
      w.push_back(1.0 / (d * d));
    }
    return fit_candidate(cand, subset, w, scale, median);
  }

  // Mean relative error of predicting each sample from the form fitted on the others; nullopt when the form
  // cannot be fitted without one of them.
  [[nodiscard]] std::optional<double> leave_one_out(const Candidate& cand) const {
    if (samples.size() < 2) return std::nullopt;
    double sum = 0;
    std::vector<Sample> rest;
    for (std::size_t i = 0; i < samples.size(); ++i) {
      rest.assign(samples.begin(), samples.end());
      rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(i));
      const std::optional<RegressionLaw> law = fit(cand, rest);
      const double e = law ? relative_error(law->value_at(samples[i].n), samples[i].value, scale)
                           : std::numeric_limits<double>::quiet_NaN();
      if (!std::isfinite(e)) return std::nullopt;
      sum += e;
    }
    return sum / static_cast<double>(samples.size());
  }

  // AICc on relative residuals with k the law's parameters; nullopt when there are not k + 2 samples.
  [[nodiscard]] std::optional<double> aicc(const RegressionLaw& law) const {
    const auto m = static_cast<double>(samples.size());
    const auto k = static_cast<double>(law.parameters());
    if (m <= k + 1) return std::nullopt;
    double rss = 0;
    for (const Sample& s : samples) rss += std::pow(relative_error(law.value_at(s.n), s.value, scale), 2);
    return m * std::log(std::max(rss, kRssFloor) / m) + 2 * k + 2 * k * (k + 1) / (m - k - 1);
  }

  [[nodiscard]] Scored scored(const Candidate& cand, RegressionLaw law) const {
    law.loo_rel_error = leave_one_out(cand);
    const std::optional<double> a = aicc(law);
    return Scored{std::move(law), a};
  }
};

// Whether candidate c, met after `best` in the order of simplicity, replaces it.
bool replaces(const Scored& c, const Scored& best) {
  if (!c.law.loo_rel_error) return false;
  if (!best.law.loo_rel_error) return true;
  const double loo = *c.law.loo_rel_error;
  const double best_loo = *best.law.loo_rel_error;
  if (c.law.parameters() <= best.law.parameters()) return loo < best_loo;
  // More parameters must pay for themselves.
  if (!(loo < kLooGain * best_loo)) return false;
  return !c.aicc || !best.aicc || *c.aicc < *best.aicc;
}

}  // namespace

std::vector<ExactLaw> fit_exact_all(std::span<const Sample> samples) {
  check_samples(samples, "exact law fit");
  const std::optional<std::vector<Sample>> points = merge_exact(samples);
  if (!points) {
    return {};
  }
  // A constant, if one fits, is the only law: any other basis would need a = 0.
  if (const auto c = to_rational(points->front().value, kMaxDenominator)) {
    if (std::all_of(points->begin(), points->end(),
                    [&](const Sample& s) { return close_exact(c->value(), s.value); })) {
      return {ExactLaw::constant(*c)};
    }
  }
  // The same points are fitted again and again (every frame, layout and rank class a pattern tries): the laws of
  // each set of points are kept, per dims rule (the dims bases follow it), in a memo that forgets when full.
  constexpr std::size_t kMemoLimit = 1 << 14;
  using MemoKey = std::pair<DimsRule, std::vector<std::pair<double, double>>>;
  thread_local std::map<MemoKey, std::vector<ExactLaw>> memo;
  MemoKey key{current_dims_rule(), {}};
  for (const Sample& s : *points) key.second.emplace_back(s.n, s.value);
  if (const auto hit = memo.find(key); hit != memo.end()) return hit->second;
  std::vector<ExactLaw> laws;
  for (const std::int64_t max_den : {std::int64_t{1}, kMaxDenominator}) {
    for (const Basis basis : all_bases()) {
      // One is the constant law; n-1 is an affine copy of n; the faces of a 3-D grid give sizes only.
      if (basis == Basis::One || basis == Basis::NMinus1 || sizes_only(basis)) {
        continue;
      }
      const auto law = exact_candidate(basis, *points, max_den);
      // The second pass finds the integer laws again: keep only the fractional ones there.
      if (law && (max_den == 1 || !law->a.is_integer() || !law->b.is_integer())) {
        laws.push_back(*law);
      }
    }
  }
  if (memo.size() >= kMemoLimit) memo.clear();
  memo.emplace(std::move(key), laws);
  return laws;
}

std::vector<std::int64_t> suggested_n(std::span<const Sample> samples) {
  std::vector<std::int64_t> ns;
  for (const Sample& s : samples) ns.push_back(std::llround(s.n));
  std::sort(ns.begin(), ns.end());
  ns.erase(std::unique(ns.begin(), ns.end()), ns.end());
  if (ns.empty() || ns.front() < 1) return ns;
  const std::vector<std::int64_t> fitted = ns;
  const std::int64_t top = fitted.back();
  const auto root = static_cast<std::int64_t>(basis_value(Basis::FloorSqrt, static_cast<double>(top)));
  const bool squares = fitted.size() > 1 && std::all_of(fitted.begin(), fitted.end(), [](std::int64_t n) {
                         const auto r =
                             static_cast<std::int64_t>(basis_value(Basis::FloorSqrt, static_cast<double>(n)));
                         return r * r == n;
                       });
  const std::int64_t step = fitted.size() > 2 ? fitted[1] - fitted[0] : 0;
  bool arithmetic = step > 0;
  for (std::size_t i = 1; i < fitted.size(); ++i) arithmetic = arithmetic && fitted[i] - fitted[i - 1] == step;
  for (std::int64_t k = 1; k <= 3; ++k) {
    // Runs at squares (a square grid) continue with squares, an arithmetic series with its next terms, anything
    // else (powers of two first) by doubling.
    ns.push_back(squares ? (root + k) * (root + k) : arithmetic ? top + k * step : top << k);
  }
  return ns;
}

bool whole_at(const ExactLaw& law, std::span<const std::int64_t> at, bool non_negative) {
  return std::all_of(at.begin(), at.end(), [&](std::int64_t n) {
    const std::optional<std::int64_t> v = n >= 1 ? law.integer_at(n) : std::nullopt;
    return v && (!non_negative || *v >= 0);
  });
}

std::string whole_nearby(const ExactLaw& law, std::int64_t n, bool non_negative) {
  const auto whole = [&](std::int64_t m) { return whole_at(law, std::span(&m, 1), non_negative); };
  std::vector<std::string> found;
  for (std::int64_t m = n - 1; m >= 1; --m) {
    if (whole(m)) {
      found.push_back("n = " + std::to_string(m));
      break;
    }
  }
  for (std::int64_t m = n + 1; m <= 2 * n; ++m) {
    if (whole(m)) {
      found.push_back("n = " + std::to_string(m));
      break;
    }
  }
  if (found.empty()) return "no n up to " + std::to_string(2 * n);
  return found.size() == 1 ? found[0] : found[0] + " and " + found[1];
}

int evaluability(const ExactLaw& law, std::span<const Sample> samples, const WholeAt& where) {
  if (!whole_at(law, where.n, where.non_negative)) return 2;
  std::vector<std::int64_t> own;
  for (const Sample& s : samples) own.push_back(std::llround(s.n));
  if (!whole_at(law, own, where.non_negative)) return 2;
  return whole_at(law, suggested_n(samples), where.non_negative) ? 0 : 1;
}

bool rounds_at_samples(const ExactLaw& law, std::span<const Sample> samples) {
  if (law.is_constant()) return false;
  return std::any_of(samples.begin(), samples.end(), [&](const Sample& s) {
    const std::int64_t n = std::llround(s.n);
    return n >= 1 && basis_rounds_at(law.basis, n);
  });
}

std::optional<ExactLaw> prefer_whole(std::span<const ExactLaw> laws, std::span<const Sample> samples,
                                     const WholeAt& where) {
  std::optional<ExactLaw> best;
  int best_rank = 6;
  for (const ExactLaw& law : laws) {
    const int rank = 2 * evaluability(law, samples, where) + (rounds_at_samples(law, samples) ? 1 : 0);
    if (rank < best_rank) {
      best = law;
      best_rank = rank;
    }
    if (rank == 0) break;
  }
  return best;
}

std::optional<ExactLaw> fit_exact(std::span<const Sample> samples, const WholeAt& where) {
  return prefer_whole(fit_exact_all(samples), samples, where);
}

double relative_error(double predicted, double actual, double scale) noexcept {
  const double floor = kZeroFloor * scale;
  const double denominator = std::max(std::abs(actual), floor > 0 ? floor : 1.0);
  return std::abs(predicted - actual) / denominator;
}

namespace {

/// A block's face W*(1/p_b + m_b)*(1/p_c + m_c) evaluated for its errors on the samples.
RegressionLaw block_law(Basis face, double coefficient, std::array<double, 2> margins, std::span<const Sample> samples,
                        double scale) {
  RegressionLaw law;
  law.form = RegressionForm::Block;
  law.basis = face;
  law.coefficient = snap(coefficient);
  law.margins = margins;
  double sum = 0;
  for (const Sample& s : samples) {
    const double e = relative_error(law.value_at(s.n), s.value, scale);
    law.max_rel_error = std::max(law.max_rel_error, std::isfinite(e) ? e : std::numeric_limits<double>::infinity());
    sum += std::isfinite(e) ? e : std::numeric_limits<double>::infinity();
  }
  law.mean_rel_error = sum / static_cast<double>(samples.size());
  return law;
}

/// Weighted least squares of v ~ a*f + b*g (no constant); false when f and g do not tell a and b apart.
bool weighted_fit2(std::span<const double> f, std::span<const double> g, std::span<const Sample> samples,
                   std::span<const double> w, double& a, double& b) {
  double ff = 0, fg = 0, gg = 0, fv = 0, gv = 0;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    ff += w[i] * f[i] * f[i];
    fg += w[i] * f[i] * g[i];
    gg += w[i] * g[i] * g[i];
    fv += w[i] * f[i] * samples[i].value;
    gv += w[i] * g[i] * samples[i].value;
  }
  const double det = ff * gg - fg * fg;
  if (!(std::abs(det) > 1e-12 * ff * gg)) return false;
  a = (fv * gg - gv * fg) / det;
  b = (gv * ff - fv * fg) / det;
  return std::isfinite(a) && std::isfinite(b);
}

}  // namespace

/// Errors below this are rounding: laws within it reproduce the samples exactly.
constexpr double kExact = 1e-9;

namespace {

/// Block laws with a margin along one side k of the face: W/(p_b p_c) + W m/p_other, linear in W and W m.
std::vector<RegressionLaw> one_side_margins(std::span<const Sample> samples, Basis face,
                                            const std::vector<std::array<double, 2>>& sides,
                                            const std::vector<double>& w, double scale) {
  std::vector<RegressionLaw> found;
  for (std::size_t k = 0; k < 2; ++k) {
    std::vector<double> f;
    std::vector<double> g;
    for (const std::array<double, 2>& p : sides) {
      f.push_back(1 / (p[0] * p[1]));
      g.push_back(1 / p[1 - k]);
    }
    double a = 0;
    double b = 0;
    if (!weighted_fit2(f, g, samples, w, a, b) || a == 0 || !(b / a > 0)) continue;  // ghost layers add points
    std::array<double, 2> margins{0, 0};
    margins[k] = b / a;
    found.push_back(block_law(face, a, margins, samples, scale));
  }
  return found;
}

/// The margins m that make samples i and j of a block law with the same margin along both sides: the ratio of two
/// samples of v = W (x + m y + m^2), x = 1/(p_b p_c), y = 1/p_b + 1/p_c, is a quadratic in m.
std::vector<double> margin_roots(std::span<const Sample> samples, const std::vector<std::array<double, 2>>& sides,
                                 std::size_t i, std::size_t j) {
  const double xi = 1 / (sides[i][0] * sides[i][1]);
  const double xj = 1 / (sides[j][0] * sides[j][1]);
  const double yi = 1 / sides[i][0] + 1 / sides[i][1];
  const double yj = 1 / sides[j][0] + 1 / sides[j][1];
  const double vi = samples[i].value;
  const double vj = samples[j].value;
  // vi (xj + m yj + m^2) = vj (xi + m yi + m^2)
  const double qa = vi - vj;
  const double qb = vi * yj - vj * yi;
  const double qc = vi * xj - vj * xi;
  std::vector<double> roots;
  if (std::abs(qa) <= 1e-12 * std::max(std::abs(vi), std::abs(vj))) {
    if (qb != 0) roots.push_back(-qc / qb);
  } else {
    const double disc = qb * qb - 4 * qa * qc;
    if (disc >= 0) {
      roots.push_back((-qb + std::sqrt(disc)) / (2 * qa));
      roots.push_back((-qb - std::sqrt(disc)) / (2 * qa));
    }
  }
  return roots;
}

/// Block laws with the same margin m along both sides, one per root of each pair of samples of different faces
/// (margin_roots()), W by least squares.
std::vector<RegressionLaw> equal_margins(std::span<const Sample> samples, Basis face,
                                         const std::vector<std::array<double, 2>>& sides, const std::vector<double>& w,
                                         double scale) {
  std::vector<RegressionLaw> found;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    for (std::size_t j = i + 1; j < samples.size(); ++j) {
      if (sides[i] == sides[j]) continue;
      for (const double m : margin_roots(samples, sides, i, j)) {
        if (!std::isfinite(m) || !(m > 0)) continue;
        double num = 0;
        double den = 0;
        for (std::size_t k = 0; k < samples.size(); ++k) {
          const double h = (1 / sides[k][0] + m) * (1 / sides[k][1] + m);
          num += w[k] * h * samples[k].value;
          den += w[k] * h * h;
        }
        if (den > 0) found.push_back(block_law(face, num / den, {m, m}, samples, scale));
      }
    }
  }
  return found;
}

}  // namespace

std::optional<RegressionLaw> fit_block_face(std::span<const Sample> samples, Basis face, double tolerance) {
  check_samples(samples, "block face fit");
  double scale = 0;
  std::vector<std::array<double, 2>> sides;
  std::set<std::array<double, 2>> faces;
  for (const Sample& s : samples) {
    scale = std::max(scale, std::abs(s.value));
    const std::optional<std::array<double, 2>> p = face_sides(face, s.n);
    if (!p) return std::nullopt;
    sides.push_back(*p);
    faces.insert(*p);
  }
  // Two parameters fit any two faces exactly; so does every other law of two parameters, which extrapolate no better
  // (at 4, 8 and 16 ranks a face across z is 2 x 1, 2 x 2, 2 x 2 processes): the block is the likelier there.
  if (faces.size() < 2 || !(scale > 0)) return std::nullopt;
  std::vector<double> w;
  for (const Sample& s : samples) {
    const double d = std::max(std::abs(s.value), kZeroFloor * scale);
    w.push_back(1.0 / (d * d));
  }
  std::vector<RegressionLaw> found = one_side_margins(samples, face, sides, w, scale);
  const std::vector<RegressionLaw> both = equal_margins(samples, face, sides, w, scale);
  found.insert(found.end(), both.begin(), both.end());
  // The closest; where several reproduce the samples exactly (two faces only), the same margin along both sides,
  // as a code that sends its face with every ghost layer does.
  const auto key = [](const RegressionLaw& law) {
    return std::make_pair(law.max_rel_error > kExact ? law.max_rel_error : 0.0,
                          law.margins[0] == law.margins[1] ? 0 : 1);
  };
  const RegressionLaw* best = nullptr;
  for (const RegressionLaw& law : found) {
    if (law.max_rel_error <= tolerance && (best == nullptr || key(law) < key(*best))) best = &law;
  }
  if (best == nullptr) return std::nullopt;
  return *best;
}

RegressionLaw fit_regression(std::span<const Sample> samples, const RegressionOptions& options) {
  check_samples(samples, "regression law fit");
  double scale = 0;
  std::vector<double> ns;
  for (const Sample& s : samples) {
    scale = std::max(scale, std::abs(s.value));
    ns.push_back(s.n);
  }
  std::sort(ns.begin(), ns.end());
  const auto distinct_n = static_cast<std::size_t>(std::unique(ns.begin(), ns.end()) - ns.begin());
  const Fitter fitter{samples, scale, options.median_constant};
  std::vector<Scored> fitted;
  for (const Candidate& cand : candidates(distinct_n, options)) {
    if (std::optional<RegressionLaw> law = fitter.fit(cand, samples)) {
      if (law->max_rel_error <= options.tolerance) {
        return fitter.scored(cand, std::move(*law)).law;
      }
      fitted.push_back(fitter.scored(cand, std::move(*law)));
    }
  }
  // The constant applies to any finite samples within check_samples()'s bound.
  if (fitted.empty()) throw ModelError("regression law fit: no law, not even a constant, fits the samples");
  const Scored* best = &fitted.front();
  for (const Scored& s : fitted) {
    if (replaces(s, *best)) best = &s;
  }
  return best->law;
}

}  // namespace p3s::modeler
