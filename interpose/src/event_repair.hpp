// SPDX-License-Identifier: BSD-3-Clause
// An event file written during a run that may have died: read back chunk by chunk, cut after its last whole event,
// and written out as OTF2 would have closed it.
#pragma once

#include <cstdint>
#include <string>

namespace p3s::interpose::otf2 {

/// What the copy of an event file kept.
struct RepairedEvents {
  std::uint64_t events = 0;      ///< whole events kept
  std::uint64_t first_time = 0;  ///< local time of the first, and of the last
  std::uint64_t last_time = 0;
  std::uint64_t bytes_lost = 0;  ///< bytes of the file after the last whole event that were not padding or end marks
  bool closed = false;           ///< the file ended with OTF2's end marks: its writer was closed
};

/// Copies the event file `from` (chunks of `chunk_bytes`, as EventChunks writes them) to `to`, keeping every event
/// up to the first record that is cut off or damaged, with each chunk header's event numbers set right and the end
/// marks after the last event. False with `error` set when a file cannot be read or written.
bool repair_event_file(const std::string& from, const std::string& to, std::size_t chunk_bytes, RepairedEvents& kept,
                       std::string& error);

}  // namespace p3s::interpose::otf2
