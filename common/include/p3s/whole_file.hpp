// SPDX-License-Identifier: BSD-3-Clause
// Writing a file whole: to a temporary name beside it, then renamed, so a reader never sees half of it.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ext/stdio_filebuf.h>
#include <filesystem>
#include <memory>
#include <ostream>
#include <string>
#include <system_error>
#include <utility>

#include "p3s/error.hpp"
#include "p3s/temporaries.hpp"

namespace p3s {

/// Refuses to write over anything but a regular file or a link: renaming onto a device, a FIFO or a directory
/// would replace that node (as root, /dev/null) with the file. A link is replaced itself, never its target.
/// @throws p3s::InputError naming the path.
inline void require_file_or_absent(const std::filesystem::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return;  // absent, or unreadable: writing says why
  if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) return;
  throw InputError("'" + path.string() + "' is " + (S_ISDIR(st.st_mode) ? "a directory" : "not a regular file") +
                   "; p3s writes its outputs to files only");
}

/// Renames `tmp` (a file written whole) onto `path`, replacing it in one step.
/// @throws p3s::Error naming both files when it cannot, p3s::InputError where `path` is no file.
inline void move_into_place(const std::filesystem::path& tmp, const std::filesystem::path& path) {
  require_file_or_absent(path);
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw Error("cannot move '" + tmp.string() + "' to '" + path.string() + "': " + ec.message());
}

/// A file written piece by piece that appears whole or not at all: the pieces go to a temporary file beside `path`
/// (`path`.XXXXXX, created exclusively under a name no one can guess, so a link planted there is never followed),
/// commit() checks that every byte reached the disk and renames it onto `path`; a file never committed (an error
/// on the way, an exception) is removed.
class StreamedFile {
 public:
  /// @throws p3s::Error naming the file when it cannot be created, p3s::InputError where `path` is no file.
  explicit StreamedFile(std::filesystem::path path) : path_(std::move(path)) {
    require_file_or_absent(path_);
    std::string name = path_.string() + ".XXXXXX";
    const int fd = ::mkstemp(name.data());
    if (fd < 0) {
      throw Error("cannot create a file beside '" + path_.string() + "': " + std::strerror(errno) +
                  "; check the directory");
    }
    tmp_ = name;
    slot_ = temporaries::add(name);
    (void)::fchmod(fd, new_file_mode());  // mkstemp's 0600 becomes what a plain create gives
    buf_ = std::make_unique<__gnu_cxx::stdio_filebuf<char>>(fd, std::ios::out | std::ios::binary);
    out_.rdbuf(buf_.get());
  }
  ~StreamedFile() {
    if (committed_) return;
    buf_->close();
    std::error_code ec;
    std::filesystem::remove(tmp_, ec);
    temporaries::remove(slot_);
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
    if (!out_.flush() || buf_->close() == nullptr) fail();
    move_into_place(tmp_, path_);
    committed_ = true;
    temporaries::remove(slot_);
  }

 private:
  /// 0666 less the process's umask: the mode a file created the ordinary way gets.
  static mode_t new_file_mode() {
    static const mode_t mode = [] {
      const mode_t mask = ::umask(0);
      ::umask(mask);
      return static_cast<mode_t>(0666 & ~mask);
    }();
    return mode;
  }
  [[noreturn]] void fail() const {
    throw Error("cannot write '" + path_.string() + "': " + (errno != 0 ? std::strerror(errno) : "write error"));
  }
  std::filesystem::path path_;
  std::filesystem::path tmp_;
  std::unique_ptr<__gnu_cxx::stdio_filebuf<char>> buf_;
  std::ostream out_{nullptr};
  bool committed_ = false;
  int slot_ = -1;  ///< its place among the temporaries a signal removes
};

/// Replaces `path` with `contents` (written to a temporary file beside it, then renamed; nothing is left when that
/// fails).
/// @throws p3s::Error naming the file when it cannot be written.
inline void write_whole_file(const std::filesystem::path& path, const std::string& contents) {
  StreamedFile file(path);
  file.stream() << contents;
  file.commit();
}

}  // namespace p3s
