// SPDX-License-Identifier: BSD-3-Clause
// Representative instances (the SiPT) and instance times: the second sweep over every location's operations.
#include "representatives.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "op_log.hpp"
#include "signature_builder.hpp"

namespace p3s::analyzer {
namespace {

constexpr std::size_t kNone = static_cast<std::size_t>(-1);

/// Accumulates one representative event.
struct EventAcc {
  std::uint32_t region = 0;
  std::vector<Action> actions;  ///< structure (kinds, peers, communicators, operations)
  std::vector<Stat> bytes;      ///< per action
  std::vector<Stat> bytes_received;
  /// Per action of the representative instance: for a request's completion, the event that started the
  /// request (-1: before the instance); for a posted receive, the receive that completed it (kind Send when
  /// none was seen).
  std::vector<std::int32_t> started;
  std::vector<Action> completed_by;
  /// Per posted receive: the sizes of the messages that completed it, over every instance of the representative's
  /// structure (its own buffer's room is no message's size).
  std::vector<Stat> received_by;
  SigEvent out;
};

/// Actions that start a request, and those that complete one.
bool starts_request(const Action& a) {
  return (a.kind == mpi::ActionKind::Send && a.request != 0) || a.kind == mpi::ActionKind::IrecvPost ||
         a.kind == mpi::ActionKind::NbCollRequest;
}
bool completes_request(const Action& a) {
  return (a.kind == mpi::ActionKind::Recv && a.request != 0) || a.kind == mpi::ActionKind::IsendComplete ||
         a.kind == mpi::ActionKind::NbCollComplete;
}

/// Where a request of a representative instance began: the phase, the event in the instance and the action.
struct RequestStart {
  std::uint32_t phase;
  std::size_t occurrence;
  std::uint32_t event;
  std::uint32_t action;
};

struct RepAcc {
  bool initialised = false;
  std::vector<EventAcc> events;
  Stat tail_work;
  Stat tail_ns;
  std::uint64_t mismatched = 0;
};

bool same_structure(const EventAcc& e, const Op& op) {
  if (e.region != op.header.region || e.actions.size() != op.actions.size()) return false;
  for (std::size_t i = 0; i < op.actions.size(); ++i) {
    const Action& a = e.actions[i];
    const Action& b = op.actions[i];
    if (a.kind != b.kind || a.peer != b.peer || a.comm != b.comm || a.op != b.op || a.root != b.root) return false;
  }
  return true;
}

/// Links requests within the instances of a representative: a completion learns the event that started its request,
/// and a posted receive learns the messages that completed it (the first one's peer and tag, every one's size).
/// `rep` is the representative whose structure this operation (event `event`) has, or nullptr; `building`: the
/// operation's instance builds it.
void link_requests(const Op& op, std::size_t occurrence, RepAcc* rep, bool building, std::size_t event,
                   std::uint32_t phase, std::vector<std::map<std::size_t, RepAcc>>& reps, std::size_t location,
                   std::unordered_map<std::uint64_t, RequestStart>& requests) {
  for (std::size_t i = 0; i < op.actions.size(); ++i) {
    const Action& a = op.actions[i];
    if (starts_request(a)) {
      if (rep != nullptr) {
        requests[a.request] = {phase, occurrence, static_cast<std::uint32_t>(event), static_cast<std::uint32_t>(i)};
      } else {
        requests.erase(a.request);  // an id reused outside a representative
      }
    } else if (completes_request(a)) {
      const auto it = requests.find(a.request);
      if (it == requests.end()) continue;
      const RequestStart& start = it->second;
      EventAcc& origin = reps[start.phase].at(location).events[start.event];
      if (origin.actions[start.action].kind == mpi::ActionKind::IrecvPost && a.kind == mpi::ActionKind::Recv) {
        if (origin.completed_by[start.action].kind != mpi::ActionKind::Recv) origin.completed_by[start.action] = a;
        origin.received_by[start.action].add(static_cast<double>(a.bytes));
      }
      if (building && start.occurrence == occurrence) {
        rep->events[event].started[i] = static_cast<std::int32_t>(start.event);
      }
      requests.erase(it);
    }
  }
}

/// The signature's view of one representative action (a posted receive described by the message it received,
/// an Isend's completion by the communicator of its send).
SigAction to_sig_action(const TraceDefinitions& defs, const EventAcc& e, const std::vector<EventAcc>& events,
                        std::size_t i, std::int32_t rank) {
  const Action& a = e.actions[i];
  SigAction sa;
  sa.kind = a.kind;
  sa.peer = a.peer;
  sa.tag = a.tag;
  sa.comm = a.comm;
  sa.request = starts_request(a) || completes_request(a);
  sa.started = e.started[i];
  Stat bytes = e.bytes[i];
  const Action& done = e.completed_by[i];
  if (a.kind == mpi::ActionKind::IrecvPost && done.kind == mpi::ActionKind::Recv) {
    sa.peer = done.peer;
    sa.tag = done.tag;
    sa.comm = done.comm;
    bytes = e.received_by[i];
  }
  if (sa.started >= 0 && a.comm == kNoRef) {
    // A completion that names only its request (MPI_Isend's) takes the communicator of its start.
    for (const Action& origin : events[static_cast<std::size_t>(sa.started)].actions) {
      if (starts_request(origin) && origin.request == a.request) sa.comm = origin.comm;
    }
  }
  sa.offset = sa.peer >= 0 ? sa.peer - rank : 0;
  const Communicator* c = defs.comm(sa.comm);
  sa.comm_size = c == nullptr ? 0 : static_cast<std::uint32_t>(c->kind == CommKind::Self ? 1 : c->world_ranks.size());
  if (a.kind == mpi::ActionKind::Collective || a.kind == mpi::ActionKind::NbCollRequest ||
      a.kind == mpi::ActionKind::NbCollComplete) {
    sa.collective = a.op;
    sa.peer = -1;
  }
  sa.root = a.root;
  sa.bytes = bytes.mean;
  sa.bytes_min = bytes.min;
  sa.bytes_max = bytes.max;
  sa.bytes_received = e.bytes_received[i].mean;
  return sa;
}

}  // namespace

struct Representatives::Impl {
  const TraceDefinitions& defs;
  const Extracted& extracted;
  std::vector<double> instance_time;
  std::vector<std::map<std::size_t, RepAcc>> reps;  ///< phase -> location -> accumulator

  /// One location's walk through its operations, instance by instance.
  struct Walk {
    std::size_t location = 0;
    std::size_t prev = kNone;  ///< the occurrence being read
    RepAcc* rep = nullptr;
    bool building = false;  ///< this instance builds the representative (the first one on this location)
    bool mismatch = false;
    std::size_t j = 0;  ///< call index in the instance
    double time = 0;
    std::uint64_t first_burst_ns = 0;
    std::uint64_t first_burst_work = 0;
    std::unordered_map<std::uint64_t, RequestStart> requests;  ///< started in a representative, not completed
  };

  void sweep(std::size_t l, const std::vector<std::filesystem::path>& tick_files, const RunPhases& occurrences,
             const FinalPhases& f, const std::vector<bool>& trailing) {
    Walk w;
    w.location = l;
    OpSweep s(extracted.locations[l], l, tick_files[l], occurrences);
    while (s.next()) {
      if (s.occurrence != w.prev) begin_instance(w, s, f, trailing);
      add_call(w, s, f);
    }
    close_instance(w);
  }

  /// An instance's time is the mean over the locations of the bursts and calls each spends in it: the
  /// locations' timelines are tiled by their instances, so the instance times add up to the mean span.
  void close_instance(Walk& w) {
    if (w.prev == kNone) return;
    instance_time[w.prev] += w.time / static_cast<double>(extracted.locations.size());
    if (!w.building && (w.mismatch || w.j != w.rep->events.size())) ++w.rep->mismatched;
  }

  void begin_instance(Walk& w, const OpSweep& s, const FinalPhases& f, const std::vector<bool>& trailing) {
    const OpHeader& h = s.op.header;
    w.first_burst_ns = h.burst_ns;
    w.first_burst_work = h.burst_work;
    if (w.prev != kNone && trailing[f.structural_of[f.phase[w.prev]]]) {
      // The boundary burst ends the previous instance.
      w.time += static_cast<double>(h.burst_ns);
      w.rep->tail_ns.add(static_cast<double>(h.burst_ns));
      w.rep->tail_work.add(static_cast<double>(h.burst_work));
      w.first_burst_ns = 0;
      w.first_burst_work = 0;
    }
    close_instance(w);
    w.prev = s.occurrence;
    w.rep = &reps[f.phase[s.occurrence]][w.location];
    w.building = !w.rep->initialised;
    w.rep->initialised = true;
    w.mismatch = false;
    w.j = 0;
    w.time = 0;
  }

  void add_call(Walk& w, const OpSweep& s, const FinalPhases& f) {
    const OpHeader& h = s.op.header;
    const std::uint64_t burst_ns = w.j == 0 ? w.first_burst_ns : h.burst_ns;
    const std::uint64_t burst_work = w.j == 0 ? w.first_burst_work : h.burst_work;
    w.time += static_cast<double>(burst_ns + (h.leave_ns - h.enter_ns));
    if (w.building) {
      EventAcc e;
      e.region = h.region;
      e.actions = s.op.actions;
      e.bytes.resize(e.actions.size());
      e.bytes_received.resize(e.actions.size());
      e.started.assign(e.actions.size(), -1);
      e.completed_by.resize(e.actions.size());
      e.received_by.resize(e.actions.size());
      w.rep->events.push_back(std::move(e));
    }
    // Every instance of the representative's structure links its requests: a posted receive's size is the mean of
    // the messages that completed it, as a send's is the mean of the messages it sent.
    const bool alike = w.j < w.rep->events.size() && same_structure(w.rep->events[w.j], s.op);
    link_requests(s.op, s.occurrence, alike ? w.rep : nullptr, w.building, w.j, f.phase[s.occurrence], reps, w.location,
                  w.requests);
    if (w.j < w.rep->events.size() && same_structure(w.rep->events[w.j], s.op)) {
      EventAcc& e = w.rep->events[w.j];
      e.out.burst_ns.add(static_cast<double>(burst_ns));
      e.out.burst_work.add(static_cast<double>(burst_work));
      e.out.call_ns.add(static_cast<double>(h.leave_ns - h.enter_ns));
      e.out.calls.add(static_cast<double>(h.calls));
      for (std::size_t i = 0; i < s.op.actions.size(); ++i) {
        e.bytes[i].add(static_cast<double>(s.op.actions[i].bytes));
        e.bytes_received[i].add(static_cast<double>(s.op.actions[i].bytes_received));
      }
      if (e.out.callsite.empty() && h.callsite != kNoRef) e.out.callsite = std::string(defs.string(h.callsite));
    } else {
      w.mismatch = true;
    }
    ++w.j;
  }
};

Representatives::Representatives(const TraceDefinitions& defs, const Extracted& extracted,
                                 const std::vector<std::filesystem::path>& tick_files, const RunPhases& occurrences,
                                 const FinalPhases& phases, const std::vector<bool>& trailing)
    : impl_(std::make_unique<Impl>(Impl{defs, extracted, std::vector<double>(phases.phase.size(), 0),
                                        std::vector<std::map<std::size_t, RepAcc>>(phases.structural_of.size())})) {
  for (std::size_t l = 0; l < extracted.locations.size(); ++l)
    impl_->sweep(l, tick_files, occurrences, phases, trailing);
}

Representatives::~Representatives() = default;

const std::vector<double>& Representatives::instance_time() const noexcept { return impl_->instance_time; }

std::vector<SigRank> Representatives::ranks(std::uint32_t p) const {
  std::vector<SigRank> out;
  for (const auto& [l, rep] : impl_->reps[p]) {
    const ExtractedLocation& loc = impl_->extracted.locations[l];
    SigRank r;
    r.rank = loc.rank;
    r.thread = loc.thread;
    r.tail_work = rep.tail_work;
    r.tail_ns = rep.tail_ns;
    r.mismatched_instances = rep.mismatched;
    for (const EventAcc& e : rep.events) {
      SigEvent out_event = e.out;
      const Region* region = impl_->defs.region(e.region);
      out_event.call = region != nullptr ? region->name : "region " + std::to_string(e.region);
      out_event.function = region != nullptr ? region->function : mpi::Function::Other;
      for (std::size_t i = 0; i < e.actions.size(); ++i) {
        out_event.actions.push_back(to_sig_action(impl_->defs, e, rep.events, i, loc.rank));
      }
      r.events.push_back(std::move(out_event));
    }
    out.push_back(std::move(r));
  }
  std::sort(out.begin(), out.end(),
            [](const SigRank& a, const SigRank& b) { return std::tie(a.rank, a.thread) < std::tie(b.rank, b.thread); });
  return out;
}

}  // namespace p3s::analyzer
