// SPDX-License-Identifier: BSD-3-Clause
// The MPI vocabulary the stages share: which function a call is (generated from interpose/spec/mpi.json), what
// kind of call that is, the collective operations, and the communication actions of the logical trace. Stages
// decide on these types, never on a function's name; each is written to files under a stable name.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "p3s/mpi/functions.hpp"

namespace p3s::mpi {

/// What a function does, as the wrappers and every later stage see it (the spec's `kind`).
enum class CallKind : std::uint8_t {
  Init,          ///< MPI_Init, MPI_Init_thread
  Finalize,      ///< MPI_Finalize
  Abort,         ///< MPI_Abort
  Send,          ///< a blocking send (MPI_Send, Bsend, Ssend, Rsend)
  Isend,         ///< a send that starts a request (MPI_Isend, Ibsend, Issend, Irsend)
  Recv,          ///< a blocking receive
  Irecv,         ///< a receive that starts a request
  Sendrecv,      ///< a send and a receive in one call (MPI_Sendrecv, MPI_Sendrecv_replace)
  Probe,         ///< MPI_Probe, MPI_Iprobe: look at a message without receiving it
  SendInit,      ///< creates a persistent send request
  RecvInit,      ///< creates a persistent receive request
  Start,         ///< starts persistent requests
  Completion,    ///< MPI_Wait*, MPI_Test*: completes requests
  Cancel,        ///< MPI_Cancel
  RequestFree,   ///< MPI_Request_free
  Collective,    ///< a blocking collective
  NbCollective,  ///< a collective that starts a request (MPI_Iallreduce, ...)
  CommCreate,    ///< creates a communicator (dup, split, create, cart, graph)
  CommFree,      ///< MPI_Comm_free
  Other,         ///< a function outside the spec: what it does is told by its actions alone
};

/// A send's mode.
enum class SendMode : std::uint8_t { None, Standard, Buffered, Synchronous, Ready };

/// Which of its requests a completion waits for.
enum class Completes : std::uint8_t { None, One, All, Any, Some };

/// Collective operations; the values are OTF2's (OTF2_CollectiveOp), so archives map onto them directly.
enum class Collective : std::uint8_t {
  Barrier = 0,
  Bcast = 1,
  Gather = 2,
  Gatherv = 3,
  Scatter = 4,
  Scatterv = 5,
  Allgather = 6,
  Allgatherv = 7,
  Alltoall = 8,
  Alltoallv = 9,
  Alltoallw = 10,
  Allreduce = 11,
  Reduce = 12,
  ReduceScatter = 13,
  Scan = 14,
  Exscan = 15,
  ReduceScatterBlock = 16,
  CreateHandle = 17,   ///< communicator creation (MPI_Init, MPI_Comm_split, ...)
  DestroyHandle = 18,  ///< communicator destruction (MPI_Comm_free, MPI_Finalize)
  Allocate = 19,
  Deallocate = 20,
  CreateHandleAndAllocate = 21,
  DestroyHandleAndDeallocate = 22,
  None = 254,     ///< not a collective
  Unknown = 255,  ///< a collective whose operation is not one of the above
};

/// What an MPI call did in the logical trace: the actions inside a call.
enum class ActionKind : std::uint8_t {
  Send,            ///< a message left (blocking send, Isend, a started persistent send, Sendrecv's send)
  Recv,            ///< a message arrived (Recv, a completed Irecv, Sendrecv's receive)
  Collective,      ///< a blocking collective (including communicator creation and destruction)
  NbCollRequest,   ///< a non-blocking collective was started
  NbCollComplete,  ///< a non-blocking collective completed
  IrecvPost,       ///< a receive was posted (no message yet)
  IsendComplete,   ///< an Isend's request completed
  Cancelled,       ///< a request was cancelled
};

/// Everything the spec says about a function.
struct FunctionInfo {
  std::string_view name;  ///< "MPI_Send"; empty for Function::Other
  CallKind kind = CallKind::Other;
  Collective collective = Collective::None;  ///< the operation of a collective, None for other calls
  SendMode mode = SendMode::None;            ///< sends
  Completes completes = Completes::None;     ///< completions
  bool test = false;                         ///< a completion that only checks (MPI_Test*) and never blocks
  int since = 0;                             ///< the MPI version that introduced it
};

/// The spec's entry of a function (Function::Other's for a value out of range).
[[nodiscard]] const FunctionInfo& info(Function f) noexcept;
/// The function of this name, Function::Other when the spec does not have it. The only place where a function is
/// recognised by its name: readers of archives call it once per region definition.
[[nodiscard]] Function function_named(std::string_view name) noexcept;
/// "MPI_Send"; empty for Function::Other.
[[nodiscard]] inline std::string_view name(Function f) noexcept { return info(f).name; }
[[nodiscard]] inline CallKind kind(Function f) noexcept { return info(f).kind; }
/// The name without its "MPI_" prefix, for tables ("Isend"). `recorded` is the name under which a trace holds a
/// function outside the vocabulary (Function::Other).
[[nodiscard]] std::string_view short_name(Function f, std::string_view recorded = {}) noexcept;

/// Sends or receives one message per peer: the point-to-point calls whose peers a model learns.
[[nodiscard]] constexpr bool is_point_to_point(CallKind k) noexcept {
  return k == CallKind::Send || k == CallKind::Isend || k == CallKind::Recv || k == CallKind::Irecv ||
         k == CallKind::Sendrecv;
}
/// A blocking or non-blocking collective.
[[nodiscard]] constexpr bool is_collective(CallKind k) noexcept {
  return k == CallKind::Collective || k == CallKind::NbCollective;
}
/// Returns a request that a completion call completes later (a persistent request is created by SendInit or
/// RecvInit and started by Start).
[[nodiscard]] constexpr bool starts_request(CallKind k) noexcept {
  return k == CallKind::Isend || k == CallKind::Irecv || k == CallKind::NbCollective || k == CallKind::Start;
}
/// A collective with a root (Bcast, Gather(v), Scatter(v), Reduce).
[[nodiscard]] constexpr bool is_rooted(Collective c) noexcept {
  return c == Collective::Bcast || c == Collective::Gather || c == Collective::Gatherv || c == Collective::Scatter ||
         c == Collective::Scatterv || c == Collective::Reduce;
}
/// Actions that carry a Lamport tick: the events of the logical trace.
[[nodiscard]] constexpr bool is_tick_action(ActionKind k) noexcept {
  return k == ActionKind::Send || k == ActionKind::Recv || k == ActionKind::Collective ||
         k == ActionKind::NbCollComplete;
}

/// Stable names, as files spell them: "send", "completion", ... (CallKind); "ALLREDUCE", "CREATE_HANDLE",
/// "UNKNOWN" (Collective; "NONE" for None); "send", "recv", "coll", "icoll", "icoll_complete", "irecv",
/// "isend_complete", "cancelled" (ActionKind); "standard", ... (SendMode); "one", "all", ... (Completes).
[[nodiscard]] std::string_view name(CallKind k) noexcept;
[[nodiscard]] std::string_view name(Collective c) noexcept;
[[nodiscard]] std::string_view name(ActionKind k) noexcept;
[[nodiscard]] std::string_view name(SendMode m) noexcept;
[[nodiscard]] std::string_view name(Completes c) noexcept;

/// The value of a stable name; nullopt when the name is not one.
[[nodiscard]] std::optional<CallKind> call_kind_named(std::string_view name) noexcept;
[[nodiscard]] std::optional<Collective> collective_named(std::string_view name) noexcept;
[[nodiscard]] std::optional<ActionKind> action_kind_named(std::string_view name) noexcept;

}  // namespace p3s::mpi
