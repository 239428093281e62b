// SPDX-License-Identifier: BSD-3-Clause
// A JSON file the simulation reads (a machine file, p3s-calibrate's measurements), parsed with p3s's depth bound.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "p3s/error.hpp"
#include "p3s/json_text.hpp"

namespace p3s::simulate::detail {

/// The JSON of `path`. @throws p3s::InputError "cannot read the `what` '...'" or "'...' is no JSON: `hint`".
inline nlohmann::json json_file(const std::filesystem::path& path, const std::string& what, const std::string& hint) {
  std::ifstream in(path);
  if (!in) throw InputError("cannot read the " + what + " '" + path.string() + "'");
  try {
    return parse_input(in);
  } catch (const nlohmann::json::exception&) {
    throw InputError("'" + path.string() + "' is no JSON: " + hint);
  } catch (const InputError& e) {
    throw InputError("'" + path.string() + "': " + e.what());
  }
}

}  // namespace p3s::simulate::detail
