// SPDX-License-Identifier: BSD-3-Clause
// Reading back a value that a file stores under its stable name (an MPI function kind, a collective, ...).
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "p3s/error.hpp"

namespace p3s {

/// The value among `values` whose stable name (as `name_of` spells it) is `text`; nullopt when none is.
template <typename E, std::size_t N, typename NameOf>
[[nodiscard]] std::optional<E> value_named(std::string_view text, const std::array<E, N>& values, NameOf name_of) {
  for (const E v : values) {
    if (name_of(v) == text) return v;
  }
  return std::nullopt;
}

/// The value whose stable name is `text`, as `parse` knows them.
/// @throws p3s::InputError "unknown <what> '<text>'" when `text` is not one.
template <typename T>
[[nodiscard]] T parse_stable_name(std::string_view text, std::string_view what,
                                  std::optional<T> (*parse)(std::string_view) noexcept) {
  if (const std::optional<T> v = parse(text)) return *v;
  throw InputError("unknown " + std::string(what) + " '" + std::string(text) + "'");
}

}  // namespace p3s
