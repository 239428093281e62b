// SPDX-License-Identifier: BSD-3-Clause
// OTF2 event files written directly: the chunks OTF2 3.0's event writer would write for the same events, byte for
// byte, without a call into OTF2 per event.
//
// An event file is a sequence of chunks of the archive's event chunk size. A chunk starts with a header (record 3,
// the host's byte order, the number of its first event and of its last, both 8 bytes) and a timestamp (record 5 and
// 8 bytes); every event follows a timestamp record only when its time differs from the last one written. A chunk is
// padded with zeros (end of chunk); the last chunk of a file ends after its last event, with an end-of-file and an
// end-of-buffer byte. Integers are compressed
// as OTF2 compresses them: 0 and the all-ones value as one byte, others as their byte count and their low bytes.
// Records with more than one field, and the newer ones, carry their length in a byte after the record id. A record
// goes to the next chunk when its upper bound (OTF2's own estimate) plus a timestamp does not fit in the room left;
// keeping OTF2's estimates keeps its chunk boundaries too. event_chunks_test.cpp holds the writer to OTF2's bytes.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include <otf2/OTF2_Archive.h>

namespace p3s::interpose::otf2 {

/// The event chunk size of every archive p3s writes (OTF2's default, as the anchor file states it).
inline constexpr std::size_t kEventChunkBytes = OTF2_CHUNK_SIZE_EVENTS_DEFAULT;

/// OTF2's record ids in event files.
enum class Id : std::uint8_t {
  ChunkHeader = 3,
  Timestamp = 5,
  AttributeList = 6,
  Enter = 12,
  Leave = 13,
  MpiSend = 14,
  MpiIsend = 15,
  MpiIsendComplete = 16,
  MpiIrecvRequest = 17,
  MpiRecv = 18,
  MpiIrecv = 19,
  MpiRequestCancelled = 21,
  MpiCollectiveBegin = 22,
  MpiCollectiveEnd = 23,
  Metric = 31,
  NonBlockingCollectiveRequest = 85,
  NonBlockingCollectiveComplete = 86,
  CommCreate = 87,
  CommDestroy = 88,
};

inline constexpr std::uint8_t kEndOfBuffer = 1;
inline constexpr std::uint8_t kEndOfFile = 2;
inline constexpr std::uint8_t kLittleEndian = 0x42;  ///< the chunk header's byte-order mark on this host
inline constexpr std::size_t kChunkHeaderBytes = 18;
inline constexpr std::size_t kLastEventAt = 10;    ///< where the header holds the number of the chunk's last event
inline constexpr std::size_t kTimestampBytes = 9;  ///< record id and the full 8 bytes
inline constexpr std::uint8_t kTypeUint64 = 4;     ///< OTF2_TYPE_UINT64
inline constexpr std::uint8_t kTypeString = 11;    ///< OTF2_TYPE_STRING

/// Where the chunks go: each write puts bytes at an offset of the event file. A buffer is written whole when full;
/// flush() and close() write it as far as it is used, and a later write of the same buffer repeats those bytes.
class ChunkSink {
 public:
  virtual ~ChunkSink() = default;
  /// Writes all of `bytes` at `offset`; false on failure.
  virtual bool write(std::uint64_t offset, const std::byte* data, std::size_t bytes) noexcept = 0;
};

/// One location's event stream. Holds `chunks` chunks of `chunk_bytes` in memory and hands them to the sink when all
/// are full, at flush() and at close(). One thread writes the events; exit_span() may be called from a signal
/// handler on any thread.
class EventChunks {
 public:
  /// Null when the memory cannot be had.
  static std::unique_ptr<EventChunks> create(std::size_t chunk_bytes, std::size_t chunks, ChunkSink& sink) noexcept;
  EventChunks(const EventChunks&) = delete;
  EventChunks& operator=(const EventChunks&) = delete;

  // The events. Each returns false once a write to the sink has failed (nothing more is written then).
  bool enter(std::uint64_t t, std::uint32_t region) noexcept {
    std::byte* p = reserve(t, 1 + 5);
    if (p == nullptr) return false;
    p = put_id(p, Id::Enter);
    return done(put_u32(p, region));
  }
  /// An Enter with one string attribute (OTF2's attribute list record before it).
  bool enter(std::uint64_t t, std::uint32_t region, std::uint32_t attribute, std::uint32_t string) noexcept {
    constexpr std::size_t kListData = 5 + 15;  // OTF2's bound for a list of one: count, then id, type and value
    std::byte* p = reserve(t, 1 + (kListData + 2) + 5);
    if (p == nullptr) return false;
    p = put_id(p, Id::AttributeList);
    std::byte* const length = p++;
    p = put_u32(p, 1);
    p = put_u32(p, attribute);
    *p++ = std::byte{kTypeString};
    p = put_u32(p, string);
    *length = static_cast<std::byte>(p - length - 1);
    p = put_id(p, Id::Enter);
    return done(put_u32(p, region));
  }
  bool leave(std::uint64_t t, std::uint32_t region) noexcept {
    std::byte* p = reserve(t, 1 + 5);
    if (p == nullptr) return false;
    p = put_id(p, Id::Leave);
    return done(put_u32(p, region));
  }
  /// A Metric event of `n` unsigned 64-bit values (n at most 25, far below OTF2's one-byte length limit).
  bool metric(std::uint64_t t, std::uint32_t metric, std::uint8_t n, const std::uint64_t* values) noexcept {
    std::byte* p = reserve(t, 1 + 1 + (5 + 1 + std::size_t{n} * 10));
    if (p == nullptr) return false;
    p = put_id(p, Id::Metric);
    std::byte* const length = p++;
    p = put_u32(p, metric);
    *p++ = static_cast<std::byte>(n);
    for (std::uint8_t i = 0; i < n; ++i) {
      *p++ = std::byte{kTypeUint64};
      p = put_u64(p, values[i]);
    }
    *length = static_cast<std::byte>(p - length - 1);
    return done(p);
  }
  /// MpiSend or MpiRecv (`id`), the peer's rank in `comm`.
  bool message(Id id, std::uint64_t t, std::uint32_t peer, std::uint32_t comm, std::uint32_t tag,
               std::uint64_t bytes) noexcept {
    std::byte* p = reserve(t, 1 + 1 + (5 + 5 + 5 + 9));
    if (p == nullptr) return false;
    p = put_id(p, id);
    std::byte* const length = p++;
    p = put_u64(put_u32(put_u32(put_u32(p, peer), comm), tag), bytes);
    *length = static_cast<std::byte>(p - length - 1);
    return done(p);
  }
  /// MpiIsend or MpiIrecv (`id`).
  bool message(Id id, std::uint64_t t, std::uint32_t peer, std::uint32_t comm, std::uint32_t tag, std::uint64_t bytes,
               std::uint64_t request) noexcept {
    std::byte* p = reserve(t, 1 + 1 + (5 + 5 + 5 + 9 + 9));
    if (p == nullptr) return false;
    p = put_id(p, id);
    std::byte* const length = p++;
    p = put_u64(put_u64(put_u32(put_u32(put_u32(p, peer), comm), tag), bytes), request);
    *length = static_cast<std::byte>(p - length - 1);
    return done(p);
  }
  /// The records that name only a request: MpiIsendComplete, MpiIrecvRequest and MpiRequestCancelled carry no
  /// length, NonBlockingCollectiveRequest does.
  bool request(Id id, std::uint64_t t, std::uint64_t request) noexcept {
    const bool with_length = id == Id::NonBlockingCollectiveRequest;
    std::byte* p = reserve(t, 1 + (with_length ? 1 : 0) + 9);
    if (p == nullptr) return false;
    p = put_id(p, id);
    std::byte* const length = p;
    if (with_length) ++p;
    p = put_u64(p, request);
    if (with_length) *length = static_cast<std::byte>(p - length - 1);
    return done(p);
  }
  bool collective_begin(std::uint64_t t) noexcept {
    std::byte* p = reserve(t, 1 + 1);
    if (p == nullptr) return false;
    p = put_id(p, Id::MpiCollectiveBegin);
    *p++ = std::byte{0};
    return done(p);
  }
  /// MpiCollectiveEnd, or NonBlockingCollectiveComplete where `request` is given (non-zero `nonblocking`).
  bool collective_end(std::uint64_t t, std::uint8_t op, std::uint32_t comm, std::uint32_t root, std::uint64_t sent,
                      std::uint64_t received, bool nonblocking, std::uint64_t request) noexcept {
    std::byte* p = reserve(t, 1 + 1 + (1 + 5 + 5 + 9 + 9 + (nonblocking ? 9 : 0)));
    if (p == nullptr) return false;
    p = put_id(p, nonblocking ? Id::NonBlockingCollectiveComplete : Id::MpiCollectiveEnd);
    std::byte* const length = p++;
    *p++ = static_cast<std::byte>(op);
    p = put_u64(put_u64(put_u32(put_u32(p, comm), root), sent), received);
    if (nonblocking) p = put_u64(p, request);
    *length = static_cast<std::byte>(p - length - 1);
    return done(p);
  }
  /// CommCreate or CommDestroy (`id`).
  bool comm(Id id, std::uint64_t t, std::uint32_t comm) noexcept {
    std::byte* p = reserve(t, 1 + 1 + 5);
    if (p == nullptr) return false;
    p = put_id(p, id);
    std::byte* const length = p++;
    p = put_u32(p, comm);
    *length = static_cast<std::byte>(p - length - 1);
    return done(p);
  }

  /// Hands the buffer to the sink as far as it is used (whole records only); events go on after it.
  bool flush() noexcept;
  /// Also flush() whenever an event comes `interval_ns` or more after the last flush (0: never).
  void set_flush_interval(std::uint64_t interval_ns, std::uint64_t now_ns) noexcept {
    flush_interval_ns_ = interval_ns;
    next_flush_ns_ = interval_ns == 0 ? UINT64_MAX : now_ns + interval_ns;
  }
  /// Hands what is left to the sink, the last chunk as far as it is used, with OTF2's end marks; the stream takes
  /// no event afterwards.
  bool close() noexcept;

  /// For a process being terminated (async-signal-safe): what is buffered and not yet certain to be in the file,
  /// whole records only, and where it goes. Empty while the buffer is being handed to the sink (those bytes are
  /// given up: writing them again could tear what the sink wrote) and after the first call: nothing is written
  /// afterwards.
  struct Span {
    const std::byte* data = nullptr;
    std::size_t bytes = 0;
    std::uint64_t offset = 0;
  };
  [[nodiscard]] Span exit_span() noexcept;

  [[nodiscard]] std::uint64_t events() const noexcept { return events_; }
  [[nodiscard]] std::uint64_t first_time() const noexcept { return first_time_; }
  [[nodiscard]] std::uint64_t last_time() const noexcept { return time_; }
  [[nodiscard]] bool failed() const noexcept { return failed_; }

  // OTF2's compressed integers.
  static std::byte* put_u32(std::byte* p, std::uint32_t v) noexcept {
    if (v == 0 || v == UINT32_MAX) {
      *p++ = static_cast<std::byte>(v & 0xff);
      return p;
    }
    const std::uint8_t n = v < 0x100u ? 1 : v < 0x10000u ? 2 : v < 0x1000000u ? 3 : 4;
    *p++ = static_cast<std::byte>(n);
    std::memcpy(p, &v, n);  // little-endian host: the low bytes first
    return p + n;
  }
  static std::byte* put_u64(std::byte* p, std::uint64_t v) noexcept {
    if (v == 0 || v == UINT64_MAX) {
      *p++ = static_cast<std::byte>(v & 0xff);
      return p;
    }
    const auto n = static_cast<std::uint8_t>(8 - (__builtin_clzll(v) / 8));
    *p++ = static_cast<std::byte>(n);
    std::memcpy(p, &v, n);
    return p + n;
  }

 private:
  EventChunks(std::unique_ptr<std::byte[]> buffer, std::size_t chunk_bytes, std::size_t chunks,
              ChunkSink& sink) noexcept;

  static std::byte* put_id(std::byte* p, Id id) noexcept {
    *p = static_cast<std::byte>(id);
    return p + 1;
  }

  /// Room for a record of at most `bound` bytes at time `t` (a later chunk when it does not fit), after its
  /// timestamp where the time moved on; null once the sink failed. Times that go back are held at the last one:
  /// OTF2 requires them in order.
  std::byte* reserve(std::uint64_t t, std::size_t bound) noexcept {
    if (bound + kTimestampBytes >= static_cast<std::size_t>(chunk_end_ - pos_) && !next_chunk(t)) return nullptr;
    if (events_ == 0) first_time_ = t;
    if (t > time_) {
      *pos_ = static_cast<std::byte>(Id::Timestamp);
      std::memcpy(pos_ + 1, &t, 8);
      pos_ += kTimestampBytes;
      time_ = t;
    }
    ++events_;
    return pos_;
  }
  bool done(std::byte* end) noexcept {
    pos_ = end;
    // Published after the bytes: a termination handler writes whole records only.
    published_.store(end, std::memory_order_release);
    if (time_ >= next_flush_ns_) [[unlikely]] {
      next_flush_ns_ = time_ + flush_interval_ns_;
      return flush();
    }
    return true;
  }
  /// Closes the current chunk and starts the next, handing the buffer to the sink when it is full.
  bool next_chunk(std::uint64_t t) noexcept;
  void start_chunk() noexcept;
  /// Writes the first `bytes` of the buffer at its place in the file (nothing once a termination handler wrote).
  bool hand_over(std::size_t bytes) noexcept;

  std::unique_ptr<std::byte[]> buffer_;
  std::size_t chunk_bytes_;
  std::byte* buffer_end_;
  std::byte* chunk_begin_;
  std::byte* chunk_end_;
  std::byte* pos_;
  ChunkSink& sink_;
  std::uint64_t base_ = 0;  ///< the file offset of the buffer's first byte
  std::atomic<std::byte*> published_;
  std::atomic<bool> busy_{false};    ///< the buffer is being handed over: a termination handler keeps out
  std::atomic<bool> exited_{false};  ///< a termination handler took the buffer: nothing is written afterwards
  std::uint64_t time_ = 0;
  std::uint64_t first_time_ = 0;
  std::uint64_t events_ = 0;
  std::uint64_t flush_interval_ns_ = 0;
  std::uint64_t next_flush_ns_ = UINT64_MAX;
  bool failed_ = false;
};

/// A sink that writes a file it creates (truncating an old one); the error says which file and why.
class FileSink final : public ChunkSink {
 public:
  /// Null with `error` set when the file cannot be created.
  static std::unique_ptr<FileSink> create(const std::string& path, std::string& error) noexcept;
  ~FileSink() override;
  FileSink(const FileSink&) = delete;
  FileSink& operator=(const FileSink&) = delete;
  bool write(std::uint64_t offset, const std::byte* data, std::size_t bytes) noexcept override;
  /// Closes the file; false where closing reported an error (then in error()).
  bool close() noexcept;
  [[nodiscard]] const std::string& error() const noexcept { return error_; }

 private:
  FileSink(std::string path, int fd) noexcept : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_;
  std::string error_;
};

}  // namespace p3s::interpose::otf2
