// SPDX-License-Identifier: BSD-3-Clause
#include "dir_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

namespace p3s::interpose {

namespace {

constexpr const char* kLockName = ".p3s-record.lock";

std::string fresh_token() {
  std::random_device entropy;
  const auto word = [&entropy] { return (std::uint64_t{entropy()} << 32) | entropy(); };
  char text[64];
  std::snprintf(text, sizeof text, "%d-%016llx", static_cast<int>(::getpid()), static_cast<unsigned long long>(word()));
  return text;
}

std::string read_token(int fd) {
  char buf[128];
  const ssize_t n = ::pread(fd, buf, sizeof buf, 0);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

}  // namespace

std::unique_ptr<DirLock> DirLock::take(const std::filesystem::path& dir, std::string_view token, std::string& error) {
  const std::filesystem::path path = dir / kLockName;
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) {
    error = "cannot create " + path.string() + ": " + std::strerror(errno);
    return nullptr;
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
    std::string mine = fresh_token();
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, mine.data(), mine.size(), 0) != static_cast<ssize_t>(mine.size())) {
      error = "cannot write " + path.string() + ": " + std::strerror(errno);
      ::close(fd);
      return nullptr;
    }
    return std::unique_ptr<DirLock>(new DirLock(path, fd, std::move(mine), true));
  }
  const std::string held = read_token(fd);
  if (!token.empty() && held == token) return std::unique_ptr<DirLock>(new DirLock(path, fd, held, false));
  ::close(fd);
  error = "another recording is writing to '" + dir.string() + "' (it holds " + path.filename().string() + ")";
  return nullptr;
}

DirLock::~DirLock() {
  if (holder_) ::unlink(path_.c_str());
  ::close(fd_);
}

}  // namespace p3s::interpose
