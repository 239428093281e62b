// SPDX-License-Identifier: BSD-3-Clause
// The rule every command's outputs follow: an existing file is replaced only with --force.
#pragma once

#include <filesystem>
#include <string>
#include <system_error>

#include "p3s/error.hpp"

namespace p3s {

/// @throws p3s::InputError "`what` 'out' exists; add --force to replace it" when `out` exists and not `force`.
inline void refuse_existing(const std::filesystem::path& out, bool force, const std::string& what) {
  std::error_code ec;
  if (!force && std::filesystem::exists(out, ec)) {
    throw InputError(what + " '" + out.string() + "' exists; add --force to replace it");
  }
}

}  // namespace p3s
