// SPDX-License-Identifier: BSD-3-Clause
// Live requests by handle. A handle value may stand for several requests at once: Open MPI returns one shared
// "empty" request for every non-blocking operation that completed immediately (eager sends, collectives on
// one rank), so entries with the same handle form a FIFO and each completion takes the oldest. A freed handle
// is also handed out again at once, possibly to another thread before the thread that freed it has looked it
// up: a completion therefore takes the oldest entry its own thread created, and another thread's only when
// it has none (a request completed by a thread other than its creator's).
#pragma once

#include <cstdint>
#include <map>

#include "flat_map.hpp"

namespace p3s::interpose {

/// What the recorder remembers about a live request.
struct RequestInfo {
  enum class Kind : std::uint8_t { Isend, Irecv, PersistentSend, PersistentRecv, Collective };
  std::uint64_t id = 0;
  Kind kind = Kind::Isend;
  bool active = true;
  bool cancel_requested = false;
  std::uint8_t op = 0;  ///< OTF2_CollectiveOp for collectives
  std::int32_t peer = 0;
  std::int32_t tag = 0;
  std::uint32_t comm = 0;
  std::int32_t root = -1;
  std::uint64_t bytes = 0;  ///< bytes of a send, or collective bytes sent
  std::uint64_t received = 0;
  std::uint32_t owner = 0;  ///< index of the thread that created the request
};

class RequestTable {
 public:
  /// Adds a request created by thread `owner`; false only when memory runs out (its completion is then lost).
  bool add(std::uint64_t handle, std::uint32_t owner, RequestInfo info) noexcept;
  /// The oldest live request with this handle that thread `owner` created, else the oldest; nullptr if none.
  RequestInfo* find(std::uint64_t handle, std::uint32_t owner) noexcept;
  /// Forgets `entry`, found with this handle; a younger request with the handle takes the oldest's place.
  void remove(std::uint64_t handle, const RequestInfo* entry) noexcept;
  [[nodiscard]] std::size_t size() const noexcept { return oldest_.size() + younger_.size(); }

 private:
  FlatMap<RequestInfo> oldest_;
  /// Later requests sharing a handle, in arrival order (std::multimap keeps insertion order among equals).
  std::multimap<std::uint64_t, RequestInfo> younger_;
};

}  // namespace p3s::interpose
