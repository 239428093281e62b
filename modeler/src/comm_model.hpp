// SPDX-License-Identifier: BSD-3-Clause
// Learning how communicators are formed (world, self, blocks of consecutive ranks, strided ranks).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "p3s/analyzer/signature.hpp"
#include "p3s/modeler/model.hpp"

namespace p3s::modeler::detail {

/// The members (world ranks, in communicator order) of rank r's communicator in a run at n, and the call that
/// created it (Other when unknown).
struct CommObservation {
  std::int64_t n = 0;
  std::int64_t r = 0;
  std::vector<std::int64_t> members;
  mpi::Function created_by = mpi::Function::Other;
};

/// The simplest communicator model reproducing every observation, or nullopt. Its creating call is the one
/// every observation names (Other when they differ). A block size or stride is a law that is a whole number at
/// `whole.n` (and where the observations suggest) whenever such a law reproduces them.
[[nodiscard]] std::optional<CommModel> learn_comm(std::span<const CommObservation> obs, const WholeAt& whole = {});

/// The observation of communicator `comm` (an id of the run's signature) at rank r of a run at n: its members
/// from the signature's communicator list (the world when the list does not have it and it has n members).
[[nodiscard]] CommObservation observe_comm(const analyzer::Signature& run, std::int64_t n, std::int64_t r,
                                           std::uint32_t comm, std::uint32_t comm_size);

}  // namespace p3s::modeler::detail
