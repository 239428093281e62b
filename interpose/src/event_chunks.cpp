// SPDX-License-Identifier: BSD-3-Clause
// Chunk bookkeeping of the direct OTF2 event writer, and the file it writes to.
#include "event_chunks.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <cerrno>

#include <new>

#include "write_fully.hpp"

namespace p3s::interpose::otf2 {

std::unique_ptr<EventChunks> EventChunks::create(std::size_t chunk_bytes, std::size_t chunks,
                                                 ChunkSink& sink) noexcept {
  if (chunks == 0 || chunk_bytes < 256) return nullptr;
  // Two bytes past the last chunk: the end marks of close() may follow a record that left a single byte free.
  auto buffer = std::unique_ptr<std::byte[]>(new (std::nothrow) std::byte[chunk_bytes * chunks + 2]);
  if (!buffer) return nullptr;
  return std::unique_ptr<EventChunks>(new (std::nothrow) EventChunks(std::move(buffer), chunk_bytes, chunks, sink));
}

EventChunks::EventChunks(std::unique_ptr<std::byte[]> buffer, std::size_t chunk_bytes, std::size_t chunks,
                         ChunkSink& sink) noexcept
    : buffer_(std::move(buffer)),
      chunk_bytes_(chunk_bytes),
      buffer_end_(buffer_.get() + chunk_bytes * chunks),
      chunk_begin_(buffer_.get()),
      chunk_end_(buffer_.get() + chunk_bytes),
      pos_(buffer_.get()),
      sink_(sink),
      published_(buffer_.get()) {
  start_chunk();
}

void EventChunks::start_chunk() noexcept {
  std::byte* p = chunk_begin_;
  *p++ = static_cast<std::byte>(Id::ChunkHeader);
  *p++ = static_cast<std::byte>(kLittleEndian);
  const std::uint64_t first = events_ + 1;
  const std::uint64_t last = 0;  // filled in when the chunk is closed
  std::memcpy(p, &first, 8);
  std::memcpy(p + 8, &last, 8);
  pos_ = p + 16;
}

bool EventChunks::hand_over(std::size_t bytes) noexcept {
  if (exited_.load(std::memory_order_acquire)) return true;  // the process is ending (MPI_Abort, a signal)
  busy_.store(true, std::memory_order_release);
  const bool ok = sink_.write(base_, buffer_.get(), bytes);
  busy_.store(false, std::memory_order_release);
  if (!ok) failed_ = true;
  return ok;
}

bool EventChunks::next_chunk(std::uint64_t t) noexcept {
  if (failed_) return false;
  std::memcpy(chunk_begin_ + kLastEventAt, &events_, 8);
  std::memset(pos_, 0, static_cast<std::size_t>(chunk_end_ - pos_));
  if (chunk_end_ == buffer_end_) {
    const auto whole = static_cast<std::size_t>(buffer_end_ - buffer_.get());
    busy_.store(true, std::memory_order_release);  // until the buffer starts again
    if (!exited_.load(std::memory_order_acquire) && !sink_.write(base_, buffer_.get(), whole)) {
      failed_ = true;
      busy_.store(false, std::memory_order_release);
      return false;
    }
    base_ += whole;
    chunk_begin_ = buffer_.get();
    published_.store(chunk_begin_, std::memory_order_release);
  } else {
    chunk_begin_ = chunk_end_;
  }
  chunk_end_ = chunk_begin_ + chunk_bytes_;
  start_chunk();
  busy_.store(false, std::memory_order_release);
  // A chunk starts with the time of its first event, whether or not it moved on.
  *pos_ = static_cast<std::byte>(Id::Timestamp);
  std::memcpy(pos_ + 1, &t, 8);
  pos_ += kTimestampBytes;
  time_ = t;
  return true;
}

bool EventChunks::flush() noexcept {
  if (failed_) return false;
  std::memcpy(chunk_begin_ + kLastEventAt, &events_, 8);
  return hand_over(static_cast<std::size_t>(pos_ - buffer_.get()));
}

bool EventChunks::close() noexcept {
  if (failed_) return false;
  std::memcpy(chunk_begin_ + kLastEventAt, &events_, 8);
  // The end of the file and of the buffer, as OTF2 marks them when its writer is closed.
  *pos_++ = std::byte{kEndOfFile};
  *pos_++ = std::byte{kEndOfBuffer};
  const bool ok = hand_over(static_cast<std::size_t>(pos_ - buffer_.get()));
  // Nothing more: a second close, or an event after this one, finds the stream failed.
  failed_ = true;
  return ok;
}

EventChunks::Span EventChunks::exit_span() noexcept {
  if (busy_.load(std::memory_order_acquire) || exited_.exchange(true, std::memory_order_acq_rel)) return {};
  const std::byte* end = published_.load(std::memory_order_acquire);
  return {buffer_.get(), static_cast<std::size_t>(end - buffer_.get()), base_};
}

std::unique_ptr<FileSink> FileSink::create(const std::string& path, std::string& error) noexcept {
  try {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
      error = "cannot create " + path + ": " + std::strerror(errno);
      return nullptr;
    }
    return std::unique_ptr<FileSink>(new FileSink(path, fd));
  } catch (...) {
    error = "out of memory opening " + path;
    return nullptr;
  }
}

FileSink::~FileSink() { close(); }

bool FileSink::write(std::uint64_t offset, const std::byte* data, std::size_t bytes) noexcept {
  if (fd_ < 0) return false;
  const int rc = write_fully(fd_, data, bytes, static_cast<std::int64_t>(offset));
  if (rc == 0) return true;
  try {
    error_ = "writing " + path_ + " failed: " + std::strerror(rc);
  } catch (...) {
  }
  return false;
}

bool FileSink::close() noexcept {
  if (fd_ < 0) return error_.empty();
  const int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0 && error_.empty()) {
    try {
      error_ = "closing " + path_ + " failed: " + std::strerror(errno);
    } catch (...) {
    }
  }
  return error_.empty();
}

}  // namespace p3s::interpose::otf2
