// SPDX-License-Identifier: BSD-3-Clause
// Learning how communicators are formed (world, self, blocks of consecutive ranks, strided ranks).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "p3s/modeler/model.hpp"

namespace p3s::modeler::detail {

/// The members (world ranks, in communicator order) of rank r's communicator in a run at n.
struct CommObservation {
  std::int64_t n = 0;
  std::int64_t r = 0;
  std::vector<std::int64_t> members;
};

/// The simplest communicator model reproducing every observation, or nullopt.
[[nodiscard]] std::optional<CommModel> learn_comm(std::span<const CommObservation> obs);

}  // namespace p3s::modeler::detail
