// SPDX-License-Identifier: BSD-3-Clause
// Running a command as a child process (a step of p3s scale, an SMPI simulation, a calibration job): its output to a
// log, the signals that stop p3s passed on to it.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "p3s/error.hpp"

namespace p3s {

/// A signal (SIGINT, SIGTERM, SIGHUP) stopped p3s while a child ran; the child was stopped too.
class Interrupted : public Error {
 public:
  Interrupted(const std::string& what, int signal) : Error(what), signal_(signal) {}
  [[nodiscard]] int signal() const noexcept { return signal_; }

 private:
  int signal_;
};

/// Runs `argv` (argv[0] looked up in PATH) with stdin from /dev/null and stdout and stderr to `log` (replaced), in
/// a process group of its own; SIGINT, SIGTERM and SIGHUP that reach p3s meanwhile are passed to that group, and
/// p3s waits for it to end. `tick` (when given) is called about once a second while it runs. Returns its exit status
/// (128 + the signal where one ended it). @throws Interrupted after the child ended when a signal reached p3s;
/// p3s::Error when it cannot be started.
int run_child(const std::vector<std::string>& argv, const std::filesystem::path& log,
              const std::function<void()>& tick = {});

/// The last non-empty line of a log, cut to 300 characters ("" when there is none).
[[nodiscard]] std::string last_line(const std::filesystem::path& log);

}  // namespace p3s
