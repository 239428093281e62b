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

}  // namespace p3s
