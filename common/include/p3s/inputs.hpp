// SPDX-License-Identifier: BSD-3-Clause
// The rule every command's inputs follow: a file p3s reads is a regular file.
#pragma once

#include <filesystem>
#include <string>
#include <system_error>

#include "p3s/error.hpp"

namespace p3s {

/// @throws p3s::InputError "`what` 'path' is not a regular file ..." when `path` exists and is a FIFO, a device, a
/// socket or a directory: opening a FIFO waits for a writer for ever, a device reads without end. A path that does
/// not exist is left to the open, which says so in its own words.
inline void require_regular_input(const std::filesystem::path& path, const std::string& what) {
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (ec || st.type() == std::filesystem::file_type::not_found || st.type() == std::filesystem::file_type::regular) {
    return;
  }
  throw InputError(what + " '" + path.string() + "' is " +
                   (st.type() == std::filesystem::file_type::directory ? "a directory" : "not a regular file") +
                   "; give the file p3s wrote");
}

}  // namespace p3s
