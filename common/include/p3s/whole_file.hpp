// SPDX-License-Identifier: BSD-3-Clause
// Writing a file whole: to a temporary name beside it, then renamed, so a reader never sees half of it.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include "p3s/error.hpp"

namespace p3s {

/// Renames `tmp` (a file written whole) onto `path`, replacing it in one step.
/// @throws p3s::Error naming both files when it cannot.
inline void move_into_place(const std::filesystem::path& tmp, const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw Error("cannot move '" + tmp.string() + "' to '" + path.string() + "': " + ec.message());
}

/// Replaces `path` with `contents` (written to `path`.tmp, then renamed).
/// @throws p3s::Error naming the file when it cannot be written.
inline void write_whole_file(const std::filesystem::path& path, const std::string& contents) {
  const std::filesystem::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp);
    out << contents;
    if (!out) throw Error("cannot write '" + tmp.string() + "'; check the directory is writable and has space");
  }
  move_into_place(tmp, path);
}

}  // namespace p3s
