// SPDX-License-Identifier: BSD-3-Clause
// The one check of a p3s file's schema version, with one wording for every reader.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "p3s/error.hpp"

namespace p3s {

/// The versions of a kind of file this p3s reads, and what to do with one it does not.
struct SchemaVersions {
  std::string_view file;    ///< what the file is, as errors name it ("model", "fit report")
  int oldest = 1;           ///< the oldest version read
  int newest = 1;           ///< the version written
  std::string_view remedy;  ///< how to get a file this p3s reads ("re-run `p3s model` on its signatures")
};

/// The "schema_version" of the file at `path` (parsed into `j`), when this p3s reads it.
/// @throws p3s::InputError naming the file, its version, the versions read and the remedy; nlohmann's exceptions
/// where the member is missing or no number.
[[nodiscard]] inline int checked_schema_version(const nlohmann::json& j, const std::filesystem::path& path,
                                                const SchemaVersions& v) {
  const int version = j.at("schema_version").get<int>();
  if (version >= v.oldest && version <= v.newest) return version;
  const std::string read = v.oldest == v.newest
                               ? "version " + std::to_string(v.newest)
                               : "versions " + std::to_string(v.oldest) + " to " + std::to_string(v.newest);
  throw InputError(std::string(v.file) + " '" + path.string() + "' has schema version " + std::to_string(version) +
                   (version > v.newest ? ", written by a later p3s (this one reads " + read + ")"
                                       : ", older than this p3s reads (" + read + ")") +
                   "; " + std::string(v.remedy));
}

}  // namespace p3s
