// SPDX-License-Identifier: BSD-3-Clause
// Request table with FIFO sharing of handle values.
#include "request_table.hpp"

namespace p3s::interpose {

bool RequestTable::add(std::uint64_t handle, std::uint32_t owner, RequestInfo info) noexcept {
  info.owner = owner;
  const auto stored = oldest_.insert(handle, info);
  if (stored != FlatMap<RequestInfo>::Stored::Present) return stored == FlatMap<RequestInfo>::Stored::Inserted;
  try {
    younger_.emplace(handle, info);
    return true;
  } catch (...) {
    return false;
  }
}

RequestInfo* RequestTable::find(std::uint64_t handle, std::uint32_t owner) noexcept {
  RequestInfo* oldest = oldest_.find(handle);
  if (oldest == nullptr || oldest->owner == owner || younger_.empty()) return oldest;
  const auto [first, last] = younger_.equal_range(handle);
  for (auto it = first; it != last; ++it) {
    if (it->second.owner == owner) return &it->second;
  }
  return oldest;
}

void RequestTable::remove(std::uint64_t handle, const RequestInfo* entry) noexcept {
  if (entry != oldest_.find(handle)) {
    const auto [first, last] = younger_.equal_range(handle);
    for (auto it = first; it != last; ++it) {
      if (&it->second == entry) {
        younger_.erase(it);
        return;
      }
    }
    return;
  }
  const auto next = younger_.find(handle);  // the first inserted among equal keys
  if (next == younger_.end()) {
    oldest_.erase(handle);
    return;
  }
  oldest_.put(handle, next->second);  // overwrites in place: no allocation
  younger_.erase(next);
}

}  // namespace p3s::interpose
