// SPDX-License-Identifier: BSD-3-Clause
// `p3s scale`: the whole method in one resumable command. It records the application at the fit process counts,
// analyzes the runs together, models them, measures each target count with a replay backend, and draws the curve.
// Every stage runs as its own p3s command (an MPI job where it is one), so each leaves what it leaves when run by
// hand; a state file says which steps are done, with which inputs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "p3s/child_process.hpp"
#include "p3s/curve/curve.hpp"
#include "p3s/error.hpp"

namespace p3s::scale {

using p3s::Interrupted;  ///< a signal stopped the command; the step it was in was stopped too and is not done

enum class Backend : std::uint8_t {
  Replay,    ///< full replay: the launcher starts n ranks
  Range,     ///< range replay: a few measured ranges, black holes and noise ranks
  Simulate,  ///< SimGrid's simulation of the prediction on a described machine (p3s simulate): no MPI job
};

struct ScaleOptions {
  std::filesystem::path dir;
  std::vector<std::int64_t> fit;
  std::vector<std::int64_t> predict;
  std::vector<std::int64_t> validate;  ///< real runs recorded at these n too, to put beside the predictions
  Backend backend = Backend::Replay;
  std::string compute = "spin";        ///< the replay's burst emulation: spin or sleep
  std::int64_t ranges = 0;             ///< range replay: ranks per range (0: 8)
  std::filesystem::path platform;      ///< simulate: the machine file (p3s calibrate -o)
  std::vector<std::string> command;    ///< the application's command, {n} where the process count goes
  std::vector<std::string> launcher;   ///< the launcher of a replay, {n} where its ranks go (empty: from command)
  std::vector<std::string> far_point;  ///< a command of the application with a reduced input at a larger n
  bool force = false;                  ///< redo every step
  std::filesystem::path p3s;           ///< this p3s
  std::filesystem::path p3s_replay;    ///< the p3s-replay beside it
  curve::Options curve;
};

/// The launcher of a replay when none is given: the command's leading launcher and its options (mpirun -np {n}
/// --oversubscribe ...). @throws p3s::InputError when no word holds {n}, or the launcher cannot be told apart.
[[nodiscard]] std::vector<std::string> default_launcher(const std::vector<std::string>& command);

/// `words` with every {n} replaced by n.
[[nodiscard]] std::vector<std::string> at_n(const std::vector<std::string>& words, std::int64_t n);

/// Runs what is not done yet, prints the curve on stdout and progress on stderr. @throws p3s::InputError on bad
/// options or a directory made for another command (without force); p3s::Error when a step fails (naming it and
/// its log); Interrupted when a signal stopped it (the directory keeps every step done).
void run_scale(const ScaleOptions& o);

}  // namespace p3s::scale
