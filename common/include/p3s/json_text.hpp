// SPDX-License-Identifier: BSD-3-Clause
// JSON text that never fails on the bytes it holds.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace p3s {

/// The JSON text of `j` (indented by `indent` spaces per level; -1: one line). Bytes that are not UTF-8, as a
/// command line, path or name in another encoding may hold, become U+FFFD instead of failing the write: the
/// file stays valid JSON and every other character is kept.
/// Any nlohmann JSON type: an ordered_json keeps its keys' order.
template <class Json>
[[nodiscard]] std::string json_text(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::detail::error_handler_t::replace);
}

/// A short description of `j` for an error message: a number, string or literal as written (cut to 60 characters),
/// an array or object by its kind and size. Never recursive: a value nested 10^5 deep in a damaged file is named,
/// not printed (printing recurses once per level and overflows the stack).
template <class Json>
[[nodiscard]] std::string json_excerpt(const Json& j) {
  if (j.is_array()) return "an array of " + std::to_string(j.size()) + " items";
  if (j.is_object()) return "an object of " + std::to_string(j.size()) + " members";
  std::string text = json_text(j);
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

}  // namespace p3s
