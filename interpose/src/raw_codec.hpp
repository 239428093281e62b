// SPDX-License-Identifier: BSD-3-Clause
// The compact encoding of raw log records (version 2): what ThreadLog writes and RawReader reads back into the
// fixed structures of raw_format.hpp.
//
// A record is `length body`, `length` being the body's size as an unsigned LEB128 varint, so that a reader skips
// a kind it does not know and stops cleanly at a torn tail. The body is:
//   tag      one byte: the kind in its low 5 bits; kTagFlags: a flags byte follows; kTagRegion: the region
//            follows (varint); kTagNoTime: the record has time 0 and no time field
//   time     zigzag varint of the difference to the last record with a time (the first: to 0)
//   payload  by kind:
//            - Enter/Leave (one part): 64-bit varints; an Enter with kFlagCallsite starts with its call site id,
//              then each metric as the zigzag difference to the same metric of the previous Enter or Leave
//            - CommDef, CallsiteDef, Meta: the bytes as they are
//            - every other kind: each 32-bit word of the structure as a zigzag varint of its signed value
// A decoded payload is zero-padded to a multiple of 8 bytes, as version 1 stored it.
//
// With this encoding a halo exchange's point-to-point call takes 25-30 bytes instead of 80-96.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "raw_format.hpp"

namespace p3s::interpose::raw {

inline constexpr std::uint8_t kTagKindMask = 0x1f;
inline constexpr std::uint8_t kTagFlags = 0x20;
inline constexpr std::uint8_t kTagRegion = 0x40;
inline constexpr std::uint8_t kTagNoTime = 0x80;
/// Metrics delta-coded per thread; more values in an Enter/Leave are written as they are.
inline constexpr std::size_t kCodedMetrics = 3;

[[nodiscard]] constexpr bool verbatim(Kind kind) noexcept {
  return kind == Kind::CommDef || kind == Kind::CallsiteDef || kind == Kind::Meta;
}
[[nodiscard]] constexpr bool region_record(Kind kind) noexcept { return kind == Kind::Enter || kind == Kind::Leave; }

/// The most bytes a record of `payload` bytes can take encoded (the buffer's room check): length, tag, flags,
/// region and time, then the payload as it is (verbatim) or at most 5 bytes per 4 (varints).
[[nodiscard]] constexpr std::size_t max_encoded(Kind kind, std::size_t payload) noexcept {
  return 5 + 1 + 1 + 3 + 10 + payload + (verbatim(kind) ? 0 : payload / 4 + 2);
}
/// No structure of raw_format.hpp encodes longer than this; a longer body of a varint kind is damage.
inline constexpr std::size_t kMaxCodedBody = 512;

inline std::byte* put_varint(std::byte* p, std::uint64_t v) noexcept {
  while (v >= 0x80) {
    *p++ = static_cast<std::byte>(static_cast<std::uint8_t>(v) | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<std::byte>(v);
  return p;
}

[[nodiscard]] constexpr std::uint64_t zigzag(std::int64_t v) noexcept {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
[[nodiscard]] constexpr std::int64_t unzigzag(std::uint64_t v) noexcept {
  return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
}

/// Reads a varint from [p, end); false when it runs past `end` or over 64 bits (damage or a torn tail).
inline bool get_varint(const std::byte*& p, const std::byte* end, std::uint64_t& v) noexcept {
  if (p != end && static_cast<std::uint8_t>(*p) < 0x80) [[likely]] {
    v = static_cast<std::uint8_t>(*p++);
    return true;
  }
  if (end - p >= 2 && static_cast<std::uint8_t>(p[1]) < 0x80) {  // two bytes: times and sizes in a loop
    v = (static_cast<std::uint64_t>(static_cast<std::uint8_t>(p[0]) & 0x7f)) |
        (static_cast<std::uint64_t>(static_cast<std::uint8_t>(p[1])) << 7);
    p += 2;
    return true;
  }
  v = 0;
  for (unsigned shift = 0; shift < 64 && p != end; shift += 7) {
    const auto b = static_cast<std::uint8_t>(*p++);
    v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

/// Each whole 32-bit word of [src, src + bytes) as a zigzag varint.
inline std::byte* put_words(std::byte* p, const std::byte* src, std::size_t bytes) noexcept {
  for (std::size_t i = 0; i + 4 <= bytes; i += 4) {
    std::int32_t v;
    std::memcpy(&v, src + i, 4);
    p = put_varint(p, zigzag(v));
  }
  return p;
}

/// What both sides remember between the records of one log.
struct CodecState {
  std::uint64_t time_ns = 0;
  std::uint64_t metrics[kCodedMetrics] = {};
};

/// Encodes one record at `out` (which has max_encoded(kind, payload) bytes of room); returns the end.
inline std::byte* encode(std::byte* out, CodecState& st, Kind kind, std::uint8_t flags, std::uint16_t region,
                         std::uint64_t time_ns, const std::byte* part1, std::size_t bytes1, const std::byte* part2,
                         std::size_t bytes2) noexcept {
  // The body goes after a one-byte length; the rare body of 128 bytes or more is moved to make room.
  std::byte* const body = out + 1;
  std::byte* p = body;
  std::uint8_t tag = static_cast<std::uint8_t>(kind) & kTagKindMask;
  if (flags != 0) tag |= kTagFlags;
  if (region != 0) tag |= kTagRegion;
  if (time_ns == 0) tag |= kTagNoTime;
  *p++ = static_cast<std::byte>(tag);
  if (flags != 0) *p++ = static_cast<std::byte>(flags);
  if (region != 0) p = put_varint(p, region);
  if (time_ns != 0) {
    p = put_varint(p, zigzag(static_cast<std::int64_t>(time_ns - st.time_ns)));
    st.time_ns = time_ns;
  }
  if (region_record(kind)) {
    // Enter and Leave: 64-bit values in one part (an Enter's call site first), the metrics as differences.
    std::size_t i = 0;
    if (kind == Kind::Enter && (flags & kFlagCallsite) != 0 && bytes1 >= 8) {
      std::uint64_t site;
      std::memcpy(&site, part1, 8);
      p = put_varint(p, site);
      i = 8;
    }
    for (std::size_t m = 0; i + 8 <= bytes1; i += 8, ++m) {
      std::uint64_t v;
      std::memcpy(&v, part1 + i, 8);
      if (m < kCodedMetrics) {
        p = put_varint(p, zigzag(static_cast<std::int64_t>(v - st.metrics[m])));
        st.metrics[m] = v;
      } else {
        p = put_varint(p, v);
      }
    }
  } else if (verbatim(kind)) {
    if (bytes1 != 0) std::memcpy(p, part1, bytes1);
    if (bytes2 != 0) std::memcpy(p + bytes1, part2, bytes2);
    p += bytes1 + bytes2;
  } else {
    p = put_words(put_words(p, part1, bytes1), part2, bytes2);
  }
  const auto length = static_cast<std::uint64_t>(p - body);
  if (length < 0x80) {
    *out = static_cast<std::byte>(length);
    return p;
  }
  std::byte head[10];
  const std::size_t extra = static_cast<std::size_t>(put_varint(head, length) - head) - 1;
  std::memmove(body + extra, body, length);
  std::memcpy(out, head, extra + 1);
  return p + extra;
}

/// Decodes the body [p, end) of one record into `header` and `payload` (which has 8 * (end - p) + 8 bytes of room:
/// no encoded byte gives more than 8). Returns the decoded payload's padded size, or -1 for a damaged body.
[[gnu::always_inline]] inline long decode(const std::byte* p, const std::byte* end, CodecState& st,
                                          RecordHeader& header, std::byte* payload) noexcept {
  if (p == end) return -1;
  const auto tag = static_cast<std::uint8_t>(*p++);
  header.kind = static_cast<Kind>(tag & kTagKindMask);
  header.flags = 0;
  header.region = 0;
  header.time_ns = 0;
  if ((tag & kTagFlags) != 0) {
    if (p == end) return -1;
    header.flags = static_cast<std::uint8_t>(*p++);
  }
  std::uint64_t v = 0;
  if ((tag & kTagRegion) != 0) {
    if (!get_varint(p, end, v) || v > 0xffff) return -1;
    header.region = static_cast<std::uint16_t>(v);
  }
  if ((tag & kTagNoTime) == 0) {
    if (!get_varint(p, end, v)) return -1;
    st.time_ns += static_cast<std::uint64_t>(unzigzag(v));
    header.time_ns = st.time_ns;
  }
  std::byte* out = payload;
  if (verbatim(header.kind)) {
    const auto n = static_cast<std::size_t>(end - p);
    if (n != 0) std::memcpy(out, p, n);
    out += n;
  } else if (region_record(header.kind)) {
    // As encode() wrote them: an Enter's call site as it is, then the metrics as differences.
    if (header.kind == Kind::Enter && (header.flags & kFlagCallsite) != 0 && p != end) {
      if (!get_varint(p, end, v)) return -1;
      std::memcpy(out, &v, 8);
      out += 8;
    }
    for (std::size_t m = 0; p != end; ++m) {
      if (!get_varint(p, end, v)) return -1;
      if (m < kCodedMetrics) {
        v = st.metrics[m] + static_cast<std::uint64_t>(unzigzag(v));
        st.metrics[m] = v;
      }
      std::memcpy(out, &v, 8);
      out += 8;
    }
  } else {
    while (p != end) {
      if (!get_varint(p, end, v)) return -1;
      const auto w = static_cast<std::int32_t>(unzigzag(v));
      std::memcpy(out, &w, 4);
      out += 4;
    }
  }
  const std::uint32_t padded_bytes = padded(static_cast<std::uint32_t>(out - payload));
  constexpr std::uint64_t zero = 0;
  std::memcpy(out, &zero, sizeof zero);  // the padding (under 8 bytes; `payload` has 8 bytes of room past it)
  header.bytes = static_cast<std::uint32_t>(sizeof(RecordHeader)) + padded_bytes;
  return static_cast<long>(padded_bytes);
}

}  // namespace p3s::interpose::raw
