// SPDX-License-Identifier: BSD-3-Clause
// MPI_Dims_create without MPI: hand-checked grids, and (DimsMpiReference, run as modeler.dims.matches_mpi) the
// table the installed MPI writes.
#include "p3s/modeler/dims.hpp"

#include "p3s/error.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace {

using p3s::modeler::current_dims_rule;
using p3s::modeler::dims_create;
using p3s::modeler::dims_rule_name;
using p3s::modeler::dims_rule_named;
using p3s::modeler::dims_rule_of_library;
using p3s::modeler::DimsRule;
using p3s::modeler::ScopedDimsRule;
using Dims = std::vector<int>;

TEST(Dims, TwoDimensions) {
  EXPECT_EQ(dims_create(1, 2), (Dims{1, 1}));
  EXPECT_EQ(dims_create(4, 2), (Dims{2, 2}));
  EXPECT_EQ(dims_create(6, 2), (Dims{3, 2}));
  EXPECT_EQ(dims_create(8, 2), (Dims{4, 2}));
  EXPECT_EQ(dims_create(12, 2), (Dims{4, 3}));
  EXPECT_EQ(dims_create(16, 2), (Dims{4, 4}));
  EXPECT_EQ(dims_create(32, 2), (Dims{8, 4}));
  EXPECT_EQ(dims_create(36, 2), (Dims{6, 6}));
  EXPECT_EQ(dims_create(60, 2), (Dims{10, 6}));
}

TEST(Dims, ThreeDimensions) {
  EXPECT_EQ(dims_create(8, 3), (Dims{2, 2, 2}));
  EXPECT_EQ(dims_create(12, 3), (Dims{3, 2, 2}));
  EXPECT_EQ(dims_create(64, 3), (Dims{4, 4, 4}));
  EXPECT_EQ(dims_create(72, 3), (Dims{6, 4, 3}));
  EXPECT_EQ(dims_create(1024, 3), (Dims{16, 8, 8}));
}

TEST(Dims, PrimesStayWhole) {
  for (const int p : {2, 3, 5, 7, 13, 4093}) {
    EXPECT_EQ(dims_create(p, 2), (Dims{p, 1})) << p;
    EXPECT_EQ(dims_create(p, 3), (Dims{p, 1, 1})) << p;
  }
}

TEST(Dims, OneDimensionAndManyDimensions) {
  EXPECT_EQ(dims_create(48, 1), (Dims{48}));
  EXPECT_EQ(dims_create(16, 5), (Dims{2, 2, 2, 2, 1}));
}

TEST(Dims, FactorsMultiplyToNAndAreSorted) {
  for (int n = 1; n <= 1000; ++n) {
    for (int ndims = 1; ndims <= 4; ++ndims) {
      const Dims d = dims_create(n, ndims);
      ASSERT_EQ(d.size(), static_cast<std::size_t>(ndims));
      EXPECT_EQ(std::accumulate(d.begin(), d.end(), 1, std::multiplies<>()), n) << n << " " << ndims;
      EXPECT_TRUE(std::is_sorted(d.rbegin(), d.rend())) << n << " " << ndims;
    }
  }
}

TEST(Dims, MpichTakesTheMostBalancedGridAndOpenMpiItsGreedyOne) {
  // Values read off Open MPI 4.1.4 and MPICH 4.0.2 (Debian 12).
  EXPECT_EQ(dims_create(72, 2, DimsRule::OpenMpi), (Dims{12, 6}));
  EXPECT_EQ(dims_create(72, 2, DimsRule::Mpich), (Dims{9, 8}));
  EXPECT_EQ(dims_create(64, 3, DimsRule::Mpich), (Dims{4, 4, 4}));
  // Two grids as balanced (largest - smallest = 4): MPICH returns the lexicographically larger.
  EXPECT_EQ(dims_create(360, 3, DimsRule::Mpich), (Dims{10, 6, 6}));
  EXPECT_EQ(dims_create(3696, 3, DimsRule::Mpich), (Dims{22, 14, 12}));
  EXPECT_EQ(dims_create(7, 2, DimsRule::Mpich), (Dims{7, 1}));
  EXPECT_EQ(dims_create(1, 3, DimsRule::Mpich), (Dims{1, 1, 1}));
  // The thread's rule is the scope's, and comes back after it.
  EXPECT_EQ(dims_create(72, 2), (Dims{12, 6}));
  {
    const ScopedDimsRule mpich(DimsRule::Mpich);
    EXPECT_EQ(dims_create(72, 2), (Dims{9, 8}));
  }
  EXPECT_EQ(current_dims_rule(), DimsRule::OpenMpi);
}

TEST(Dims, TheRuleOfALibraryIsReadOffItsVersionLine) {
  EXPECT_EQ(dims_rule_of_library("MPICH Version:      4.0.2"), DimsRule::Mpich);
  EXPECT_EQ(dims_rule_of_library("Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4"),
            DimsRule::OpenMpi);
  EXPECT_FALSE(dims_rule_of_library("").has_value());
  EXPECT_FALSE(dims_rule_of_library("Some Vendor MPI 1.0").has_value());
  EXPECT_EQ(dims_rule_named(dims_rule_name(DimsRule::Mpich)), DimsRule::Mpich);
}

TEST(Dims, RejectsBadArguments) {
  EXPECT_THROW((void)dims_create(0, 2), p3s::InputError);
  EXPECT_THROW((void)dims_create(4, 0), p3s::InputError);
}

// The reference table of tests/unit/modeler/dims_reference.c; only run by modeler.dims.matches_mpi, which sets
// P3S_DIMS_REFERENCE to its path.
TEST(DimsMpiReference, MatchesInstalledMpi) {
  const char* path = std::getenv("P3S_DIMS_REFERENCE");
  if (path == nullptr) {
    GTEST_SKIP() << "set P3S_DIMS_REFERENCE to the output of p3s_dims_reference (ctest -R modeler.dims.matches_mpi)";
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << "cannot read " << path;
  std::string library;
  ASSERT_TRUE(std::getline(in, library) && library.rfind("library ", 0) == 0) << path << " names no library";
  const std::optional<DimsRule> rule = dims_rule_of_library(library);
  ASSERT_TRUE(rule.has_value()) << "no dims rule for " << library;
  int cases = 0;
  int mismatches = 0;
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    int ndims = 0;
    int n = 0;
    fields >> ndims >> n;
    Dims expected(static_cast<std::size_t>(ndims));
    for (int& d : expected) {
      fields >> d;
    }
    ASSERT_TRUE(fields && ndims >= 1) << "bad line '" << line << "'";
    ++cases;
    if (dims_create(n, ndims, *rule) != expected && ++mismatches <= 10) {
      ADD_FAILURE() << "dims_create(" << n << ", " << ndims << ", " << dims_rule_name(*rule) << ") differs from MPI ("
                    << library << "): " << line;
    }
  }
  EXPECT_EQ(mismatches, 0);
  EXPECT_EQ(cases, 2 * 4096);  // a truncated table must not pass
}

}  // namespace
