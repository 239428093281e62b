// SPDX-License-Identifier: BSD-3-Clause
// Test helpers: scratch directories, and a whole-archive consistency check of what p3s-synth wrote, read back
// through the analyzer's reader (messages matched FIFO per communicator, source, destination and tag).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "p3s/synth/generator.hpp"

namespace p3s::synth::testing {

/// A fresh, empty directory `name` under this test process's scratch directory.
[[nodiscard]] std::filesystem::path scratch_dir(const std::string& name);

/// tests/tools/synth/programs in the source tree.
[[nodiscard]] std::filesystem::path programs_dir();

/// Generates `program_json` (text) into a scratch directory; returns the result.
GenerateResult generate_text(const std::string& program_json, const std::string& name, int ranks,
                             std::uint64_t seed = 1);

/// One message as both ends recorded it.
struct MatchedMessage {
  std::int32_t source = 0;  ///< world ranks
  std::int32_t dest = 0;
  std::uint32_t comm = 0;
  std::uint32_t tag = 0;
  std::uint64_t sent_bytes = 0;
  std::uint64_t received_bytes = 0;
  std::uint64_t send_ns = 0;
  std::uint64_t recv_ns = 0;  ///< completion of the receive (MpiRecv / MpiIrecv)
};

/// What check_archive() found.
struct ArchiveFacts {
  std::uint64_t events = 0;  ///< records, metric records included
  std::vector<MatchedMessage> messages;
  std::uint64_t collectives = 0;         ///< collective operations (one per call, all members together)
  std::vector<std::uint64_t> bursts_ns;  ///< work-metric differences between a Leave and the next Enter
};

/// Reads the archive in `dir` and adds a GoogleTest failure for every inconsistency: decreasing timestamps on a
/// location, unbalanced Enter/Leave, a message without its other end, a receive that completes before its send
/// or with other bytes, collective members that do not overlap, a work metric that decreases.
ArchiveFacts check_archive(const std::filesystem::path& dir);

}  // namespace p3s::synth::testing
