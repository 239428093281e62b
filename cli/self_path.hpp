// SPDX-License-Identifier: BSD-3-Clause
// This p3s executable and the programs installed beside it (p3s-replay, p3s-calibrate).
#pragma once

#include <unistd.h>

#include <climits>
#include <filesystem>
#include <string>

#include "p3s/error.hpp"

namespace p3s::cli {

/// This p3s. @throws p3s::Error when /proc/self/exe cannot be read.
inline std::filesystem::path self_executable() {
  char buf[PATH_MAX];
  const ssize_t len = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (len <= 0) throw Error("cannot find the p3s executable (/proc/self/exe)");
  return std::string(buf, static_cast<std::size_t>(len));
}

/// The program `name` beside this p3s. @throws p3s::Error when it is not there.
inline std::filesystem::path beside_self(const std::string& name) {
  const std::filesystem::path p = self_executable().parent_path() / name;
  if (!std::filesystem::exists(p)) throw Error(name + " is not beside p3s (" + p.string() + "); install both");
  return p;
}

}  // namespace p3s::cli
