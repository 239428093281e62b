// SPDX-License-Identifier: BSD-3-Clause
// Option checks that say what is wrong with the text given: not a number at all, or out of range.
#pragma once

#include <CLI/CLI.hpp>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>

namespace p3s::cli {

/// A finite number from `lo` to `hi` (NaN and infinities are refused, which a plain range lets through).
inline CLI::Validator number_in(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        std::size_t used = 0;
        double v = 0;
        try {
          v = std::stod(text, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used == 0 || used != text.size() || !std::isfinite(v)) return "'" + text + "' is not a number";
        if (v < lo || v > hi)
          return "'" + text + "' is not from " + CLI::detail::to_string(lo) + " to " + CLI::detail::to_string(hi);
        return {};
      },
      "NUMBER in [" + CLI::detail::to_string(lo) + " - " + CLI::detail::to_string(hi) + "]");
}

/// A whole number from `lo` to `hi`.
inline CLI::Validator integer_in(std::int64_t lo, std::int64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        std::int64_t v = 0;
        const char* end = text.data() + text.size();
        const auto [at, ec] = std::from_chars(text.data(), end, v);
        if (ec == std::errc::result_out_of_range) return "'" + text + "' is out of range";
        if (ec != std::errc() || at != end) return "'" + text + "' is not a whole number";
        if (v < lo || v > hi) return "'" + text + "' is not from " + std::to_string(lo) + " to " + std::to_string(hi);
        return {};
      },
      "INT in [" + std::to_string(lo) + " - " + std::to_string(hi) + "]");
}

/// A path to write: one that begins with '=' is `-o=X` read as CLI11 reads a short option's value (=X), not the X
/// meant; refused rather than made.
inline CLI::Validator output_path() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (!text.empty() && text.front() == '=') {
          return "'" + text + "' begins with '=': write -o " + text.substr(1) + " or --output=" + text.substr(1);
        }
        if (text.empty()) return "an empty path";
        return {};
      },
      "PATH");
}

}  // namespace p3s::cli
