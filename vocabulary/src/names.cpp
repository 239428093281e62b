// SPDX-License-Identifier: BSD-3-Clause
// The stable names of the vocabulary's enumerations, and their values back from names. Switches, so that the
// compiler reports an enumerator without a name.
#include "p3s/mpi/vocabulary.hpp"

namespace p3s::mpi {
namespace {

/// The value among [first, last] whose name is `text`.
template <typename E>
std::optional<E> by_name(std::string_view text, int first, int last) noexcept {
  for (int v = first; v <= last; ++v) {
    if (name(static_cast<E>(v)) == text) return static_cast<E>(v);
  }
  return std::nullopt;
}

}  // namespace

std::string_view short_name(Function f, std::string_view recorded) noexcept {
  constexpr std::string_view kPrefix = "MPI_";
  const std::string_view full = f == Function::Other ? recorded : name(f);
  return full.substr(0, kPrefix.size()) == kPrefix ? full.substr(kPrefix.size()) : full;
}

std::string_view name(CallKind k) noexcept {
  switch (k) {
    case CallKind::Init:
      return "init";
    case CallKind::Finalize:
      return "finalize";
    case CallKind::Abort:
      return "abort";
    case CallKind::Send:
      return "send";
    case CallKind::Isend:
      return "isend";
    case CallKind::Recv:
      return "recv";
    case CallKind::Irecv:
      return "irecv";
    case CallKind::Sendrecv:
      return "sendrecv";
    case CallKind::Probe:
      return "probe";
    case CallKind::SendInit:
      return "send_init";
    case CallKind::RecvInit:
      return "recv_init";
    case CallKind::Start:
      return "start";
    case CallKind::Completion:
      return "completion";
    case CallKind::Cancel:
      return "cancel";
    case CallKind::RequestFree:
      return "request_free";
    case CallKind::Collective:
      return "collective";
    case CallKind::NbCollective:
      return "nb_collective";
    case CallKind::CommCreate:
      return "comm_create";
    case CallKind::CommFree:
      return "comm_free";
    case CallKind::Other:
      return "other";
  }
  return "other";
}

std::string_view name(Collective c) noexcept {
  switch (c) {
    case Collective::Barrier:
      return "BARRIER";
    case Collective::Bcast:
      return "BCAST";
    case Collective::Gather:
      return "GATHER";
    case Collective::Gatherv:
      return "GATHERV";
    case Collective::Scatter:
      return "SCATTER";
    case Collective::Scatterv:
      return "SCATTERV";
    case Collective::Allgather:
      return "ALLGATHER";
    case Collective::Allgatherv:
      return "ALLGATHERV";
    case Collective::Alltoall:
      return "ALLTOALL";
    case Collective::Alltoallv:
      return "ALLTOALLV";
    case Collective::Alltoallw:
      return "ALLTOALLW";
    case Collective::Allreduce:
      return "ALLREDUCE";
    case Collective::Reduce:
      return "REDUCE";
    case Collective::ReduceScatter:
      return "REDUCE_SCATTER";
    case Collective::Scan:
      return "SCAN";
    case Collective::Exscan:
      return "EXSCAN";
    case Collective::ReduceScatterBlock:
      return "REDUCE_SCATTER_BLOCK";
    case Collective::CreateHandle:
      return "CREATE_HANDLE";
    case Collective::DestroyHandle:
      return "DESTROY_HANDLE";
    case Collective::Allocate:
      return "ALLOCATE";
    case Collective::Deallocate:
      return "DEALLOCATE";
    case Collective::CreateHandleAndAllocate:
      return "CREATE_HANDLE_AND_ALLOCATE";
    case Collective::DestroyHandleAndDeallocate:
      return "DESTROY_HANDLE_AND_DEALLOCATE";
    case Collective::None:
      return "NONE";
    case Collective::Unknown:
      return "UNKNOWN";
  }
  return "UNKNOWN";
}

std::string_view name(ActionKind k) noexcept {
  switch (k) {
    case ActionKind::Send:
      return "send";
    case ActionKind::Recv:
      return "recv";
    case ActionKind::Collective:
      return "coll";
    case ActionKind::NbCollRequest:
      return "icoll";
    case ActionKind::NbCollComplete:
      return "icoll_complete";
    case ActionKind::IrecvPost:
      return "irecv";
    case ActionKind::IsendComplete:
      return "isend_complete";
    case ActionKind::Cancelled:
      return "cancelled";
  }
  return "?";
}

std::string_view name(SendMode m) noexcept {
  switch (m) {
    case SendMode::None:
      return "none";
    case SendMode::Standard:
      return "standard";
    case SendMode::Buffered:
      return "buffered";
    case SendMode::Synchronous:
      return "synchronous";
    case SendMode::Ready:
      return "ready";
  }
  return "none";
}

std::string_view name(Completes c) noexcept {
  switch (c) {
    case Completes::None:
      return "none";
    case Completes::One:
      return "one";
    case Completes::All:
      return "all";
    case Completes::Any:
      return "any";
    case Completes::Some:
      return "some";
  }
  return "none";
}

std::optional<CallKind> call_kind_named(std::string_view text) noexcept {
  return by_name<CallKind>(text, 0, static_cast<int>(CallKind::Other));
}

std::optional<Collective> collective_named(std::string_view text) noexcept {
  if (text == name(Collective::None)) return Collective::None;
  if (text == name(Collective::Unknown)) return Collective::Unknown;
  return by_name<Collective>(text, 0, static_cast<int>(Collective::DestroyHandleAndDeallocate));
}

std::optional<ActionKind> action_kind_named(std::string_view text) noexcept {
  return by_name<ActionKind>(text, 0, static_cast<int>(ActionKind::Cancelled));
}

}  // namespace p3s::mpi
