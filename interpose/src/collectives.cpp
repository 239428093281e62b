// SPDX-License-Identifier: BSD-3-Clause
// Collective operations: bytes sent and received per rank, with Score-P's conventions so that archives from
// both tools mean the same thing, and MPI_IN_PLACE handled once here.
#include <cstdint>

#include "recorder.hpp"
#include "state.hpp"

namespace p3s::interpose {
namespace {

struct Bytes {
  std::uint64_t sent = 0;
  std::uint64_t received = 0;
};

std::uint64_t tsize(MPI_Datatype t) noexcept {
  if (t == MPI_DATATYPE_NULL) return 0;
  int s = 0;
  PMPI_Type_size(t, &s);
  return static_cast<std::uint64_t>(s);
}

std::uint64_t sum(const int* counts, int n) noexcept {
  std::uint64_t total = 0;
  for (int i = 0; counts != nullptr && i < n; ++i) total += static_cast<std::uint64_t>(counts[i]);
  return total;
}

std::uint64_t u(int v) noexcept { return v > 0 ? static_cast<std::uint64_t>(v) : 0; }

/// Bytes of one rank's part in a collective on an intra-communicator of `n` ranks where it has rank `me`.
/// The root counts its own block on both sides (it "sends to itself"), except with MPI_IN_PLACE; every
/// all-to-all style operation counts n blocks each way.
Bytes collective_bytes(OTF2_CollectiveOp op, const CollArgs& a, int me, int n) noexcept {
  const bool root = me == a.root;
  const std::uint64_t un = u(n);
  // MPI_IN_PLACE is given as the send buffer, except for the scatters where the root gives it as the
  // receive buffer.
  const bool in_place = a.sbuf == MPI_IN_PLACE || a.rbuf == MPI_IN_PLACE;
  const std::uint64_t sblock = u(a.scount) * tsize(a.sdtype);
  const std::uint64_t rblock = u(a.rcount) * tsize(a.rdtype);
  switch (op) {
    case OTF2_COLLECTIVE_OP_BARRIER:
      return {};
    case OTF2_COLLECTIVE_OP_BCAST:
      return root ? Bytes{un * sblock, sblock} : Bytes{0, sblock};
    case OTF2_COLLECTIVE_OP_SCATTER:
      if (!root) return {0, rblock};
      return in_place ? Bytes{(un - 1) * sblock, 0} : Bytes{un * sblock, sblock};
    case OTF2_COLLECTIVE_OP_SCATTERV: {
      if (!root) return {0, rblock};
      const std::uint64_t sz = tsize(a.sdtype);
      const std::uint64_t total = sum(a.scounts, n) * sz;
      const std::uint64_t mine = u(a.scounts[me]) * sz;
      return in_place ? Bytes{total - mine, 0} : Bytes{total, mine};
    }
    case OTF2_COLLECTIVE_OP_GATHER:
    case OTF2_COLLECTIVE_OP_REDUCE:
      if (!root) return {sblock, 0};
      return in_place ? Bytes{0, (un - 1) * rblock} : Bytes{rblock, un * rblock};
    case OTF2_COLLECTIVE_OP_GATHERV: {
      if (!root) return {sblock, 0};
      const std::uint64_t sz = tsize(a.rdtype);
      const std::uint64_t total = sum(a.rcounts, n) * sz;
      const std::uint64_t mine = u(a.rcounts[me]) * sz;
      return in_place ? Bytes{0, total - mine} : Bytes{mine, total};
    }
    case OTF2_COLLECTIVE_OP_ALLGATHER:
    case OTF2_COLLECTIVE_OP_ALLTOALL:
    case OTF2_COLLECTIVE_OP_ALLREDUCE:
      if (in_place) return {(un - 1) * rblock, (un - 1) * rblock};
      return {un * sblock, un * rblock};
    case OTF2_COLLECTIVE_OP_ALLGATHERV: {
      const std::uint64_t sz = tsize(a.rdtype);
      const std::uint64_t total = sum(a.rcounts, n) * sz;
      const std::uint64_t mine = u(a.rcounts[me]) * sz;
      if (in_place) return {(un - 1) * mine, total - mine};
      return {un * sblock, total};
    }
    case OTF2_COLLECTIVE_OP_ALLTOALLV: {
      const std::uint64_t rsz = tsize(a.rdtype);
      const std::uint64_t received = sum(a.rcounts, n) * rsz;
      if (in_place) {
        const std::uint64_t others = received - u(a.rcounts[me]) * rsz;
        return {others, others};
      }
      return {sum(a.scounts, n) * tsize(a.sdtype), received};
    }
    case OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK: {
      const std::uint64_t b = in_place ? (un - 1) * rblock : un * rblock;
      return {b, b};
    }
    case OTF2_COLLECTIVE_OP_REDUCE_SCATTER: {
      const std::uint64_t sz = tsize(a.sdtype);
      const std::uint64_t total = sum(a.rcounts, n);
      const std::uint64_t mine = u(a.rcounts[me]);
      if (in_place) return {(total - mine) * sz, (un - 1) * mine * sz};
      return {total * sz, un * mine * sz};
    }
    case OTF2_COLLECTIVE_OP_SCAN:
    case OTF2_COLLECTIVE_OP_EXSCAN: {
      // Rank r contributes to ranks r..n-1 and receives from ranks 0..r; an exclusive scan (and an in-place
      // scan) leaves out the rank's own block.
      const std::uint64_t um = u(me);
      if (in_place || op == OTF2_COLLECTIVE_OP_EXSCAN) return {(un - um - 1) * sblock, um * sblock};
      return {(un - um) * sblock, (um + 1) * sblock};
    }
    default:
      return {};
  }
}

/// Collective roles of a call as recorded: bytes for this rank, and the root (rooted operations only).
raw::Coll describe(State& st, OTF2_CollectiveOp op, const CollArgs& a, std::uint64_t request) noexcept {
  int me = 0;
  int n = 1;
  int inter = 0;
  PMPI_Comm_test_inter(a.comm, &inter);
  PMPI_Comm_rank(a.comm, &me);
  // Collectives on inter-communicators count the remote group, as their data goes there.
  if (inter != 0) PMPI_Comm_remote_size(a.comm, &n);
  else PMPI_Comm_size(a.comm, &n);
  const Bytes b = inter != 0 ? Bytes{} : collective_bytes(op, a, me, n);
  const bool rooted = op == OTF2_COLLECTIVE_OP_BCAST || op == OTF2_COLLECTIVE_OP_REDUCE ||
                      op == OTF2_COLLECTIVE_OP_GATHER || op == OTF2_COLLECTIVE_OP_GATHERV ||
                      op == OTF2_COLLECTIVE_OP_SCATTER || op == OTF2_COLLECTIVE_OP_SCATTERV;
  return raw::Coll{comm_index(st, a.comm), static_cast<std::uint32_t>(op), rooted ? a.root : -1, 0, b.sent,
                   b.received, request};
}

}  // namespace

void on_collective(Scope& s, int rc, OTF2_CollectiveOp op, const CollArgs& a) noexcept {
  if (rc != MPI_SUCCESS) return;
  ThreadLog& log = *s.data().log;
  const raw::Coll c = describe(*g_state, op, a, 0);
  log.append(raw::Kind::CollBegin, 0, 0, s.enter_ns());
  log.append(raw::Kind::CollEnd, s.leave_ns(), c);
}

void on_icollective(Scope& s, int rc, OTF2_CollectiveOp op, const CollArgs& a, const MPI_Request* request) noexcept {
  if (rc != MPI_SUCCESS) return;
  State& st = *g_state;
  const std::uint64_t id = st.next_request.fetch_add(1, std::memory_order_relaxed);
  // Bytes are computed now: the count arrays need not stay valid until completion.
  const raw::Coll c = describe(st, op, a, id);
  {
    TablesGuard g(st);
    RequestInfo info{.id = id, .kind = RequestInfo::Kind::Collective, .op = static_cast<std::uint8_t>(op),
                     .comm = c.comm, .root = c.root, .bytes = c.sent, .received = c.received};
    if (!st.requests.put(handle_key(*request), info)) ++st.failures;
  }
  s.data().log->append(raw::Kind::NbCollRequest, s.enter_ns(), raw::Request{id});
}

}  // namespace p3s::interpose
