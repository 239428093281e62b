// SPDX-License-Identifier: BSD-3-Clause
// MPI_Dims_create(n, ndims) with all dimensions free, as Open MPI 4.1 computes it.
//
// Open MPI factors n into primes and hands the factors out from the largest to the smallest, each to the dimension
// whose product is currently the smallest, then sorts the dimensions into non-increasing order. The greedy result is
// not always the most balanced grid, so this follows the greedy rule rather than searching for the best one; the
// test modeler.dims.matches_mpi compares it with the installed MPI for n = 1..4096 and ndims = 2, 3.
#include "p3s/modeler/dims.hpp"

#include "p3s/error.hpp"

#include <algorithm>
#include <functional>
#include <string>

namespace p3s::modeler {

namespace {

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

}  // namespace

std::vector<int> dims_create(int n, int ndims) {
  if (n < 1 || ndims < 1) {
    throw InputError("dims_create(" + std::to_string(n) + ", " + std::to_string(ndims) +
                     "): the process count and the number of dimensions must both be at least 1");
  }
  std::vector<int> dims(static_cast<std::size_t>(ndims), 1);
  const std::vector<int> factors = prime_factors(n);
  for (auto p = factors.rbegin(); p != factors.rend(); ++p) {
    // Ties between equal products do not matter: the result is sorted below.
    *std::min_element(dims.begin(), dims.end()) *= *p;
  }
  std::sort(dims.begin(), dims.end(), std::greater<>());
  return dims;
}

}  // namespace p3s::modeler
