// SPDX-License-Identifier: BSD-3-Clause
// The rule every command's outputs follow: an existing file is replaced only with --force.
#pragma once

#include <filesystem>
#include <string>
#include <system_error>
#include <utility>

#include "p3s/error.hpp"

namespace p3s {

/// @throws p3s::InputError "`what` 'out' exists; add --force to replace it" when `out` exists and not `force`.
inline void refuse_existing(const std::filesystem::path& out, bool force, const std::string& what) {
  std::error_code ec;
  if (!force && std::filesystem::exists(out, ec)) {
    throw InputError(what + " '" + out.string() + "' exists; add --force to replace it");
  }
}

/// An output directory, made if it is not there, and removed again (with what was written into it) unless kept:
/// a directory made for an output that could not be written whole does not stay behind.
class OutputDirectory {
 public:
  /// @throws p3s::Error naming the directory when it cannot be made.
  explicit OutputDirectory(std::filesystem::path dir) : dir_(std::move(dir)) {
    std::error_code ec;
    made_ = !std::filesystem::exists(dir_, ec);
    std::filesystem::create_directories(dir_, ec);
    if (ec) throw Error("cannot create '" + dir_.string() + "': " + ec.message());
  }
  ~OutputDirectory() {
    std::error_code ignored;
    if (made_) std::filesystem::remove_all(dir_, ignored);
  }
  OutputDirectory(const OutputDirectory&) = delete;
  OutputDirectory& operator=(const OutputDirectory&) = delete;
  /// The output was written whole: the directory stays.
  void keep() noexcept { made_ = false; }

 private:
  std::filesystem::path dir_;
  bool made_ = false;
};

}  // namespace p3s
