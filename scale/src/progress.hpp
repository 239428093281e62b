// SPDX-License-Identifier: BSD-3-Clause
// Progress of `p3s scale` on stderr: a live line (step, percentage, elapsed and time left) on a terminal, one line
// per step otherwise.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <string>

namespace p3s::scale::detail {

class Progress {
 public:
  /// `steps` in all; `live` rewrites one line (stderr is a terminal).
  Progress(std::size_t steps, bool live);
  /// Counts a step of `kind` still to come (before the first begin).
  void plan(const std::string& kind) { ++left_[kind]; }
  /// Step `label` of kind `kind` (record, analyze, model, replay, curve) begins.
  void begin(const std::string& kind, const std::string& label);
  /// Redraws the live line (nothing otherwise).
  void tick();
  /// The step ended: done now, or found done before.
  void end(bool skipped);

 private:
  [[nodiscard]] std::string status() const;
  [[nodiscard]] double seconds_left() const;

  std::size_t steps_;
  bool live_;
  std::size_t done_ = 0;
  std::string kind_;
  std::string label_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point step_start_;
  std::map<std::string, std::pair<double, int>> spent_;  ///< per kind: seconds and steps run
  std::map<std::string, int> left_;                      ///< per kind: steps still to run
};

}  // namespace p3s::scale::detail
