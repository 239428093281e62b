// SPDX-License-Identifier: BSD-3-Clause
// Serial conversion of all raw logs of a run (used by `p3s recover` and by `p3s record` after a crash).
#include "p3s/interpose/recover.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string_view>
#include <tuple>
#include <vector>

#include "archive_io.hpp"
#include "converter.hpp"
#include "event_chunks.hpp"
#include "event_repair.hpp"
#include "p3s/error.hpp"
#include "p3s/trace/schema.hpp"
#include "p3s/utc_date.hpp"
#include "raw_reader.hpp"
#include "thread_log.hpp"

namespace p3s::interpose {
namespace fs = std::filesystem;
namespace {

struct Log {
  std::unique_ptr<RawReader> reader;
  ClockModel clock;
  bool finalized = false;
  std::uint64_t records = 0;       ///< whole records (first pass)
  std::uint64_t bytes_unread = 0;  ///< after a tear (first pass)
  bool torn = false;
};

/// A definition record as read, placed once every log of its rank has been read.
struct StagedDefinition {
  std::uint64_t index;  ///< the communicator's local index or the call site's id
  raw::Kind kind;
  std::vector<std::byte> payload;
};

/// A rank numbers its definitions across its threads, and each thread logs its own: they are placed in index
/// order, so that a damaged index is told from one that another thread's log fills in up to it.
void place_definitions(std::vector<StagedDefinition>& staged, RankDefs& defs) {
  std::stable_sort(staged.begin(), staged.end(), [](const StagedDefinition& a, const StagedDefinition& b) {
    return std::tie(a.kind, a.index) < std::tie(b.kind, b.index);
  });
  for (const StagedDefinition& d : staged) add_definition(defs, d.kind, d.payload.data(), d.payload.size());
}

/// First pass over one log: its definitions, its finalize clock offset, its provenance.
void scan(Log& log, std::vector<StagedDefinition>& staged, RunInfo& run) {
  RawRecord r{};
  while (log.reader->next(r)) {
    ++log.records;
    switch (r.header.kind) {
      case raw::Kind::CommDef:
      case raw::Kind::CallsiteDef:
        staged.push_back({definition_index(r.header.kind, r.payload, r.payload_bytes),
                          r.header.kind,
                          {r.payload, r.payload + r.payload_bytes}});
        break;
      case raw::Kind::Finalized: {
        raw::ClockSyncAtEnd end{};
        std::memcpy(&end, r.payload, std::min(sizeof end, r.payload_bytes));
        log.clock.end_local_ns = end.local_ns;
        log.clock.end_offset_ns = end.offset_ns;
        log.clock.has_end = true;
        log.finalized = true;
        break;
      }
      case raw::Kind::Meta: {
        const char* key = reinterpret_cast<const char*>(r.payload);
        const std::size_t klen = strnlen(key, r.payload_bytes);
        if (klen + 1 < r.payload_bytes) {
          std::string value(key + klen + 1, strnlen(key + klen + 1, r.payload_bytes - klen - 1));
          const std::string_view name(key, klen);
          if (name == "command") run.command = std::move(value);
          if (name == "mpi_library") run.mpi_library = std::move(value);
          // The first log's (rank 0's), as MPI_Finalize writes them.
          if (name == "counters_note" && run.counters.note.empty()) run.counters.note = std::move(value);
          if (name == "cpu_time_read" && run.counters.read_path.empty()) run.counters.read_path = std::move(value);
        }
        break;
      }
      default:
        break;
    }
  }
  log.torn = log.reader->torn();
  log.bytes_unread = log.reader->bytes_unread();
  log.reader->rewind();
}

}  // namespace

std::string torn_text(const TornLog& t) {
  return "rank " + std::to_string(t.rank) + (t.thread != 0 ? " thread " + std::to_string(t.thread) : "") + ": its " +
         (t.event_file ? "event file" : "raw log") + " is torn after " + std::to_string(t.records) +
         (t.event_file ? " events" : " records") + "; the " + std::to_string(t.bytes_unread) +
         " bytes after them could not be read (" +
         (t.bytes_unread < 4096 ? "a record cut off when the process died" : "the log is damaged") + ")";
}

bool has_raw_logs(const std::string& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(raw_dir(dir), ec)) {
    if (e.path().extension() == ".raw") return true;
  }
  return false;
}

namespace {

/// Every raw log of the run, sorted by (rank, thread).
std::vector<Log> open_logs(const std::string& rdir) {
  std::vector<Log> logs;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(rdir, ec)) {
    if (e.path().extension() != ".raw") continue;
    std::string error;
    Log log;
    log.reader = RawReader::open(e.path().string(), error);
    if (!log.reader) throw InputError("p3s recover: " + error);
    logs.push_back(std::move(log));
  }
  if (ec || logs.empty()) {
    throw InputError("p3s recover: no raw logs in '" + rdir +
                     "'; it is not a p3s trace directory, or the run's archive was already written");
  }
  std::sort(logs.begin(), logs.end(), [](const Log& a, const Log& b) {
    const auto& ha = a.reader->header();
    const auto& hb = b.reader->header();
    return std::tie(ha.rank, ha.thread_index) < std::tie(hb.rank, hb.thread_index);
  });
  return logs;
}

/// What the logs say about the run (its provenance, which ranks got through MPI_Finalize) and each rank's
/// definitions; every log's clock model is set on the way.
RunInfo scan_logs(std::vector<Log>& logs, const std::string& rdir, std::map<std::int32_t, RankDefs>& defs) {
  const raw::FileHeader& h0 = logs.front().reader->header();
  RunInfo run;
  run.world_size = h0.world_size;
  run.counters.mode = static_cast<CounterMode>(h0.counter_mode);
  run.counters.count = static_cast<int>(std::min<std::uint32_t>(h0.metric_count, kMaxMetrics));
  for (int i = 0; i < run.counters.count; ++i) {
    run.counters.names[static_cast<std::size_t>(i)] = std::string(h0.metric_names[i], strnlen(h0.metric_names[i], 24));
  }
  run.thread_level = thread_level_name(h0.thread_level);
  run.date = utc_date(h0.realtime_at_init_ns);
  run.hosts.resize(static_cast<std::size_t>(std::max(run.world_size, 0)));
  std::map<std::int32_t, bool> finalized;
  std::map<std::int32_t, std::vector<StagedDefinition>> staged;
  for (Log& log : logs) {
    const raw::FileHeader& h = log.reader->header();
    const bool other_id = h.run_id != 0 && h0.run_id != 0 && h.run_id != h0.run_id;
    if (other_id || h.world_size != run.world_size || h.counter_mode != h0.counter_mode || h.rank < 0 ||
        h.rank >= h.world_size) {
      throw InputError("p3s recover: " + log.reader->path() + " belongs to another run (" +
                       (other_id ? std::string("another job's run id")
                                 : std::to_string(h.world_size) + " ranks, rank " + std::to_string(h.rank)) +
                       "); remove stale logs from " + rdir);
    }
    log.clock.init_local_ns = h.init_ns;
    log.clock.init_offset_ns = h.clock_offset_ns;
    defs[h.rank].rank = h.rank;
    scan(log, staged[h.rank], run);
    if (h.callsites != 0) run.callsites = true;
    run.hosts[static_cast<std::size_t>(h.rank)] = std::string(h.host, strnlen(h.host, sizeof h.host));
    if (h.thread_index == 0) finalized[h.rank] = log.finalized;
  }
  for (auto& [rank, records] : staged) place_definitions(records, defs[rank]);
  // Threads other than the first never log Finalized; they share their rank's clock model.
  for (Log& log : logs) {
    const raw::FileHeader& h = log.reader->header();
    if (h.thread_index == 0) continue;
    for (const Log& main : logs) {
      if (main.reader->header().rank == h.rank && main.reader->header().thread_index == 0) log.clock = main.clock;
    }
  }
  for (std::int32_t r = 0; r < run.world_size; ++r) {
    const auto it = finalized.find(r);
    if (it == finalized.end() || !it->second) run.incomplete_ranks.push_back(r);
  }
  run.complete = run.incomplete_ranks.empty();
  return run;
}

/// Puts one log's events into the archive being written at `partial`: the event file written during the run, cut
/// after its last whole event, or the events among the raw records of an older log, converted.
LocationStats recover_events(const Log& log, const std::string& partial, const LocalMaps& maps, RecoverReport& report,
                             std::uint64_t& last_local_ns) {
  const raw::FileHeader& h = log.reader->header();
  LocationStats s;
  std::string err;
  if (h.event_file == 0) {
    if (!convert_location(*log.reader, partial, maps, log.clock, s, err)) {
      throw Otf2Error("p3s recover: " + log.reader->path() + ": " + (err.empty() ? "cannot write events" : err));
    }
    report.events += s.events;
    return s;
  }
  otf2::RepairedEvents kept;
  if (!otf2::repair_event_file(event_file_path(log.reader->path()),
                               archive_event_file(partial, location_id(h.rank, h.thread_index)), otf2::kEventChunkBytes,
                               kept, err)) {
    throw InputError("p3s recover: " + err);
  }
  s = event_file_stats(h.rank, h.thread_index, kept.events, kept.first_time, kept.last_time, log.clock);
  s.complete = log.finalized ? 1 : 0;
  s.torn = kept.bytes_lost != 0 ? 1 : 0;
  if (kept.bytes_lost != 0) report.torn.push_back({h.rank, h.thread_index, kept.events, kept.bytes_lost, true});
  report.events += kept.events;
  last_local_ns = kept.last_time;
  return s;
}

/// Converts every log into a new archive in `dir`, serially, and publishes it. Counts the events in `report`.
void write_recovered_archive(const std::string& dir, std::vector<Log>& logs, const RunInfo& run, const Unified& unified,
                             std::map<std::int32_t, LocalMaps>& maps, RecoverReport& report) {
  std::string error;
  if (!clear_archive(dir, error)) throw InputError("p3s recover: " + error);
  ArchivePtr archive = create_archive(partial_dir(dir), error);
  if (!archive ||
      !try_otf2(OTF2_Archive_SetSerialCollectiveCallbacks(archive.get()), "setting serial callbacks", error)) {
    throw Otf2Error("p3s recover: " + error);
  }
  std::vector<LocationStats> stats;
  std::map<std::uint64_t, std::pair<const Log*, std::uint64_t>> written;  // location -> its log, its last time
  ArchiveParts parts;
  parts.events = [&](OTF2_Archive*, std::vector<std::uint64_t>& locations, std::string&) {
    for (const Log& log : logs) {
      std::uint64_t last_local_ns = 0;
      const LocationStats s =
          recover_events(log, partial_dir(dir), maps[log.reader->header().rank], report, last_local_ns);
      if (log.reader->header().event_file != 0) written[s.location] = {&log, last_local_ns};
      stats.push_back(s);
      locations.push_back(s.location);
    }
    return true;
  };
  // The events of an event file keep their local ids and times: the local definitions map them.
  parts.local_definitions = [&](OTF2_DefWriter* w, std::uint64_t location, std::string& err) {
    const auto it = written.find(location);
    if (it == written.end()) return true;
    const Log& log = *it->second.first;
    return write_local_mappings(w, maps[log.reader->header().rank], log.clock, it->second.second, err);
  };
  parts.global_definitions = [&](OTF2_Archive* a, std::string& err) {
    return write_global_definitions(a, run, unified, stats, err);
  };
  if (!write_archive(std::move(archive), parts, error) || !publish_archive(dir, error)) {
    throw Otf2Error("p3s recover: " + error);
  }
}

}  // namespace

RecoverReport recover(const std::string& dir) {
  const std::string rdir = raw_dir(dir);
  std::vector<Log> logs = open_logs(rdir);
  std::map<std::int32_t, RankDefs> defs;
  const RunInfo run = scan_logs(logs, rdir, defs);
  RecoverReport report;
  report.world_size = run.world_size;
  report.ranks_with_logs = static_cast<std::int32_t>(defs.size());
  report.incomplete_ranks = run.incomplete_ranks;
  report.complete = run.complete;
  for (const Log& log : logs) {
    const raw::FileHeader& h = log.reader->header();
    if (log.torn) report.torn.push_back({h.rank, h.thread_index, log.records, log.bytes_unread});
  }

  std::vector<RankDefs> all;
  for (auto& [rank, d] : defs) all.push_back(d);
  const Unified unified = unify(all, run.world_size);
  std::map<std::int32_t, LocalMaps> maps;
  for (const RankDefs& d : all) maps[d.rank] = map_rank(d, unified);
  write_recovered_archive(dir, logs, run, unified, maps, report);
  report.archive = (fs::path(dir) / (std::string(trace::kArchiveName) + ".otf2")).string();
  return report;
}

}  // namespace p3s::interpose
