// SPDX-License-Identifier: BSD-3-Clause
// The recorder's process-wide and per-thread state (created in MPI_Init, destroyed in MPI_Finalize).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <mpi.h>

#include "definitions.hpp"
#include "dir_lock.hpp"
#include "flat_map.hpp"
#include "p3s/interpose/config.hpp"
#include "p3s/interpose/counters.hpp"
#include "request_table.hpp"
#include "thread_log.hpp"

namespace p3s::interpose {

/// Everything a thread records with: its log, counters and scratch arrays.
struct ThreadData {
  std::unique_ptr<ThreadLog> log;
  CounterReader counters;
  CountsOutsideCalls outside;  ///< what the Metric events say
  std::uint32_t index = 0;
  std::vector<MPI_Status> statuses;
  std::vector<MPI_Request> requests;
};

/// A spin lock taken only when the application runs MPI_THREAD_MULTIPLE.
class TableLock {
 public:
  void lock() noexcept {
    while (flag_.test_and_set(std::memory_order_acquire)) {
    }
  }
  void unlock() noexcept { flag_.clear(std::memory_order_release); }

 private:
  std::atomic_flag flag_ = ATOMIC_FLAG_INIT;
};

struct State {
  Config config;
  std::unique_ptr<DirLock> dir_lock;  ///< rank 0's hold on the trace directory, until the state goes
  CounterSetup counters;
  std::string dir;  ///< absolute trace directory
  int rank = 0;
  int size = 1;
  int thread_level = 0;  ///< 0 single .. 3 multiple
  bool multiple = false;
  MPI_Comm tool_comm = MPI_COMM_NULL;  ///< the tool's own duplicate of MPI_COMM_WORLD
  MPI_Group world_group = MPI_GROUP_NULL;
  raw::FileHeader header{};  ///< template for every thread's log header
  std::vector<std::string> hosts;
  std::string
      mpi_library;  ///< the first line of MPI_Get_library_version ("Open MPI v4.1.4, ...", "MPICH Version: 4.0.2")

  TableLock lock;  ///< guards everything below when `multiple`
  std::vector<std::unique_ptr<ThreadData>> threads;
  RequestTable requests;
  FlatMap<std::uint32_t> comms;  ///< MPI_Comm handle -> local communicator index
  FlatMap<std::uint32_t> callsites;
  RankDefs defs;  ///< communicator and call-site definitions, as logged
  std::uint32_t comm_counter = 0;
  std::atomic<std::uint64_t> next_request{1};
  std::atomic<std::uint32_t> next_thread{1};  ///< index of the next thread to attach (0 called MPI_Init)

  std::uint64_t failures = 0;  ///< events lost after a degradation, summarised at MPI_Finalize
};

/// Set while events are recorded; checked by every wrapper.
extern std::atomic<bool> g_recording;
/// The state, valid while g_recording or during MPI_Finalize.
extern State* g_state;

/// Locks the tables when the thread level requires it.
class TablesGuard {
 public:
  explicit TablesGuard(State& s) noexcept : s_(s) {
    if (s_.multiple) s_.lock.lock();
  }
  ~TablesGuard() {
    if (s_.multiple) s_.lock.unlock();
  }
  TablesGuard(const TablesGuard&) = delete;
  TablesGuard& operator=(const TablesGuard&) = delete;

 private:
  State& s_;
};

/// Map key of an MPI handle (a pointer in Open MPI, an int in MPICH).
template <class Handle>
[[nodiscard]] inline std::uint64_t handle_key(Handle h) noexcept {
  static_assert(sizeof(Handle) <= sizeof(std::uint64_t));
  std::uint64_t k = 0;
  __builtin_memcpy(&k, &h, sizeof h);
  return k;
}

/// Local index of a communicator, registering one created outside the wrappers on first use.
[[nodiscard]] std::uint32_t comm_index(State& s, MPI_Comm comm) noexcept;

/// Registers MPI_COMM_WORLD (index 0) and MPI_COMM_SELF (index 1) in the main thread's log.
void register_predefined_comms(State& s, ThreadLog& log) noexcept;

/// The calling thread's log, or nullptr when it has none.
[[nodiscard]] ThreadLog* current_thread_log() noexcept;
/// The calling thread's record target, or nullptr when it has none.
[[nodiscard]] ThreadData* current_thread_data() noexcept;

/// Makes `data` the calling thread's record target (nullptr detaches it).
void set_thread_data(ThreadData* data) noexcept;

/// Call-site id of the current MPI call (first frame outside this library), logging new ones.
[[nodiscard]] std::uint64_t current_callsite(State& s, ThreadLog& log) noexcept;
/// Prepares call-site capture (the address range of this library).
void init_callsites() noexcept;

/// Starts the calling thread's counters; the first thread of the rank that cannot follow its context switches
/// says so.
void start_counters(const State& s, ThreadData& td) noexcept;

/// The raw log of definitions of each thread holds this much; P3S_BUFFER_MB is the events' buffer.
inline constexpr std::size_t kDefinitionBufferBytes = std::size_t{1} << 20;

/// Opens the log and event file of thread `index` of this rank, with `header`'s identity.
[[nodiscard]] std::unique_ptr<ThreadLog> open_thread_log(const State& s, std::uint32_t index,
                                                         const raw::FileHeader& header, std::string& error) noexcept;

/// The calling thread's events (its log's event file).
[[nodiscard]] inline otf2::EventChunks& events_of(ThreadData& td) noexcept { return *td.log->events(); }

/// An MPI call's Enter at `t` with the thread's `counters` then: the work counters as a Metric event, less what the
/// thread counted inside its earlier MPI calls (the burst since the last call ended), then the Enter, with its call
/// site when recorded. False once the log failed.
bool write_enter(State& s, ThreadData& td, int region, std::uint64_t t, const std::uint64_t* counters) noexcept;
/// Its Leave; `counters` at the call's end count as time inside MPI.
bool write_leave(const State& s, ThreadData& td, int region, std::uint64_t t, const std::uint64_t* counters) noexcept;
/// A collective's end: MpiCollectiveEnd, or NonBlockingCollectiveComplete for a request (`nonblocking`).
bool write_collective_end(otf2::EventChunks& events, std::uint64_t t, const raw::Coll& c, bool nonblocking) noexcept;

/// Makes a log reachable from the termination handler (which flushes it if the process is killed).
void register_exit_log(ThreadLog* log) noexcept;

/// One line on stderr, prefixed `p3s[rank N]: `.
void warn(const State& s, const std::string& message) noexcept;

}  // namespace p3s::interpose
