// SPDX-License-Identifier: BSD-3-Clause
// MPI_Dims_create without MPI: the balanced process grids the modeler's dims bases and expressions refer to, as the
// MPI library the application ran on computes them (Open MPI and MPICH choose differently at some counts).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace p3s::modeler {

/// Whose MPI_Dims_create a grid follows.
enum class DimsRule : std::uint8_t {
  OpenMpi,  ///< Open MPI 4.1: prime factors handed out largest first to the smallest dimension
  Mpich,    ///< MPICH 4.0: the factorisation whose largest and smallest dimensions differ least
};
/// Stable names: openmpi, mpich.
[[nodiscard]] std::string_view dims_rule_name(DimsRule rule) noexcept;
[[nodiscard]] std::optional<DimsRule> dims_rule_named(std::string_view name) noexcept;
/// The rule of the library a run used, from its MPI_Get_library_version line ("MPICH Version: 4.0.2",
/// "Open MPI v4.1.4, ..."); nullopt for an empty or unknown line.
[[nodiscard]] std::optional<DimsRule> dims_rule_of_library(std::string_view library) noexcept;

/// What MPI_Dims_create(n, ndims, dims) returns under `rule` with every dims[i] = 0 (all dimensions free): ndims
/// factors of n in non-increasing order (dims_create(12, 2, any) = {4, 3}; dims_create(72, 2, OpenMpi) = {12, 6},
/// dims_create(72, 2, Mpich) = {9, 8}).
/// @throws p3s::InputError when n < 1 or ndims < 1, or ndims > 3 under MPICH's rule (checked against MPICH for 2
/// and 3 dimensions only).
[[nodiscard]] std::vector<int> dims_create(int n, int ndims, DimsRule rule);

/// The same under this thread's current rule (current_dims_rule()): what the dims bases, grid frames and
/// expressions evaluate.
[[nodiscard]] std::vector<int> dims_create(int n, int ndims);

/// Side `index` of dims_create(n, ndims) under this thread's rule, remembered (the laws in dims(n) ask for the same
/// few n again and again while they are fitted). @throws p3s::InputError as dims_create() does, or for an index
/// out of range.
[[nodiscard]] int dims_side(int n, int ndims, std::size_t index);

/// The rule dims_create(n, ndims) follows in this thread: Open MPI's, unless a ScopedDimsRule is alive. A model
/// is fitted and evaluated under the rule of the library its runs used (Model::dims_rule).
[[nodiscard]] DimsRule current_dims_rule() noexcept;

/// Sets this thread's rule for its lifetime, and restores the previous one after.
class ScopedDimsRule {
 public:
  explicit ScopedDimsRule(DimsRule rule) noexcept;
  ~ScopedDimsRule();
  ScopedDimsRule(const ScopedDimsRule&) = delete;
  ScopedDimsRule& operator=(const ScopedDimsRule&) = delete;

 private:
  DimsRule previous_;
};

}  // namespace p3s::modeler
