// SPDX-License-Identifier: BSD-3-Clause
// Raw log file handling: create, write whole buffers, survive EINTR and short writes.
#include "thread_log.hpp"

#include "write_fully.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <cerrno>

#include <new>

namespace p3s::interpose {

ThreadLog::ThreadLog(std::string path, int fd, std::size_t capacity, std::unique_ptr<std::byte[]> buffer) noexcept
    : path_(std::move(path)), fd_(fd), capacity_(capacity), buffer_(std::move(buffer)) {}

std::string event_file_path(const std::string& raw_path) {
  const std::string suffix = ".raw";
  const bool raw = raw_path.size() > suffix.size() && raw_path.ends_with(suffix);
  return (raw ? raw_path.substr(0, raw_path.size() - suffix.size()) : raw_path) + ".evt";
}

std::unique_ptr<ThreadLog> ThreadLog::open(const std::string& path, std::size_t buffer_bytes,
                                           const raw::FileHeader& header, std::string& error,
                                           std::size_t event_chunks) noexcept {
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
    raw::FileHeader h = header;
    h.event_file = event_chunks != 0 ? 1 : 0;
    if ((event_chunks != 0 && !log->open_events(event_chunks)) ||
        !log->write_all(reinterpret_cast<const std::byte*>(&h), sizeof h)) {
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

bool ThreadLog::open_events(std::size_t chunks) noexcept {
  const std::string path = event_file_path(path_);
  event_fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (event_fd_ < 0) {
    error_ = "cannot create " + path + ": " + std::strerror(errno);
    return false;
  }
  events_ = otf2::EventChunks::create(otf2::kEventChunkBytes, chunks, *this);
  if (!events_) {
    error_ = "cannot allocate the " + std::to_string((otf2::kEventChunkBytes * chunks) >> 20) + " MiB event buffer";
    return false;
  }
  return true;
}

bool ThreadLog::write(std::uint64_t offset, const std::byte* data, std::size_t bytes) noexcept {
  if (!flush() || event_fd_ < 0) return false;
  const int rc = write_fully(event_fd_, data, bytes, static_cast<std::int64_t>(offset));
  if (rc == 0) return true;
  failed_ = true;
  error_ = "writing " + event_file_path(path_) + " failed: " + std::strerror(rc);
  return false;
}

bool ThreadLog::write_all(const std::byte* data, std::size_t bytes) noexcept {
  const int rc = write_fully(fd_, data, bytes, kAtPosition);
  if (rc == 0) return true;
  failed_ = true;
  error_ = "writing " + path_ + " failed: " + std::strerror(rc);
  return false;
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
  if (failed_ || fd_ < 0) return;
  // Interrupting a regular flush: part of the buffer is on disk already and writing it again would
  // duplicate records, so the rest is given up.
  if (!flushing_.load(std::memory_order_acquire) && !exited_.exchange(true, std::memory_order_acq_rel)) {
    const std::size_t used = used_.exchange(0, std::memory_order_acquire);
    (void)write_fully(fd_, buffer_.get(), used, kAtPosition);
  }
  // The events after the definitions they name; the event writer says what is safe to write.
  if (events_ && event_fd_ >= 0) {
    const otf2::EventChunks::Span span = events_->exit_span();
    (void)write_fully(event_fd_, span.data, span.bytes, static_cast<std::int64_t>(span.offset));
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
  if (fd_ >= 0) ::close(fd_);  // the child's descriptors only: the parent's stay open
  fd_ = -1;
  if (event_fd_ >= 0) ::close(event_fd_);
  event_fd_ = -1;
}

bool ThreadLog::close() noexcept {
  if (fd_ < 0) return !failed_;
  bool ok = true;
  if (events_) {
    ok = events_->close();  // writes the raw log's buffer first
    if (::close(event_fd_) != 0 && ok) {
      failed_ = true;
      error_ = "closing " + event_file_path(path_) + " failed: " + std::strerror(errno);
      ok = false;
    }
    event_fd_ = -1;
  }
  ok = flush() && ok;
  ::close(fd_);
  fd_ = -1;
  return ok && !failed_;
}

}  // namespace p3s::interpose
