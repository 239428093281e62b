// SPDX-License-Identifier: BSD-3-Clause
// JSON text that never fails on the bytes it holds.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <utility>

#include "p3s/error.hpp"

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

/// Deeper than any file p3s writes nests (a signature, 7 levels; a model, about 12).
inline constexpr int kMostJsonDepth = 64;

/// Parses a p3s input (`text`: a stream or a string), refusing one nested deeper than kMostJsonDepth before it is
/// built: a value nested 10^5 deep in a damaged or crafted file parses, then overflows the stack of the first copy
/// made of it. `also`, when given, is called as nlohmann's parser callback is (depth, event, value) and says whether
/// to keep the value. @throws p3s::InputError for the depth; nlohmann::json::exception for text that is no JSON.
template <class Text, class Also = std::nullptr_t>
[[nodiscard]] nlohmann::json parse_input(Text&& text, Also also = nullptr) {
  return nlohmann::json::parse(std::forward<Text>(text),
                               [&also](int depth, nlohmann::json::parse_event_t event, nlohmann::json& value) {
                                 if (depth > kMostJsonDepth) {
                                   throw InputError("its JSON is nested more than " + std::to_string(kMostJsonDepth) +
                                                    " levels deep, deeper than any file p3s writes");
                                 }
                                 if constexpr (std::is_same_v<Also, std::nullptr_t>) {
                                   return true;
                                 } else {
                                   return also(depth, event, value);
                                 }
                               });
}

}  // namespace p3s
