// SPDX-License-Identifier: BSD-3-Clause
// MPI_Dims_create(n, ndims) with all dimensions free, as Open MPI 4.1 and MPICH 4.0 compute it.
//
// Open MPI factors n into primes and hands the factors out from the largest to the smallest, each to the dimension
// whose product is currently the smallest, then sorts the dimensions into non-increasing order. The greedy result is
// not always the most balanced grid (72 on 2 dimensions: 12 x 6). MPICH takes the most balanced one: of the
// factorisations into ndims factors, the one whose largest and smallest factors differ least, and of those the
// lexicographically largest (360 on 3: 10 x 6 x 6 rather than 9 x 8 x 5). The test modeler.dims.matches_mpi
// compares each with the installed MPI for n = 1..4096 and ndims = 2, 3 (p3s_dims_reference).
#include "p3s/modeler/dims.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <string>
#include <tuple>

#include "p3s/error.hpp"
#include "p3s/stable_name.hpp"

namespace p3s::modeler {

namespace {

thread_local DimsRule g_rule = DimsRule::OpenMpi;

/// Prime factors of n in non-decreasing order (trial division: n is a process count).
std::vector<int> prime_factors(int n) {
  std::vector<int> factors;
  for (int p = 2; static_cast<long long>(p) * p <= n; ++p) {
    while (n % p == 0) {
      factors.push_back(p);
      n /= p;
    }
  }
  if (n > 1) {
    factors.push_back(n);
  }
  return factors;
}

std::vector<int> greedy(int n, int ndims) {
  std::vector<int> dims(static_cast<std::size_t>(ndims), 1);
  const std::vector<int> factors = prime_factors(n);
  for (auto p = factors.rbegin(); p != factors.rend(); ++p) {
    // Ties between equal products do not matter: the result is sorted below.
    *std::min_element(dims.begin(), dims.end()) *= *p;
  }
  std::sort(dims.begin(), dims.end(), std::greater<>());
  return dims;
}

/// The most balanced factorisation: every non-increasing list of ndims factors of n, searched from the largest
/// first factor down.
class Balanced {
 public:
  Balanced(int n, int ndims) : dims_(static_cast<std::size_t>(ndims), 1) {
    std::vector<int> large;
    for (int d = 1; static_cast<long long>(d) * d <= n; ++d) {
      if (n % d != 0) continue;
      divisors_.push_back(d);
      if (d != n / d) large.push_back(n / d);
    }
    divisors_.insert(divisors_.end(), large.rbegin(), large.rend());
    place(0, n, n);
  }
  [[nodiscard]] std::vector<int> best() const { return best_; }

 private:
  /// Factors k.. of `rest`, none above `cap`.
  void place(std::size_t k, int rest, int cap) {
    if (k + 1 == dims_.size()) {
      if (rest > cap) return;
      dims_[k] = rest;
      const int spread = dims_.front() - dims_.back();
      // Lists are visited in decreasing lexicographic order: the first of the least spread is the largest.
      if (best_.empty() || spread < best_spread_) {
        best_ = dims_;
        best_spread_ = spread;
      }
      return;
    }
    for (auto d = divisors_.rbegin(); d != divisors_.rend(); ++d) {
      if (*d > cap || rest % *d != 0) continue;
      // The remaining factors are at most *d each: their product cannot reach rest / *d below this.
      long long most = 1;
      for (std::size_t i = k + 1; i < dims_.size() && most < rest / *d; ++i) most *= *d;
      if (most < rest / *d) break;
      dims_[k] = *d;
      place(k + 1, rest / *d, *d);
    }
  }

  std::vector<int> divisors_;
  std::vector<int> dims_;
  std::vector<int> best_;
  int best_spread_ = 0;
};

}  // namespace

constexpr NameTable<DimsRule, 2> kDimsRuleNames{{{{DimsRule::OpenMpi, "openmpi"}, {DimsRule::Mpich, "mpich"}}}};

std::string_view dims_rule_name(DimsRule rule) noexcept { return kDimsRuleNames.name(rule, "openmpi"); }

std::optional<DimsRule> dims_rule_named(std::string_view name) noexcept { return kDimsRuleNames.value(name); }

std::optional<DimsRule> dims_rule_of_library(std::string_view library) noexcept {
  if (library.find("Open MPI") != std::string_view::npos) return DimsRule::OpenMpi;
  if (library.find("MPICH") != std::string_view::npos) return DimsRule::Mpich;
  return std::nullopt;
}

std::vector<int> dims_create(int n, int ndims, DimsRule rule) {
  if (n < 1 || ndims < 1) {
    throw InputError("dims_create(" + std::to_string(n) + ", " + std::to_string(ndims) +
                     "): the process count and the number of dimensions must both be at least 1");
  }
  if (rule == DimsRule::OpenMpi) return greedy(n, ndims);
  if (ndims > 3) {
    throw InputError("dims_create(" + std::to_string(n) + ", " + std::to_string(ndims) +
                     "): MPICH's grids are known for 2 and 3 dimensions only");
  }
  // The search visits the factorisations, which the dims bases ask for at the same few n again and again.
  thread_local std::map<std::pair<int, int>, std::vector<int>> cache;
  const auto found = cache.find({n, ndims});
  if (found != cache.end()) return found->second;
  std::vector<int> dims = Balanced(n, ndims).best();
  cache.emplace(std::make_pair(n, ndims), dims);
  return dims;
}

std::vector<int> dims_create(int n, int ndims) { return dims_create(n, ndims, g_rule); }

int dims_side(int n, int ndims, std::size_t index) {
  thread_local std::map<std::tuple<int, int, DimsRule>, std::vector<int>> cache;
  auto it = cache.find({n, ndims, g_rule});
  if (it == cache.end()) it = cache.emplace(std::make_tuple(n, ndims, g_rule), dims_create(n, ndims)).first;
  if (index >= it->second.size()) {
    throw InputError("dims_create(" + std::to_string(n) + ", " + std::to_string(ndims) + ") has no side " +
                     std::to_string(index));
  }
  return it->second[index];
}

DimsRule current_dims_rule() noexcept { return g_rule; }

ScopedDimsRule::ScopedDimsRule(DimsRule rule) noexcept : previous_(g_rule) { g_rule = rule; }

ScopedDimsRule::~ScopedDimsRule() { g_rule = previous_; }

}  // namespace p3s::modeler
