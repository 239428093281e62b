// SPDX-License-Identifier: BSD-3-Clause
// A range replay's noise: two ranks on the black-hole nodes that send each other, per phase instance of the step's
// measured ranges, the messages between other ranges that the full run has in flight then and the step does not make
// (RangeStep::noise_messages, of the phase's mean size), so that the network carries about what it carries in the
// full run. Paced by the measured ranges: their first rank cues the noise at the start of each of its instances.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <map>
#include <utility>

namespace p3s::replay::detail {

/// Where a measured rank sends its cues (noise comm: MPI_COMM_NULL where it sends none).
struct NoiseCue {
  MPI_Comm comm = MPI_COMM_NULL;
  int leader = -1;  ///< the noise rank cued, in comm
  /// Cues the noise for an instance of phase `id` starting now.
  void instance(std::uint32_t id) const;
  /// Tells the noise the step is over.
  void end() const;
};

/// Per phase id: the messages per instance and their size in bytes.
using NoiseLoad = std::map<std::uint32_t, std::pair<double, double>>;

/// The two noise ranks' side of one step: the leader (cued by rank `cuer` of comm) forwards each cue to the
/// follower, and the two then exchange the phase's messages, half each way, until the end cue. Returns the messages
/// this rank sent.
std::int64_t serve_as_noise(MPI_Comm comm, bool leader, int cuer, int other, const NoiseLoad& load);

}  // namespace p3s::replay::detail
