// SPDX-License-Identifier: BSD-3-Clause
// The recorder's timestamp source.
#pragma once

#include <cstdint>
#include <ctime>

namespace p3s::interpose {

/// CLOCK_MONOTONIC in ns (a vDSO call, tens of ns): shared by all ranks of a host; offsets to rank 0 are
/// measured for ranks on other hosts.
inline std::uint64_t clock_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace p3s::interpose
