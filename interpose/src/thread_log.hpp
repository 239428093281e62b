// SPDX-License-Identifier: BSD-3-Clause
// One thread's trace: its OTF2 event file, written during the run (event_chunks.hpp), and its raw log of
// definitions beside it, each a fixed buffer written to its file whenever it fills (bounded memory).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "event_chunks.hpp"
#include "raw_codec.hpp"
#include "raw_format.hpp"

namespace p3s::interpose {

/// The OTF2 event file beside a raw log (`<rank>.<thread>.evt` for `<rank>.<thread>.raw`).
[[nodiscard]] std::string event_file_path(const std::string& raw_path);

/// Appends raw records and events; allocation-free after open(). Not thread-safe: one log per thread. The raw log
/// is written before the event file whenever the events are, so that every definition an event names is on disk
/// before the event.
class ThreadLog final : private otf2::ChunkSink {
 public:
  /// Creates (truncates) the file and writes the header. With `event_chunks` chunks of OTF2's event chunk size, also
  /// creates the event file and says so in the header; without, events are raw records. Returns nullptr and sets
  /// `error` on failure.
  static std::unique_ptr<ThreadLog> open(const std::string& path, std::size_t buffer_bytes,
                                         const raw::FileHeader& header, std::string& error,
                                         std::size_t event_chunks = 0) noexcept;
  ~ThreadLog() override;
  ThreadLog(const ThreadLog&) = delete;
  ThreadLog& operator=(const ThreadLog&) = delete;

  /// Appends a record made of a header and up to two payload parts (encoded: raw_codec.hpp); false once the log
  /// has failed. Enter and Leave take one part of 64-bit values; other varint kinds, parts of 32-bit words.
  bool append(raw::Kind kind, std::uint8_t flags, std::uint16_t region, std::uint64_t time_ns,
              const void* part1 = nullptr, std::size_t bytes1 = 0, const void* part2 = nullptr,
              std::size_t bytes2 = 0) noexcept {
    const std::size_t most = raw::max_encoded(kind, bytes1 + bytes2);
    std::size_t used = used_.load(std::memory_order_relaxed);
    if (used + most > capacity_) {
      if (!make_room(most)) return false;
      used = 0;
    }
    std::byte* const start = buffer_.get() + used;
    const std::byte* const end =
        raw::encode(start, codec_, kind, flags, region, time_ns, static_cast<const std::byte*>(part1), bytes1,
                    static_cast<const std::byte*>(part2), bytes2);
    // Published after the bytes: a signal handler flushing the buffer sees only whole records.
    used_.store(used + static_cast<std::size_t>(end - start), std::memory_order_release);
    ++records_;
    // A slow application fills its buffer rarely; writing it at least every interval bounds what a kill
    // that cannot be caught (SIGKILL) takes away.
    if (flush_interval_ns_ != 0 && time_ns > last_flush_ns_ + flush_interval_ns_) {
      last_flush_ns_ = time_ns;
      return flush();
    }
    return true;
  }

  template <class Payload>
  bool append(raw::Kind kind, std::uint64_t time_ns, const Payload& payload) noexcept {
    return append(kind, 0, 0, time_ns, &payload, sizeof payload);
  }

  /// Also write the buffers once `interval_ns` of recorded time passed since the last write (0: only when full).
  void set_flush_interval(std::uint64_t interval_ns, std::uint64_t now_ns) noexcept {
    flush_interval_ns_ = interval_ns;
    last_flush_ns_ = now_ns;
    if (events_) events_->set_flush_interval(interval_ns, now_ns);
  }

  /// The events, where the log has an event file (null otherwise).
  [[nodiscard]] otf2::EventChunks* events() noexcept { return events_.get(); }

  /// Writes the buffered records to the file (not the events).
  bool flush() noexcept;
  /// Async-signal-safe flush for a process being terminated: writes the whole records buffered so far and
  /// nothing else (no allocation, no error text). The log must not be used afterwards.
  void flush_for_exit() noexcept;
  /// Flushes and closes, the event file first; the files stay for conversion.
  bool close() noexcept;
  /// In a forked child, whose buffer and file are the parent's: drops the child's copy of both, writing nothing.
  void abandon() noexcept;

  [[nodiscard]] bool failed() const noexcept { return failed_; }
  [[nodiscard]] const std::string& error() const noexcept { return error_; }
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  [[nodiscard]] std::uint64_t records() const noexcept { return records_; }
  [[nodiscard]] std::uint64_t flushes() const noexcept { return flushes_; }

 private:
  ThreadLog(std::string path, int fd, std::size_t capacity, std::unique_ptr<std::byte[]> buffer) noexcept;
  bool make_room(std::size_t bytes) noexcept;
  bool write_all(const std::byte* data, std::size_t bytes) noexcept;
  /// The event chunks' sink: the raw log's buffer first, then the events at their place in the event file.
  bool write(std::uint64_t offset, const std::byte* data, std::size_t bytes) noexcept override;
  bool open_events(std::size_t chunks) noexcept;

  std::string path_;
  int fd_ = -1;
  std::size_t capacity_ = 0;
  std::atomic<std::size_t> used_{0};
  std::unique_ptr<std::byte[]> buffer_;
  std::atomic<bool> flushing_{false};  ///< a regular flush is writing: the termination handler keeps out
  /// The termination handler wrote the buffer: nothing more is written. Another thread still appending could
  /// publish bytes already written, and a repeat would shift every later difference of the log.
  std::atomic<bool> exited_{false};
  std::uint64_t flush_interval_ns_ = 0;
  std::uint64_t last_flush_ns_ = 0;
  raw::CodecState codec_;
  std::uint64_t records_ = 0;
  std::uint64_t flushes_ = 0;
  int event_fd_ = -1;
  std::unique_ptr<otf2::EventChunks> events_;
  bool failed_ = false;
  std::string error_;
};

}  // namespace p3s::interpose
