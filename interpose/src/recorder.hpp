// SPDX-License-Identifier: BSD-3-Clause
// What the generated wrappers call: a per-call Scope (reentrancy guard, Enter/Leave) and one recorder
// function per kind of call. Every MPI corner case is handled behind these functions, once.
#pragma once

#include <cstdint>

#include <mpi.h>
#include <otf2/OTF2_Events.h>

#include "clock.hpp"
#include "regions.hpp"

namespace p3s::interpose {

struct ThreadData;

/// The point-to-point roles of a call.
struct P2P {
  int peer;
  int tag;
  MPI_Comm comm;
  int count;
  MPI_Datatype dtype;
};

/// The roles of a collective; roles a function lacks keep these defaults.
struct CollArgs {
  const void* sbuf = nullptr;
  int scount = 0;
  MPI_Datatype sdtype = MPI_DATATYPE_NULL;
  const int* scounts = nullptr;
  const void* rbuf = nullptr;
  int rcount = 0;
  MPI_Datatype rdtype = MPI_DATATYPE_NULL;
  const int* rcounts = nullptr;
  int root = -1;
  MPI_Comm comm = MPI_COMM_NULL;
};

/// One MPI call. Active only for the outermost call of a thread while recording; it writes Enter on
/// construction and Leave on destruction.
class Scope {
 public:
  explicit Scope(Region region) noexcept;
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

  explicit operator bool() const noexcept { return data_ != nullptr; }
  /// Takes the leave timestamp and counters; call right after the PMPI function returns.
  void done() noexcept;

  [[nodiscard]] ThreadData& data() const noexcept { return *data_; }
  [[nodiscard]] std::uint64_t enter_ns() const noexcept { return t_enter_; }
  [[nodiscard]] std::uint64_t leave_ns() const noexcept { return t_leave_; }

 private:
  ThreadData* data_ = nullptr;
  Region region_;
  bool done_ = false;
  std::uint64_t t_enter_ = 0;
  std::uint64_t t_leave_ = 0;
};

// Environment.
/// Time and thread CPU time when MPI_Init was entered (before the recorder exists).
struct InitEnter {
  std::uint64_t time_ns;
  std::uint64_t cpu_ns;
};
[[nodiscard]] InitEnter init_enter() noexcept;
void on_init(int rc, Region region, InitEnter enter, int required, const int* provided) noexcept;
void on_finalize(Region region) noexcept;
/// MPI_Abort: the job is about to die; records the call and writes every buffered record to disk.
void on_abort(Region region) noexcept;

// Point to point.
void on_send(Scope& s, int rc, const P2P& p) noexcept;
void on_isend(Scope& s, int rc, const P2P& p, const MPI_Request* request) noexcept;
void on_recv(Scope& s, int rc, MPI_Comm comm, const MPI_Status* status) noexcept;
void on_irecv(Scope& s, int rc, const P2P& p, const MPI_Request* request) noexcept;
void on_sendrecv(Scope& s, int rc, const P2P& send, const MPI_Status* status) noexcept;
void on_send_init(Scope& s, int rc, const P2P& p, const MPI_Request* request) noexcept;
void on_recv_init(Scope& s, int rc, const P2P& p, const MPI_Request* request) noexcept;
void on_start(Scope& s, int rc, int count, const MPI_Request* requests) noexcept;

// Completion. `before` are the request handles as they were before the call (PMPI resets completed ones).
void on_completed(Scope& s, int rc, MPI_Request before, const MPI_Status* status) noexcept;
void on_completed_all(Scope& s, int rc, int count, const MPI_Request* before, const MPI_Status* statuses) noexcept;
void on_completed_any(Scope& s, int rc, const MPI_Request* before, int index, const MPI_Status* status) noexcept;
void on_completed_some(Scope& s, int rc, const MPI_Request* before, int outcount, const int* indices,
                       const MPI_Status* statuses) noexcept;
void on_cancel(Scope& s, int rc, MPI_Request request) noexcept;
void on_request_free(Scope& s, int rc, MPI_Request before) noexcept;

// Collectives and communicators.
void on_collective(Scope& s, int rc, OTF2_CollectiveOp op, const CollArgs& a) noexcept;
void on_icollective(Scope& s, int rc, OTF2_CollectiveOp op, const CollArgs& a, const MPI_Request* request) noexcept;
void on_comm_new(Scope& s, int rc, MPI_Comm parent, const MPI_Comm* newcomm, bool sync_on_new) noexcept;
/// Before MPI_Comm_free: forgets the communicator's handle and returns its local index (raw::kNoParent if unknown).
[[nodiscard]] std::uint32_t comm_forget(MPI_Comm comm) noexcept;
/// After it: records the destruction of `local`, or remembers the handle again where the free failed.
void on_comm_free(Scope& s, int rc, MPI_Comm before, std::uint32_t local) noexcept;

/// Per-thread scratch for MPI_STATUSES_IGNORE substitution; falls back to MPI_STATUSES_IGNORE if memory
/// runs out (the completions then keep the posted source and tag).
[[nodiscard]] MPI_Status* scratch_statuses(int count) noexcept;
/// Per-thread copy of request handles taken before a completion call.
[[nodiscard]] const MPI_Request* save_requests(int count, const MPI_Request* requests) noexcept;

}  // namespace p3s::interpose
