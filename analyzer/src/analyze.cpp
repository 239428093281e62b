// SPDX-License-Identifier: BSD-3-Clause
// `p3s analyze`: extract operations, match and clock them, find phases on the tick sequence, build the
// signature, export the logical trace.
#include "p3s/analyzer/analyze.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "extract.hpp"
#include "lamport.hpp"
#include "logical_export.hpp"
#include "op_log.hpp"
#include "p3s/analyzer/phase_finder.hpp"
#include "p3s/analyzer/trace_reader.hpp"
#include "p3s/error.hpp"
#include "p3s/trace/schema.hpp"
#include "p3s/utc_date.hpp"
#include "p3s/version.hpp"
#include "phase_choice.hpp"
#include "program_cuts.hpp"
#include "rank_phases.hpp"
#include "run_phases.hpp"
#include "signature_builder.hpp"
#include "tick_log.hpp"

namespace p3s::analyzer {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

class FileOpSource final : public OpSource {
 public:
  explicit FileOpSource(const std::filesystem::path& path) : reader_(path) {}
  bool next(Op& op) override { return reader_.next(op); }

 private:
  OpReader reader_;
};

/// The members a collective on communicator `id` waits for (both groups of an inter-communicator).
std::uint32_t collective_members(const TraceDefinitions& defs, std::uint32_t id) {
  const Communicator* c = defs.comm(id);
  if (c == nullptr) return 0;
  switch (c->kind) {
    case CommKind::Self:
      return 1;
    case CommKind::Group:
      return static_cast<std::uint32_t>(c->world_ranks.size());
    case CommKind::Inter:
      return static_cast<std::uint32_t>(c->world_ranks.size() + c->remote_world_ranks.size());
    case CommKind::Unresolved:
      return 0;
  }
  return 0;
}

/// Writes every location's ticks and collects the tick symbols.
class TickSink final : public LamportSink {
 public:
  explicit TickSink(const std::vector<std::filesystem::path>& files) {
    for (const auto& f : files) writers_.push_back(std::make_unique<TickWriter>(f));
  }
  void on_op(std::size_t location, std::uint64_t, const Op&, std::uint64_t op_tick,
             std::span<const std::uint64_t> action_ticks) override {
    writers_[location]->write(op_tick, action_ticks);
  }
  void on_tick(std::uint64_t tick, std::uint32_t events, std::uint64_t symbol) override {
    // Ticks arrive in order from 1; an empty tick keeps its place (symbol 0), so that tick t is index t - 1.
    if (tick != symbols.size() + 1) throw std::logic_error("ticks out of order");
    symbols.push_back(symbol);
    // A tick with an event of every location: where all processes meet (a collective of all of them).
    syncs.push_back(events >= writers_.size() ? 1 : 0);
  }
  void finish() {
    for (auto& w : writers_) w->finish();
  }
  std::vector<TickSymbol> symbols;
  std::vector<std::uint8_t> syncs;

 private:
  std::vector<std::unique_ptr<TickWriter>> writers_;
};

/// Every location's calls for the by-rank method (38 bytes per call in memory), read again from the operation
/// and tick files, only when that method is asked for or may describe the run more briefly.
std::vector<CallSequence> location_calls(const TraceDefinitions& defs, const Extracted& ex,
                                         const std::vector<std::filesystem::path>& tick_files) {
  std::set<std::int32_t> ranks;
  for (const ExtractedLocation& l : ex.locations) ranks.insert(l.rank);
  const auto processes = static_cast<std::uint32_t>(ranks.size());
  std::unordered_map<std::uint32_t, bool> spans_all;  // per communicator: all processes are its members
  std::vector<CallSequence> calls;
  Op op;
  std::uint64_t op_tick = 0;
  std::vector<std::uint64_t> action_ticks;
  for (std::size_t i = 0; i < ex.locations.size(); ++i) {
    const ExtractedLocation& l = ex.locations[i];
    CallSequence& seq = calls.emplace_back(l.rank, l.compute_burst_work);
    seq.reserve(l.operations);
    OpReader ops(l.ops);
    TickReader ticks(tick_files[i]);
    while (ops.next(op)) {
      ticks.next(op.actions.size(), op_tick, action_ticks);
      bool everyone = false;  // a blocking collective of every process: a point where all ranks agree
      for (const Action& a : op.actions) {
        if (a.kind != mpi::ActionKind::Collective) continue;
        auto [it, added] = spans_all.emplace(a.comm, false);
        if (added) it->second = collective_members(defs, a.comm) == processes;
        everyone = everyone || it->second;
      }
      seq.add(op, op_tick, everyone);
    }
  }
  return calls;
}

/// Message sizes within `tolerance` of a cluster's smallest member fall into one cluster, so that symbols
/// (and thus phases) tolerate slightly varying volumes (DESIGN: volumes within 5 %).
std::unordered_map<std::uint64_t, std::uint32_t> volume_clusters(const std::vector<std::uint64_t>& sorted,
                                                                 double tolerance) {
  std::unordered_map<std::uint64_t, std::uint32_t> cluster;
  std::uint32_t id = 0;
  double first = -1;
  for (std::uint64_t v : sorted) {
    if (first < 0 || static_cast<double>(v) > first * (1 + tolerance)) {
      first = static_cast<double>(v);
      ++id;
    }
    cluster.emplace(v, id);
  }
  return cluster;
}

/// The feature of an event: who did what to whom, relative to itself (tags are left out: codes that number
/// their messages by iteration still repeat); message sizes by their volume cluster.
ActionFeature tick_feature(const std::unordered_map<std::uint64_t, std::uint32_t>& clusters) {
  return [&clusters](std::int32_t rank, const Op& op, const Action& a) {
    const auto c = clusters.find(a.bytes);
    const std::uint64_t h =
        mix64(action_shape(rank, op, a) ^ static_cast<std::uint64_t>(static_cast<std::uint32_t>(rank)));
    return mix64(h ^ (c == clusters.end() ? 0 : c->second));
  };
}

/// Matching and Lamport clocks: every location's ticks and the tick symbols into `sink`.
LamportResult clock_operations(const TraceDefinitions& defs, const Extracted& ex, const AnalyzeOptions& options,
                               TickSink& sink) {
  const auto clusters = volume_clusters(ex.volumes, options.signature.volume_tolerance);
  std::vector<LamportLocation> locs;
  for (const ExtractedLocation& l : ex.locations) locs.push_back({l.rank, std::make_unique<FileOpSource>(l.ops)});
  const CommSize comm_size = [&defs](std::uint32_t id) { return collective_members(defs, id); };
  LamportResult lr =
      run_lamport(std::move(locs), comm_size, tick_feature(clusters), sink, LamportOptions{options.signature.partial});
  sink.finish();
  return lr;
}

/// The signature's provenance and counts, before its phases.
Signature signature_header(const TraceDefinitions& defs, const Extracted& ex, const AnalyzeOptions& options,
                           const LamportResult& lr, std::uint64_t ticks) {
  Signature sig;
  sig.tool = std::string("p3s ") + kVersion;
  sig.archive = defs.anchor.string();
  sig.recorded_by = defs.property(trace::property::kTool).value_or(defs.creator);
  sig.command = defs.property(trace::property::kCommand).value_or("");
  sig.mpi_library = defs.property(trace::property::kMpiLibrary).value_or("");
  sig.date = utc_now();
  sig.processes = defs.processes;
  sig.locations = static_cast<std::uint32_t>(ex.locations.size());
  sig.work_metric = ex.has_work_metric ? defs.work_metric_member : "wall_ns";
  std::vector<bool> left_finalize(static_cast<std::size_t>(std::max(defs.processes, 0)), false);
  for (const ExtractedLocation& l : ex.locations) {
    if (l.rank >= 0 && l.rank < defs.processes && l.left_finalize)
      left_finalize[static_cast<std::size_t>(l.rank)] = true;
  }
  sig.complete = run_complete(defs, left_finalize);
  sig.options = options.signature;
  sig.operations = lr.operations;
  sig.events = lr.events;
  sig.ticks = ticks;
  sig.messages = lr.messages;
  sig.unmatched_sends = lr.unmatched_sends;
  sig.unmatched_receives = lr.unmatched_receives.size();
  return sig;
}

/// What the reader should know about the trace behind the signature.
void add_warnings(const Extracted& ex, const LamportResult& lr, Signature& sig) {
  if (!ex.has_work_metric) sig.warnings.push_back("the archive has no work counters: burst work is wall time");
  if (!sig.complete) sig.warnings.push_back("the recorded run did not reach MPI_Finalize on every rank");
  if (ex.stray_records != 0) {
    sig.warnings.push_back(std::to_string(ex.stray_records) + " MPI records outside any MPI call were ignored");
  }
  for (const MatchIssue& m : lr.unmatched_send_examples) {
    sig.warnings.push_back("rank " + std::to_string(m.rank) + ", MPI call " + std::to_string(m.op_index) + ": " +
                           m.description);
  }
  if (lr.unmatched_sends > lr.unmatched_send_examples.size()) {
    sig.warnings.push_back(std::to_string(lr.unmatched_sends) + " messages in all were never received");
  }
  for (const auto* list : {&lr.unmatched_receives, &lr.incomplete_collectives}) {
    for (const MatchIssue& m : *list) {
      sig.warnings.push_back("rank " + std::to_string(m.rank) + ", MPI call " + std::to_string(m.op_index) + ": " +
                             m.description + " (taken as a local event)");
    }
  }
}

}  // namespace

Signature analyze(const AnalyzeOptions& options, AnalyzeStats* stats) {
  AnalyzeStats local;
  AnalyzeStats& st = stats != nullptr ? *stats : local;
  TraceReader reader(options.input);
  const TraceDefinitions& defs = reader.definitions();
  ScratchDir scratch;

  auto t = Clock::now();
  const Extracted ex = extract_operations(reader, scratch.path());
  st.records = ex.records;
  st.extract_s = seconds_since(t);

  t = Clock::now();
  std::vector<std::filesystem::path> tick_files;
  for (std::size_t i = 0; i < ex.locations.size(); ++i) {
    tick_files.push_back(scratch.path() / (std::to_string(i) + ".ticks"));
  }
  TickSink sink(tick_files);
  const LamportResult lr = clock_operations(defs, ex, options, sink);
  st.max_in_flight = lr.max_in_flight;
  st.max_open_ticks = lr.max_open_ticks;
  st.lamport_s = seconds_since(t);

  t = Clock::now();
  RunPhases phases = find_run_phases(
      sink.symbols, sink.syncs, [&] { return location_calls(defs, ex, tick_files); }, options);
  if (phases.method == PhaseMethod::GlobalTicks && phases.level == PhaseLevel::Outermost) {
    std::vector<LocationFiles> files;
    for (std::size_t i = 0; i < ex.locations.size(); ++i) files.push_back({ex.locations[i].ops, tick_files[i]});
    cut_at_program_points(phases, files);
  }
  st.phases_s = seconds_since(t);

  t = Clock::now();
  Signature sig = signature_header(defs, ex, options, lr, sink.symbols.size());
  sig.phase_method = phases.method;
  sig.phase_method_note = phases.method_note;
  sig.phase_level = phases.level;
  sig.without_sizes = phases.without_sizes;
  const OccurrenceLabels labels = build_signature(defs, ex, tick_files, phases, sig);
  add_warnings(ex, lr, sig);
  st.signature_s = seconds_since(t);

  if (options.logical_csv) write_logical_csv(*options.logical_csv, defs, ex, tick_files, labels);
  if (options.otf2_logical) write_logical_otf2(*options.otf2_logical, defs, ex, tick_files, labels, sig);
  return sig;
}

}  // namespace p3s::analyzer
