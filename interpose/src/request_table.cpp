// SPDX-License-Identifier: BSD-3-Clause
// Request table with FIFO sharing of handle values.
#include "request_table.hpp"

namespace p3s::interpose {

bool RequestTable::add(std::uint64_t handle, const RequestInfo& info) noexcept {
  const auto stored = oldest_.insert(handle, info);
  if (stored != FlatMap<RequestInfo>::Stored::Present) return stored == FlatMap<RequestInfo>::Stored::Inserted;
  try {
    younger_.emplace(handle, info);
    return true;
  } catch (...) {
    return false;
  }
}

void RequestTable::remove(std::uint64_t handle) noexcept {
  const auto next = younger_.find(handle);  // the first inserted among equal keys
  if (next == younger_.end()) {
    oldest_.erase(handle);
    return;
  }
  oldest_.put(handle, next->second);  // overwrites in place: no allocation
  younger_.erase(next);
}

}  // namespace p3s::interpose
