// SPDX-License-Identifier: BSD-3-Clause
// Creating an archive out of sight and moving it into place only once it is whole.
#pragma once

#include <cstdint>
#include <string>

#include "p3s/interpose/archive_writer.hpp"

namespace p3s::interpose {

/// `<dir>/.p3s-partial`, where the archive is assembled.
[[nodiscard]] std::string partial_dir(const std::string& dir);
/// `<dir>/p3s-raw`, and the raw log of one thread of one rank in it.
[[nodiscard]] std::string raw_dir(const std::string& dir);
[[nodiscard]] std::string raw_log_path(const std::string& dir, int rank, unsigned thread);

/// Removes an archive already published in `dir` (traces.otf2, traces.def, traces/; nothing else).
bool clear_published_archive(const std::string& dir, std::string& error);
/// Also removes a partial archive left by an interrupted conversion.
bool clear_archive(const std::string& dir, std::string& error);

/// Moves traces/, traces.def and, last, the anchor traces.otf2 from `partial` into `dir`, so a reader
/// never finds an anchor without its data.
bool publish_archive(const std::string& dir, std::string& error);

}  // namespace p3s::interpose
