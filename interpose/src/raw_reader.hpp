// SPDX-License-Identifier: BSD-3-Clause
// Streaming reader of one raw log: fixed memory whatever the log's size, and a clean stop at a torn tail.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "raw_codec.hpp"
#include "raw_format.hpp"

namespace p3s::interpose {

/// One record as read: its header and a pointer to its decoded payload (valid until the next call to next()).
struct RawRecord {
  raw::RecordHeader header;
  const std::byte* payload;
  std::size_t payload_bytes;
};

/// The most ranks a log's header may name (2^24: far above any run p3s records, far below what would exhaust memory).
inline constexpr std::int32_t kMaxWorldSize = 1 << 24;
/// The metrics a header can name.
inline constexpr std::uint32_t kMaxMetricNames = 3;

class RawReader {
 public:
  /// Opens the log and validates its header; on failure returns nullptr and sets `error`.
  static std::unique_ptr<RawReader> open(const std::string& path, std::string& error);
  ~RawReader();
  RawReader(const RawReader&) = delete;
  RawReader& operator=(const RawReader&) = delete;

  [[nodiscard]] const raw::FileHeader& header() const noexcept { return header_; }
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

  /// Reads the next record; false at the end. A record cut short by a killed process ends the stream and
  /// sets torn().
  bool next(RawRecord& record);
  /// Starts again from the first record.
  void rewind();

  [[nodiscard]] bool torn() const noexcept { return torn_; }
  [[nodiscard]] std::uint64_t bytes_read() const noexcept { return consumed_; }
  /// Bytes of the file after the last whole record read: 0 unless torn() (a partial record a kill left, or
  /// everything after a damaged length).
  [[nodiscard]] std::uint64_t bytes_unread() const noexcept;

 private:
  RawReader(std::string path, std::FILE* file, const raw::FileHeader& header, std::uint64_t file_bytes);
  bool fill(std::size_t need);
  /// Bytes of the file after the records read so far.
  [[nodiscard]] std::uint64_t bytes_left() const noexcept;

  std::string path_;
  std::FILE* file_;
  raw::FileHeader header_;
  std::vector<std::byte> chunk_;
  std::vector<std::byte> decoded_;  ///< the current record's payload
  raw::CodecState codec_;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  std::uint64_t consumed_ = 0;
  std::uint64_t file_bytes_ = 0;  ///< the file's size when opened: no record can be longer than what is left
  bool torn_ = false;
};

}  // namespace p3s::interpose
