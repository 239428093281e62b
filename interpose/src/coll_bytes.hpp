// SPDX-License-Identifier: BSD-3-Clause
// Bytes one rank sends and receives in a collective, with Score-P's conventions, as a pure function.
#pragma once

#include <cstdint>
#include <span>

#include <otf2/OTF2_Events.h>

namespace p3s::interpose {

/// A collective call reduced to numbers: block sizes in bytes and per-rank counts in elements.
struct CollShape {
  int me = 0;                    ///< rank in the communicator
  int size = 1;                  ///< communicator size
  int root = -1;                 ///< root rank, -1 when the operation has none
  bool in_place = false;         ///< MPI_IN_PLACE was given
  std::uint64_t sblock = 0;      ///< sendcount × size(sendtype)
  std::uint64_t rblock = 0;      ///< recvcount × size(recvtype)
  std::uint64_t stype = 0;       ///< size(sendtype), for per-rank send counts
  std::uint64_t rtype = 0;       ///< size(recvtype), for per-rank receive counts
  std::span<const int> scounts;  ///< sendcounts (v-variants), empty when absent or not significant
  std::span<const int> rcounts;  ///< recvcounts (v-variants, reduce_scatter)
};

struct CollBytes {
  std::uint64_t sent = 0;
  std::uint64_t received = 0;
  friend bool operator==(const CollBytes&, const CollBytes&) = default;
};

/// Bytes of one rank's part. The root counts its own block on both sides (it "sends to itself") except
/// with MPI_IN_PLACE; all-to-all style operations count `size` blocks each way.
[[nodiscard]] CollBytes collective_bytes(OTF2_CollectiveOp op, const CollShape& c) noexcept;

/// Whether the operation has a root (Bcast, Reduce, Gather(v), Scatter(v)).
[[nodiscard]] bool is_rooted(OTF2_CollectiveOp op) noexcept;

}  // namespace p3s::interpose
