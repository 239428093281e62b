// SPDX-License-Identifier: BSD-3-Clause
// Raw log file handling: create, write whole buffers, survive EINTR and short writes.
#include "thread_log.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <cerrno>

#include <new>

namespace p3s::interpose {

ThreadLog::ThreadLog(std::string path, int fd, std::size_t capacity, std::unique_ptr<std::byte[]> buffer) noexcept
    : path_(std::move(path)), fd_(fd), capacity_(capacity), buffer_(std::move(buffer)) {}

std::unique_ptr<ThreadLog> ThreadLog::open(const std::string& path, std::size_t buffer_bytes,
                                           const raw::FileHeader& header, std::string& error) noexcept {
  try {
    auto buffer = std::unique_ptr<std::byte[]>(new (std::nothrow) std::byte[buffer_bytes]);
    if (!buffer) {
      error = "cannot allocate the " + std::to_string(buffer_bytes >> 20) + " MiB event buffer";
      return nullptr;
    }
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
      error = "cannot create " + path + ": " + std::strerror(errno);
      return nullptr;
    }
    std::unique_ptr<ThreadLog> log(new ThreadLog(path, fd, buffer_bytes, std::move(buffer)));
    if (!log->write_all(reinterpret_cast<const std::byte*>(&header), sizeof header)) {
      error = log->error_;
      return nullptr;
    }
    return log;
  } catch (...) {
    error = "out of memory opening " + path;
    return nullptr;
  }
}

ThreadLog::~ThreadLog() { close(); }

bool ThreadLog::write_all(const std::byte* data, std::size_t bytes) noexcept {
  while (bytes != 0) {
    const ssize_t n = ::write(fd_, data, bytes);
    if (n < 0) {
      if (errno == EINTR) continue;
      failed_ = true;
      error_ = "writing " + path_ + " failed: " + std::strerror(errno);
      return false;
    }
    data += n;
    bytes -= static_cast<std::size_t>(n);
  }
  return true;
}

bool ThreadLog::flush() noexcept {
  if (failed_ || fd_ < 0) return false;
  if (exited_.load(std::memory_order_acquire)) return true;  // the process is ending (MPI_Abort, a signal)
  const std::size_t used = used_.load(std::memory_order_relaxed);
  if (used == 0) return true;
  flushing_.store(true, std::memory_order_release);
  const bool ok = write_all(buffer_.get(), used);
  used_.store(0, std::memory_order_release);
  flushing_.store(false, std::memory_order_release);
  ++flushes_;
  return ok;
}

void ThreadLog::flush_for_exit() noexcept {
  // Interrupting a regular flush: part of the buffer is on disk already and writing it again would
  // duplicate records, so the rest is given up.
  if (failed_ || fd_ < 0 || flushing_.load(std::memory_order_acquire)) return;
  if (exited_.exchange(true, std::memory_order_acq_rel)) return;
  const std::size_t used = used_.exchange(0, std::memory_order_acquire);
  const std::byte* data = buffer_.get();
  std::size_t left = used;
  while (left != 0) {
    const ssize_t n = ::write(fd_, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    data += n;
    left -= static_cast<std::size_t>(n);
  }
}

bool ThreadLog::make_room(std::size_t bytes) noexcept {
  if (!flush()) return false;
  if (bytes <= capacity_) return true;
  // A record larger than the whole buffer (a huge communicator's member list) cannot be staged.
  failed_ = true;
  error_ = "a record of " + std::to_string(bytes) + " bytes exceeds the event buffer; raise P3S_BUFFER_MB";
  return false;
}

void ThreadLog::abandon() noexcept {
  used_.store(0, std::memory_order_release);
  if (fd_ >= 0) ::close(fd_);  // the child's descriptor only: the parent's stays open
  fd_ = -1;
}

bool ThreadLog::close() noexcept {
  if (fd_ < 0) return !failed_;
  const bool ok = flush();
  ::close(fd_);
  fd_ = -1;
  return ok && !failed_;
}

}  // namespace p3s::interpose
