// SPDX-License-Identifier: BSD-3-Clause
#include "state.hpp"

#include <fstream>

#include <nlohmann/json.hpp>

#include "p3s/error.hpp"
#include "p3s/json_text.hpp"
#include "p3s/version.hpp"
#include "p3s/whole_file.hpp"

namespace p3s::scale::detail {
namespace {

using nlohmann::json;
inline constexpr int kStateSchemaVersion = 1;

}  // namespace

State State::load(const std::filesystem::path& dir) {
  State s;
  s.file_ = dir / "scale-state.json";
  std::ifstream in(s.file_);
  if (!in) return s;
  try {
    const json j = json::parse(in);
    if (j.at("schema_version").get<int>() != kStateSchemaVersion) throw InputError("another schema version");
    s.command_ = j.at("command").get<std::vector<std::string>>();
    s.serial_ = j.at("serial").get<std::int64_t>();
    for (const auto& [step, d] : j.at("steps").items()) {
      s.steps_[step] = Done{d.at("key").get<std::string>(), d.at("serial").get<std::int64_t>()};
    }
  } catch (const std::exception& e) {
    throw InputError("'" + s.file_.string() + "' is damaged (" + e.what() +
                     "); remove it, or add --force, to start this directory's steps again");
  }
  return s;
}

std::optional<std::int64_t> State::done(const std::string& step, const std::string& key) const {
  const auto it = steps_.find(step);
  if (it == steps_.end() || it->second.key != key) return std::nullopt;
  return it->second.serial;
}

std::int64_t State::mark(const std::string& step, const std::string& key) {
  steps_[step] = Done{key, ++serial_};
  save();
  return serial_;
}

void State::save() const {
  json steps = json::object();
  for (const auto& [step, d] : steps_) steps[step] = json{{"key", d.key}, {"serial", d.serial}};
  const json j{{"schema_version", kStateSchemaVersion},
               {"tool", std::string("p3s ") + p3s::kVersion},
               {"command", command_},
               {"serial", serial_},
               {"steps", std::move(steps)}};
  write_whole_file(file_, json_text(j, 1) + '\n');
}

}  // namespace p3s::scale::detail
