// SPDX-License-Identifier: BSD-3-Clause
// OTF2 plumbing private to the analyzer: handle ownership and error messages.
#pragma once

#include <otf2/otf2.h>

#include <memory>
#include <string>

namespace p3s::analyzer::detail {

struct ReaderClose {
  void operator()(OTF2_Reader* r) const noexcept { OTF2_Reader_Close(r); }
};
/// Owns an OTF2 reader; closing it closes every event and definition reader it handed out.
using ReaderPtr = std::unique_ptr<OTF2_Reader, ReaderClose>;

/// Routes OTF2's own error printing into a per-thread buffer instead of stderr (idempotent). The analyzer
/// reports errors itself, once, with the file and the fix.
void capture_otf2_errors();

/// Forgets messages of earlier failures, before a call whose failure will be reported.
void forget_otf2_errors() noexcept;

/// "OTF2_ERROR_XYZ: what OTF2 said" for the last failure of `code` on this thread; clears the buffer.
[[nodiscard]] std::string otf2_error_text(OTF2_ErrorCode code);

/// What OTF2 said about the last failure on this thread (for calls that return no code); clears the buffer.
[[nodiscard]] std::string otf2_failure_text();

}  // namespace p3s::analyzer::detail
