// SPDX-License-Identifier: BSD-3-Clause
// Sends and receives: a blocking send as MPI_Send (MPI_Ssend when the application's was synchronous; buffered and
// ready sends as standard ones, which need no attached buffer or posted receive), MPI_Isend/MPI_Issend, MPI_Recv,
// MPI_Irecv, MPI_Sendrecv; a persistent start as the non-blocking call it starts. Completions wait for the requests
// their actions name, with the recorded function's semantics (one, all, any, some; a test polls until done).
// Collectives use the block every member computes alike, reductions as MPI_BOR on MPI_BYTE. Where the application
// made a communicator, the replay makes one with the same call (MPI_Comm_split, a 1-D MPI_Cart_create, else
// MPI_Comm_dup) on the same parent, and frees one where the application freed one.
#include "executor.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <string>

#include "burst.hpp"
#include "p3s/error.hpp"
#include "p3s/modeler/phase_check.hpp"
#include "p3s/mpi/vocabulary.hpp"

namespace p3s::replay::detail {
namespace {

using modeler::PredictedAction;
using modeler::PredictedCall;
using mpi::ActionKind;

/// Room for a message predicted at `bytes`: the room the check of the prediction let it take (the two ends' laws can
/// differ a little, so a receive takes more), and never more than the largest message.
std::size_t room_for(double bytes, std::size_t largest) {
  return std::min(largest, static_cast<std::size_t>(modeler::receive_room(bytes)));
}

int tag_of(std::uint32_t tag) {
  if (tag == modeler::kAnyTag) return MPI_ANY_TAG;
  static const int upper = [] {
    int* value = nullptr;
    int flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &value, &flag);
    return flag != 0 && value != nullptr ? *value : 32767;
  }();
  return static_cast<int>(tag % (static_cast<std::uint32_t>(upper) + 1));
}

/// Makes a communicator on `comm` with the call the application made one with: making one costs what it cost.
/// It joins `made` on success.
int make_communicator(mpi::Function function, MPI_Comm comm, int members, std::vector<MPI_Comm>& made) {
  MPI_Comm created = MPI_COMM_NULL;
  int status = MPI_SUCCESS;
  if (function == mpi::Function::MPI_Comm_split) {
    status = MPI_Comm_split(comm, 0, 0, &created);
  } else if (function == mpi::Function::MPI_Cart_create) {
    const int periodic = 0;
    status = MPI_Cart_create(comm, 1, &members, &periodic, 0, &created);
  } else {
    status = MPI_Comm_dup(comm, &created);
  }
  if (status == MPI_SUCCESS) made.push_back(created);
  return status;
}

/// Frees the latest communicator of `made` where the application freed one.
int free_communicator(mpi::Function function, std::vector<MPI_Comm>& made) {
  int status = MPI_SUCCESS;
  if (!made.empty() && mpi::kind(function) == mpi::CallKind::CommFree) {
    status = MPI_Comm_free(&made.back());
    made.pop_back();
  }
  return status;
}

}  // namespace

int move_data(mpi::Collective op, char* in, char* out, int block, int root, MPI_Comm comm) {
  switch (op) {
    case mpi::Collective::Barrier:
      return MPI_Barrier(comm);
    case mpi::Collective::Bcast:
      return MPI_Bcast(in, block, MPI_BYTE, root, comm);
    case mpi::Collective::Reduce:
      return MPI_Reduce(in, out, block, MPI_BYTE, MPI_BOR, root, comm);
    case mpi::Collective::Allreduce:
      return MPI_Allreduce(in, out, block, MPI_BYTE, MPI_BOR, comm);
    case mpi::Collective::Gather:
    case mpi::Collective::Gatherv:
      return MPI_Gather(in, block, MPI_BYTE, out, block, MPI_BYTE, root, comm);
    case mpi::Collective::Scatter:
    case mpi::Collective::Scatterv:
      return MPI_Scatter(in, block, MPI_BYTE, out, block, MPI_BYTE, root, comm);
    case mpi::Collective::Allgather:
    case mpi::Collective::Allgatherv:
      return MPI_Allgather(in, block, MPI_BYTE, out, block, MPI_BYTE, comm);
    case mpi::Collective::Alltoall:
    case mpi::Collective::Alltoallv:
    case mpi::Collective::Alltoallw:
      return MPI_Alltoall(in, block, MPI_BYTE, out, block, MPI_BYTE, comm);
    case mpi::Collective::ReduceScatter:
    case mpi::Collective::ReduceScatterBlock:
      return MPI_Reduce_scatter_block(in, out, block, MPI_BYTE, MPI_BOR, comm);
    case mpi::Collective::Scan:
      return MPI_Scan(in, out, block, MPI_BYTE, MPI_BOR, comm);
    case mpi::Collective::Exscan:
      return MPI_Exscan(in, out, block, MPI_BYTE, MPI_BOR, comm);
    case mpi::Collective::Unknown:
      return MPI_Barrier(comm);
    default:
      return MPI_SUCCESS;  // destroying a communicator, allocating: local
  }
}

int count_of(double bytes) { return static_cast<int>(modeler::message_count(bytes)); }

Executor::Executor(const Communicators& comms, std::int64_t rank, double largest, Pacing* pacing)
    : comms_(comms),
      rank_(rank),
      largest_(static_cast<std::size_t>(std::max(0.0, std::ceil(largest))) + 1),
      pacing_(pacing) {
  send_.assign(largest_, 0);
}

void Executor::begin(const std::vector<PredictedCall>& calls) {
  started_.assign(calls.size(), {});
  due_.assign(calls.size(), {});
  taken_.assign(calls.size(), 0);
  if (posted_.size() < calls.size()) posted_.resize(calls.size());
}

Executor::~Executor() {
  for (MPI_Comm& c : made_) MPI_Comm_free(&c);
}

void Executor::end() {
  std::vector<MPI_Request> left;
  for (const std::vector<MPI_Request>& r : started_) {
    for (const MPI_Request q : r) {
      if (q != MPI_REQUEST_NULL) left.push_back(q);
    }
  }
  left.insert(left.end(), null_requests_.begin(), null_requests_.end());
  null_requests_.clear();
  if (!left.empty()) MPI_Waitall(static_cast<int>(left.size()), left.data(), MPI_STATUSES_IGNORE);
}

char* Executor::scratch(std::vector<char>& buffer, std::size_t bytes) {
  if (buffer.size() < bytes) buffer.resize(bytes);
  return buffer.data();
}

char* Executor::receive_buffer(std::size_t index, std::size_t slot, double bytes) {
  std::vector<std::vector<char>>& mine = posted_[index];
  if (mine.size() <= slot) mine.resize(slot + 1);
  return scratch(mine[slot], room_for(bytes, largest_));
}

void Executor::check(int status, const PredictedCall& call) const {
  if (status == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(status, text, &length);
  throw Error("rank " + std::to_string(rank_) + ": " + call.call + " failed: " + std::string(text, length));
}

void Executor::execute(const PredictedCall& call, std::size_t index) {
  // The paths the check of the prediction follows (modeler::path_of), so that what it matched is what is made.
  switch (modeler::path_of(call.function)) {
    case modeler::CallPath::Completion:
      completion(call);
      return;
    case modeler::CallPath::Collective:
      for (const PredictedAction& a : call.actions) {
        if (a.kind == ActionKind::Collective) collective(call, a);
      }
      return;
    case modeler::CallPath::Probe: {
      int flag = 0;
      check(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comms_.comm(nullptr), &flag, MPI_STATUS_IGNORE), call);
      return;
    }
    case modeler::CallPath::PointToPoint:
      point_to_point(call, index);
  }
}

void Executor::null_call(const PredictedCall& call) {
  const mpi::FunctionInfo& info = mpi::info(call.function);
  const MPI_Comm comm = comms_.comm(nullptr);
  MPI_Request r = MPI_REQUEST_NULL;
  switch (info.kind) {
    case mpi::CallKind::Send:
      check(MPI_Send(send_.data(), 0, MPI_BYTE, MPI_PROC_NULL, 0, comm), call);
      return;
    case mpi::CallKind::Recv:
      check(MPI_Recv(scratch(recv_, 1), 0, MPI_BYTE, MPI_PROC_NULL, 0, comm, MPI_STATUS_IGNORE), call);
      return;
    case mpi::CallKind::Sendrecv:
      check(MPI_Sendrecv(send_.data(), 0, MPI_BYTE, MPI_PROC_NULL, 0, scratch(recv_, 1), 0, MPI_BYTE, MPI_PROC_NULL, 0,
                         comm, MPI_STATUS_IGNORE),
            call);
      return;
    case mpi::CallKind::Isend:
    case mpi::CallKind::Start:
      check(MPI_Isend(send_.data(), 0, MPI_BYTE, MPI_PROC_NULL, 0, comm, &r), call);
      break;
    case mpi::CallKind::Irecv:
      check(MPI_Irecv(scratch(recv_, 1), 0, MPI_BYTE, MPI_PROC_NULL, 0, comm, &r), call);
      break;
    default:
      return;  // a call that moves no data: nothing to make
  }
  null_requests_.push_back(r);
}

void Executor::point_to_point(const PredictedCall& call, std::size_t index) {
  const mpi::FunctionInfo& info = mpi::info(call.function);
  if (call.actions.empty()) {
    null_call(call);
    return;
  }
  const bool nonblocking = modeler::starts_requests(call.function);
  const bool synchronous = info.mode == mpi::SendMode::Synchronous;
  const PredictedAction* send = nullptr;
  const PredictedAction* recv = nullptr;
  std::size_t slot = 0;
  // A Sendrecv with a black hole on either side is made as its two halves: the hole is on another communicator.
  const bool halves = info.kind == mpi::CallKind::Sendrecv && through_hole(call);
  for (const PredictedAction& a : call.actions) {
    const Route to = comms_.route(a.comm, a.peer);
    const MPI_Comm comm = to.comm;
    const int peer = to.rank;
    if (to.hole && (a.kind == ActionKind::Recv || a.kind == ActionKind::IrecvPost)) request_from_hole(to, a, call);
    if (pacing_ != nullptr && a.kind == ActionKind::Send) pacing_->sent(a.peer, tag_of(a.tag), now_ns());
    if (halves && a.kind == ActionKind::Send) {
      MPI_Request r = MPI_REQUEST_NULL;
      check(MPI_Isend(send_.data(), count_of(a.bytes), MPI_BYTE, peer, hole_tag(to, a.tag), comm, &r), call);
      null_requests_.push_back(r);  // completed by the receive half below, or the instance's end
      continue;
    }
    if (halves && a.kind == ActionKind::Recv) {
      const std::size_t room = room_for(a.bytes, largest_);
      const std::int64_t at = due(to, a);
      check(MPI_Recv(scratch(recv_, room), static_cast<int>(room), MPI_BYTE, peer, tag_of(a.tag), comm,
                     MPI_STATUS_IGNORE),
            call);
      sleep_until(at);
      continue;
    }
    if (a.kind == ActionKind::Send) {
      send = &a;
      if (info.kind == mpi::CallKind::Sendrecv) continue;
      const int count = count_of(a.bytes);
      if (nonblocking) {
        MPI_Request r = MPI_REQUEST_NULL;
        check(
            (synchronous ? MPI_Issend : MPI_Isend)(send_.data(), count, MPI_BYTE, peer, hole_tag(to, a.tag), comm, &r),
            call);
        started(index, r);
      } else {
        check((synchronous ? MPI_Ssend : MPI_Send)(send_.data(), count, MPI_BYTE, peer, hole_tag(to, a.tag), comm),
              call);
      }
    } else if (a.kind == ActionKind::IrecvPost) {
      MPI_Request r = MPI_REQUEST_NULL;
      char* buffer = receive_buffer(index, slot++, a.bytes);
      check(MPI_Irecv(buffer, static_cast<int>(room_for(a.bytes, largest_)), MPI_BYTE, peer, tag_of(a.tag), comm, &r),
            call);
      started(index, r, due(to, a));
    } else if (a.kind == ActionKind::Recv) {
      recv = &a;
      if (info.kind == mpi::CallKind::Sendrecv) continue;
      const std::size_t room = room_for(a.bytes, largest_);
      const std::int64_t at = due(to, a);
      check(MPI_Recv(scratch(recv_, room), static_cast<int>(room), MPI_BYTE, peer, tag_of(a.tag), comm,
                     MPI_STATUS_IGNORE),
            call);
      sleep_until(at);
    }
  }
  if (halves) {
    completion_of_halves(call);
    return;
  }
  if (info.kind != mpi::CallKind::Sendrecv || (send == nullptr && recv == nullptr)) return;
  // A Sendrecv with one side to MPI_PROC_NULL has only the other action.
  const MPI_Comm comm = comms_.comm(send != nullptr ? send->comm : recv->comm);
  const int to = send != nullptr ? comms_.rank_in(send->comm, send->peer) : MPI_PROC_NULL;
  const int from = recv != nullptr ? comms_.rank_in(recv->comm, recv->peer) : MPI_PROC_NULL;
  const std::size_t room = recv != nullptr ? room_for(recv->bytes, largest_) : 0;
  check(MPI_Sendrecv(send_.data(), send != nullptr ? count_of(send->bytes) : 0, MPI_BYTE, to,
                     send != nullptr ? tag_of(send->tag) : 0, scratch(recv_, room + 1), static_cast<int>(room),
                     MPI_BYTE, from, recv != nullptr ? tag_of(recv->tag) : MPI_ANY_TAG, comm, MPI_STATUS_IGNORE),
        call);
}

bool Executor::through_hole(const PredictedCall& call) const {
  return std::any_of(call.actions.begin(), call.actions.end(),
                     [this](const PredictedAction& a) { return comms_.route(a.comm, a.peer).hole; });
}

int Executor::hole_tag(const Route& to, std::uint32_t tag) { return to.hole ? kHoleDataTag : tag_of(tag); }

void Executor::request_from_hole(const Route& to, const PredictedAction& a, const PredictedCall& call) {
  // The hole answers with a message of this count and tag: what the outside peer would have sent.
  const std::array<std::int64_t, 2> request{tag_of(a.tag), count_of(a.bytes)};
  check(MPI_Send(request.data(), 2, MPI_INT64_T, to.rank, kHoleRequestTag, to.comm), call);
}

std::int64_t Executor::due(const Route& to, const PredictedAction& a) {
  return to.hole && pacing_ != nullptr ? pacing_->due(a.peer, tag_of(a.tag)) : 0;
}

void Executor::started(std::size_t index, MPI_Request r, std::int64_t due) {
  started_[index].push_back(r);
  due_[index].push_back(due);
}

void Executor::completion_of_halves(const PredictedCall& call) {
  if (null_requests_.empty()) return;
  check(MPI_Waitall(static_cast<int>(null_requests_.size()), null_requests_.data(), MPI_STATUSES_IGNORE), call);
  null_requests_.clear();
}

void Executor::completion(const PredictedCall& call) {
  std::vector<MPI_Request> requests;
  std::int64_t due = 0;  // the latest any of them may complete: a black hole's message its sender sent late
  for (const PredictedAction& a : call.actions) {
    if (a.started < 0 || static_cast<std::size_t>(a.started) >= started_.size()) continue;
    const auto k = static_cast<std::size_t>(a.started);
    if (taken_[k] >= started_[k].size()) continue;
    due = std::max(due, due_[k][taken_[k]]);
    requests.push_back(std::exchange(started_[k][taken_[k]++], MPI_REQUEST_NULL));
  }
  requests.insert(requests.end(), null_requests_.begin(), null_requests_.end());
  null_requests_.clear();
  wait_for(call, requests);
  sleep_until(due);
}

void Executor::wait_for(const PredictedCall& call, std::vector<MPI_Request>& requests) {
  const mpi::FunctionInfo& info = mpi::info(call.function);
  const auto count = static_cast<int>(requests.size());
  std::vector<int> indices(requests.size());  // MPI_Testsome's and MPI_Waitsome's output
  if (info.test) {
    // A test completed these requests in the application: poll until they are, with the recorded function.
    for (int done = 0; done == 0;) {
      int index = MPI_UNDEFINED;
      int outcount = 0;
      switch (info.completes) {
        case mpi::Completes::Any:
          check(MPI_Testany(count, requests.data(), &index, &done, MPI_STATUS_IGNORE), call);
          break;
        case mpi::Completes::Some:
          check(MPI_Testsome(count, requests.data(), &outcount, indices.data(), MPI_STATUSES_IGNORE), call);
          break;
        case mpi::Completes::All:
          check(MPI_Testall(count, requests.data(), &done, MPI_STATUSES_IGNORE), call);
          break;
        default:
          check(count == 1 ? MPI_Test(requests.data(), &done, MPI_STATUS_IGNORE)
                           : MPI_Testall(count, requests.data(), &done, MPI_STATUSES_IGNORE),
                call);
      }
      done = std::all_of(requests.begin(), requests.end(), [](MPI_Request r) { return r == MPI_REQUEST_NULL; });
    }
    return;
  }
  switch (info.completes) {
    case mpi::Completes::Any:
      for (int left = count; left > 0; --left) {
        int index = MPI_UNDEFINED;
        check(MPI_Waitany(count, requests.data(), &index, MPI_STATUS_IGNORE), call);
      }
      return;
    case mpi::Completes::Some: {
      for (int left = count; left > 0;) {
        int outcount = 0;
        check(MPI_Waitsome(count, requests.data(), &outcount, indices.data(), MPI_STATUSES_IGNORE), call);
        if (outcount == MPI_UNDEFINED) break;
        left -= outcount;
      }
      return;
    }
    default:
      if (count == 1) {
        check(MPI_Wait(requests.data(), MPI_STATUS_IGNORE), call);
      } else {
        check(MPI_Waitall(count, requests.data(), MPI_STATUSES_IGNORE), call);
      }
  }
}

namespace {

/// Whether the action is a collective a range replay step makes on fewer ranks than predicted: one that moves or
/// synchronises data, on fewer members here than the prediction's (their number in `members`).
bool scaled_collective(const PredictedAction& a, const Communicators& comms, int& members) {
  if (a.kind != ActionKind::Collective || !moves_data(a.collective)) return false;
  MPI_Comm_size(comms.comm(a.comm), &members);
  return a.comm_size > members;
}

}  // namespace

double Executor::collective_scale(const PredictedCall& call) const {
  if (comms_.layout().full()) return 1;
  double scale = 1;
  for (const PredictedAction& a : call.actions) {
    int members = 1;
    if (!scaled_collective(a, comms_, members) || members < 2) continue;
    scale = std::max(scale, std::log2(static_cast<double>(a.comm_size)) / std::log2(static_cast<double>(members)));
  }
  return scale;
}

std::optional<double> Executor::collective_extra(const PredictedCall& call, const CollectiveCosts& costs) const {
  if (comms_.layout().full()) return 0.0;
  double extra = 0;
  for (const PredictedAction& a : call.actions) {
    int members = 1;
    if (!scaled_collective(a, comms_, members)) continue;
    const std::optional<double> e = costs.extra_ns(a.collective, count_of(a.block), members, a.comm_size);
    if (!e) return std::nullopt;
    extra += *e;
  }
  return extra;
}

void Executor::collective(const PredictedCall& call, const PredictedAction& a) {
  const MPI_Comm comm = comms_.comm(a.comm);
  const int block = count_of(a.block);
  int members = 1;
  MPI_Comm_size(comm, &members);
  // The members agree on the block (the replay refuses a plan where they do not, before any phase runs), so that
  // no member sends more than this rank has room for.
  const auto all = static_cast<std::size_t>(block) * static_cast<std::size_t>(members) + 1;
  const int root = std::max(0, comms_.root_in(a.comm, a.root));
  char* in = scratch(coll_in_, all);
  char* out = scratch(coll_out_, all);
  int status = MPI_SUCCESS;
  switch (a.collective) {
    case mpi::Collective::CreateHandle:
    case mpi::Collective::CreateHandleAndAllocate:
      // The application made a communicator here. It lives until the application frees one (or the replay ends),
      // as the application's did.
      status = make_communicator(call.function, comm, members, made_);
      break;
    case mpi::Collective::DestroyHandle:
    case mpi::Collective::DestroyHandleAndDeallocate:
      status = free_communicator(call.function, made_);
      break;
    default:
      status = move_data(a.collective, in, out, block, root, comm);
      break;
  }
  check(status, call);
}

}  // namespace p3s::replay::detail
