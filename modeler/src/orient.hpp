// SPDX-License-Identifier: BSD-3-Clause
// Which way a step goes along a periodic side of 2, where a step back and a step forward reach the same rank.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "p3s/modeler/model.hpp"

namespace p3s::modeler::detail {

/// Exchanges along a periodic dimension come in pairs, one step each way, in an order the code keeps for every
/// dimension (receive from +x, then from -x). Along a side that was 2 or 1 in every fitted run the order
/// cannot be seen, and each group's label was fitted with either sign; this gives such pairs the order that the
/// pairs along longer sides show, per MPI function and slot (most of them, when they differ). The steps are the
/// terms called once with constant labels of point-to-point groups of one case in a periodic frame, in the order
/// of the groups and of their terms (a group of two terms, the Sends of one exchange along z, is a pair); the
/// fitted runs are reproduced as before, since on those sides both signs name the same rank.
void orient_steps(std::vector<GroupModel>& groups, std::span<const std::int64_t> fitted_n);

/// A message's two ends must meet: where rank r sends to r + d along a periodic dimension, rank r + d receives from
/// (r + d) - d, so a step every rank takes needs its receive to step the other way. Along a side that was 2 (or 1)
/// in every fitted run the two ways reach the same rank, and the fit could give a send and its receive the same
/// sign (a code fitted on 2 to 8 ranks whose exchanges received from where they sent, which at 16 ranks, along a
/// side of 4, made every rank wait for a message its neighbour sends later). Per dimension, distance, communicator
/// and tag, the steps that send and those that receive pair in the order the phase makes them (a Sendrecv's two
/// slots, the terms of an MPI_Irecv group with those of the MPI_Send group after it); where both are as many, each
/// receive along such a side takes the opposite of its send. The fitted runs are reproduced as before.
void meet_steps(std::vector<GroupModel>& groups, std::span<const std::int64_t> fitted_n);

}  // namespace p3s::modeler::detail
