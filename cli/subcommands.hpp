// SPDX-License-Identifier: BSD-3-Clause
// Each subcommand registers itself on the application; main maps exceptions to exit codes.
#pragma once

#include <CLI/CLI.hpp>

namespace p3s::cli {

/// Exit codes: 0 ok, 1 input or runtime error, 2 usage error, 3 internal bug. A subcommand may also end
/// with the exit code of what it ran (p3s record).
inline int g_exit_code = 0;

void add_analyze(CLI::App& app);
void add_calibrate(CLI::App& app);
void add_curve(CLI::App& app);
void add_model(CLI::App& app);
void add_predict(CLI::App& app);
void add_record(CLI::App& app);
void add_recover(CLI::App& app);
void add_report(CLI::App& app);
void add_scale(CLI::App& app);
void add_simulate(CLI::App& app);
void add_summary(CLI::App& app);

}  // namespace p3s::cli
