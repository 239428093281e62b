// SPDX-License-Identifier: BSD-3-Clause
// One rank's calls of one phase instance made as real MPI calls: the recorded kind of each call (blocking,
// non-blocking with its completion, collective on its communicator) with the predicted peers, tags and sizes.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "collective_cost.hpp"
#include "communicators.hpp"
#include "p3s/modeler/predict.hpp"
#include "pacing.hpp"

namespace p3s::replay::detail {

class Executor {
 public:
  /// `largest` is the largest message or block any rank sends (receives get room for it). `pacing`, in a range
  /// replay, records the sends between ranges and holds back receives from black holes until their sender sent.
  Executor(const Communicators& comms, std::int64_t rank, double largest, Pacing* pacing = nullptr);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  /// Starts an instance of `calls`' phase: no request is outstanding from it yet.
  void begin(const std::vector<modeler::PredictedCall>& calls);
  /// Makes call `index` of the instance.
  /// @throws p3s::Error naming the call when MPI returns an error.
  void execute(const modeler::PredictedCall& call, std::size_t index);
  /// Completes the requests the instance started and did not complete (a request freed by the application).
  void end();
  /// How much longer the call's collectives take at the predicted size than on the ranks that made them here: the
  /// ratio of log2 of the members (1 in a full replay, for a call that is no collective, or for one made alone).
  [[nodiscard]] double collective_scale(const modeler::PredictedCall& call) const;
  /// How much longer the call's collectives take at the predicted size than here, by `costs`; nullopt where one of
  /// them was not calibrated (0 in a full replay, or for a call that is no collective).
  [[nodiscard]] std::optional<double> collective_extra(const modeler::PredictedCall& call,
                                                       const CollectiveCosts& costs) const;

 private:
  void point_to_point(const modeler::PredictedCall& call, std::size_t index);
  void completion(const modeler::PredictedCall& call);
  /// Completes `requests` with the call's function (one, all, any, some; a test polls).
  void wait_for(const modeler::PredictedCall& call, std::vector<MPI_Request>& requests);
  void collective(const modeler::PredictedCall& call, const modeler::PredictedAction& a);
  void null_call(const modeler::PredictedCall& call);
  /// Whether an action of the call has a peer outside a range replay's measured ranges.
  [[nodiscard]] bool through_hole(const modeler::PredictedCall& call) const;
  /// The tag of a message on its route: a black hole's data tag, or the predicted one.
  [[nodiscard]] static int hole_tag(const Route& to, std::uint32_t tag);
  /// Asks the black hole for the message an outside peer would have sent (its tag and count).
  void request_from_hole(const Route& to, const modeler::PredictedAction& a, const modeler::PredictedCall& call);
  /// Completes the send half of a Sendrecv made as two halves.
  void completion_of_halves(const modeler::PredictedCall& call);
  /// Where the call's action `a` is a receive from a black hole: when its message may arrive (0: at once).
  [[nodiscard]] std::int64_t due(const Route& to, const modeler::PredictedAction& a);
  /// Starts request `r` of call `index`, which may complete at `due`.
  void started(std::size_t index, MPI_Request r, std::int64_t due = 0);
  void check(int status, const modeler::PredictedCall& call) const;
  char* receive_buffer(std::size_t index, std::size_t slot, double bytes);
  char* scratch(std::vector<char>& buffer, std::size_t bytes);

  const Communicators& comms_;
  std::int64_t rank_;
  std::size_t largest_;
  std::vector<char> send_;
  std::vector<char> recv_;
  std::vector<char> coll_in_;
  std::vector<char> coll_out_;
  std::vector<std::vector<MPI_Request>> started_;       ///< per call index: the requests it started
  std::vector<std::vector<std::int64_t>> due_;          ///< and the earliest each may complete (0: at once)
  std::vector<std::size_t> taken_;                      ///< per call index: how many of them a completion took
  std::vector<std::vector<std::vector<char>>> posted_;  ///< per call index and receive: its buffer
  /// Requests of non-blocking calls to MPI_PROC_NULL (a grid's boundary): the next completion call completes them
  /// with the others, as the application's did.
  std::vector<MPI_Request> null_requests_;
  std::vector<MPI_Comm> made_;  ///< communicators made where the application made one, freed where it freed one
  Pacing* pacing_ = nullptr;
};

/// Runs a collective that moves data or synchronises, with `block` bytes per member (reductions as MPI_BOR on
/// MPI_BYTE) from `in` into `out` (room for `block` x the members in each). MPI_SUCCESS for one that is local.
int move_data(mpi::Collective op, char* in, char* out, int block, int root, MPI_Comm comm);

/// The MPI count of a predicted size in bytes (rounded; at most INT_MAX).
[[nodiscard]] int count_of(double bytes);

}  // namespace p3s::replay::detail
