// SPDX-License-Identifier: BSD-3-Clause
// Running one step's command as a child process: its output to a log, the signals that stop p3s passed on to it.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace p3s::scale::detail {

/// Runs `argv` (argv[0] looked up in PATH) with stdin from /dev/null and stdout and stderr to `log` (replaced), in
/// a process group of its own; SIGINT, SIGTERM and SIGHUP that reach p3s meanwhile are passed to that group, and
/// p3s waits for it to end. `tick` is called about once a second while it runs. Returns its exit status (128 +
/// the signal where one ended it). @throws Interrupted after the child ended when a signal reached p3s;
/// p3s::Error when it cannot be started.
int run_child(const std::vector<std::string>& argv, const std::filesystem::path& log,
              const std::function<void()>& tick);

/// The last non-empty line of a log, cut to 300 characters ("" when there is none).
[[nodiscard]] std::string last_line(const std::filesystem::path& log);

}  // namespace p3s::scale::detail
