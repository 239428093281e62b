// SPDX-License-Identifier: BSD-3-Clause
// p3s-synth's entry points: simulate a PROGRAM.json on N ranks and write the OTF2 archive `p3s record` would
// have written for that run, streaming (memory does not grow with the length of the run).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "p3s/synth/program.hpp"

namespace p3s::synth {

/// What to generate.
struct GenerateOptions {
  std::filesystem::path out_dir{};  ///< the archive goes to out_dir/traces.otf2 (an archive already there is replaced)
  std::optional<int> ranks{};       ///< default: the program's "ranks"
  std::uint64_t seed = 1;           ///< noise and jitter; equal inputs give equal event files
  /// Resize the outermost loop so that the archive holds about this many event records (±10 %).
  std::optional<std::uint64_t> target_events{};
};

/// What was written.
struct GenerateResult {
  std::filesystem::path archive;  ///< absolute path of traces.otf2
  int ranks = 0;
  /// OTF2 event records, metric records included (what `p3s summary` counts).
  std::uint64_t events = 0;
  std::vector<std::uint64_t> events_per_rank;
  std::uint64_t duration_ns = 0;   ///< simulated run time, first to last event
  std::string scaled_loop;         ///< the loop --target-events resized ("" when not asked)
  std::uint64_t scaled_count = 0;  ///< its new count
};

/// Event records `program` writes at `ranks` ranks, computed from the program's structure without simulating
/// every iteration (the generator checks that it writes exactly this many).
/// @throws InputError when the program does not fit `ranks` (a root or grid out of range).
[[nodiscard]] std::uint64_t count_events(const Program& program, int ranks);

/// Simulates `program` and writes its archive.
/// @throws InputError for a program that does not fit the options (or an unreachable --target-events);
///         Otf2Error when the archive cannot be written.
GenerateResult generate(const Program& program, const GenerateOptions& options);

}  // namespace p3s::synth
