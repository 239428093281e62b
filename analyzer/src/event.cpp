// SPDX-License-Identifier: BSD-3-Clause
// Names of event kinds.
#include "p3s/analyzer/event.hpp"

#include <array>

namespace p3s::analyzer {
namespace {

// Indexed by the enumerators' values, in declaration order.
constexpr std::array<std::string_view, 15> kKindNames = {
    "ENTER",
    "LEAVE",
    "MPI_SEND",
    "MPI_ISEND",
    "MPI_ISEND_COMPLETE",
    "MPI_IRECV_REQUEST",
    "MPI_IRECV",
    "MPI_RECV",
    "MPI_REQUEST_CANCELLED",
    "MPI_COLLECTIVE_BEGIN",
    "MPI_COLLECTIVE_END",
    "NON_BLOCKING_COLLECTIVE_REQUEST",
    "NON_BLOCKING_COLLECTIVE_COMPLETE",
    "COMM_CREATE",
    "COMM_DESTROY",
};

static_assert(static_cast<std::size_t>(EventKind::CommDestroy) + 1 == kKindNames.size());

}  // namespace

std::string_view event_kind_name(EventKind kind) noexcept {
  const auto i = static_cast<std::size_t>(kind);
  return i < kKindNames.size() ? kKindNames[i] : "UNKNOWN";
}

bool is_mpi_record(EventKind kind) noexcept { return kind != EventKind::Enter && kind != EventKind::Leave; }

}  // namespace p3s::analyzer
