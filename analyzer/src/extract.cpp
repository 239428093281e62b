// SPDX-License-Identifier: BSD-3-Clause
// Pass 1: OTF2 events -> MPI operations. An operation is one outermost MPI region (Enter..Leave of an MPI
// function); the message, request and collective records inside it become its actions, and the time and work
// since the previous operation's Leave become its burst. User regions (Score-P's compiler instrumentation)
// only nest around calls and belong to the bursts.
#include "extract.hpp"

#include "burst_classes.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "op_log.hpp"
#include "p3s/error.hpp"

namespace p3s::analyzer {
namespace {

/// A collective call of a process with several threads, to be numbered among the process's collectives.
struct CollectiveCall {
  std::int32_t rank;
  std::uint32_t comm;
  std::uint64_t enter_ns;
  std::size_t location;
  std::uint64_t offset;  ///< file offset of the action
};

/// What a counter gained from `then` to `now`; 0 where it went back (MPI_Abort's Enter carries zero counters).
constexpr std::uint64_t gained(std::uint64_t now, std::uint64_t then) noexcept { return now > then ? now - then : 0; }

class LocationExtractor {
 public:
  LocationExtractor(const TraceDefinitions& defs, OpWriter& out, std::unordered_set<std::uint64_t>& volumes,
                    bool has_work, std::vector<CollectiveCall>* collectives, std::int32_t rank, std::size_t location,
                    std::map<std::uint32_t, mpi::Function>& created_by)
      : defs_(defs),
        mpi_regions_(defs.regions.size()),
        created_by_(created_by),
        out_(out),
        volumes_(volumes),
        has_work_(has_work),
        collectives_(collectives),
        rank_(rank),
        location_(location) {
    for (std::size_t i = 0; i < mpi_regions_.size(); ++i) mpi_regions_[i] = is_mpi_region(defs, i);
  }

  void on_event(const Event& e) {
    switch (e.kind) {
      case EventKind::Enter:
        enter(e);
        return;
      case EventKind::Leave:
        leave(e);
        return;
      case EventKind::CommCreate:
        // Communicators come from the definitions; the call around their creation says how they were made.
        if (depth_ > 0) created_by_.emplace(e.comm, function_of(header_.region));
        return;
      case EventKind::CollectiveBegin:
      case EventKind::CommDestroy:
        return;  // the collective is taken at its end
      default:
        break;
    }
    if (depth_ == 0) {
      ++stray_;
      return;
    }
    Action a;
    a.comm = e.comm;
    a.peer = e.peer;
    a.tag = e.tag;
    a.bytes = e.bytes;
    a.request = e.request;
    switch (e.kind) {
      case EventKind::MpiSend:
      case EventKind::MpiIsend:
        a.kind = mpi::ActionKind::Send;
        note_volume(e.bytes);
        break;
      case EventKind::MpiRecv:
      case EventKind::MpiIrecv:
        a.kind = mpi::ActionKind::Recv;
        note_volume(e.bytes);
        break;
      case EventKind::MpiIrecvRequest:
        a.kind = mpi::ActionKind::IrecvPost;
        break;
      case EventKind::MpiIsendComplete:
        a.kind = mpi::ActionKind::IsendComplete;
        break;
      case EventKind::MpiRequestCancelled:
        a.kind = mpi::ActionKind::Cancelled;
        break;
      case EventKind::CollectiveEnd:
      case EventKind::NbCollectiveComplete:
        a.kind = e.kind == EventKind::CollectiveEnd ? mpi::ActionKind::Collective : mpi::ActionKind::NbCollComplete;
        a.op = e.op;
        a.root = e.root;
        a.bytes_received = e.bytes_received;
        a.peer = -1;
        note_volume(e.bytes);
        if (e.kind == EventKind::NbCollectiveComplete) complete_request(a);
        break;
      case EventKind::NbCollectiveRequest:
        // OTF2 names only the request here; the communicator is patched in when the operation completes.
        a.kind = mpi::ActionKind::NbCollRequest;
        a.comm = kNoRef;
        a.peer = -1;
        break;
      default:
        return;
    }
    actions_.push_back(a);
  }

  void finish() {
    // A location cut off inside a call (a killed rank) keeps that call, ended at its last event.
    if (depth_ > 0) {
      depth_ = 1;
      Event e;
      e.kind = EventKind::Leave;
      e.time_ns = last_time_;
      e.region = header_.region;
      const bool finalized = left_finalize_;
      leave(e);
      left_finalize_ = finalized;  // a rank cut off inside MPI_Finalize did not get through it
    }
    release_held();
  }

  [[nodiscard]] std::uint64_t first_ns() const noexcept { return first_ns_; }
  [[nodiscard]] std::uint64_t last_ns() const noexcept { return last_leave_ns_; }
  [[nodiscard]] std::uint64_t stray() const noexcept { return stray_; }
  [[nodiscard]] const BurstHistogram& bursts() const noexcept { return bursts_; }
  [[nodiscard]] bool left_finalize() const noexcept { return left_finalize_; }
  void note_time(std::uint64_t t) { last_time_ = t; }

 private:
  static bool is_mpi_region(const TraceDefinitions& defs, std::size_t id) {
    const Region* r = defs.region(static_cast<std::uint32_t>(id));
    return r != nullptr && r->is_mpi();
  }
  bool is_mpi(std::uint32_t region) const { return region < mpi_regions_.size() && mpi_regions_[region] != 0; }
  mpi::Function function_of(std::uint32_t region) const {
    const Region* r = defs_.region(region);
    return r != nullptr ? r->function : mpi::Function::Other;
  }

  void enter(const Event& e) {
    if (!is_mpi(e.region)) return;
    if (depth_++ > 0) return;  // MPI called inside MPI (rare): part of the outer call
    header_ = OpHeader{};
    header_.enter_ns = e.time_ns;
    header_.region = e.region;
    header_.callsite = e.callsite;
    if (has_prev_) {
      // Times cannot go back: the reader refuses a location whose clock does.
      header_.burst_ns = e.time_ns - last_leave_ns_;
      header_.burst_work = has_work_ && e.work && prev_work_ ? gained(*e.work, *prev_work_) : header_.burst_ns;
    } else {
      first_ns_ = e.time_ns;
    }
    enter_work_ = e.work;
    // The last value seen: a Leave's where the archive has one (Score-P's, p3s's of schema 1), else this Enter's
    // (p3s's counters outside MPI calls, written before each Enter only).
    if (e.work) prev_work_ = e.work;
    actions_.clear();
  }

  void leave(const Event& e) {
    if (!is_mpi(e.region) || depth_ == 0) return;
    if (--depth_ > 0) return;
    header_.leave_ns = std::max(e.time_ns, header_.enter_ns);
    // Unknown (0) where the Leave carries no counters (p3s's schema 2, whose counters leave the calls out).
    if (!has_work_) {
      header_.call_work = header_.leave_ns - header_.enter_ns;
    } else {
      header_.call_work = e.work && enter_work_ ? gained(*e.work, *enter_work_) : 0;
    }
    const mpi::Function f = function_of(header_.region);
    if (held_ && polls(f) && held_header_.region == header_.region) {
      merge_into_held();
    } else {
      release_held();
      if (polls(f)) {
        hold();
      } else {
        write(header_, actions_);
      }
    }
    has_prev_ = true;
    left_finalize_ = left_finalize_ || function_of(header_.region) == mpi::Function::MPI_Finalize;
    last_leave_ns_ = header_.leave_ns;
    if (e.work) prev_work_ = e.work;
  }

  /// Consecutive calls of one function that polls (MPI_Test*, MPI_Iprobe) or completes requests in the order the
  /// run decides (MPI_Waitany, MPI_Waitsome) are one completion of the exchange they serve: how many calls it took,
  /// and which request came first, follow the machine, not the program. They are held back until a call of
  /// another function comes, and written as one operation (its `calls` the number taken).
  static bool polls(mpi::Function f) {
    const mpi::FunctionInfo& i = mpi::info(f);
    return i.test || (i.kind == mpi::CallKind::Completion &&
                      (i.completes == mpi::Completes::Any || i.completes == mpi::Completes::Some));
  }

  void hold() {
    held_ = true;
    held_header_ = header_;
    held_actions_ = actions_;
  }

  /// Adds the call just left to the held one: its burst and the bursts between join the held call's burst (the
  /// work a polling loop does between its tests is done before the exchange completes), the calls' times add up,
  /// and the operation ends where the last call did, so that the time from the previous operation is unchanged.
  void merge_into_held() {
    OpHeader& h = held_header_;
    h.burst_ns += header_.burst_ns;
    h.burst_work += header_.burst_work;
    h.call_work += header_.call_work;
    const std::uint64_t call_ns = (h.leave_ns - h.enter_ns) + (header_.leave_ns - header_.enter_ns);
    h.leave_ns = header_.leave_ns;
    h.enter_ns = h.leave_ns - call_ns;
    h.calls += header_.calls;
    held_actions_.insert(held_actions_.end(), actions_.begin(), actions_.end());
  }

  /// Writes the held completion, its actions in one order whatever the order they completed in: by kind,
  /// communicator, peer and tag (stable, so that messages of one channel keep their order).
  void release_held() {
    if (!held_) return;
    held_ = false;
    std::stable_sort(held_actions_.begin(), held_actions_.end(), [](const Action& a, const Action& b) {
      return std::tie(a.kind, a.comm, a.peer, a.tag) < std::tie(b.kind, b.comm, b.peer, b.tag);
    });
    write(held_header_, held_actions_);
  }

  void write(OpHeader& h, const std::vector<Action>& actions) {
    if (written_++ > 0) bursts_.add(h.burst_work);
    h.actions = static_cast<std::uint32_t>(actions.size());
    out_.append(h, actions.data(), h.actions);
    for (std::size_t i = 0; i < actions.size(); ++i) {
      const std::uint64_t offset = out_.action_offsets()[i];
      if (actions[i].kind == mpi::ActionKind::NbCollRequest) {
        pending_[actions[i].request] = {offset, actions[i], h.enter_ns};
      } else if (actions[i].kind == mpi::ActionKind::Collective && collectives_ != nullptr) {
        collectives_->push_back({rank_, actions[i].comm, h.enter_ns, location_, offset});
      }
    }
  }

  void note_volume(std::uint64_t bytes) {
    if (bytes == last_volume_) return;  // messages of a location mostly repeat their size
    volumes_.insert(bytes);
    last_volume_ = bytes;
  }

  /// A non-blocking collective completed: its request action learns the communicator.
  void complete_request(const Action& done) {
    const auto it = pending_.find(done.request);
    if (it == pending_.end()) return;
    Action request = it->second.action;
    request.comm = done.comm;
    request.op = done.op;
    request.root = done.root;
    out_.patch_action(it->second.offset, request);
    if (collectives_ != nullptr) {
      collectives_->push_back({rank_, done.comm, it->second.enter_ns, location_, it->second.offset});
    }
    pending_.erase(it);
  }

  const TraceDefinitions& defs_;
  std::vector<std::uint8_t> mpi_regions_;  ///< by region id: 1 for MPI functions
  std::map<std::uint32_t, mpi::Function>& created_by_;
  bool left_finalize_ = false;
  OpWriter& out_;
  std::unordered_set<std::uint64_t>& volumes_;
  std::uint64_t last_volume_ = ~std::uint64_t{0};
  bool has_work_;
  int depth_ = 0;
  OpHeader header_;
  std::vector<Action> actions_;
  std::optional<std::uint64_t> enter_work_;
  std::optional<std::uint64_t> prev_work_;
  bool has_prev_ = false;
  std::uint64_t last_leave_ns_ = 0;
  std::uint64_t first_ns_ = 0;
  BurstHistogram bursts_;
  std::uint64_t last_time_ = 0;
  std::uint64_t stray_ = 0;
  struct Pending {
    std::uint64_t offset;
    Action action;
    std::uint64_t enter_ns;
  };
  std::vector<CollectiveCall>* collectives_;
  std::int32_t rank_;
  std::size_t location_;
  std::unordered_map<std::uint64_t, Pending> pending_;  ///< non-blocking collectives by request
  bool held_ = false;                                   ///< a polling or completing call is held back (polls)
  OpHeader held_header_;
  std::vector<Action> held_actions_;
  std::uint64_t written_ = 0;
};

/// Numbers the collectives of multi-threaded processes per (process, communicator) in time order, and writes
/// the numbers into the operation files. Threads share their process's clock, and MPI requires collectives on a
/// communicator to be called one after another by a process.
void number_collectives(std::vector<CollectiveCall>& calls, const std::vector<ExtractedLocation>& locations) {
  std::sort(calls.begin(), calls.end(), [](const CollectiveCall& a, const CollectiveCall& b) {
    return std::tie(a.rank, a.comm, a.enter_ns, a.location, a.offset) <
           std::tie(b.rank, b.comm, b.enter_ns, b.location, b.offset);
  });
  std::map<std::size_t, std::vector<std::pair<std::uint64_t, std::uint32_t>>> patches;  // location -> (offset, seq)
  std::uint32_t seq = 0;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    if (i == 0 || calls[i].rank != calls[i - 1].rank || calls[i].comm != calls[i - 1].comm) seq = 0;
    patches[calls[i].location].emplace_back(calls[i].offset, seq++);
  }
  for (const auto& [location, list] : patches) {
    const std::filesystem::path& path = locations[location].ops;
    std::FILE* f = std::fopen(path.c_str(), "r+b");
    if (f == nullptr) throw Error("cannot update the analyzer scratch file '" + path.string() + "'");
    for (const auto& [offset, number] : list) {
      if (std::fseek(f, static_cast<long>(offset + offsetof(Action, seq)), SEEK_SET) != 0 ||
          std::fwrite(&number, sizeof number, 1, f) != 1) {
        std::fclose(f);
        throw Error("cannot update the analyzer scratch file '" + path.string() + "'");
      }
    }
    std::fclose(f);
  }
}

}  // namespace

Extracted extract_operations(TraceReader& reader, const std::filesystem::path& scratch) {
  const TraceDefinitions& defs = reader.definitions();
  Extracted out;
  out.has_work_metric = !defs.work_metric_member.empty();
  std::unordered_set<std::uint64_t> volumes;
  std::map<std::int32_t, std::uint32_t> threads;
  std::map<std::int32_t, std::uint32_t> locations_of;
  for (const Location& l : defs.locations) ++locations_of[l.rank];
  std::vector<CollectiveCall> collectives;
  for (const Location& l : defs.locations) {
    if (l.rank < 0) continue;  // not an MPI process
    ExtractedLocation x;
    x.id = l.id;
    x.rank = l.rank;
    x.thread = threads[l.rank]++;
    x.ops = scratch / (std::to_string(out.locations.size()) + ".ops");
    const bool threaded = locations_of[l.rank] > 1;
    OpWriter writer(x.ops, threaded);
    LocationExtractor ex(defs, writer, volumes, out.has_work_metric, threaded ? &collectives : nullptr, l.rank,
                         out.locations.size(), out.created_by);
    // The visitor interface hands events over without copying them through the pull buffer.
    struct Forward final : EventVisitor {
      explicit Forward(LocationExtractor& x) : x_(x) {}
      void on_event(const Location&, const Event& e) override {
        x_.note_time(e.time_ns);
        x_.on_event(e);
      }
      LocationExtractor& x_;
    } forward(ex);
    LocationStream stream = reader.open(l.id);
    while (stream.read(forward) != 0) {
    }
    ex.finish();
    out.records += stream.records();
    out.stray_records += ex.stray();
    writer.finish();
    x.operations = writer.operations();
    x.first_ns = ex.first_ns();
    x.last_ns = ex.last_ns();
    x.compute_burst_work = ex.bursts().compute_threshold();
    x.left_finalize = ex.left_finalize();
    if (x.operations != 0) out.locations.push_back(std::move(x));
  }
  if (out.locations.empty()) {
    throw InputError("trace '" + defs.anchor.string() +
                     "' holds no MPI calls; record an MPI program with `p3s record`, or check the archive");
  }
  number_collectives(collectives, out.locations);
  out.volumes.assign(volumes.begin(), volumes.end());
  std::sort(out.volumes.begin(), out.volumes.end());
  return out;
}

}  // namespace p3s::analyzer
