// SPDX-License-Identifier: BSD-3-Clause
// Rebuilding an OTF2 archive from the raw logs of a run that did not reach MPI_Finalize.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace p3s::interpose {

/// A raw log that ends in a record that cannot be read: cut off when its process died, or damaged.
struct TornLog {
  std::int32_t rank = 0;
  std::uint32_t thread = 0;
  std::uint64_t records = 0;       ///< whole records read before the tear (all converted)
  std::uint64_t bytes_unread = 0;  ///< bytes after them, lost
  bool event_file = false;         ///< the tear is in the event file (`records` counts events)
};

/// One line on a torn log: which rank, how much was kept and lost.
[[nodiscard]] std::string torn_text(const TornLog& t);

/// What recovery found and wrote.
struct RecoverReport {
  std::string archive;  ///< path of the anchor file written
  std::int32_t world_size = 0;
  std::int32_t ranks_with_logs = 0;
  std::vector<std::int32_t> incomplete_ranks;  ///< ranks whose logs end before MPI_Finalize
  std::uint64_t events = 0;
  bool complete = false;      ///< every rank reached MPI_Finalize
  std::vector<TornLog> torn;  ///< logs whose end could not be read
};

/// Converts `dir/p3s-raw/*.raw` into `dir/traces.otf2`, replacing an archive already there.
/// @throws p3s::InputError when `dir` holds no raw logs or they are not p3s logs of one run.
/// @throws p3s::Otf2Error when the archive cannot be written.
RecoverReport recover(const std::string& dir);

/// True when `dir` holds raw logs (a run in progress, or one that died before MPI_Finalize).
[[nodiscard]] bool has_raw_logs(const std::string& dir);

}  // namespace p3s::interpose
