// SPDX-License-Identifier: BSD-3-Clause
// Dates as every p3s file writes them: ISO 8601 in UTC, to the second ("2026-11-23T17:42:05Z").
#pragma once

#include <cstdint>
#include <ctime>
#include <string>

namespace p3s {

/// The instant `realtime_ns` nanoseconds after the Unix epoch (CLOCK_REALTIME), as "YYYY-MM-DDTHH:MM:SSZ".
[[nodiscard]] inline std::string utc_date(std::int64_t realtime_ns) {
  const auto secs = static_cast<std::time_t>(realtime_ns / 1000000000LL);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

/// Now, as utc_date() writes it.
[[nodiscard]] inline std::string utc_now() {
  return utc_date(static_cast<std::int64_t>(std::time(nullptr)) * 1000000000LL);
}

}  // namespace p3s
