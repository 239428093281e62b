// SPDX-License-Identifier: BSD-3-Clause
// Reading back a value that a file stores under its stable name (an MPI function kind, a collective, ...).
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "p3s/error.hpp"

namespace p3s {

/// An enum's stable names in one table, each value beside its name: the name of a value, and the value of a name.
template <typename E, std::size_t N>
struct NameTable {
  std::array<std::pair<E, std::string_view>, N> entries;

  /// The value's name; `otherwise` for a value the table lacks (none of a valid enum).
  [[nodiscard]] constexpr std::string_view name(E value, std::string_view otherwise = "?") const noexcept {
    for (const auto& [v, n] : entries) {
      if (v == value) return n;
    }
    return otherwise;
  }
  /// The value named `text`; nullopt when none is.
  [[nodiscard]] constexpr std::optional<E> value(std::string_view text) const noexcept {
    for (const auto& [v, n] : entries) {
      if (n == text) return v;
    }
    return std::nullopt;
  }
};

template <typename E, std::size_t N>
NameTable(std::array<std::pair<E, std::string_view>, N>) -> NameTable<E, N>;

/// The value whose stable name is `text`, as `parse` knows them.
/// @throws p3s::InputError "unknown <what> '<text>'" when `text` is not one.
template <typename T>
[[nodiscard]] T parse_stable_name(std::string_view text, std::string_view what,
                                  std::optional<T> (*parse)(std::string_view) noexcept) {
  if (const std::optional<T> v = parse(text)) return *v;
  throw InputError("unknown " + std::string(what) + " '" + std::string(text) + "'");
}

}  // namespace p3s
