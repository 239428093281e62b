// SPDX-License-Identifier: BSD-3-Clause
// Evaluating a model at a process count nobody ran: each phase's weight and every rank's calls with their
// peers, sizes, collectives and burst work (the method's LT4NC), written rank by rank.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "p3s/modeler/model.hpp"

namespace p3s::modeler {

/// A peer that is no rank: MPI_PROC_NULL (the call completes at once and moves nothing).
inline constexpr std::int64_t kProcNull = -1;
/// A receive's peer and tag that name no source or no tag: MPI_ANY_SOURCE and MPI_ANY_TAG. Predictions name the
/// source and tag a receive got (the recorder resolves wildcards), but a trace may hold them.
inline constexpr std::int64_t kAnySource = -2;
inline constexpr std::uint32_t kAnyTag = 0xffffffffU;

/// A predicted action inside a call (the kinds of signature.json).
struct PredictedAction {
  mpi::ActionKind kind = mpi::ActionKind::Send;  ///< Send, Recv, IrecvPost, IsendComplete or Collective
  std::int64_t peer = kProcNull;                 ///< messages: the world rank, kProcNull or kAnySource
  std::uint32_t tag = 0;                         ///< messages: the tag, or kAnyTag
  /// A receive whose tag the model does not know (the code's tag differs with the direction or the rank, such as
  /// a tag made of the axis and the side): the check matches it with the next message from its peer, whatever its
  /// tag, and settles `tag` to that message's (PhaseConsistency::settle), as the code's own receive would get it.
  bool tag_from_send = false;
  double bytes = 0;
  /// Collectives.
  mpi::Collective collective = mpi::Collective::None;
  std::int64_t root = -1;  ///< world rank
  double bytes_received = 0;
  /// Collectives: the bytes of one member's block (a Bcast's buffer, an Allreduce's vector, an Alltoall's block per
  /// peer), the same on every member of the communicator: what a replay passes as the count.
  double block = 0;
  /// Messages and collectives: the communicator, a model of the phase being predicted (so a PredictedRank, like
  /// the PhasePredictor that made it, is valid only while its Model lives), and its size at r.
  const CommModel* comm = nullptr;
  std::int64_t comm_size = 0;
  /// Completions: the call (index in the rank's calls of the instance) that started the request.
  std::int32_t started = -1;
};

struct PredictedCall {
  mpi::Function function = mpi::Function::Other;
  std::string call;  ///< the function's name
  std::vector<PredictedAction> actions;
  double burst_work = 0;  ///< work of the burst before the call
  /// Its duration in ns, once a compute-time model predicts it (nullopt until then).
  std::optional<double> burst_ns;
};

/// One rank's calls in one instance of a phase.
struct PredictedRank {
  std::int64_t rank = 0;
  std::vector<PredictedCall> calls;
  double tail_work = 0;           ///< work after the last call (trailing phases)
  std::optional<double> tail_ns;  ///< its duration, once predicted
};

/// A phase evaluated at one n. Construction costs O(n) (the ranks of each work class are counted); each rank is
/// then generated on its own, so a whole LT4NC never has to be in memory.
class PhasePredictor {
 public:
  /// @throws p3s::ModelError when a law cannot be evaluated at n.
  PhasePredictor(const PhaseModel& phase, std::int64_t n);
  [[nodiscard]] std::int64_t weight() const noexcept { return weight_; }
  [[nodiscard]] PredictedRank rank(std::int64_t r) const;
  /// Ranks in each of the phase's work classes at n.
  [[nodiscard]] const std::vector<std::int64_t>& class_ranks() const noexcept { return class_ranks_; }
  /// The work class of rank r.
  [[nodiscard]] std::size_t class_of(std::int64_t r) const;
  /// Predicted work per rank and instance of a rank in work class `cls`.
  [[nodiscard]] double class_work(std::size_t cls) const;
  /// Predicted compute time (ns) per rank and instance of a rank in work class `cls`; nullopt for a model
  /// without compute-time laws.
  [[nodiscard]] std::optional<double> class_time(std::size_t cls) const;

 private:
  const PhaseModel& phase_;
  std::int64_t n_;
  std::int64_t weight_;
  std::vector<std::int64_t> class_ranks_;  ///< ranks per work class at n
};

/// The phase order at n: the largest fitted run's, a phase in one stretch taking its weight at n and the stretches
/// of ModelLimits::fixed_count_phases keeping their counts.
[[nodiscard]] std::vector<PhaseRun> order_at(const Model& model, std::int64_t n);

}  // namespace p3s::modeler
