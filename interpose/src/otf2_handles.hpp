// SPDX-License-Identifier: BSD-3-Clause
// RAII ownership of OTF2 archives and the error convention of the writer (no exceptions: a message).
#pragma once

#include <memory>
#include <string>

#include <otf2/otf2.h>

namespace p3s::interpose {

struct ArchiveClose {
  void operator()(OTF2_Archive* a) const noexcept { OTF2_Archive_Close(a); }
};
/// Owns an archive; its writers are closed through it (OTF2_Archive_Close closes any still open).
using ArchivePtr = std::unique_ptr<OTF2_Archive, ArchiveClose>;

/// Records the first OTF2 failure with what was being done; returns whether `code` is success.
[[nodiscard]] inline bool try_otf2(OTF2_ErrorCode code, const char* what, std::string& error) {
  if (code == OTF2_SUCCESS) return true;
  if (error.empty())
    error = std::string(what) + ": " + OTF2_Error_GetName(code) + " (" + OTF2_Error_GetDescription(code) + ")";
  return false;
}

/// Makes a new writing archive flush instead of growing: OTF2 keeps up to 128 MiB of chunks per event
/// writer before it writes any unless its memory callbacks say no earlier. Event writers get
/// `event_chunks` chunks, then OTF2 writes them out and starts again; definitions are not limited.
/// OTF2 asks before flushing a full buffer; p3s always lets it flush. There is deliberately no post-flush
/// callback: with one, OTF2 inserts a BUFFER_FLUSH record into the events at every flush.
inline OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }
inline constexpr OTF2_FlushCallbacks kFlushCallbacks = {pre_flush, nullptr};

}  // namespace p3s::interpose
