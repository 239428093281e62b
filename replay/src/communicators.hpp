// SPDX-License-Identifier: BSD-3-Clause
// The communicators a replay at n uses, built once before any phase runs: every rank walks the same list in the
// same order and splits MPI_COMM_WORLD for each communicator it has not built yet (the model's split rules), so
// the collective calls match on every rank.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "p3s/modeler/model.hpp"

namespace p3s::replay::detail {

class Communicators {
 public:
  /// Builds `comms` in their order, one per distinct communicator at n. Collective over MPI_COMM_WORLD.
  Communicators(const std::vector<const modeler::CommModel*>& comms, std::int64_t n, std::int64_t rank);
  ~Communicators();
  Communicators(const Communicators&) = delete;
  Communicators& operator=(const Communicators&) = delete;

  /// The communicator of a model's CommModel (the replay's own copy of the world for the world).
  [[nodiscard]] MPI_Comm comm(const modeler::CommModel* c) const;
  /// World rank `world`'s rank in that communicator; MPI_PROC_NULL and MPI_ANY_SOURCE for modeler::kProcNull and
  /// modeler::kAnySource. @throws p3s::Error when it is not a member.
  [[nodiscard]] int rank_in(const modeler::CommModel* c, std::int64_t world) const;
  /// How many distinct communicators were built (the world included).
  [[nodiscard]] std::size_t size() const noexcept { return comms_.size(); }
  /// Which of them a model's CommModel is (0, the world, for one the plan does not name).
  [[nodiscard]] std::size_t index_of(const modeler::CommModel* c) const;
  /// Built communicator `i`, and what its model says of it.
  [[nodiscard]] MPI_Comm at(std::size_t i) const { return comms_.at(i).comm; }
  [[nodiscard]] std::string describe(std::size_t i) const;

 private:
  struct Built {
    const modeler::CommModel* model = nullptr;
    MPI_Comm comm = MPI_COMM_NULL;
    std::vector<int> local;  ///< per world rank, its rank here or -1
  };
  std::size_t find_or_build(const modeler::CommModel& c);
  std::int64_t n_;
  std::int64_t rank_;
  std::vector<Built> comms_;
  std::map<const modeler::CommModel*, std::size_t> index_;
};

}  // namespace p3s::replay::detail
