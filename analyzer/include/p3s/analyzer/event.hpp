// SPDX-License-Identifier: BSD-3-Clause
// One trace event as the reader delivers it: a flat value type with peers and roots already resolved to
// MPI_COMM_WORLD ranks and times in nanoseconds since the trace start.
#pragma once

#include "p3s/analyzer/definitions.hpp"
#include "p3s/mpi/vocabulary.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace p3s::analyzer {

/// The OTF2 records the analyzer understands; every other record is skipped.
enum class EventKind : std::uint8_t {
  Enter,                 ///< region, metrics, callsite
  Leave,                 ///< region, metrics
  MpiSend,               ///< peer, comm, tag, bytes (blocking send, or the send half of MPI_Sendrecv)
  MpiIsend,              ///< peer, comm, tag, bytes, request
  MpiIsendComplete,      ///< request
  MpiIrecvRequest,       ///< request (the receive was posted)
  MpiIrecv,              ///< peer, comm, tag, bytes, request (the receive completed)
  MpiRecv,               ///< peer, comm, tag, bytes
  MpiRequestCancelled,   ///< request
  CollectiveBegin,       ///< (no payload)
  CollectiveEnd,         ///< op, comm, root, bytes (sent), bytes_received
  NbCollectiveRequest,   ///< request (a non-blocking collective was started)
  NbCollectiveComplete,  ///< op, comm, root, bytes (sent), bytes_received, request
  CommCreate,            ///< comm
  CommDestroy,           ///< comm
};

/// Most metric values one Enter/Leave carries; more are dropped.
inline constexpr std::size_t kMaxEventMetrics = 8;

/// One event. Which fields are meaningful depends on `kind` (see EventKind); the others keep their defaults.
struct Event {
  EventKind kind = EventKind::Enter;
  std::uint64_t time_ns = 0;  ///< since the trace start (clock offsets applied)

  // Enter / Leave
  std::uint32_t region = kNoRef;
  std::uint32_t callsite = kNoRef;      ///< string id of the P3S_CALLSITE attribute (Enter), kNoRef if absent
  std::uint32_t metric_class = kNoRef;  ///< class of the first Metric record attached, kNoRef if none
  std::uint8_t metric_count = 0;
  /// Raw values of the Metric record(s) written just before this Enter/Leave at the same time; interpret
  /// them with the class members' MetricValueType (double values are stored as their bit pattern).
  std::array<std::uint64_t, kMaxEventMetrics> metric_values{};
  /// The work metric (definitions().work_metric_member) at this point, if recorded.
  std::optional<std::uint64_t> work;

  // Messages and collectives
  std::uint32_t comm = kNoRef;
  std::uint32_t rank_in_comm = kNoRef;  ///< peer (messages) or root (collectives) as recorded, in `comm`
  std::int32_t peer = kNoRank;          ///< world rank of the peer; kUnresolvedRank if it cannot be mapped
  std::uint32_t tag = 0;
  std::uint64_t bytes = 0;           ///< message length, or bytes sent by a collective
  std::uint64_t bytes_received = 0;  ///< collectives only
  std::uint64_t request = 0;         ///< request id (non-blocking operations)
  mpi::Collective op = mpi::Collective::Unknown;
  std::int32_t root = kNoRank;  ///< world rank of the root; kNoRank for rootless collectives
};

/// "MPI_SEND"-style name of an event kind (as otf2-print spells records).
[[nodiscard]] std::string_view event_kind_name(EventKind kind) noexcept;
/// True for the records that only MPI produces (messages, requests, collectives, communicators).
[[nodiscard]] bool is_mpi_record(EventKind kind) noexcept;

}  // namespace p3s::analyzer
