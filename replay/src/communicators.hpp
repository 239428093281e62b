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

/// Where the predicted ranks replay. Full mode: every predicted rank is the job's rank of the same number, on
/// MPI_COMM_WORLD. A range replay step: the predicted ranks of the measured ranges are the ranks of `base` (in
/// order), and a message with any other rank goes to this rank's black hole on `holes` instead.
struct Layout {
  MPI_Comm base = MPI_COMM_WORLD;
  /// Per predicted rank: its rank in `base`, or -1 for a rank outside the measured ranges; empty: the identity.
  std::vector<int> base_rank;
  MPI_Comm holes = MPI_COMM_NULL;
  int hole = -1;  ///< this rank's black hole in `holes` (-1: it has no message with outside ranks)
  [[nodiscard]] bool full() const noexcept { return base_rank.empty(); }
};

/// Where a message goes: a communicator and a rank in it, and whether that rank is a black hole standing in for the
/// predicted peer (which then answers a receive only when asked).
struct Route {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = MPI_PROC_NULL;
  bool hole = false;
};

/// Black-hole protocol: the tag of a request (a receive from an outside peer: its tag and count, or the end) and of
/// a message sent to a black hole (discarded), on Layout::holes.
inline constexpr int kHoleRequestTag = 0;
inline constexpr int kHoleDataTag = 1;

class Communicators {
 public:
  /// Builds `comms` in their order, one per distinct communicator at n (each split of the layout's base, restricted
  /// to its ranks). Collective over the base.
  Communicators(const std::vector<const modeler::CommModel*>& comms, std::int64_t n, std::int64_t rank,
                Layout layout = {});
  ~Communicators();
  Communicators(const Communicators&) = delete;
  Communicators& operator=(const Communicators&) = delete;

  /// The communicator of a model's CommModel (the replay's own copy of the world for the world).
  [[nodiscard]] MPI_Comm comm(const modeler::CommModel* c) const;
  /// World rank `world`'s rank in that communicator; MPI_PROC_NULL and MPI_ANY_SOURCE for modeler::kProcNull and
  /// modeler::kAnySource. @throws p3s::Error when it is not a member.
  [[nodiscard]] int rank_in(const modeler::CommModel* c, std::int64_t world) const;
  /// Where a message with predicted rank `world` goes: rank_in() on c, or this rank's black hole for a rank outside
  /// a range replay's measured ranges.
  [[nodiscard]] Route route(const modeler::CommModel* c, std::int64_t world) const;
  /// A collective's root: rank_in(), or 0 where the predicted root is outside the measured ranges.
  [[nodiscard]] int root_in(const modeler::CommModel* c, std::int64_t world) const;
  [[nodiscard]] const Layout& layout() const noexcept { return layout_; }
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
    std::vector<int> local;  ///< per predicted rank, its rank here or -1
  };
  std::size_t find_or_build(const modeler::CommModel& c);
  std::int64_t n_;
  std::int64_t rank_;
  Layout layout_;
  std::vector<Built> comms_;
  std::map<const modeler::CommModel*, std::size_t> index_;
};

}  // namespace p3s::replay::detail
