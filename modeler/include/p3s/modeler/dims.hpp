// SPDX-License-Identifier: BSD-3-Clause
// MPI_Dims_create without MPI: the balanced process grids the modeler's dims bases and expressions refer to.
#pragma once

#include <vector>

namespace p3s::modeler {

/// What Open MPI 4.1's MPI_Dims_create(n, ndims, dims) returns with every dims[i] = 0 (all dimensions free):
/// ndims factors of n, as balanced as its greedy assignment makes them, in non-increasing order
/// (dims_create(12, 2) = {4, 3}; dims_create(7, 2) = {7, 1}; dims_create(64, 3) = {4, 4, 4}).
/// @throws p3s::InputError when n < 1 or ndims < 1.
[[nodiscard]] std::vector<int> dims_create(int n, int ndims);

}  // namespace p3s::modeler
