// SPDX-License-Identifier: BSD-3-Clause
// Collective operations: bytes sent and received per rank, with Score-P's conventions so that archives from
// both tools mean the same thing, and MPI_IN_PLACE handled once here.
#include <cstdint>

#include "coll_bytes.hpp"
#include "recorder.hpp"
#include "state.hpp"

namespace p3s::interpose {
namespace {

std::uint64_t tsize(MPI_Datatype t) noexcept {
  if (t == MPI_DATATYPE_NULL) return 0;
  int s = 0;
  PMPI_Type_size(t, &s);
  return static_cast<std::uint64_t>(s);
}

std::uint64_t u(int v) noexcept { return v > 0 ? static_cast<std::uint64_t>(v) : 0; }

/// Collective roles of a call as recorded: bytes for this rank, and the root (rooted operations only).
raw::Coll describe(State& st, OTF2_CollectiveOp op, const CollArgs& a, std::uint64_t request) noexcept {
  CollShape shape;
  int inter = 0;
  PMPI_Comm_test_inter(a.comm, &inter);
  PMPI_Comm_rank(a.comm, &shape.me);
  // Collectives on inter-communicators send to the remote group; their bytes are not modelled (0).
  if (inter != 0)
    PMPI_Comm_remote_size(a.comm, &shape.size);
  else
    PMPI_Comm_size(a.comm, &shape.size);
  shape.root = is_rooted(op) ? a.root : -1;
  // MPI_IN_PLACE is given as the send buffer, except for the scatters where the root gives it as the
  // receive buffer.
  shape.in_place = a.sbuf == MPI_IN_PLACE || a.rbuf == MPI_IN_PLACE;
  shape.stype = tsize(a.sdtype);
  shape.rtype = tsize(a.rdtype);
  shape.sblock = u(a.scount) * shape.stype;
  shape.rblock = u(a.rcount) * shape.rtype;
  // Count arrays are significant only where MPI reads them (the root of a v-collective, every rank of an
  // all-to-all); elsewhere they may be null.
  const std::size_t n = static_cast<std::size_t>(shape.size);
  if (a.scounts != nullptr) shape.scounts = std::span<const int>(a.scounts, n);
  if (a.rcounts != nullptr) shape.rcounts = std::span<const int>(a.rcounts, n);
  const CollBytes b = inter != 0 ? CollBytes{} : collective_bytes(op, shape);
  return raw::Coll{comm_index(st, a.comm), static_cast<std::uint32_t>(op), shape.root, 0, b.sent, b.received, request};
}

}  // namespace

void on_collective(Scope& s, int rc, OTF2_CollectiveOp op, const CollArgs& a) noexcept {
  if (rc != MPI_SUCCESS) return;
  otf2::EventChunks& events = events_of(s.data());
  const raw::Coll c = describe(*g_state, op, a, 0);
  events.collective_begin(s.enter_ns());
  write_collective_end(events, s.leave_ns(), c, false);
}

void on_icollective(Scope& s, int rc, OTF2_CollectiveOp op, const CollArgs& a, const MPI_Request* request) noexcept {
  if (rc != MPI_SUCCESS) return;
  State& st = *g_state;
  const std::uint64_t id = st.next_request.fetch_add(1, std::memory_order_relaxed);
  // Bytes are computed now: the count arrays need not stay valid until completion.
  const raw::Coll c = describe(st, op, a, id);
  {
    TablesGuard g(st);
    RequestInfo info{.id = id,
                     .kind = RequestInfo::Kind::Collective,
                     .op = static_cast<std::uint8_t>(op),
                     .comm = c.comm,
                     .root = c.root,
                     .bytes = c.sent,
                     .received = c.received};
    if (!st.requests.add(handle_key(*request), s.data().index, info)) ++st.failures;
  }
  events_of(s.data()).request(otf2::Id::NonBlockingCollectiveRequest, s.enter_ns(), id);
}

}  // namespace p3s::interpose
