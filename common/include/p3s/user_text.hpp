// SPDX-License-Identifier: BSD-3-Clause
// An error message as a user reads it on one line of a terminal.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace p3s {

/// The length of the valid UTF-8 sequence at the start of `s` (1 to 4), or 0 where its bytes are none.
[[nodiscard]] inline std::size_t utf8_sequence(std::string_view s) noexcept {
  const auto byte = [&s](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char lead = byte(0);
  std::size_t length = 0;
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) length = 2;
  if (lead >= 0xe0 && lead <= 0xef) length = 3;
  if (lead >= 0xf0 && lead <= 0xf4) length = 4;
  if (length == 0 || s.size() < length) return 0;
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xc0) != 0x80) return 0;
  }
  // No overlong forms, surrogates or code points past U+10FFFF.
  if ((lead == 0xe0 && byte(1) < 0xa0) || (lead == 0xed && byte(1) > 0x9f) || (lead == 0xf0 && byte(1) < 0x90) ||
      (lead == 0xf4 && byte(1) > 0x8f)) {
    return 0;
  }
  return length;
}

/// `text` as one line in the user's words: without the JSON library's exception ids ("[json.exception.parse_error.101]
/// "), with line breaks written \n, other control characters and bytes that are not UTF-8 (a damaged input's, echoed
/// in a message) as '?'.
[[nodiscard]] inline std::string user_text(std::string text) {
  for (std::size_t at = text.find("[json.exception."); at != std::string::npos;
       at = text.find("[json.exception.", at)) {
    const std::size_t end = text.find("] ", at);
    if (end == std::string::npos) break;
    text.erase(at, end + 2 - at);
  }
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::size_t length = utf8_sequence(std::string_view(text).substr(i));
    if (c == '\n') {
      out += "\\n";
    } else if (length == 0 || c < 0x20 || c == 0x7f) {
      out += '?';
    } else {
      out.append(text, i, length);
    }
    i += length == 0 ? 1 : length;
  }
  return out;
}

}  // namespace p3s
