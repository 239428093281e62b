// SPDX-License-Identifier: BSD-3-Clause
// An output directory's lock: DIR/.p3s-write.lock, held (flock) while a p3s writes its files there, so that two
// writers at once never leave a mix of both outputs behind and both report success.
#pragma once

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "p3s/error.hpp"

namespace p3s {

class OutputLock {
 public:
  /// Takes DIR's lock without waiting. @throws p3s::InputError where another p3s holds it, p3s::Error where the
  /// lock file cannot be made.
  explicit OutputLock(const std::filesystem::path& dir) : path_(dir / ".p3s-write.lock") {
    // A holder removes the file when it is done: a lock taken on a file removed meanwhile is no lock, so take it
    // again on the file that is there now.
    for (int attempt = 0; attempt < 100; ++attempt) {
      fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (fd_ < 0) {
        throw Error("cannot lock '" + dir.string() + "' for writing (" + path_.filename().string() +
                    "): " + std::strerror(errno));
      }
      if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
        const int why = errno;
        ::close(fd_);
        fd_ = -1;
        if (why == EWOULDBLOCK) {
          throw InputError("another p3s is writing into '" + dir.string() +
                           "'; wait for it to end, or write elsewhere");
        }
        throw Error("cannot lock '" + dir.string() + "' for writing: " + std::strerror(why));
      }
      struct stat held {};
      struct stat there {};
      if (::fstat(fd_, &held) == 0 && ::lstat(path_.c_str(), &there) == 0 && held.st_ino == there.st_ino &&
          held.st_dev == there.st_dev) {
        return;
      }
      ::close(fd_);
      fd_ = -1;
    }
    throw Error("cannot lock '" + dir.string() + "' for writing: its lock file keeps changing");
  }
  ~OutputLock() {
    if (fd_ < 0) return;
    ::unlink(path_.c_str());
    ::close(fd_);
  }
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

 private:
  std::filesystem::path path_;
  int fd_ = -1;
};

}  // namespace p3s
