// SPDX-License-Identifier: BSD-3-Clause
// `p3s summary`: per-rank counts of what an archive holds (calls, messages, collectives, time in MPI), for
// people checking a recording and for tests checking what the recorder wrote.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace p3s::analyzer {

/// Messages of one kind between a rank and one peer, aggregated.
struct MessageCount {
  std::string op;         ///< "send" (MpiSend + MpiIsend) or "recv" (MpiRecv + MpiIrecv)
  std::int32_t peer = 0;  ///< world rank
  std::uint32_t tag = 0;
  std::uint64_t bytes = 0;  ///< per message
  std::uint64_t count = 0;

  friend bool operator==(const MessageCount&, const MessageCount&) = default;
};

/// What one MPI process did.
struct RankSummary {
  std::int32_t rank = 0;
  std::uint32_t locations = 0;
  std::uint64_t events = 0;                          ///< OTF2 event records of its locations (metric records included)
  std::uint64_t time_in_mpi_ns = 0;                  ///< time inside outermost MPI regions
  std::map<std::string, std::uint64_t> calls;        ///< Enter events per MPI region name
  std::vector<MessageCount> messages;                ///< sorted by (op, peer, tag, bytes)
  std::map<std::string, std::uint64_t> collectives;  ///< completed collectives by the MPI call that started them
  std::uint64_t unresolved_peers = 0;                ///< message events whose peer maps to no world rank

  [[nodiscard]] std::uint64_t mpi_calls() const;
  [[nodiscard]] std::uint64_t messages_sent() const;
  [[nodiscard]] std::uint64_t bytes_sent() const;
  [[nodiscard]] std::uint64_t messages_received() const;
  [[nodiscard]] std::uint64_t bytes_received() const;
  [[nodiscard]] std::uint64_t collective_count() const;
};

/// What an archive holds.
struct Summary {
  std::string tool;         ///< "p3s <version>" of the tool that summarised
  std::string archive;      ///< absolute anchor path
  std::string recorded_by;  ///< P3S::TOOL, else the OTF2 creator (e.g. "Score-P 8.4")
  std::int32_t processes = 0;
  std::string work_metric;  ///< P3S::WORK_METRIC, or "unknown"
  std::string mpi_library;  ///< P3S::MPI_LIBRARY, or empty (archives of other tools)
  bool complete = false;    ///< P3S::COMPLETE; for other archives: every rank left MPI_Finalize
  std::uint64_t duration_ns = 0;
  std::vector<RankSummary> ranks;  ///< one per world rank, in rank order
};

/// Reads the whole archive at `path` (a trace directory or an anchor file) once, streaming.
/// @throws InputError for a path that is not an archive or an archive with no MPI events; TraceError for a
///         truncated or corrupt archive.
[[nodiscard]] Summary summarize(const std::filesystem::path& path);

/// The summary as JSON (schema_version 1; the MPI test harness depends on its exact keys).
[[nodiscard]] std::string summary_json(const Summary& summary);

/// The summary for people: a header and a per-rank table.
[[nodiscard]] std::string summary_text(const Summary& summary);

}  // namespace p3s::analyzer
