// SPDX-License-Identifier: BSD-3-Clause
// Writing all of a buffer to a file descriptor, through interrupted and short writes.
#pragma once

#include <unistd.h>
#include <cerrno>

#include <cstddef>
#include <cstdint>

namespace p3s::interpose {

/// Where write_fully() writes at the descriptor's own position (write(2)) instead of an offset (pwrite(2)).
inline constexpr std::int64_t kAtPosition = -1;

/// Writes all of [data, data + bytes) to `fd` at `offset` (kAtPosition: at its position), going on after EINTR and
/// short writes. Returns 0, or the errno of the write that failed (EIO where one wrote nothing). Async-signal-safe:
/// the termination handler writes through it too.
inline int write_fully(int fd, const std::byte* data, std::size_t bytes, std::int64_t offset) noexcept {
  while (bytes != 0) {
    const ssize_t n = offset == kAtPosition ? ::write(fd, data, bytes) : ::pwrite(fd, data, bytes, offset);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EIO;
    data += n;
    bytes -= static_cast<std::size_t>(n);
    if (offset != kAtPosition) offset += n;
  }
  return 0;
}

}  // namespace p3s::interpose
