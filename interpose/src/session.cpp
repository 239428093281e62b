// SPDX-License-Identifier: BSD-3-Clause
// Start and end of recording: MPI_Init sets everything up, MPI_Finalize turns the raw logs into the OTF2
// archive (each rank converts its own logs; rank 0 unifies the definitions and writes the global ones).
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>
#include <random>

#include "archive_io.hpp"
#include "converter.hpp"
#include "mpi_support.hpp"
#include "p3s/shell_words.hpp"
#include "p3s/utc_date.hpp"
#include "recorder.hpp"
#include "state.hpp"

extern char** environ;

#ifdef P3S_ENABLE_FORTRAN
namespace p3s::interpose::fortran {
void init_sentinels() noexcept;
}
#endif

namespace p3s::interpose {
namespace fs = std::filesystem;
namespace {

/// Owns the state between MPI_Init and MPI_Finalize. Reset explicitly in MPI_Finalize, never by a static
/// destructor after it.
std::unique_ptr<State> g_owner;

/// Logs the termination handler may flush: a fixed array, so the handler needs no lock or allocation.
constexpr int kMaxExitLogs = 1024;
std::atomic<ThreadLog*> g_exit_logs[kMaxExitLogs];
std::atomic<int> g_exit_log_count{0};
struct sigaction g_previous_sigterm {};
bool g_sigterm_installed = false;

/// When one rank dies, the launcher terminates the others with SIGTERM: write what they buffered, so the
/// run can be recovered with all of it, then die of the signal as the application would have.
void on_sigterm(int) {
  const int n = std::min(g_exit_log_count.load(std::memory_order_acquire), kMaxExitLogs);
  for (int i = 0; i < n; ++i) {
    if (ThreadLog* log = g_exit_logs[i].load(std::memory_order_acquire)) log->flush_for_exit();
  }
  // SA_RESETHAND restored the default action; the signal is delivered again once this returns.
  raise(SIGTERM);
}

/// Installs the handler only where the application left SIGTERM at its default.
void install_sigterm() {
  struct sigaction current {};
  if (sigaction(SIGTERM, nullptr, &current) != 0 || current.sa_handler != SIG_DFL ||
      (current.sa_flags & SA_SIGINFO) != 0) {
    return;
  }
  struct sigaction ours {};
  ours.sa_handler = on_sigterm;
  sigemptyset(&ours.sa_mask);
  ours.sa_flags = SA_RESETHAND;
  g_sigterm_installed = sigaction(SIGTERM, &ours, &g_previous_sigterm) == 0;
}

void uninstall_sigterm() {
  if (g_sigterm_installed) sigaction(SIGTERM, &g_previous_sigterm, nullptr);
  g_sigterm_installed = false;
  g_exit_log_count.store(0, std::memory_order_release);
}

/// A forked child (a helper the application starts with fork() and ends with exit()) inherits the recorder's state,
/// its logs and their unflushed buffers, which are the parent's: exit() would run their destructors and write the
/// parent's events a second time into the parent's logs. The child records nothing and writes none of them; the
/// state is left to the child's exit unreleased, its destructors never run.
void on_fork_child() noexcept {
  g_recording.store(false, std::memory_order_release);
  const int n = std::min(g_exit_log_count.load(std::memory_order_acquire), kMaxExitLogs);
  for (int i = 0; i < n; ++i) {
    if (ThreadLog* log = g_exit_logs[i].load(std::memory_order_acquire)) log->abandon();
  }
  g_exit_log_count.store(0, std::memory_order_release);
  g_state = nullptr;
  (void)g_owner.release();
}

int normalized_thread_level(int provided) {
  if (provided == MPI_THREAD_MULTIPLE) return 3;
  if (provided == MPI_THREAD_SERIALIZED) return 2;
  if (provided == MPI_THREAD_FUNNELED) return 1;
  return 0;
}

/// The traced command line: P3S_COMMAND when `p3s record` set it, else this process's argv.
std::string command_line(const Config& c) {
  if (!c.command.empty()) return c.command;
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> words;
  for (std::string w; std::getline(in, w, '\0');) words.push_back(w);
  return join_words(words);
}

std::vector<std::string> gather_hosts(MPI_Comm comm, int size) {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  PMPI_Get_processor_name(name, &len);
  constexpr int kLen = 64;
  char mine[kLen] = {};
  std::memcpy(mine, name, std::min<std::size_t>(std::strlen(name), kLen - 1));
  std::vector<char> all(static_cast<std::size_t>(size) * kLen);
  PMPI_Allgather(mine, kLen, MPI_CHAR, all.data(), kLen, MPI_CHAR, comm);
  std::vector<std::string> hosts;
  for (int r = 0; r < size; ++r) hosts.emplace_back(all.data() + static_cast<std::size_t>(r) * kLen);
  return hosts;
}

/// Which ranks measure their clock against rank 0's: those on other hosts (CLOCK_MONOTONIC is per host).
std::vector<bool> sync_plan(const State& s) {
  std::vector<bool> plan(static_cast<std::size_t>(s.size), false);
  for (int r = 1; r < s.size; ++r) {
    const bool other_host = s.hosts[static_cast<std::size_t>(r)] != s.hosts[0];
    plan[static_cast<std::size_t>(r)] =
        s.config.clock_sync == ClockSync::Always || (s.config.clock_sync == ClockSync::Auto && other_host);
  }
  return plan;
}

/// The MPI library the application runs on, as its first line of MPI_Get_library_version says: readers need to
/// know it where the library's own choices shape the communication (MPI_Dims_create's grids differ between
/// Open MPI and MPICH).
std::string library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  if (PMPI_Get_library_version(text, &length) != MPI_SUCCESS) return {};
  std::string v(text, static_cast<std::size_t>(std::clamp(length, 0, MPI_MAX_LIBRARY_VERSION_STRING)));
  v = v.substr(0, v.find_first_of("\r\n"));
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t' || v.back() == '\0')) v.pop_back();
  return v;
}

void write_meta(ThreadLog& log, const char* key, const std::string& value) {
  std::string kv = std::string(key) + '\0' + value + '\0';
  log.append(raw::Kind::Meta, 0, 0, 0, kv.data(), kv.size());
}

/// Rank 0 prepares the directory, takes its lock (dir_lock.hpp) and removes stale logs of an earlier run; the others
/// wait for it.
bool prepare_directory(State& s) {
  std::string error;
  std::string remedy = "set P3S_TRACE_DIR to a writable directory";
  if (s.rank == 0) {
    std::error_code ec;
    fs::create_directories(raw_dir(s.dir), ec);
    if (ec) {
      error = "cannot create " + raw_dir(s.dir) + ": " + ec.message();
    } else if (s.dir_lock = DirLock::take(s.dir, s.config.record_lock, error); !s.dir_lock) {
      // Another recording writes there: its raw logs and its archive are left alone.
      remedy = "wait for it to end, or set P3S_TRACE_DIR to another directory";
    } else {
      for (const auto& e : fs::directory_iterator(raw_dir(s.dir), ec)) {
        if (e.path().extension() == ".raw" || e.path().extension() == ".evt") fs::remove(e.path(), ec);
      }
    }
  }
  int ok = error.empty() ? 1 : 0;
  PMPI_Bcast(&ok, 1, MPI_INT, 0, s.tool_comm);
  if (ok == 0 && s.rank == 0) warn(s, error + "; tracing disabled (" + remedy + ")");
  return ok == 1;
}

/// The work counters: every rank must record the same columns, so PAPI is used only if it works everywhere.
void choose_counters(State& s) {
  // One window for the run, rank 0's, as the archive states it (an MPMD launch may give ranks other settings).
  std::uint32_t window_us = s.config.cputime_window_us;
  PMPI_Bcast(&window_us, 1, MPI_UINT32_T, 0, s.tool_comm);
  if (!all_ok(s.tool_comm, window_us == s.config.cputime_window_us) && s.rank == 0) {
    warn(s, "P3S_CPUTIME_WINDOW_US differs across ranks; every rank uses rank 0's, " + std::to_string(window_us));
  }
  const std::uint64_t window_ns = std::uint64_t{window_us} * 1000;
  CounterProbe probe = probe_counters(s.config.counters, window_ns);
  const bool papi_here = probe.setup.mode == CounterMode::Papi;
  if (!all_ok(s.tool_comm, papi_here || s.config.counters == CountersRequest::None ||
                               s.config.counters == CountersRequest::CpuTime) &&
      papi_here) {
    probe = probe_counters(CountersRequest::CpuTime, window_ns);
    probe.setup.note = "PAPI is not available on every rank; work is thread CPU time instead";
  }
  s.counters = probe.setup;
  // The archive states one way of reading CPU time: the perf task clock only where every rank has it.
  // Every rank takes part, whatever its mode (an MPMD launch may give ranks different environments).
  const bool perf_everywhere = all_ok(s.tool_comm, s.counters.mode != CounterMode::CpuTime || s.counters.cpu_perf);
  if (s.counters.mode == CounterMode::CpuTime && s.counters.cpu_perf && !perf_everywhere) {
    s.counters.cpu_perf = false;
    s.counters.read_path =
        cpu_clock_description(s.counters.cpu_window_ns, false, "the perf task clock is refused on some ranks");
  }
  if (s.rank == 0 && !probe.error.empty()) {
    warn(s, "P3S_COUNTERS=papi: " + probe.error + "; recording thread CPU time instead");
  }
}

/// An identity for the run, the same in every rank's logs: rank 0's, from its clock, pid and the OS's entropy.
std::uint64_t shared_run_id(MPI_Comm comm, int rank) {
  std::uint64_t id = 0;
  if (rank == 0) {
    std::random_device entropy;
    timespec rt{};
    clock_gettime(CLOCK_REALTIME, &rt);
    id = (static_cast<std::uint64_t>(entropy()) << 32 | entropy()) ^
         static_cast<std::uint64_t>(rt.tv_sec * 1000000000LL + rt.tv_nsec) ^ static_cast<std::uint64_t>(getpid());
    if (id == 0) id = 1;  // 0 means "not recorded"
  }
  PMPI_Bcast(&id, 1, MPI_UINT64_T, 0, comm);
  return id;
}

/// The raw log header of this rank: who it is, what it counts, its clock, and the run it belongs to.
void fill_header(State& s, std::int64_t clock_offset_ns) {
  timespec rt{};
  clock_gettime(CLOCK_REALTIME, &rt);
  raw::FileHeader& h = s.header;
  std::memcpy(h.magic, raw::kMagic, sizeof h.magic);
  h.version = raw::kVersion;
  h.header_bytes = sizeof h;
  h.rank = s.rank;
  h.world_size = s.size;
  h.metric_count = static_cast<std::uint32_t>(s.counters.count);
  h.counter_mode = static_cast<std::uint8_t>(s.counters.mode);
  h.thread_level = static_cast<std::uint8_t>(s.thread_level);
  h.callsites = s.config.callsite ? 1 : 0;
  h.pid = static_cast<std::uint32_t>(getpid());
  h.run_id = shared_run_id(s.tool_comm, s.rank);
  h.clock_offset_ns = clock_offset_ns;
  h.init_ns = clock_ns();
  h.realtime_at_init_ns = static_cast<std::int64_t>(rt.tv_sec) * 1000000000LL + rt.tv_nsec;
  std::strncpy(h.host, s.hosts[static_cast<std::size_t>(s.rank)].c_str(), sizeof h.host - 1);
  for (int i = 0; i < s.counters.count; ++i) {
    std::strncpy(h.metric_names[i], s.counters.names[static_cast<std::size_t>(i)].c_str(),
                 sizeof h.metric_names[i] - 1);
  }
}

/// MPI_Init itself, as Score-P records it: a CREATE_HANDLE collective creating WORLD and SELF. Its Enter carries
/// the CPU time taken before PMPI_Init; hardware counters start only now, so they enter at 0.
void record_init(State& s, ThreadData& td, int region, InitEnter init) {
  otf2::EventChunks& events = events_of(td);
  const std::uint64_t t_enter = init.time_ns;
  std::uint64_t metrics[kMaxMetrics] = {};
  td.counters.read(metrics);
  std::uint64_t enter[kMaxMetrics] = {};
  if (s.counters.mode == CounterMode::CpuTime) enter[0] = init.cpu_ns;
  write_enter(s, td, region, t_enter, enter);
  const std::uint64_t t_leave = std::max(clock_ns(), t_enter);
  events.collective_begin(t_enter);
  events.comm(otf2::Id::CommCreate, t_leave, 0);
  events.comm(otf2::Id::CommCreate, t_leave, 1);
  write_collective_end(events, t_leave, raw::Coll{0, OTF2_COLLECTIVE_OP_CREATE_HANDLE, -1, 0, 0, 0, 0}, false);
  write_leave(s, td, region, t_leave, metrics);
}

/// Recording stops on every rank together when some rank could not open its log: each rank that could not says
/// why, the others remove the logs they opened, and rank 0 says that no archive will be written.
void discard_logs(State& s, ThreadData& td, const std::string& error) {
  if (!td.log) {
    warn(s, error + "; tracing disabled on every rank");
  } else {
    std::error_code ec;
    (void)td.log->close();
    fs::remove(td.log->path(), ec);
    fs::remove(event_file_path(td.log->path()), ec);
  }
  PMPI_Barrier(s.tool_comm);
  if (s.rank == 0) {
    std::error_code ec;
    fs::remove(raw_dir(s.dir), ec);  // only if now empty
    if (td.log) warn(s, "another rank could not open its raw log; tracing disabled on every rank, no archive written");
  }
}

void start(int region, InitEnter init, const int* provided) {
  static const int fork_handler = pthread_atfork(nullptr, nullptr, on_fork_child);
  (void)fork_handler;
  auto owner = std::make_unique<State>();
  State& s = *owner;
  PMPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &s.size);
  ParsedConfig parsed = parse_config(std::span<const char* const>(const_cast<const char* const*>(environ), [] {
    std::size_t n = 0;
    while (environ[n] != nullptr) ++n;
    return n;
  }()));
  s.config = std::move(parsed.config);
  if (s.rank == 0) {
    for (const std::string& w : parsed.warnings) std::fprintf(stderr, "%s\n", w.c_str());
  }
  if (!s.config.enabled) return;
  int level = MPI_THREAD_SINGLE;
  if (provided != nullptr)
    level = *provided;
  else
    PMPI_Query_thread(&level);
  s.thread_level = normalized_thread_level(level);
  s.multiple = s.thread_level == 3;
  PMPI_Comm_dup(MPI_COMM_WORLD, &s.tool_comm);
  PMPI_Comm_group(MPI_COMM_WORLD, &s.world_group);
  s.dir = fs::absolute(s.config.trace_dir).lexically_normal().string();

  choose_counters(s);
  if (!prepare_directory(s)) return;

  s.hosts = gather_hosts(s.tool_comm, s.size);
  s.mpi_library = library_version();
  fill_header(s, measure_clock_offset(s.tool_comm, sync_plan(s)));
  auto td = std::make_unique<ThreadData>();
  std::string error;
  td->log = open_thread_log(s, 0, s.header, error);
  // Every rank records or none does: a rank without a log would skip the tool's collectives in MPI_Finalize,
  // where the others would wait for it forever (a trace directory not shared with, or not writable on, its node).
  if (!all_ok(s.tool_comm, td->log != nullptr)) {
    discard_logs(s, *td, error);
    return;
  }
  start_counters(s, *td);
  ThreadLog& log = *td->log;
  write_meta(log, "command", command_line(s.config));
  write_meta(log, "counters_requested", std::string(to_string(s.config.counters)));
  write_meta(log, "counters_note", s.counters.note);
  write_meta(log, "cpu_time_read", s.counters.read_path);
  write_meta(log, "mpi_library", s.mpi_library);
  register_predefined_comms(s, log);
  if (s.config.callsite) init_callsites();

  record_init(s, *td, region, init);

  td->log->set_flush_interval(std::uint64_t{s.config.flush_seconds} * 1000000000ULL, clock_ns());
  register_exit_log(td->log.get());
  install_sigterm();
  set_thread_data(td.get());
  s.threads.push_back(std::move(td));
  g_owner = std::move(owner);
  g_state = g_owner.get();
  g_recording.store(true, std::memory_order_release);
}

/// What the archive says about the run, from the session.
RunInfo run_info(const State& s) {
  RunInfo run;
  run.world_size = s.size;
  run.counters = s.counters;
  run.counters_requested = std::string(to_string(s.config.counters));
  run.thread_level = thread_level_name(s.thread_level);
  run.command = command_line(s.config);
  run.date = utc_date(s.header.realtime_at_init_ns);
  run.hosts = s.hosts;
  run.mpi_library = s.mpi_library;
  run.callsites = s.config.callsite;
  return run;
}

/// Converts this rank's logs into the archive opened collectively in `partial`; rank 0 also writes the
/// global definitions. Returns whether this rank succeeded; every rank takes part in every collective
/// step whatever happened before, so a local failure cannot hang the others.
bool convert_to_archive(State& s, const LocalMaps& maps, const Unified& unified, const std::vector<ClockModel>& clocks,
                        std::string& error) {
  const std::string partial = partial_dir(s.dir);
  if (s.rank == 0) {
    std::error_code ec;
    fs::remove_all(partial, ec);
  }
  PMPI_Barrier(s.tool_comm);
  ArchivePtr archive = create_archive(partial, error);
  bool ok = archive != nullptr &&
            try_otf2(set_otf2_mpi_collectives(archive.get(), s.tool_comm), "setting MPI collective callbacks", error);
  if (!all_ok(s.tool_comm, ok)) {
    if (error.empty()) error = "another rank could not create the archive";
    return false;
  }
  std::vector<LocationStats> mine;
  ArchiveParts parts;
  // The events are already in OTF2's format, written during the run: each thread's file goes into the archive as
  // it is, and its local definitions map its ids and its clock to the archive's.
  parts.events = [&](OTF2_Archive*, std::vector<std::uint64_t>& locations, std::string& err) {
    bool good = true;
    for (std::size_t i = 0; good && i < s.threads.size(); ++i) {
      const ThreadData& td = *s.threads[i];
      const otf2::EventChunks& events = *td.log->events();
      LocationStats st =
          event_file_stats(s.rank, td.index, events.events(), events.first_time(), events.last_time(), clocks[i]);
      st.complete = td.index == 0 ? 1 : 0;  // the thread that called MPI_Finalize
      good = place_event_file(event_file_path(td.log->path()), partial, st.location, err);
      mine.push_back(st);
      locations.push_back(st.location);
    }
    return good;
  };
  parts.local_definitions = [&](OTF2_DefWriter* w, std::uint64_t location, std::string& err) {
    const auto i = static_cast<std::size_t>(
        std::find_if(mine.begin(), mine.end(), [&](const LocationStats& st) { return st.location == location; }) -
        mine.begin());
    if (i == mine.size()) return true;
    return write_local_mappings(w, maps, clocks[i], s.threads[i]->log->events()->last_time(), err);
  };
  // Every rank gathers its locations' statistics at rank 0, which writes the global definitions. The gather is
  // collective: a rank that cannot build its block sends an empty one rather than skip it.
  parts.global_definitions = [&](OTF2_Archive* a, std::string& err) {
    std::vector<std::byte> block;
    bool good = true;
    try {
      block.resize(mine.size() * sizeof(LocationStats));
      std::memcpy(block.data(), mine.data(), block.size());
    } catch (const std::bad_alloc&) {
      block.clear();
      good = false;
      if (err.empty()) err = "out of memory sending the location statistics";
    }
    const auto blocks = gather_blocks(s.tool_comm, block);
    if (s.rank != 0) return good;
    std::vector<LocationStats> all;
    for (const auto& b : blocks) {
      const std::size_t n = b.size() / sizeof(LocationStats);
      const std::size_t at = all.size();
      all.resize(at + n);
      std::memcpy(all.data() + at, b.data(), n * sizeof(LocationStats));
    }
    return write_global_definitions(a, run_info(s), unified, all, err) && good;
  };
  return write_archive(std::move(archive), parts, error);
}

/// MPI_Finalize as Score-P records it: a DESTROY_HANDLE collective on MPI_COMM_WORLD destroying WORLD and SELF.
/// Its synchronisation is the tool's own (clock measurement and a barrier), so the region has the length of the
/// wait for the last rank; the conversion that follows is not part of it. Closes every thread's log; returns the
/// clock offset measured at the end.
raw::ClockSyncAtEnd record_finalize(State& s, int region, bool& ok, std::string& error) {
  ThreadData& main = *s.threads.front();
  ThreadLog& log = *main.log;
  otf2::EventChunks& events = events_of(main);
  std::uint64_t metrics[kMaxMetrics] = {};
  main.counters.read(metrics);
  const std::uint64_t t_enter = clock_ns();
  write_enter(s, main, region, t_enter, metrics);
  events.collective_begin(t_enter);
  g_recording.store(false, std::memory_order_release);
  uninstall_sigterm();

  const std::int64_t end_offset = measure_clock_offset(s.tool_comm, sync_plan(s));
  PMPI_Barrier(s.tool_comm);
  const std::uint64_t t_leave = clock_ns();
  main.counters.read(metrics);
  events.comm(otf2::Id::CommDestroy, t_leave, 1);
  events.comm(otf2::Id::CommDestroy, t_leave, 0);
  write_collective_end(events, t_leave, raw::Coll{0, OTF2_COLLECTIVE_OP_DESTROY_HANDLE, -1, 0, 0, 0, 0}, false);
  write_leave(s, main, region, t_leave, metrics);
  const raw::ClockSyncAtEnd end{clock_ns(), end_offset};
  log.append(raw::Kind::Finalized, clock_ns(), end);
  for (auto& td : s.threads) {
    td->counters.stop();
    if (!td->log->close()) {
      ok = false;
      error = td->log->error();
    }
  }
  set_thread_data(nullptr);
  return end;
}

/// Unifies every rank's definitions at rank 0 and sends each rank its local-to-global tables. Every rank takes
/// part in both collectives whatever happened before; a rank whose tables did not arrive sets `ok` to false.
LocalMaps exchange_definitions(State& s, Unified& unified, bool& ok, std::string& error) {
  std::vector<std::byte> block;
  try {
    s.defs.rank = s.rank;
    block = serialize(s.defs);
  } catch (...) {
    ok = false;
    error = "out of memory serialising definitions";
  }
  const auto blocks = gather_blocks(s.tool_comm, block);
  std::vector<std::vector<std::byte>> map_blocks;
  if (s.rank == 0) {
    try {
      std::vector<RankDefs> all;
      for (const auto& b : blocks) all.push_back(deserialize_rank_defs(b));
      unified = unify(all, s.size);
      for (const RankDefs& d : all) map_blocks.push_back(serialize(map_rank(d, unified)));
    } catch (const std::exception& e) {
      // Every rank still takes part in the scatter; an empty block tells it the unification failed.
      ok = false;
      error = std::string("unifying definitions failed: ") + e.what();
      map_blocks.assign(static_cast<std::size_t>(s.size), {});
    }
  }
  const std::vector<std::byte> map_block = scatter_blocks(s.tool_comm, map_blocks);
  if (map_block.empty()) {
    ok = false;
    return {};
  }
  return deserialize_local_maps(map_block);
}

/// After the archive: the raw logs go (unless kept), or the user learns how to recover them.
void report_archive(State& s, bool ok, const std::string& error, std::uint64_t started_ns) {
  if (ok) {
    if (!s.config.keep_raw) {
      std::error_code ec;
      for (auto& td : s.threads) {
        fs::remove(td->log->path(), ec);
        fs::remove(event_file_path(td->log->path()), ec);
      }
      PMPI_Barrier(s.tool_comm);
      if (s.rank == 0) fs::remove(raw_dir(s.dir), ec);  // only if now empty
    }
    if (s.rank == 0 && s.config.verbose) {
      std::fprintf(stderr, "p3s: wrote %s/traces.otf2 (%d ranks, work metric %s) in %.3f s after MPI_Finalize\n",
                   s.dir.c_str(), s.size, work_metric_name(s.counters),
                   1e-9 * static_cast<double>(clock_ns() - started_ns));
    }
  } else if (s.rank == 0 || !error.empty()) {
    warn(s, "writing the OTF2 archive failed (" + (error.empty() ? std::string("on another rank") : error) +
                "); the raw logs are kept in " + raw_dir(s.dir) + ": run `p3s recover " + s.dir + "`");
  }
  if (s.failures != 0) {
    warn(s, std::to_string(s.failures) + " events could not be recorded (out of memory in the recorder's tables)");
  }
}

void finish(State& s, int region) {
  const std::uint64_t started_ns = clock_ns();
  bool ok = true;
  std::string error;
  const raw::ClockSyncAtEnd end = record_finalize(s, region, ok, error);
  // Every thread of a rank shares the rank's clock model.
  const ClockModel clock{s.header.init_ns, s.header.clock_offset_ns, end.local_ns, end.offset_ns, true};
  const std::vector<ClockModel> clocks(s.threads.size(), clock);
  Unified unified;
  const LocalMaps maps = exchange_definitions(s, unified, ok, error);

  ok = all_ok(s.tool_comm, ok) && convert_to_archive(s, maps, unified, clocks, error);
  ok = all_ok(s.tool_comm, ok);
  if (ok && s.rank == 0) {
    std::string publish_error;
    ok = clear_published_archive(s.dir, publish_error) && publish_archive(s.dir, publish_error);
    if (!ok) error = publish_error;
  }
  ok = all_ok(s.tool_comm, ok);
  report_archive(s, ok, error, started_ns);
  PMPI_Group_free(&s.world_group);
  PMPI_Comm_free(&s.tool_comm);
}

}  // namespace

void register_exit_log(ThreadLog* log) noexcept {
  const int i = g_exit_log_count.load(std::memory_order_relaxed);
  if (i >= kMaxExitLogs) return;
  g_exit_logs[i].store(log, std::memory_order_release);
  g_exit_log_count.store(i + 1, std::memory_order_release);
}

void on_abort(Region region) noexcept {
  if (g_state == nullptr || !g_recording.load(std::memory_order_acquire)) return;
  if (ThreadData* td = current_thread_data()) {
    const std::uint64_t metrics[kMaxMetrics] = {};
    write_enter(*g_state, *td, static_cast<int>(region), clock_ns(), metrics);
  }
  g_recording.store(false, std::memory_order_release);
  // MPI_Abort does not return: keep what was recorded for `p3s recover`.
  const int n = std::min(g_exit_log_count.load(std::memory_order_acquire), kMaxExitLogs);
  for (int i = 0; i < n; ++i) {
    if (ThreadLog* log = g_exit_logs[i].load(std::memory_order_acquire)) log->flush_for_exit();
  }
}

void warn(const State& s, const std::string& message) noexcept {
  std::fprintf(stderr, "p3s[rank %d]: %s\n", s.rank, message.c_str());
}

InitEnter init_enter() noexcept { return {clock_ns(), thread_cpu_ns()}; }

void on_init(int rc, Region region, InitEnter enter, int /*required*/, const int* provided) noexcept {
  if (rc != MPI_SUCCESS || g_state != nullptr) return;
  try {
#ifdef P3S_ENABLE_FORTRAN
    fortran::init_sentinels();
#endif
    start(static_cast<int>(region), enter, provided);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "p3s: cannot start recording (%s); the application runs untraced\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "p3s: cannot start recording; the application runs untraced\n");
  }
}

void on_finalize(Region region) noexcept {
  if (g_state == nullptr) return;
  try {
    finish(*g_state, static_cast<int>(region));
  } catch (const std::exception& e) {
    warn(*g_state,
         std::string("finishing the trace failed: ") + e.what() + "; run `p3s recover` on the trace directory");
  } catch (...) {
    warn(*g_state, "finishing the trace failed; run `p3s recover` on the trace directory");
  }
  g_recording.store(false);
  g_state = nullptr;
  g_owner.reset();
}

}  // namespace p3s::interpose
