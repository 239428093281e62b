// SPDX-License-Identifier: BSD-3-Clause
// Streaming matching and Lamport clocks (PAS2P logical trace construction: Lamport, CACM 1978, applied to
// MPI events as in PAS2P's tick model; collectives synchronise all their members).
#include "lamport.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <queue>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include "p3s/analyzer/definitions.hpp"
#include "p3s/error.hpp"

namespace p3s::analyzer {
namespace {

/// FIFO channel of MPI's non-overtaking rule.
struct ChannelKey {
  std::uint32_t comm;
  std::int32_t source;
  std::int32_t dest;
  std::uint32_t tag;
  bool operator==(const ChannelKey&) const = default;
};

struct ChannelHash {
  std::size_t operator()(const ChannelKey& k) const noexcept {
    return static_cast<std::size_t>(mix64((static_cast<std::uint64_t>(k.comm) << 32 | k.tag) ^
                                          mix64(static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.source)) << 32 |
                                                static_cast<std::uint32_t>(k.dest))));
  }
};

struct Message {
  std::uint64_t clock;
  std::uint64_t bytes;
  std::size_t location;
  std::uint64_t op_index;
};

/// One collective operation of one communicator (the seq-th started on it).
struct CollectiveInstance {
  std::uint32_t arrived = 0;    ///< members that reached (blocking) or started (non-blocking) it
  std::uint32_t consumed = 0;   ///< members that finished it
  std::uint64_t max_clock = 0;  ///< highest member clock at arrival
  bool complete = false;
};

using CollKey = std::pair<std::uint32_t, std::uint64_t>;  // communicator, sequence number

enum class Wait : std::uint8_t { None, Message, Collective };

struct Loc {
  std::int32_t rank = -1;
  std::unique_ptr<OpSource> source;
  Op op;
  bool has_op = false;
  bool finished = false;
  std::uint64_t op_index = 0;
  std::size_t next_action = 0;
  std::uint64_t clock = 0;
  std::uint64_t op_tick = 0;  ///< tick of the current operation, once known
  std::vector<std::uint64_t> action_ticks;
  std::uint64_t deferred = 0;    ///< operations without a tick waiting for the next tick
  std::vector<Op> deferred_ops;  ///< kept to emit them in order once their tick is known
  Wait wait = Wait::None;
  ChannelKey wait_channel{};
  CollKey wait_coll{};
  bool coll_arrived = false;                        ///< the current blocking collective counted this member already
  std::map<std::uint32_t, std::uint64_t> coll_seq;  ///< next collective number per communicator
  std::unordered_map<std::uint64_t, CollKey> nb_requests;  ///< live non-blocking collectives by request
};

/// Sums the features of the events of each tick until the tick is final.
class TickAggregator {
 public:
  void add(std::uint64_t tick, std::uint64_t feature) {
    if (tick < base_) throw std::logic_error("an event landed on a tick already declared final");
    if (tick - base_ >= acc_.size()) acc_.resize(tick - base_ + 1);
    Acc& a = acc_[tick - base_];
    // Commutative: the events of a tick arrive in scheduling order, which must not matter.
    a.sum += mix64(feature);
    ++a.count;
    max_open_ = std::max<std::uint64_t>(max_open_, acc_.size());
  }
  /// Declares every tick <= `upto` final.
  void finalize(std::uint64_t upto, LamportSink& sink) {
    while (base_ <= upto && !acc_.empty()) {
      const Acc a = acc_.front();
      acc_.pop_front();
      sink.on_tick(base_, a.count, a.count == 0 ? 0 : mix64(a.sum ^ mix64(a.count)));
      ++base_;
    }
    // Ticks beyond anything seen are empty: jump over them without emitting gaps past `upto`.
    while (base_ <= upto && acc_.empty() && base_ <= highest_) {
      sink.on_tick(base_, 0, 0);
      ++base_;
    }
  }
  void note_highest(std::uint64_t tick) { highest_ = std::max(highest_, tick); }
  [[nodiscard]] std::uint64_t max_open() const noexcept { return max_open_; }

 private:
  struct Acc {
    std::uint64_t sum = 0;
    std::uint32_t count = 0;
  };
  std::deque<Acc> acc_;
  std::uint64_t base_ = 1;  ///< ticks start at 1: a location's clock starts at 0
  std::uint64_t highest_ = 0;
  std::uint64_t max_open_ = 0;
};

class Engine {
 public:
  Engine(std::vector<LamportLocation> locations, const CommSize& comm_size, const ActionFeature& feature,
         LamportSink& sink, const LamportOptions& options)
      : comm_size_(comm_size), feature_(feature), sink_(sink), options_(options) {
    locs_.resize(locations.size());
    for (std::size_t i = 0; i < locations.size(); ++i) {
      locs_[i].rank = locations[i].rank;
      locs_[i].source = std::move(locations[i].source);
    }
  }

  LamportResult run() {
    using Entry = std::pair<std::uint64_t, std::size_t>;  // clock, location: the smallest clock runs first
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> ready;
    for (std::size_t i = 0; i < locs_.size(); ++i) ready.emplace(0, i);
    std::vector<bool> queued(locs_.size(), true);
    std::uint64_t steps = 0;
    while (true) {
      while (!ready.empty()) {
        const std::size_t i = ready.top().second;
        ready.pop();
        queued[i] = false;
        Loc& l = locs_[i];
        if (l.finished || l.wait != Wait::None) continue;
        advance(i, 1024);
        if (!l.finished && l.wait == Wait::None) {
          ready.emplace(l.clock, i);
          queued[i] = true;
        }
        for (std::size_t w : woken_) {
          if (!queued[w] && !locs_[w].finished) {
            ready.emplace(locs_[w].clock, w);
            queued[w] = true;
          }
        }
        woken_.clear();
        if (++steps % 64 == 0) finalize_ticks();
      }
      if (std::all_of(locs_.begin(), locs_.end(), [](const Loc& l) { return l.finished; })) break;
      // Nothing can run: every unfinished location waits for something that will never come.
      if (!options_.partial) throw_unmatched();
      force_progress();
      for (std::size_t i = 0; i < locs_.size(); ++i) {
        if (!locs_[i].finished && locs_[i].wait == Wait::None && !queued[i]) {
          ready.emplace(locs_[i].clock, i);
          queued[i] = true;
        }
      }
    }
    ticks_.finalize(UINT64_MAX - 1, sink_);
    for (const auto& [key, queue] : channels_) {
      for (const Message& m : queue) {
        ++result_.unmatched_sends;
        if (result_.unmatched_send_examples.size() < 10) {
          result_.unmatched_send_examples.push_back(
              {locs_[m.location].rank, m.location, m.op_index,
               "message to rank " + std::to_string(key.dest) + " (tag " + std::to_string(key.tag) + ", comm " +
                   std::to_string(key.comm) + ", " + std::to_string(m.bytes) + " bytes) was never received"});
        }
      }
    }
    result_.max_open_ticks = ticks_.max_open();
    return result_;
  }

 private:
  /// Runs location i for up to `budget` actions, until it blocks or ends.
  void advance(std::size_t i, int budget) {
    Loc& l = locs_[i];
    while (budget-- > 0) {
      if (!l.has_op) {
        if (!l.source->next(l.op)) {
          finish(i);
          return;
        }
        l.has_op = true;
        l.next_action = 0;
        l.op_tick = 0;
        l.action_ticks.assign(l.op.actions.size(), 0);
      }
      while (l.next_action < l.op.actions.size()) {
        if (!act(i, l.op.actions[l.next_action])) return;  // blocked
        ++l.next_action;
      }
      complete_op(i);
    }
  }

  /// Performs one action; false when the location must wait.
  bool act(std::size_t i, const Action& a) {
    Loc& l = locs_[i];
    std::optional<std::uint64_t> tick = 0;  // empty: the location must wait
    switch (a.kind) {
      case mpi::ActionKind::Send:
        tick = send(i, a);
        break;
      case mpi::ActionKind::Recv:
        tick = receive(i, a);
        break;
      case mpi::ActionKind::Collective:
        tick = collective(i, a);
        break;
      case mpi::ActionKind::NbCollRequest:
        start_nb_collective(l, a);
        return true;
      case mpi::ActionKind::NbCollComplete:
        tick = complete_nb_collective(i, a);
        break;
      case mpi::ActionKind::IrecvPost:
      case mpi::ActionKind::IsendComplete:
      case mpi::ActionKind::Cancelled:
        return true;
    }
    if (!tick) return false;
    record_event(l, a, *tick);
    return true;
  }

  /// A send: an event of its own, and a message on its channel. Returns its tick.
  std::uint64_t send(std::size_t i, const Action& a) {
    Loc& l = locs_[i];
    const std::uint64_t tick = ++l.clock;
    if (a.peer < 0) {
      ++unresolved_;
      return tick;
    }
    channels_[ChannelKey{a.comm, l.rank, a.peer, a.tag}].push_back({tick, a.bytes, i, l.op_index});
    ++in_flight_;
    result_.max_in_flight = std::max(result_.max_in_flight, in_flight_);
    wake_channel(ChannelKey{a.comm, l.rank, a.peer, a.tag});
    return tick;
  }

  /// A receive: matches the first message of its channel. Returns its tick, or nothing while no message is there.
  std::optional<std::uint64_t> receive(std::size_t i, const Action& a) {
    Loc& l = locs_[i];
    if (a.peer < 0) {  // a peer the definitions cannot resolve: no match possible, a local event
      ++unresolved_;
      return ++l.clock;
    }
    const ChannelKey key{a.comm, a.peer, l.rank, a.tag};
    auto it = channels_.find(key);
    if (it == channels_.end() || it->second.empty()) {
      l.wait = Wait::Message;
      l.wait_channel = key;
      msg_waiters_[key].push_back(i);
      return std::nullopt;
    }
    auto& queue = it->second;
    // FIFO, but a message of the receive's size first: a later-posted receive completed earlier by
    // Waitany/Testany matched the later message, whose size it reports.
    auto m = std::find_if(queue.begin(), queue.end(), [&](const Message& x) { return x.bytes == a.bytes; });
    if (m == queue.end()) m = queue.begin();
    const std::uint64_t tick = l.clock = std::max(l.clock, m->clock) + 1;
    queue.erase(m);
    if (queue.empty()) channels_.erase(it);
    --in_flight_;
    ++result_.messages;
    return tick;
  }

  /// Counts a member's arrival at a collective with its clock; the last of `size` completes it.
  void arrive(const CollKey& key, std::uint64_t clock, std::uint32_t size) {
    CollectiveInstance& c = colls_[key];
    c.max_clock = std::max(c.max_clock, clock);
    if (++c.arrived == size) {
      c.complete = true;
      wake_collective(key);
    }
  }

  /// A blocking collective: its tick follows the highest clock of its members. Returns its tick, or nothing while
  /// a member has not arrived.
  std::optional<std::uint64_t> collective(std::size_t i, const Action& a) {
    Loc& l = locs_[i];
    const std::uint32_t size = comm_size_(a.comm);
    if (size <= 1) return ++l.clock;  // MPI_COMM_SELF, or a communicator of unknown size: nothing to wait for
    if (!l.coll_arrived) {
      const CollKey key{a.comm, next_seq(l, a)};
      arrive(key, l.clock, size);
      l.coll_arrived = true;
      l.wait_coll = key;
    }
    CollectiveInstance& c = colls_[l.wait_coll];
    if (!c.complete) {
      l.wait = Wait::Collective;
      coll_waiters_[l.wait_coll].push_back(i);
      return std::nullopt;
    }
    const std::uint64_t tick = l.clock = c.max_clock + 1;
    l.coll_arrived = false;
    if (++c.consumed == size) colls_.erase(l.wait_coll);
    return tick;
  }

  /// Starting a non-blocking collective contributes the clock; it is not an event of its own.
  void start_nb_collective(Loc& l, const Action& a) {
    const std::uint32_t size = comm_size_(a.comm);
    if (a.comm == kNoRef || size <= 1) return;  // never completed, or nothing to synchronise with
    const CollKey key{a.comm, next_seq(l, a)};
    arrive(key, l.clock, size);
    l.nb_requests[a.request] = key;
  }

  /// Completing a non-blocking collective. Returns its tick, or nothing while a member has not started it.
  std::optional<std::uint64_t> complete_nb_collective(std::size_t i, const Action& a) {
    Loc& l = locs_[i];
    const auto req = l.nb_requests.find(a.request);
    const std::uint32_t size = comm_size_(a.comm);
    if (req == l.nb_requests.end() || size <= 1) return ++l.clock;
    CollectiveInstance& c = colls_[req->second];
    if (!c.complete) {
      l.wait = Wait::Collective;
      l.wait_coll = req->second;
      coll_waiters_[req->second].push_back(i);
      return std::nullopt;
    }
    const std::uint64_t tick = l.clock = std::max(l.clock, c.max_clock) + 1;
    if (++c.consumed == size) colls_.erase(req->second);
    l.nb_requests.erase(req);
    return tick;
  }

  /// Records the event of the location's current action at `tick`.
  void record_event(Loc& l, const Action& a, std::uint64_t tick) {
    l.action_ticks[l.next_action] = tick;
    if (l.op_tick == 0) l.op_tick = tick;
    ticks_.add(tick, feature_(l.rank, l.op, a));
    ticks_.note_highest(tick);
    ++result_.events;
  }

  /// The collective's number on its communicator: assigned across the threads of a process when the
  /// extraction could order them (Action::seq), else counted on this location.
  static std::uint64_t next_seq(Loc& l, const Action& a) {
    if (a.seq != kNoSeq) return a.seq;
    return l.coll_seq[a.comm]++;
  }

  void complete_op(std::size_t i) {
    Loc& l = locs_[i];
    l.has_op = false;
    ++result_.operations;
    if (l.op_tick == 0) {
      // No event of its own: it belongs to the next event of this location (an Irecv post, a Wait that only
      // completed sends, a probe); kept until that tick is known. Copy-assignment reuses the slots' storage.
      if (l.deferred < l.deferred_ops.size()) {
        l.deferred_ops[l.deferred] = l.op;
      } else {
        l.deferred_ops.push_back(l.op);
      }
      ++l.deferred;
      ++l.op_index;
      return;
    }
    flush_deferred(i, l.op_tick);
    sink_.on_op(i, l.op_index, l.op, l.op_tick, l.action_ticks);
    ++l.op_index;
  }

  void flush_deferred(std::size_t i, std::uint64_t tick) {
    Loc& l = locs_[i];
    const std::uint64_t first = l.op_index - l.deferred;
    for (std::size_t k = 0; k < l.deferred; ++k) {
      no_ticks_.assign(l.deferred_ops[k].actions.size(), 0);
      sink_.on_op(i, first + k, l.deferred_ops[k], tick, no_ticks_);
    }
    l.deferred = 0;
  }

  void finish(std::size_t i) {
    Loc& l = locs_[i];
    l.finished = true;
    // Trailing operations without an event belong to the location's last tick.
    flush_deferred(i, std::max<std::uint64_t>(l.clock, 1));
  }

  void wake_channel(const ChannelKey& key) { wake(msg_waiters_, key); }
  void wake_collective(const CollKey& key) { wake(coll_waiters_, key); }

  /// The locations blocked on `key` (in `waiters`) may run again.
  template <class Waiters, class Key>
  void wake(Waiters& waiters, const Key& key) {
    auto it = waiters.find(key);
    if (it == waiters.end()) return;
    for (std::size_t w : it->second) {
      locs_[w].wait = Wait::None;
      woken_.push_back(w);
    }
    waiters.erase(it);
  }

  /// Ticks up to the smallest clock of the locations still running are final: their next events come later.
  void finalize_ticks() {
    std::uint64_t min_clock = UINT64_MAX;
    for (const Loc& l : locs_) {
      if (!l.finished) min_clock = std::min(min_clock, l.clock);
    }
    if (min_clock != UINT64_MAX && min_clock > 0) ticks_.finalize(min_clock, sink_);
  }

  std::vector<MatchIssue> blocked_issues() const {
    std::vector<MatchIssue> issues;
    for (std::size_t i = 0; i < locs_.size(); ++i) {
      const Loc& l = locs_[i];
      if (l.finished) continue;
      MatchIssue m{l.rank, i, l.op_index, {}};
      if (l.wait == Wait::Message) {
        m.description = "receive from rank " + std::to_string(l.wait_channel.source) + " (tag " +
                        std::to_string(l.wait_channel.tag) + ", comm " + std::to_string(l.wait_channel.comm) +
                        ") has no matching send";
      } else {
        const auto it = colls_.find(l.wait_coll);
        const std::uint32_t arrived = it == colls_.end() ? 0 : it->second.arrived;
        m.description = "collective #" + std::to_string(l.wait_coll.second) + " on comm " +
                        std::to_string(l.wait_coll.first) + " was reached by " + std::to_string(arrived) + " of " +
                        std::to_string(comm_size_(l.wait_coll.first)) + " members";
      }
      issues.push_back(std::move(m));
    }
    return issues;
  }

  [[noreturn]] void throw_unmatched() const {
    const std::vector<MatchIssue> issues = blocked_issues();
    const MatchIssue& first = issues.front();
    throw TraceError("rank " + std::to_string(first.rank) + ", MPI call " + std::to_string(first.op_index) + ": " +
                     first.description + " (" + std::to_string(issues.size()) +
                     " ranks blocked); the trace may be truncated or from a run that did not finish — pass --partial "
                     "to analyse what is there");
  }

  /// Partial traces: the blocked location with the smallest clock gives up its wait.
  void force_progress() {
    std::size_t pick = locs_.size();
    for (std::size_t i = 0; i < locs_.size(); ++i) {
      if (locs_[i].finished || locs_[i].wait == Wait::None) continue;
      if (pick == locs_.size() || locs_[i].clock < locs_[pick].clock) pick = i;
    }
    const std::vector<MatchIssue> issues = blocked_issues();
    Loc& l = locs_[pick];
    for (const MatchIssue& m : issues) {
      if (m.location != pick) continue;
      (l.wait == Wait::Message ? result_.unmatched_receives : result_.incomplete_collectives).push_back(m);
    }
    if (l.wait == Wait::Message) {
      auto& waiters = msg_waiters_[l.wait_channel];
      waiters.erase(std::remove(waiters.begin(), waiters.end(), pick), waiters.end());
    } else {
      // Complete the collective with the members that came.
      colls_[l.wait_coll].complete = true;
      wake_collective(l.wait_coll);
      woken_.clear();
      for (Loc& other : locs_) {
        if (other.wait == Wait::Collective && other.wait_coll == l.wait_coll) other.wait = Wait::None;
      }
      return;
    }
    // The receive becomes a local event.
    l.wait = Wait::None;
    l.action_ticks[l.next_action] = ++l.clock;
    if (l.op_tick == 0) l.op_tick = l.clock;
    ticks_.add(l.clock, feature_(l.rank, l.op, l.op.actions[l.next_action]));
    ticks_.note_highest(l.clock);
    ++l.next_action;
  }

  const CommSize& comm_size_;
  const ActionFeature& feature_;
  LamportSink& sink_;
  LamportOptions options_;
  std::vector<Loc> locs_;
  std::unordered_map<ChannelKey, std::deque<Message>, ChannelHash> channels_;
  std::unordered_map<ChannelKey, std::vector<std::size_t>, ChannelHash> msg_waiters_;
  std::map<CollKey, CollectiveInstance> colls_;
  std::map<CollKey, std::vector<std::size_t>> coll_waiters_;
  std::vector<std::size_t> woken_;
  std::vector<std::uint64_t> no_ticks_;  ///< zeros for the actions of deferred operations
  TickAggregator ticks_;
  LamportResult result_;
  std::uint64_t in_flight_ = 0;
  std::uint64_t unresolved_ = 0;
};

}  // namespace

LamportResult run_lamport(std::vector<LamportLocation> locations, const CommSize& comm_size,
                          const ActionFeature& feature, LamportSink& sink, const LamportOptions& options) {
  Engine engine(std::move(locations), comm_size, feature, sink, options);
  LamportResult r = engine.run();
  return r;
}

}  // namespace p3s::analyzer
