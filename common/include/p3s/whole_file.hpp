// SPDX-License-Identifier: BSD-3-Clause
// Writing a file whole: to a temporary name beside it, then renamed, so a reader never sees half of it.
#pragma once

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <utility>

#include "p3s/error.hpp"

namespace p3s {

/// Renames `tmp` (a file written whole) onto `path`, replacing it in one step.
/// @throws p3s::Error naming both files when it cannot.
inline void move_into_place(const std::filesystem::path& tmp, const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw Error("cannot move '" + tmp.string() + "' to '" + path.string() + "': " + ec.message());
}

/// A file written piece by piece that appears whole or not at all: the pieces go to `path`.tmp, commit() checks
/// that every byte reached the disk and renames it onto `path`; a file never committed (an error on the way, an
/// exception) is removed.
class StreamedFile {
 public:
  /// @throws p3s::Error naming the file when it cannot be created.
  explicit StreamedFile(std::filesystem::path path) : path_(std::move(path)), tmp_(path_.string() + ".tmp") {
    out_.open(tmp_, std::ios::binary | std::ios::trunc);
    if (!out_) throw Error("cannot create '" + tmp_.string() + "': " + std::strerror(errno) + "; check the directory");
  }
  ~StreamedFile() {
    if (committed_) return;
    out_.close();
    std::error_code ec;
    std::filesystem::remove(tmp_, ec);
  }
  StreamedFile(const StreamedFile&) = delete;
  StreamedFile& operator=(const StreamedFile&) = delete;

  [[nodiscard]] std::ostream& stream() { return out_; }
  /// @throws p3s::Error naming the file when some piece could not be written (a full disk).
  void check() {
    if (!out_) fail();
  }
  /// @throws p3s::Error as check(), or when the file cannot be moved into place.
  void commit() {
    check();  // a piece that failed already: errno still says why
    errno = 0;
    out_.close();
    if (!out_) fail();
    move_into_place(tmp_, path_);
    committed_ = true;
  }

 private:
  [[noreturn]] void fail() const {
    throw Error("cannot write '" + path_.string() + "': " + (errno != 0 ? std::strerror(errno) : "write error"));
  }
  std::filesystem::path path_;
  std::filesystem::path tmp_;
  std::ofstream out_;
  bool committed_ = false;
};

/// Replaces `path` with `contents` (written to `path`.tmp, then renamed; nothing is left when that fails).
/// @throws p3s::Error naming the file when it cannot be written.
inline void write_whole_file(const std::filesystem::path& path, const std::string& contents) {
  StreamedFile file(path);
  file.stream() << contents;
  file.commit();
}

}  // namespace p3s
