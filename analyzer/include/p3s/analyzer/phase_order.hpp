// SPDX-License-Identifier: BSD-3-Clause
// A phase order as files write it: its runs, with the stretches that repeat folded into loops, so that a file's
// size does not grow with the number of iterations (a step of two phases, 10^6 times, is one loop).
#pragma once

#include <span>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "p3s/analyzer/signature.hpp"

namespace p3s::analyzer {

/// The order as JSON: an array whose items are runs, `[phase, count]`, or loops of runs,
/// `{"repeat": k, "runs": [[phase, count], ...]}` (the runs repeated k times in a row).
[[nodiscard]] nlohmann::json order_json(std::span<const PhaseRunEntry> order);

/// The order back from order_json's form (plain arrays of runs included), loops expanded.
/// @throws p3s::InputError when an item is neither, a count or repeat is not a whole number of at least 1, or the
/// order would hold more than 2^28 runs.
[[nodiscard]] std::vector<PhaseRunEntry> order_from_json(const nlohmann::json& j);

}  // namespace p3s::analyzer
