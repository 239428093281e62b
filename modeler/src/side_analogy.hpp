// SPDX-License-Identifier: BSD-3-Clause
// Exchanges along a side no fitted run showed longer than 2, made as the same code made them along a side that was:
// a code that loops over the dimensions of its grid runs the same exchange along each, so what a longer side added
// along one dimension (a second exchange each way where the neighbours either way are no longer one rank) it adds
// along another once that side is longer too.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "p3s/modeler/model.hpp"

namespace p3s::modeler::detail {

/// Where the fitted runs showed, along dimension d0 of the phase's grid (GridSeen), a side longer than 2 adding calls
/// to an exchange, and the same exchange along another dimension d1 only on sides of 1 or 2: the groups stepping
/// along d1 are given d0's laws for those calls (moved to d1's side) and the calls d1 never showed are added, as d0
/// made them, with the sizes of d1's own messages of the same function. The exchanges are blocks of consecutive
/// groups stepping along one dimension (with the completions of their requests), alike but for their dimension, and
/// one per dimension in a row (a loop over the dimensions); a block whose laws cannot be moved (a count that follows
/// something other than d0's side) is left as it was. Every rank of every fitted run still makes the calls it made.
/// Records in the phase's grid_seen which dimension each extended one follows; returns one note per block extended.
[[nodiscard]] std::vector<std::string> extend_along_shorter_sides(PhaseModel& pm,
                                                                  const std::vector<std::int64_t>& fitted_n);

/// Where the fitted runs showed an exchange made only along sides longer than 2 (no call where the side is 2 or
/// less), the same along two or more dimensions in a row in one order of them (a loop over the dimensions), and a
/// dimension of the grid that no fitted run had longer than 2: the exchange is added along it, at its place in the
/// row's order, as the one next to it there makes it (patterns, counts and sizes moved to the new dimension). Every
/// rank of every fitted run still makes the calls it made. Records in grid_seen which dimension each added one
/// follows; returns one note per exchange added.
[[nodiscard]] std::vector<std::string> add_exchanges_along_shorter_sides(PhaseModel& pm,
                                                                         const std::vector<std::int64_t>& fitted_n);

}  // namespace p3s::modeler::detail
