// SPDX-License-Identifier: BSD-3-Clause
// The per-call hot path: Enter/Leave records and point-to-point bookkeeping (requests, completions).
#include "recorder.hpp"

#include <cstring>

#include "archive_io.hpp"
#include "converter.hpp"
#include "state.hpp"

namespace p3s::interpose {

std::atomic<bool> g_recording{false};
State* g_state = nullptr;

namespace {

/// Per-thread recursion depth and record target. Constant-initialised, so access from the preloaded
/// library costs a TLS offset and no guard.
struct ThreadState {
  int depth = 0;
  ThreadData* data = nullptr;
};
constinit thread_local ThreadState t_state [[gnu::tls_model("initial-exec")]];

/// Creates the log of a thread's first recorded MPI call (threads other than MPI_Init's).
ThreadData* attach_thread() noexcept {
  State& s = *g_state;
  try {
    auto td = std::make_unique<ThreadData>();
    raw::FileHeader h = s.header;
    // Threads attaching at the same time must get distinct indices (and so distinct log files).
    td->index = s.next_thread.fetch_add(1, std::memory_order_relaxed);
    h.thread_index = td->index;
    std::string error;
    td->log = open_thread_log(s, td->index, h, error);
    if (!td->log) {
      warn(s, error + "; MPI calls of this thread are not recorded");
      return nullptr;
    }
    start_counters(s, *td);
    td->log->set_flush_interval(std::uint64_t{s.config.flush_seconds} * 1000000000ULL, clock_ns());
    register_exit_log(td->log.get());
    ThreadData* raw_ptr = td.get();
    TablesGuard g(s);
    s.threads.push_back(std::move(td));
    t_state.data = raw_ptr;
    return raw_ptr;
  } catch (...) {
    warn(s, "out of memory creating a thread's event log; MPI calls of this thread are not recorded");
    return nullptr;
  }
}

std::uint64_t type_bytes(int count, MPI_Datatype dtype) noexcept {
  if (dtype == MPI_DATATYPE_NULL || count <= 0) return 0;
  int size = 0;
  PMPI_Type_size(dtype, &size);
  return static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(size);
}

/// Bytes actually received, from the status (exact for any datatype, wildcards included).
std::uint64_t received_bytes(const MPI_Status* status) noexcept {
  int n = 0;
  PMPI_Get_count(status, MPI_BYTE, &n);
  return n == MPI_UNDEFINED ? 0 : static_cast<std::uint64_t>(n);
}

/// MpiSend or MpiRecv.
void log_msg(ThreadData& td, otf2::Id id, std::uint64_t t, std::uint32_t comm, int peer, int tag,
             std::uint64_t bytes) noexcept {
  events_of(td).message(id, t, static_cast<std::uint32_t>(peer), comm, static_cast<std::uint32_t>(tag), bytes);
}

/// MpiIsend or MpiIrecv.
void log_msg(ThreadData& td, otf2::Id id, std::uint64_t t, std::uint32_t comm, int peer, int tag, std::uint64_t bytes,
             std::uint64_t request) noexcept {
  events_of(td).message(id, t, static_cast<std::uint32_t>(peer), comm, static_cast<std::uint32_t>(tag), bytes, request);
}

void log_request(ThreadData& td, otf2::Id id, std::uint64_t t, std::uint64_t request) noexcept {
  events_of(td).request(id, t, request);
}

/// Registers a request; a full table (out of memory) loses the request's completion, which is counted.
void remember(State& s, MPI_Request handle, const RequestInfo& info) noexcept {
  const std::uint32_t owner = t_state.data->index;
  TablesGuard g(s);
  if (!s.requests.add(handle_key(handle), owner, info)) ++s.failures;
}

/// Completion of one request: the message records of MPI's completion semantics (Isend complete, Irecv
/// with the actual source, tag and size, collective end) or a cancellation.
void complete_one(Scope& sc, MPI_Request before, const MPI_Status* status) noexcept {
  if (before == MPI_REQUEST_NULL) return;
  State& s = *g_state;
  RequestInfo info;
  {
    TablesGuard g(s);
    RequestInfo* found = s.requests.find(handle_key(before), sc.data().index);
    // Unknown requests are not ours to report: PROC_NULL operations, generalized or I/O requests.
    if (found == nullptr) return;
    info = *found;
    const bool persistent =
        info.kind == RequestInfo::Kind::PersistentSend || info.kind == RequestInfo::Kind::PersistentRecv;
    // A persistent request survives completion (inactive until the next MPI_Start); others are freed.
    if (persistent) {
      found->active = false;
      found->cancel_requested = false;
    } else {
      s.requests.remove(handle_key(before), found);
    }
  }
  // Completing an inactive persistent request is a no-op in MPI and records nothing.
  if (!info.active) return;
  ThreadData& td = sc.data();
  const std::uint64_t t = sc.leave_ns();
  const bool have_status = status != MPI_STATUS_IGNORE;
  if (info.cancel_requested && have_status) {
    int cancelled = 0;
    PMPI_Test_cancelled(status, &cancelled);
    if (cancelled != 0) {
      log_request(td, otf2::Id::MpiRequestCancelled, t, info.id);
      return;
    }
  }
  switch (info.kind) {
    case RequestInfo::Kind::Isend:
    case RequestInfo::Kind::PersistentSend:
      log_request(td, otf2::Id::MpiIsendComplete, t, info.id);
      break;
    case RequestInfo::Kind::Irecv:
    case RequestInfo::Kind::PersistentRecv: {
      // MPI_ANY_SOURCE / MPI_ANY_TAG are resolved from the status; a receive from MPI_PROC_NULL completes
      // with source MPI_PROC_NULL and moves no message.
      const int source = have_status ? status->MPI_SOURCE : info.peer;
      if (source == MPI_PROC_NULL) break;
      const int tag = have_status ? status->MPI_TAG : info.tag;
      const std::uint64_t bytes = have_status ? received_bytes(status) : info.bytes;
      log_msg(td, otf2::Id::MpiIrecv, t, info.comm, source, tag, bytes, info.id);
      break;
    }
    case RequestInfo::Kind::Collective: {
      const raw::Coll c{info.comm, info.op, info.root, 0, info.bytes, info.received, info.id};
      write_collective_end(events_of(td), t, c, true);
      break;
    }
  }
}

/// Whether element i of a multiple-completion call completed: all of them on success; with
/// MPI_ERR_IN_STATUS those whose status does not say MPI_ERR_PENDING.
bool element_completed(int rc, const MPI_Status* statuses, int i) noexcept {
  if (rc == MPI_SUCCESS) return true;
  if (rc != MPI_ERR_IN_STATUS || statuses == MPI_STATUSES_IGNORE) return false;
  return statuses[i].MPI_ERROR != MPI_ERR_PENDING;
}

}  // namespace

void start_counters(const State& s, ThreadData& td) noexcept {
  td.counters.start(s.counters);
  if (!td.counters.misses_switches(s.counters)) return;
  static std::atomic<bool> reported{false};
  if (!reported.exchange(true)) {
    warn(s, "thread " + std::to_string(td.index) +
                " cannot follow its context switches (perf event or ring refused, e.g. the perf mlock budget); its "
                "CPU time can be up to P3S_CPUTIME_WINDOW_US too high after each switch");
  }
}

std::unique_ptr<ThreadLog> open_thread_log(const State& s, std::uint32_t index, const raw::FileHeader& header,
                                           std::string& error) noexcept {
  try {
    return ThreadLog::open(raw_log_path(s.dir, s.rank, index), kDefinitionBufferBytes, header, error,
                           std::size_t{s.config.buffer_mb});
  } catch (...) {
    error = "out of memory opening a raw log";
    return nullptr;
  }
}

bool write_enter(State& s, ThreadData& td, int region, std::uint64_t t, const std::uint64_t* counters) noexcept {
  otf2::EventChunks& events = events_of(td);
  const auto n = static_cast<std::uint8_t>(s.counters.count);
  bool ok = true;
  if (n != 0) {
    std::uint64_t values[kMaxMetrics];
    td.outside.enter(counters, n, values);
    ok = events.metric(t, kMetricClass, n, values);
  }
  const auto r = static_cast<std::uint32_t>(region);
  if (!s.config.callsite) return events.enter(t, r) && ok;
  const auto site = static_cast<std::uint32_t>(current_callsite(s, *td.log));
  return events.enter(t, r, kCallsiteAttr, site) && ok;
}

bool write_leave(const State& s, ThreadData& td, int region, std::uint64_t t, const std::uint64_t* counters) noexcept {
  td.outside.leave(counters, s.counters.count);
  return events_of(td).leave(t, static_cast<std::uint32_t>(region));
}

bool write_collective_end(otf2::EventChunks& events, std::uint64_t t, const raw::Coll& c, bool nonblocking) noexcept {
  const std::uint32_t root = c.root < 0 ? OTF2_COLLECTIVE_ROOT_NONE : static_cast<std::uint32_t>(c.root);
  return events.collective_end(t, static_cast<std::uint8_t>(c.op), c.comm, root, c.sent, c.received, nonblocking,
                               c.request);
}

Scope::Scope(Region region) noexcept : region_(region) {
  ThreadState& ts = t_state;
  if (ts.depth++ != 0 || !g_recording.load(std::memory_order_acquire)) return;
  ThreadData* td = ts.data != nullptr ? ts.data : attach_thread();
  if (td == nullptr || td->log->failed()) return;
  data_ = td;
  // Counters first and the clock second, so the burst before this call excludes the recorder's own work;
  // call-site unwinding then counts as time in MPI, not as application work.
  std::uint64_t counters[kMaxMetrics];
  t_enter_ = td->counters.read_then_clock(counters);
  write_enter(*g_state, *td, static_cast<int>(region), t_enter_, counters);
}

void Scope::done() noexcept {
  if (data_ == nullptr || done_) return;
  t_leave_ = clock_ns();
  done_ = true;
}

Scope::~Scope() {
  if (data_ != nullptr) {
    done();
    // Hardware counters are read last, after the recorder's bookkeeping, so that its instructions are not charged
    // to the next burst; CPU time is taken at the Leave time, as the wall time of the burst after it is.
    std::uint64_t metrics[kMaxMetrics];
    data_->counters.read_at_leave(metrics, t_leave_);
    ThreadLog& log = *data_->log;
    if (!write_leave(*g_state, *data_, static_cast<int>(region_), t_leave_, metrics)) {
      // The log failed (disk full, unwritable directory): say so once and stop recording this thread.
      static std::atomic<bool> reported{false};
      if (!reported.exchange(true)) warn(*g_state, log.error() + "; recording stopped for this thread");
    }
  }
  --t_state.depth;
}

ThreadData* current_thread_data() noexcept { return t_state.data; }

ThreadLog* current_thread_log() noexcept {
  ThreadData* td = t_state.data;
  return td != nullptr ? td->log.get() : nullptr;
}

/// Makes `data` the calling thread's record target (the MPI_Init thread; others attach on first use).
void set_thread_data(ThreadData* data) noexcept { t_state.data = data; }

MPI_Status* scratch_statuses(int count) noexcept {
  ThreadData* td = t_state.data;
  try {
    if (td->statuses.size() < static_cast<std::size_t>(count)) td->statuses.resize(static_cast<std::size_t>(count));
    return td->statuses.data();
  } catch (...) {
    return MPI_STATUSES_IGNORE;
  }
}

const MPI_Request* save_requests(int count, const MPI_Request* requests) noexcept {
  ThreadData* td = t_state.data;
  try {
    td->requests.assign(requests, requests + (count > 0 ? count : 0));
    return td->requests.data();
  } catch (...) {
    return nullptr;
  }
}

void on_send(Scope& s, int rc, const P2P& p) noexcept {
  // A send to MPI_PROC_NULL moves no message: the call is recorded, the message is not.
  if (rc != MPI_SUCCESS || p.peer == MPI_PROC_NULL) return;
  log_msg(s.data(), otf2::Id::MpiSend, s.enter_ns(), comm_index(*g_state, p.comm), p.peer, p.tag,
          type_bytes(p.count, p.dtype));
}

void on_isend(Scope& s, int rc, const P2P& p, const MPI_Request* request) noexcept {
  if (rc != MPI_SUCCESS || p.peer == MPI_PROC_NULL) return;
  State& st = *g_state;
  const std::uint64_t id = st.next_request.fetch_add(1, std::memory_order_relaxed);
  const std::uint32_t comm = comm_index(st, p.comm);
  const std::uint64_t bytes = type_bytes(p.count, p.dtype);
  remember(st, *request, RequestInfo{.id = id, .kind = RequestInfo::Kind::Isend, .comm = comm, .bytes = bytes});
  log_msg(s.data(), otf2::Id::MpiIsend, s.enter_ns(), comm, p.peer, p.tag, bytes, id);
}

void on_recv(Scope& s, int rc, MPI_Comm comm, const MPI_Status* status) noexcept {
  if (rc != MPI_SUCCESS || status->MPI_SOURCE == MPI_PROC_NULL) return;
  log_msg(s.data(), otf2::Id::MpiRecv, s.leave_ns(), comm_index(*g_state, comm), status->MPI_SOURCE, status->MPI_TAG,
          received_bytes(status));
}

void on_irecv(Scope& s, int rc, const P2P& p, const MPI_Request* request) noexcept {
  if (rc != MPI_SUCCESS || p.peer == MPI_PROC_NULL) return;
  State& st = *g_state;
  const std::uint64_t id = st.next_request.fetch_add(1, std::memory_order_relaxed);
  remember(st, *request,
           RequestInfo{.id = id,
                       .kind = RequestInfo::Kind::Irecv,
                       .peer = p.peer,
                       .tag = p.tag,
                       .comm = comm_index(st, p.comm),
                       .bytes = type_bytes(p.count, p.dtype)});
  log_request(s.data(), otf2::Id::MpiIrecvRequest, s.enter_ns(), id);
}

void on_sendrecv(Scope& s, int rc, const P2P& send, const MPI_Status* status) noexcept {
  // Recorded as Score-P does: a send at enter and a receive at leave inside one region.
  on_send(s, rc, send);
  on_recv(s, rc, send.comm, status);
}

void on_send_init(Scope&, int rc, const P2P& p, const MPI_Request* request) noexcept {
  if (rc != MPI_SUCCESS || p.peer == MPI_PROC_NULL) return;
  State& st = *g_state;
  remember(st, *request,
           RequestInfo{.kind = RequestInfo::Kind::PersistentSend,
                       .active = false,
                       .peer = p.peer,
                       .tag = p.tag,
                       .comm = comm_index(st, p.comm),
                       .bytes = type_bytes(p.count, p.dtype)});
}

void on_recv_init(Scope&, int rc, const P2P& p, const MPI_Request* request) noexcept {
  if (rc != MPI_SUCCESS || p.peer == MPI_PROC_NULL) return;
  State& st = *g_state;
  remember(st, *request,
           RequestInfo{.kind = RequestInfo::Kind::PersistentRecv,
                       .active = false,
                       .peer = p.peer,
                       .tag = p.tag,
                       .comm = comm_index(st, p.comm),
                       .bytes = type_bytes(p.count, p.dtype)});
}

void on_start(Scope& s, int rc, int count, const MPI_Request* requests) noexcept {
  if (rc != MPI_SUCCESS) return;
  State& st = *g_state;
  ThreadData& td = s.data();
  for (int i = 0; i < count; ++i) {
    RequestInfo info;
    {
      TablesGuard g(st);
      RequestInfo* found = st.requests.find(handle_key(requests[i]), s.data().index);
      if (found == nullptr) continue;
      // Each activation of a persistent request is a new operation with its own id, as in OTF2.
      found->id = st.next_request.fetch_add(1, std::memory_order_relaxed);
      found->active = true;
      info = *found;
    }
    if (info.kind == RequestInfo::Kind::PersistentSend) {
      log_msg(td, otf2::Id::MpiIsend, s.enter_ns(), info.comm, info.peer, info.tag, info.bytes, info.id);
    } else if (info.kind == RequestInfo::Kind::PersistentRecv) {
      log_request(td, otf2::Id::MpiIrecvRequest, s.enter_ns(), info.id);
    }
  }
}

void on_completed(Scope& s, int rc, MPI_Request before, const MPI_Status* status) noexcept {
  if (rc == MPI_SUCCESS) complete_one(s, before, status);
}

void on_completed_all(Scope& s, int rc, int count, const MPI_Request* before, const MPI_Status* statuses) noexcept {
  if (before == nullptr) return;
  for (int i = 0; i < count; ++i) {
    if (!element_completed(rc, statuses, i)) continue;
    complete_one(s, before[i], statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i]);
  }
}

void on_completed_any(Scope& s, int rc, const MPI_Request* before, int index, const MPI_Status* status) noexcept {
  if (rc != MPI_SUCCESS || before == nullptr || index == MPI_UNDEFINED || index < 0) return;
  complete_one(s, before[index], status);
}

void on_completed_some(Scope& s, int rc, const MPI_Request* before, int outcount, const int* indices,
                       const MPI_Status* statuses) noexcept {
  if (before == nullptr || outcount == MPI_UNDEFINED) return;
  // The k-th status belongs to the k-th completed index, not to position indices[k].
  for (int k = 0; k < outcount; ++k) {
    if (!element_completed(rc, statuses, k)) continue;
    complete_one(s, before[indices[k]], statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[k]);
  }
}

void on_cancel(Scope& s, int rc, MPI_Request request) noexcept {
  if (rc != MPI_SUCCESS) return;
  State& st = *g_state;
  TablesGuard g(st);
  // Whether the cancellation succeeded is known only at completion (MPI_Test_cancelled).
  if (RequestInfo* found = st.requests.find(handle_key(request), s.data().index)) found->cancel_requested = true;
}

void on_request_free(Scope& s, int rc, MPI_Request before) noexcept {
  if (rc != MPI_SUCCESS || before == MPI_REQUEST_NULL) return;
  State& st = *g_state;
  RequestInfo info;
  {
    TablesGuard g(st);
    RequestInfo* found = st.requests.find(handle_key(before), s.data().index);
    if (found == nullptr) return;
    info = *found;
    st.requests.remove(handle_key(before), found);
  }
  // Freeing an active send is legal: the message still goes out, so its request is closed here. A freed
  // active receive can never report what it received; its message stays unmatched in analysis.
  if (info.active && (info.kind == RequestInfo::Kind::Isend || info.kind == RequestInfo::Kind::PersistentSend)) {
    log_request(s.data(), otf2::Id::MpiIsendComplete, s.leave_ns(), info.id);
  }
}

}  // namespace p3s::interpose
