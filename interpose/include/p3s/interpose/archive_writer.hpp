// SPDX-License-Identifier: BSD-3-Clause
// Writing an OTF2 archive: RAII ownership, the writer's error convention (a message, no exceptions), and the one
// sequence of steps that fills an archive, shared by the recorder, `p3s recover`, p3s-synth and the analyzer's
// logical-trace export.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <otf2/otf2.h>

namespace p3s::interpose {

struct ArchiveClose {
  void operator()(OTF2_Archive* a) const noexcept { OTF2_Archive_Close(a); }
};
/// Owns an archive; its writers are closed through it (OTF2_Archive_Close closes any still open).
using ArchivePtr = std::unique_ptr<OTF2_Archive, ArchiveClose>;

/// Routes OTF2's own error printing (one stderr line per layer a failure crosses) into a per-thread buffer
/// (idempotent): p3s reports each failure once, in its own words, with what OTF2 said first.
void capture_otf2_errors();

/// What OTF2 said first since the last call on this thread (empty: nothing); clears the buffer.
[[nodiscard]] std::string take_otf2_message();

/// Records the first OTF2 failure with what was being done; returns whether `code` is success.
[[nodiscard]] inline bool try_otf2(OTF2_ErrorCode code, const char* what, std::string& error) {
  if (code == OTF2_SUCCESS) return true;
  const std::string said = take_otf2_message();
  if (error.empty()) {
    error = std::string(what) + ": " + OTF2_Error_GetName(code) + " (" +
            (said.empty() ? std::string(OTF2_Error_GetDescription(code)) : said) + ")";
  }
  return false;
}

/// Opens a new archive `traces` in `dir` for writing, with p3s's flush and memory callbacks; collective callbacks
/// are the caller's. An event writer keeps at most `event_chunks` chunks of 1 MiB before OTF2 writes them out
/// (without this limit OTF2 keeps up to 128 MiB per writer). Returns null with `error` set on failure.
[[nodiscard]] ArchivePtr create_archive(const std::string& dir, std::string& error, std::uint32_t event_chunks = 4);

/// What fills an archive, by the step of writing that needs it.
struct ArchiveParts {
  /// Writes the events of every location this process holds (with OTF2_Archive_GetEvtWriter, the events and
  /// OTF2_Archive_CloseEvtWriter, or straight into the event files) and lists the locations written. False with
  /// `error` set on failure.
  std::function<bool(OTF2_Archive*, std::vector<std::uint64_t>& locations, std::string& error)> events;
  /// Writes a location's local definitions (mapping tables, clock offsets); none where empty.
  std::function<bool(OTF2_DefWriter*, std::uint64_t location, std::string& error)> local_definitions;
  /// Writes the global definitions where this process writes them. Called on every process of an MPI job, even
  /// after a failure, so it may take part in collective work first.
  std::function<bool(OTF2_Archive*, std::string& error)> global_definitions;
};

/// Fills an open archive in the order OTF2 requires (event files, the events, local definitions, global
/// definitions) and closes it. Every file step runs even after a failure: under MPI collective callbacks those
/// steps are collective, so no process may skip one. An exception from a part counts as its failure, with the
/// exception's message; a part that does collective work of its own must take part in it whatever fails. Returns
/// whether everything succeeded; `error` holds the first failure. Never throws.
[[nodiscard]] bool write_archive(ArchivePtr archive, const ArchiveParts& parts, std::string& error) noexcept;

}  // namespace p3s::interpose
