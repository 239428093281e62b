// SPDX-License-Identifier: BSD-3-Clause
// Numbers and times as the printed tables write them, and columns of them.
#pragma once

#include <cstdio>
#include <string>

namespace p3s {

/// `v` formatted by a printf format with one double ("%.1f %%").
[[nodiscard]] inline std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

/// A string right- (width > 0) or left-aligned (width < 0) in a column.
[[nodiscard]] inline std::string pad(const std::string& text, int width) {
  const auto w = static_cast<std::size_t>(width < 0 ? -width : width);
  if (text.size() >= w) return text;
  const std::string fill(w - text.size(), ' ');
  return width < 0 ? text + fill : fill + text;
}

/// "12.3 ms": a time in ns, in the unit that suits it.
[[nodiscard]] inline std::string time_text(double ns) {
  if (ns >= 1e9) return fmt("%.3f s", ns / 1e9);
  if (ns >= 1e6) return fmt("%.2f ms", ns / 1e6);
  return fmt("%.1f us", ns / 1e3);
}

}  // namespace p3s
