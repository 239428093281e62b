// SPDX-License-Identifier: BSD-3-Clause
// Which steps of `p3s scale` are done, and from what: DIR/scale-state.json, written whole after each step.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace p3s::scale::detail {

class State {
 public:
  /// DIR's state (empty where DIR has none). @throws p3s::InputError when the file is damaged.
  static State load(const std::filesystem::path& dir);

  /// The step's serial when it was done from `key` (its inputs: a command, the serials of the steps it used).
  [[nodiscard]] std::optional<std::int64_t> done(const std::string& step, const std::string& key) const;
  /// Records the step done from `key` under a new serial, and writes the file. Returns the serial.
  std::int64_t mark(const std::string& step, const std::string& key);

  [[nodiscard]] const std::vector<std::string>& command() const { return command_; }
  void set_command(std::vector<std::string> command) { command_ = std::move(command); }
  [[nodiscard]] bool empty() const { return steps_.empty() && command_.empty(); }
  void clear() { steps_.clear(); }
  void save() const;

 private:
  struct Done {
    std::string key;
    std::int64_t serial = 0;
  };
  std::filesystem::path file_;
  std::vector<std::string> command_;
  std::map<std::string, Done> steps_;
  std::int64_t serial_ = 0;
};

}  // namespace p3s::scale::detail
