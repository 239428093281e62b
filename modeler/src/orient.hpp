// SPDX-License-Identifier: BSD-3-Clause
// Which way a step goes along a periodic side of 2, where a step back and a step forward reach the same rank.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "p3s/modeler/model.hpp"

namespace p3s::modeler::detail {

/// Exchanges along a periodic dimension come in pairs, one step each way, in an order the code keeps for every
/// dimension (LAMMPS receives from +x, then from -x). Along a side that was 2 or 1 in every fitted run the order
/// cannot be seen, and each group's label was fitted with either sign; this gives such pairs the order that the
/// pairs along longer sides show, per MPI function and slot (most of them, when they differ). The steps are the
/// terms called once with constant labels of point-to-point groups of one case in a periodic frame, in the order
/// of the groups and of their terms (a group of two terms, the Sends of one exchange along z, is a pair); the
/// fitted runs are reproduced as before, since on those sides both signs name the same rank.
void orient_steps(std::vector<GroupModel>& groups, std::span<const std::int64_t> fitted_n);

}  // namespace p3s::modeler::detail
