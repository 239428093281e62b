// SPDX-License-Identifier: BSD-3-Clause
// Reading back an event file record by record: only the record framing is needed (event_chunks.hpp), not the
// events' meaning.
#include "event_repair.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "event_chunks.hpp"

namespace p3s::interpose::otf2 {
namespace {

/// What one chunk holds, read as far as its records can be told apart.
struct ChunkScan {
  std::size_t good = 0;  ///< the end of its last whole event (the header's end when it has none)
  std::uint64_t events = 0;
  bool stop = false;     ///< no chunk after this one counts: the end marks, a cut-off record, or damage
  bool damaged = false;  ///< a record (or the header) is not one EventChunks writes
  bool cut = false;      ///< the file ends inside a record (or the header)
  bool closed = false;
};

/// Record ids whose one field follows without a length byte.
bool without_length(std::uint8_t id) {
  return id == static_cast<std::uint8_t>(Id::Enter) || id == static_cast<std::uint8_t>(Id::Leave) ||
         id == static_cast<std::uint8_t>(Id::MpiIsendComplete) ||
         id == static_cast<std::uint8_t>(Id::MpiIrecvRequest) ||
         id == static_cast<std::uint8_t>(Id::MpiRequestCancelled);
}

/// Record ids with a length byte that EventChunks writes.
bool with_length(std::uint8_t id) {
  switch (static_cast<Id>(id)) {
    case Id::MpiSend:
    case Id::MpiIsend:
    case Id::MpiRecv:
    case Id::MpiIrecv:
    case Id::MpiCollectiveBegin:
    case Id::MpiCollectiveEnd:
    case Id::Metric:
    case Id::NonBlockingCollectiveRequest:
    case Id::NonBlockingCollectiveComplete:
    case Id::CommCreate:
    case Id::CommDestroy:
    case Id::AttributeList:
      return true;
    default:
      return false;
  }
}

constexpr std::size_t kCutOff = SIZE_MAX;

/// The size of the record at `p` (of `n` bytes left): 0 when it is not one EventChunks writes, kCutOff when it does
/// not fit in the `n` bytes.
std::size_t record_size(const std::uint8_t* p, std::size_t n) {
  const std::uint8_t id = p[0];
  if (n < 2)
    return id == static_cast<std::uint8_t>(Id::Timestamp) || without_length(id) || with_length(id) ? kCutOff : 0;
  std::size_t size = 0;
  if (id == static_cast<std::uint8_t>(Id::Timestamp)) {
    size = kTimestampBytes;
  } else if (without_length(id)) {
    const std::uint8_t head = p[1];  // a compressed integer: 0 or all-ones alone, else its byte count first
    size = 2 + (head == 0 || head == 0xff ? 0 : head);
    if (head > 8 && head != 0xff) return 0;
  } else if (with_length(id)) {
    if (p[1] != 0xff) {
      size = 2 + std::size_t{p[1]};
    } else {
      if (n < 10) return kCutOff;
      std::uint64_t length = 0;
      std::memcpy(&length, p + 2, 8);
      if (length > (std::uint64_t{1} << 32)) return 0;  // no record is that long: damage
      size = 10 + length;
    }
  } else {
    return 0;
  }
  return size <= n ? size : kCutOff;
}

/// Reads one chunk of `n` bytes (fewer than a chunk where the file ends in it).
ChunkScan scan_chunk(const std::uint8_t* p, std::size_t n, RepairedEvents& kept) {
  ChunkScan c;
  const bool header = (n < 1 || p[0] == static_cast<std::uint8_t>(Id::ChunkHeader)) && (n < 2 || p[1] == kLittleEndian);
  if (n < kChunkHeaderBytes || !header) {
    c.damaged = !header;
    c.cut = header && n != 0;
    c.stop = true;
    return c;
  }
  std::size_t pos = kChunkHeaderBytes;
  c.good = pos;
  std::uint64_t time = 0;
  while (pos < n) {
    const std::uint8_t id = p[pos];
    if (id == 0) return c;  // padding: the chunk is over
    if (id == kEndOfFile) {
      c.stop = c.closed = true;
      return c;
    }
    const std::size_t size = record_size(p + pos, n - pos);
    if (size == 0 || size == kCutOff) {
      c.stop = true;
      c.damaged = size == 0;
      c.cut = size == kCutOff;
      return c;
    }
    if (id == static_cast<std::uint8_t>(Id::Timestamp)) {
      std::memcpy(&time, p + pos + 1, 8);
    } else if (id != static_cast<std::uint8_t>(Id::AttributeList)) {
      if (kept.events == 0) kept.first_time = time;
      kept.last_time = time;
      ++kept.events;
      ++c.events;
      c.good = pos + size;
    }
    pos += size;
  }
  return c;
}

class Files {
 public:
  Files(const std::string& from, const std::string& to, std::string& error) : to_(to), error_(error) {
    in_ = std::fopen(from.c_str(), "rb");
    if (in_ == nullptr) {
      error_ = "cannot read " + from + ": " + std::strerror(errno);
      return;
    }
    out_ = std::fopen(to.c_str(), "wb");
    if (out_ == nullptr) error_ = "cannot create " + to + ": " + std::strerror(errno);
  }
  ~Files() {
    if (in_ != nullptr) std::fclose(in_);
    if (out_ != nullptr) std::fclose(out_);
  }
  Files(const Files&) = delete;
  Files& operator=(const Files&) = delete;

  [[nodiscard]] bool open() const { return in_ != nullptr && out_ != nullptr; }
  std::size_t read(std::vector<std::uint8_t>& chunk) { return std::fread(chunk.data(), 1, chunk.size(), in_); }
  bool write(const std::uint8_t* data, std::size_t bytes) {
    if (std::fwrite(data, 1, bytes, out_) == bytes) return true;
    if (error_.empty()) error_ = "writing " + to_ + " failed: " + std::strerror(errno);
    return false;
  }
  bool close() {
    const bool ok = std::fclose(out_) == 0;
    out_ = nullptr;
    if (!ok && error_.empty()) error_ = "writing " + to_ + " failed: " + std::strerror(errno);
    return ok;
  }

 private:
  std::FILE* in_ = nullptr;
  std::FILE* out_ = nullptr;
  std::string to_;
  std::string& error_;
};

void set_event_numbers(std::vector<std::uint8_t>& chunk, std::uint64_t first, std::uint64_t last) {
  std::memcpy(chunk.data() + 2, &first, 8);
  std::memcpy(chunk.data() + kLastEventAt, &last, 8);
}

}  // namespace

bool repair_event_file(const std::string& from, const std::string& to, std::size_t chunk_bytes, RepairedEvents& kept,
                       std::string& error) {
  Files files(from, to, error);
  if (!files.open()) return false;
  kept = {};
  std::vector<std::uint8_t> chunk(chunk_bytes);
  std::vector<std::uint8_t> previous(chunk_bytes);
  std::size_t previous_good = 0;  // 0: no chunk kept yet
  std::uint64_t offset = 0;       // of the chunk being read
  bool ok = true;
  for (;;) {
    const std::size_t n = files.read(chunk);
    const std::uint64_t before = kept.events;
    const ChunkScan c = scan_chunk(chunk.data(), n, kept);
    if (c.damaged || c.cut) {
      std::error_code ec;
      const auto size = std::filesystem::file_size(from, ec);
      kept.bytes_lost = ec ? 0 : size - (offset + (c.events != 0 ? c.good : 0));
    }
    kept.closed = c.closed;
    if (c.events != 0) {
      // The chunk before this one was not the last: it goes out whole.
      if (previous_good != 0) ok = ok && files.write(previous.data(), previous.size());
      set_event_numbers(chunk, before + 1, kept.events);
      previous.swap(chunk);
      previous_good = c.good;
    }
    if (c.stop || n < chunk_bytes) break;
    offset += n;
  }
  if (previous_good == 0) {  // no event at all: a chunk header alone
    previous.assign(kChunkHeaderBytes, 0);
    previous[0] = static_cast<std::uint8_t>(Id::ChunkHeader);
    previous[1] = kLittleEndian;
    set_event_numbers(previous, 1, 0);
    previous_good = kChunkHeaderBytes;
  }
  previous.resize(previous_good);
  previous.push_back(kEndOfFile);
  previous.push_back(kEndOfBuffer);
  ok = ok && files.write(previous.data(), previous.size());
  return files.close() && ok;
}

}  // namespace p3s::interpose::otf2
