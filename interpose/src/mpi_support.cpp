// SPDX-License-Identifier: BSD-3-Clause
// PMPI-only helpers for the tool's own communication.
#include "mpi_support.hpp"

#include <algorithm>
#include <limits>
#include <new>

#include "clock.hpp"

/// OTF2 leaves the collective context to the user: ours is a communicator.
struct OTF2_CollectiveContext {
  MPI_Comm comm;
};

namespace p3s::interpose {
namespace {

MPI_Datatype mpi_type(OTF2_Type t) {
  switch (t) {
    case OTF2_TYPE_UINT8:
      return MPI_UINT8_T;
    case OTF2_TYPE_INT8:
      return MPI_INT8_T;
    case OTF2_TYPE_UINT16:
      return MPI_UINT16_T;
    case OTF2_TYPE_INT16:
      return MPI_INT16_T;
    case OTF2_TYPE_UINT32:
      return MPI_UINT32_T;
    case OTF2_TYPE_INT32:
      return MPI_INT32_T;
    case OTF2_TYPE_UINT64:
      return MPI_UINT64_T;
    case OTF2_TYPE_INT64:
      return MPI_INT64_T;
    case OTF2_TYPE_FLOAT:
      return MPI_FLOAT;
    case OTF2_TYPE_DOUBLE:
      return MPI_DOUBLE;
    default:
      return MPI_BYTE;
  }
}

OTF2_CallbackCode code(int rc) { return rc == MPI_SUCCESS ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_ERROR; }

OTF2_CallbackCode cb_size(void*, OTF2_CollectiveContext* c, uint32_t* size) {
  int n = 0;
  const int rc = PMPI_Comm_size(c->comm, &n);
  *size = static_cast<uint32_t>(n);
  return code(rc);
}

OTF2_CallbackCode cb_rank(void*, OTF2_CollectiveContext* c, uint32_t* rank) {
  int r = 0;
  const int rc = PMPI_Comm_rank(c->comm, &r);
  *rank = static_cast<uint32_t>(r);
  return code(rc);
}

OTF2_CallbackCode cb_create_local(void*, OTF2_CollectiveContext** local, OTF2_CollectiveContext* global,
                                  uint32_t global_rank, uint32_t, uint32_t, uint32_t, uint32_t file_number, uint32_t) {
  auto* ctx = new (std::nothrow) OTF2_CollectiveContext{MPI_COMM_NULL};
  if (ctx == nullptr) return OTF2_CALLBACK_ERROR;
  const int rc =
      PMPI_Comm_split(global->comm, static_cast<int>(file_number), static_cast<int>(global_rank), &ctx->comm);
  *local = ctx;
  return code(rc);
}

OTF2_CallbackCode cb_free_local(void*, OTF2_CollectiveContext* local) {
  const int rc = PMPI_Comm_free(&local->comm);
  delete local;
  return code(rc);
}

OTF2_CallbackCode cb_barrier(void*, OTF2_CollectiveContext* c) { return code(PMPI_Barrier(c->comm)); }

OTF2_CallbackCode cb_bcast(void*, OTF2_CollectiveContext* c, void* data, uint32_t n, OTF2_Type t, uint32_t root) {
  return code(PMPI_Bcast(data, static_cast<int>(n), mpi_type(t), static_cast<int>(root), c->comm));
}

OTF2_CallbackCode cb_gather(void*, OTF2_CollectiveContext* c, const void* in, void* out, uint32_t n, OTF2_Type t,
                            uint32_t root) {
  return code(PMPI_Gather(in, static_cast<int>(n), mpi_type(t), out, static_cast<int>(n), mpi_type(t),
                          static_cast<int>(root), c->comm));
}

std::vector<int> displacements(const std::vector<int>& counts) {
  std::vector<int> d(counts.size(), 0);
  for (std::size_t i = 1; i < counts.size(); ++i) d[i] = d[i - 1] + counts[i - 1];
  return d;
}

OTF2_CallbackCode cb_gatherv(void*, OTF2_CollectiveContext* c, const void* in, uint32_t in_n, void* out,
                             const uint32_t* out_n, OTF2_Type t, uint32_t root) {
  int me = 0;
  int size = 0;
  PMPI_Comm_rank(c->comm, &me);
  PMPI_Comm_size(c->comm, &size);
  std::vector<int> counts;
  if (me == static_cast<int>(root)) counts.assign(out_n, out_n + size);
  const std::vector<int> displs = displacements(counts);
  return code(PMPI_Gatherv(in, static_cast<int>(in_n), mpi_type(t), out, counts.data(), displs.data(), mpi_type(t),
                           static_cast<int>(root), c->comm));
}

OTF2_CallbackCode cb_scatter(void*, OTF2_CollectiveContext* c, const void* in, void* out, uint32_t n, OTF2_Type t,
                             uint32_t root) {
  return code(PMPI_Scatter(in, static_cast<int>(n), mpi_type(t), out, static_cast<int>(n), mpi_type(t),
                           static_cast<int>(root), c->comm));
}

OTF2_CallbackCode cb_scatterv(void*, OTF2_CollectiveContext* c, const void* in, const uint32_t* in_n, void* out,
                              uint32_t out_n, OTF2_Type t, uint32_t root) {
  int me = 0;
  int size = 0;
  PMPI_Comm_rank(c->comm, &me);
  PMPI_Comm_size(c->comm, &size);
  std::vector<int> counts;
  if (me == static_cast<int>(root)) counts.assign(in_n, in_n + size);
  const std::vector<int> displs = displacements(counts);
  return code(PMPI_Scatterv(in, counts.data(), displs.data(), mpi_type(t), out, static_cast<int>(out_n), mpi_type(t),
                            static_cast<int>(root), c->comm));
}

void cb_release(void*, OTF2_CollectiveContext*, OTF2_CollectiveContext*) {}

constexpr OTF2_CollectiveCallbacks kCallbacks = {cb_release,    cb_size,    cb_rank,    cb_create_local,
                                                 cb_free_local, cb_barrier, cb_bcast,   cb_gather,
                                                 cb_gatherv,    cb_scatter, cb_scatterv};

constexpr int kTagClock = 7001;
constexpr int kPingPongs = 16;

}  // namespace

OTF2_ErrorCode set_otf2_mpi_collectives(OTF2_Archive* archive, MPI_Comm comm) {
  // The context must outlive the archive; one per process is enough.
  static OTF2_CollectiveContext global{MPI_COMM_NULL};
  global.comm = comm;
  return OTF2_Archive_SetCollectiveCallbacks(archive, &kCallbacks, nullptr, &global, nullptr);
}

std::int64_t measure_clock_offset(MPI_Comm comm, const std::vector<bool>& needs_sync) {
  int me = 0;
  int size = 0;
  PMPI_Comm_rank(comm, &me);
  PMPI_Comm_size(comm, &size);
  std::int64_t offset = 0;
  for (int r = 1; r < size; ++r) {
    if (!needs_sync[static_cast<std::size_t>(r)]) continue;
    if (me == 0) {
      // Rank 0 pings; the reply carrying the remote clock with the shortest round trip gives the offset
      // (Cristian's algorithm): remote time corresponds to the midpoint of the round trip.
      std::uint64_t best_rtt = std::numeric_limits<std::uint64_t>::max();
      std::int64_t best = 0;
      for (int i = 0; i < kPingPongs; ++i) {
        std::uint64_t remote = 0;
        const std::uint64_t t0 = clock_ns();
        PMPI_Send(&t0, 1, MPI_UINT64_T, r, kTagClock, comm);
        PMPI_Recv(&remote, 1, MPI_UINT64_T, r, kTagClock, comm, MPI_STATUS_IGNORE);
        const std::uint64_t t1 = clock_ns();
        if (t1 - t0 < best_rtt) {
          best_rtt = t1 - t0;
          best = static_cast<std::int64_t>(t0 + (t1 - t0) / 2) - static_cast<std::int64_t>(remote);
        }
      }
      PMPI_Send(&best, 1, MPI_INT64_T, r, kTagClock, comm);
    } else if (me == r) {
      for (int i = 0; i < kPingPongs; ++i) {
        std::uint64_t ping = 0;
        PMPI_Recv(&ping, 1, MPI_UINT64_T, 0, kTagClock, comm, MPI_STATUS_IGNORE);
        const std::uint64_t now = clock_ns();
        PMPI_Send(&now, 1, MPI_UINT64_T, 0, kTagClock, comm);
      }
      PMPI_Recv(&offset, 1, MPI_INT64_T, 0, kTagClock, comm, MPI_STATUS_IGNORE);
    }
  }
  return offset;
}

std::vector<std::vector<std::byte>> gather_blocks(MPI_Comm comm, const std::vector<std::byte>& mine) {
  int me = 0;
  int size = 0;
  PMPI_Comm_rank(comm, &me);
  PMPI_Comm_size(comm, &size);
  const int n = static_cast<int>(mine.size());
  std::vector<int> counts(me == 0 ? static_cast<std::size_t>(size) : 0);
  PMPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
  const std::vector<int> displs = displacements(counts);
  std::vector<std::byte> all(me == 0 && size > 0 ? static_cast<std::size_t>(displs.back() + counts.back()) : 0);
  PMPI_Gatherv(mine.data(), n, MPI_BYTE, all.data(), counts.data(), displs.data(), MPI_BYTE, 0, comm);
  std::vector<std::vector<std::byte>> out;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    out.emplace_back(all.begin() + displs[r], all.begin() + displs[r] + counts[r]);
  }
  return out;
}

std::vector<std::byte> scatter_blocks(MPI_Comm comm, const std::vector<std::vector<std::byte>>& blocks) {
  int me = 0;
  PMPI_Comm_rank(comm, &me);
  std::vector<int> counts;
  std::vector<std::byte> all;
  if (me == 0) {
    for (const auto& b : blocks) {
      counts.push_back(static_cast<int>(b.size()));
      all.insert(all.end(), b.begin(), b.end());
    }
  }
  int n = 0;
  PMPI_Scatter(counts.data(), 1, MPI_INT, &n, 1, MPI_INT, 0, comm);
  const std::vector<int> displs = displacements(counts);
  std::vector<std::byte> mine(static_cast<std::size_t>(n));
  PMPI_Scatterv(all.data(), counts.data(), displs.data(), MPI_BYTE, mine.data(), n, MPI_BYTE, 0, comm);
  return mine;
}

bool all_ok(MPI_Comm comm, bool ok) {
  int mine = ok ? 1 : 0;
  int all = 0;
  PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm);
  return all == 1;
}

}  // namespace p3s::interpose
