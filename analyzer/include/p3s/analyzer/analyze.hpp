// SPDX-License-Identifier: BSD-3-Clause
// `p3s analyze`: one run's OTF2 archive -> its signature (phases, weights, SiPT), plus optional exports of
// the logical trace.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

#include "p3s/analyzer/signature.hpp"

namespace p3s::analyzer {

struct AnalyzeOptions {
  std::filesystem::path input;  ///< trace directory or anchor file
  SignatureOptions signature;
  /// One row per MPI event: rank, sequence number, operation, peer, tag, bytes, tick, phase, instance.
  std::optional<std::filesystem::path> logical_csv;
  /// The logical trace as an OTF2 archive (timestamps = ticks, phase instances as regions).
  std::optional<std::filesystem::path> otf2_logical;
  std::uint32_t max_period = 4096;  ///< longest loop body searched, in ticks
};

/// Figures of the analysis itself (for reports and benchmarks).
struct AnalyzeStats {
  std::uint64_t records = 0;         ///< OTF2 records read
  std::uint64_t max_in_flight = 0;   ///< most messages in flight during matching
  std::uint64_t max_open_ticks = 0;  ///< most ticks not yet final during matching
  double extract_s = 0;
  double lamport_s = 0;
  double phases_s = 0;
  double signature_s = 0;
};

/// Analyses a run. @throws InputError / TraceError with one line naming the archive and the problem.
[[nodiscard]] Signature analyze(const AnalyzeOptions& options, AnalyzeStats* stats = nullptr);

/// Analyses the runs of one application (at several process counts) so that their phases are found by one method:
/// where `auto` chooses by-rank for some runs and the run's ticks for others, the method most of them choose on
/// their own (a tie: the ticks) is used for all, and each signature's `phase_method_note` says so. Where the runs'
/// iterations (phases of 3 instances or more) are then the same phases in the same order, one relevant in a run
/// is relevant in all. `stats`, if given,
/// receives each run's figures (of its last analysis).
[[nodiscard]] std::vector<Signature> analyze_series(const std::vector<AnalyzeOptions>& runs,
                                                    std::vector<AnalyzeStats>* stats = nullptr);

}  // namespace p3s::analyzer
