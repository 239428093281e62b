// SPDX-License-Identifier: BSD-3-Clause
// The rules of a consistent phase (phase_check.hpp): each rank's calls read as message ends, collectives, requests
// and steps; then messages matched as MPI matches them and collectives member by member. The progress pass is in
// phase_progress.cpp.
#include "p3s/modeler/phase_check.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <span>
#include <unordered_map>

#include "p3s/error.hpp"
#include "p3s/hash.hpp"
#include "phase_state.hpp"

namespace p3s::modeler {

CallPath path_of(mpi::Function f) noexcept {
  switch (mpi::kind(f)) {
    case mpi::CallKind::Completion:
      return CallPath::Completion;
    case mpi::CallKind::Collective:
    case mpi::CallKind::NbCollective:
    case mpi::CallKind::CommCreate:
    case mpi::CallKind::CommFree:
      return CallPath::Collective;
    case mpi::CallKind::Probe:
      return CallPath::Probe;
    default:
      return CallPath::PointToPoint;
  }
}

std::uint64_t add_collective(std::uint64_t h, mpi::Collective op, std::int64_t root, std::int64_t block) noexcept {
  return mix64(h ^ (static_cast<std::uint64_t>(op) << 56) ^ mix64(static_cast<std::uint64_t>(root)) ^
               mix64(static_cast<std::uint64_t>(block) + 1));
}

bool starts_requests(mpi::Function f) noexcept {
  const mpi::CallKind k = mpi::kind(f);
  return k == mpi::CallKind::Isend || k == mpi::CallKind::Irecv || k == mpi::CallKind::Start ||
         k == mpi::CallKind::Other;
}

std::int64_t message_count(double bytes) noexcept {
  if (!(bytes > 0)) return 0;
  return static_cast<std::int64_t>(std::min<double>(INT_MAX, std::round(bytes)));
}

std::int64_t receive_room(double bytes) noexcept {
  // 64 KiB: so that a small message whose two ends' laws differ by a few elements still fits; sizes are bounded so
  // that the doubling cannot overflow.
  const auto b = static_cast<std::int64_t>(std::clamp(std::ceil(bytes), 0.0, 1e15));
  return std::max(2 * b, b + 65536);
}

namespace detail {
namespace {

const CommModel kWorld{};  // the communicator of an action that names none, as the replay takes it

/// The largest standard send taken as buffered (it leaves before its receive is posted): 4 KiB, the smallest eager
/// limit of common MPI transports (Open MPI's shared memory); a program that relies on buffering more may hang.
constexpr std::int64_t kEagerBytes = 4096;

std::string ordinal(std::uint64_t k) {
  const std::uint64_t tens = k % 100;
  const char* suffix = (tens >= 11 && tens <= 13) ? "th"
                       : k % 10 == 1              ? "st"
                       : k % 10 == 2              ? "nd"
                       : k % 10 == 3              ? "rd"
                                                  : "th";
  return std::to_string(k) + suffix;
}

std::string bytes_text(double bytes) { return std::to_string(message_count(bytes)) + " bytes"; }

std::string coll_text(const Coll& c) {
  std::string s(mpi::name(c.op));
  if (c.root >= 0) s += ", root " + std::to_string(c.root);
  return s + ", " + std::to_string(c.block) + " bytes";
}

}  // namespace

std::string comm_text(const CommModel& c) {
  return c.to_string() + (c.created_by == mpi::Function::Other ? "" : " from " + std::string(mpi::name(c.created_by)));
}

std::string call_ref(std::int32_t call, mpi::Function f) {
  if (call < 0) return "the end of the instance";
  const std::string_view name = mpi::name(f);
  return "call " + std::to_string(call) + " (" + (name.empty() ? std::string("an MPI call") : std::string(name)) + ")";
}

std::string call_text(std::int64_t rank, std::int32_t call, mpi::Function f) {
  return "rank " + std::to_string(rank) + (call < 0 ? ", at " : ", ") + call_ref(call, f);
}

std::uint32_t PhaseState::comm_id(const CommModel* c) {
  if (c == nullptr) c = &kWorld;
  const auto it = ids.find(c);
  if (it != ids.end()) return it->second;
  std::uint32_t id = 0;
  while (id < comms.size() && !(comms[id]->same_at(*c, n) && comms[id]->created_by == c->created_by)) ++id;
  if (id == comms.size()) comms.push_back(c);
  ids.emplace(c, id);
  return id;
}

void PhaseState::flaw(Flaw f, std::int64_t rank, std::int32_t call, const std::function<std::string()>& what) {
  ++out.flaws[static_cast<std::size_t>(f)];
  if (out.first.size() < PhaseConsistency::kKeptFindings) out.first.push_back({f, rank, call, what()});
}

void PhaseState::fix(Fix::Kind kind, std::int64_t rank, std::int32_t call, std::int32_t action, double bytes,
                     bool follows) {
  out.fixes.push_back({kind, rank, call, action, bytes, follows});
}

void PhaseState::drop(std::uint32_t end) {
  if (dropped[end]) return;
  dropped[end] = true;
  const End& e = ends[end];
  fix(Fix::Kind::Drop, e.owner, e.call, e.action);
  if (e.done_call >= 0) fix(Fix::Kind::Drop, e.owner, e.done_call, e.done_action, 0, true);
}

void PhaseState::drop_group(std::uint32_t g) {
  for (std::uint32_t k = group_begin[g]; k < group_begin[g + 1]; ++k) {
    const std::uint32_t c = group_members[k];
    if (coll_dropped[c]) continue;
    coll_dropped[c] = true;
    fix(Fix::Kind::Drop, colls[c].rank, colls[c].call, colls[c].action);
  }
}

namespace {

/// Reads one rank's calls: its message ends, collectives and requests, and its steps for the progress pass.
class RankReader {
 public:
  RankReader(PhaseState& s, const PredictedRank& pr)
      : s_(s), pr_(pr), r_(pr.rank), begin_(pr.calls.size() + 1, 0), taken_(pr.calls.size(), 0) {}

  void read() {
    const auto first = static_cast<std::uint32_t>(s_.steps.size());
    for (std::size_t k = 0; k < pr_.calls.size(); ++k) {
      begin_[k] = static_cast<std::uint32_t>(reqs_.size());
      call(static_cast<std::int32_t>(k), pr_.calls[k]);
      begin_[k + 1] = static_cast<std::uint32_t>(reqs_.size());
    }
    requests_left();
    s_.rank_steps[static_cast<std::size_t>(r_)] = {first, static_cast<std::uint32_t>(s_.steps.size())};
  }

 private:
  /// A request the rank started: its call and action, and its end (kNone for MPI_PROC_NULL).
  struct Request {
    std::int32_t call = 0;
    std::int32_t action = 0;
    std::uint32_t end = kNone;
  };

  void step(Step::Kind kind, std::int32_t call, std::uint32_t ref, std::uint32_t count = 0) {
    const mpi::Function f = call >= 0 ? pr_.calls[static_cast<std::size_t>(call)].function : mpi::Function::Other;
    s_.steps.push_back({kind, f, call, ref, count});
  }

  /// A call's steps: its messages leave and its receives are posted first, then it waits for what it must (a
  /// Sendrecv's send never waits for its own receive).
  void call(std::int32_t k, const PredictedCall& c) {
    const bool nonblocking = starts_requests(c.function);
    const bool synchronous = mpi::info(c.function).mode == mpi::SendMode::Synchronous;
    std::vector<std::uint32_t> waits;    // ends the call waits for
    std::vector<std::uint32_t> awaited;  // a completion's requests
    for (std::size_t jj = 0; jj < c.actions.size(); ++jj) {
      const auto j = static_cast<std::int32_t>(jj);
      const PredictedAction& a = c.actions[jj];
      switch (path_of(c.function)) {
        case CallPath::PointToPoint:
          if (a.kind == mpi::ActionKind::Send) {
            const std::uint32_t e = message(k, j, c.function, a, true, synchronous);
            if (e != kNone) step(Step::Kind::Issue, k, e);
            if (nonblocking) {
              reqs_.push_back({k, j, e});
            } else if (e != kNone && s_.ends[e].synchronous) {
              waits.push_back(e);
            }
          } else if (a.kind == mpi::ActionKind::IrecvPost) {
            const std::uint32_t e = message(k, j, c.function, a, false, false);
            if (e != kNone) step(Step::Kind::Post, k, e);
            reqs_.push_back({k, j, e});
          } else if (a.kind == mpi::ActionKind::Recv) {  // a blocking receive, or a Sendrecv's
            const std::uint32_t e = message(k, j, c.function, a, false, false);
            if (e != kNone) {
              step(Step::Kind::Post, k, e);
              waits.push_back(e);
            }
          }
          break;
        case CallPath::Completion:
          completion(k, j, c, a, awaited);
          break;
        case CallPath::Collective:
          if (a.kind == mpi::ActionKind::Collective) collective(k, j, c.function, a);
          break;
        case CallPath::Probe:
          break;  // the replay probes without blocking: nothing to match
      }
    }
    for (const std::uint32_t e : waits) step(Step::Kind::Await, k, e);
    if (!awaited.empty()) complete(k, awaited);
  }

  void complete(std::int32_t k, const std::vector<std::uint32_t>& ends) {
    step(Step::Kind::Complete, k, static_cast<std::uint32_t>(s_.awaits.size()),
         static_cast<std::uint32_t>(ends.size()));
    s_.awaits.insert(s_.awaits.end(), ends.begin(), ends.end());
  }

  /// A completion takes the next request of the call it names, as the replay does.
  void completion(std::int32_t k, std::int32_t j, const PredictedCall& c, const PredictedAction& a,
                  std::vector<std::uint32_t>& awaited) {
    if (a.started < 0) return;  // the replay completes only what names the call that started it
    const auto st = static_cast<std::size_t>(a.started);
    if (a.started >= k || taken_[st] >= begin_[st + 1] - begin_[st]) {
      const std::string which = a.started >= k ? ", which comes after it" : ", which has no request left";
      s_.flaw(Flaw::CompletesNothing, r_, k, [&] {
        return call_text(r_, k, c.function) + " completes a request of call " + std::to_string(a.started) + which;
      });
      s_.fix(Fix::Kind::Drop, r_, k, j);
      return;
    }
    const Request& q = reqs_[begin_[st] + taken_[st]++];
    if (q.end == kNone) return;
    s_.ends[q.end].done_call = k;
    s_.ends[q.end].done_action = j;
    awaited.push_back(q.end);
  }

  /// A send or receive: its end (kNone for MPI_PROC_NULL, which matches nothing and completes at once), once its
  /// peer is known to be a member of its communicator.
  std::uint32_t message(std::int32_t k, std::int32_t j, mpi::Function f, const PredictedAction& a, bool send,
                        bool synchronous) {
    if (a.peer == kProcNull) return kNone;
    const std::int64_t n = s_.n;
    const std::uint32_t c = s_.comm_id(a.comm);
    const CommModel& cm = *s_.comms[c];
    End e;
    e.owner = static_cast<std::int32_t>(r_);
    e.comm = c;
    e.from = static_cast<std::int32_t>(send ? r_ : a.peer);
    e.to = static_cast<std::int32_t>(send ? a.peer : r_);
    e.tag = a.tag;
    e.tag_from_send = !send && a.tag_from_send;
    e.call = k;
    e.action = j;
    e.function = f;
    e.send = send;
    // A send larger than MPI buffers waits for its receive to be posted, as a synchronous one always does.
    e.synchronous = send && (synchronous || message_count(a.bytes) > kEagerBytes);
    e.bytes = a.bytes;
    std::string outside;
    if (a.peer == kAnySource && send) {
      outside = "sends to MPI_ANY_SOURCE";
    } else if (a.peer != kAnySource && (a.peer < 0 || a.peer >= n)) {
      outside = "names rank " + std::to_string(a.peer) + ", not one of the " + std::to_string(n) + " ranks";
    } else if (a.peer != kAnySource && cm.color(a.peer, n) != cm.color(r_, n)) {
      outside = "names rank " + std::to_string(a.peer) + ", which is not in its communicator (" + comm_text(cm) + ")";
    }
    const auto id = static_cast<std::uint32_t>(s_.ends.size());
    s_.ends.push_back(e);
    if (!outside.empty()) {
      s_.flaw(Flaw::PeerOutside, r_, k, [&] { return call_text(r_, k, f) + " " + outside; });
      s_.bad.push_back(id);
    } else if (send) {
      s_.sends.push_back(id);
    } else if (a.peer == kAnySource || a.tag == kAnyTag) {
      s_.wild.push_back(id);
    } else {
      s_.receives.push_back(id);
    }
    return id;
  }

  void collective(std::int32_t k, std::int32_t j, mpi::Function f, const PredictedAction& a) {
    const std::int64_t n = s_.n;
    const std::uint32_t c = s_.comm_id(a.comm);
    const CommModel& cm = *s_.comms[c];
    // A root (world rank; -1 for none) must be a member; the members then disagree where it is missing.
    if (a.root >= n || (a.root >= 0 && cm.color(a.root, n) != cm.color(r_, n))) {
      s_.flaw(Flaw::PeerOutside, r_, k, [&] {
        return call_text(r_, k, f) + " names root " + std::to_string(a.root) + ", which is not in its communicator (" +
               comm_text(cm) + ")";
      });
      s_.fix(Fix::Kind::Drop, r_, k, j);
      return;
    }
    if (seq_.size() <= c) seq_.resize(c + 1, 0);
    Coll co;
    co.comm = c;
    co.color = static_cast<std::int32_t>(cm.color(r_, n));
    co.rank = static_cast<std::int32_t>(r_);
    co.seq = seq_[c]++;
    co.op = a.collective;
    co.root = static_cast<std::int32_t>(a.root);
    co.block = message_count(a.block);
    co.call = k;
    co.action = j;
    co.function = f;
    step(Step::Kind::Collective, k, static_cast<std::uint32_t>(s_.colls.size()));
    s_.colls.push_back(co);
  }

  /// Requests that no completion of the instance took: the replay waits for them at its end (a repair makes that
  /// an MPI_Waitall), and their messages could cross into the next instance.
  void requests_left() {
    std::vector<std::uint32_t> left;
    for (std::size_t k = 0; k < taken_.size(); ++k) {
      for (std::uint32_t q = begin_[k] + taken_[k]; q < begin_[k + 1]; ++q) {
        const Request& req = reqs_[q];
        const PredictedAction& a = pr_.calls[k].actions[static_cast<std::size_t>(req.action)];
        s_.flaw(Flaw::NotCompleted, r_, req.call, [&] {
          const std::string what = a.kind == mpi::ActionKind::Send ? "a send to " : "a receive from ";
          return call_text(r_, req.call, pr_.calls[k].function) + " starts a request (" + what + "rank " +
                 std::to_string(a.peer) + ") that no call of the phase completes";
        });
        s_.fix(Fix::Kind::CompleteAtEnd, r_, req.call, req.action);
        if (req.end != kNone) left.push_back(req.end);
      }
    }
    if (!left.empty()) complete(-1, left);
  }

  PhaseState& s_;
  const PredictedRank& pr_;
  std::int64_t r_;
  std::vector<Request> reqs_;  ///< in the order the replay keeps them, call by call
  std::vector<std::uint32_t> begin_;
  std::vector<std::uint32_t> taken_;
  std::vector<std::uint32_t> seq_;  ///< per communicator: the rank's collectives there so far
};

auto key(const End& e) { return std::tie(e.comm, e.from, e.to, e.tag); }

void pair(PhaseState& s, std::uint32_t send, std::uint32_t receive) {
  s.partner[send] = receive;
  s.partner[receive] = send;
  const End& snd = s.ends[send];
  const End& rcv = s.ends[receive];
  // What the receive reports when it completes: the message's size (its completion's, for a posted receive), and
  // to a receive that takes its message's tag, that tag (where it was posted, too).
  // A posted receive that nothing completes takes the tag too: a repair completes it at the end from the post.
  const bool posted = rcv.done_call >= 0;
  const bool starts = starts_requests(rcv.function);
  const std::optional<std::uint32_t> tag = rcv.tag_from_send ? std::optional(snd.tag) : std::nullopt;
  if ((tag || message_count(snd.bytes) != message_count(rcv.bytes)) && (posted || !starts)) {
    s.out.received.push_back({rcv.owner, posted ? rcv.done_call : rcv.call, posted ? rcv.done_action : rcv.action,
                              static_cast<double>(message_count(snd.bytes)), tag});
  }
  if (tag && starts) s.out.received.push_back({rcv.owner, rcv.call, rcv.action, std::nullopt, tag});
  if (message_count(snd.bytes) <= receive_room(rcv.bytes)) return;
  s.flaw(Flaw::Truncated, rcv.owner, rcv.call, [&] {
    return call_text(rcv.owner, rcv.call, rcv.function) + " has room for " + std::to_string(receive_room(rcv.bytes)) +
           " bytes, and the message it receives is " + bytes_text(snd.bytes) + " (" +
           call_text(snd.owner, snd.call, snd.function) + ", tag " + std::to_string(snd.tag) + ", on " +
           comm_text(*s.comms[snd.comm]) + ")";
  });
  s.fix(Fix::Kind::Enlarge, rcv.owner, rcv.call, rcv.action, snd.bytes);
  if (rcv.done_call >= 0) s.fix(Fix::Kind::Enlarge, rcv.owner, rcv.done_call, rcv.done_action, snd.bytes, true);
}

/// Where the other ends of an unmatched one went instead: the same two ranks with another tag, or on another
/// communicator (`others`: the ends of the other kind, sorted by key). Empty when there are none.
std::string elsewhere(const PhaseState& s, const End& e, const std::vector<std::uint32_t>& others) {
  const auto pair_of = [&s](std::uint32_t id) {
    const End& o = s.ends[id];
    return std::tie(o.comm, o.from, o.to);
  };
  const std::string who = e.send ? "rank " + std::to_string(e.to) + " receives from rank " + std::to_string(e.from)
                                 : "rank " + std::to_string(e.from) + " sends rank " + std::to_string(e.to);
  for (std::uint32_t c = 0; c < s.comms.size(); ++c) {
    const auto at = std::lower_bound(others.begin(), others.end(), std::tie(c, e.from, e.to),
                                     [&](std::uint32_t id, const auto& k) { return pair_of(id) < k; });
    if (at == others.end() || pair_of(*at) != std::tie(c, e.from, e.to)) continue;
    const End& o = s.ends[*at];
    if (c != e.comm) return "; " + who + " on " + comm_text(*s.comms[c]) + " instead";
    if (o.tag != e.tag) return "; " + who + " with tag " + std::to_string(o.tag) + " instead";
  }
  return {};
}

void unmatched_send(PhaseState& s, std::uint32_t id, std::uint64_t sent, std::uint64_t received) {
  const End& e = s.ends[id];
  s.flaw(Flaw::UnmatchedSend, e.owner, e.call, [&] {
    return call_text(e.owner, e.call, e.function) + " sends rank " + std::to_string(e.to) + " a message (tag " +
           std::to_string(e.tag) + ", on " + comm_text(*s.comms[e.comm]) + ") that rank " + std::to_string(e.to) +
           " does not receive: it receives " + std::to_string(received) + " such messages from rank " +
           std::to_string(e.from) + ", which sends " + std::to_string(sent) + elsewhere(s, e, s.receives);
  });
  s.drop(id);
}

void unmatched_receive(PhaseState& s, std::uint32_t id, std::uint64_t sent, std::uint64_t received) {
  const End& e = s.ends[id];
  s.flaw(Flaw::UnmatchedReceive, e.owner, e.call, [&] {
    const std::string tag = e.tag == kAnyTag ? "any tag" : "tag " + std::to_string(e.tag);
    if (e.from == kAnySource) {
      return call_text(e.owner, e.call, e.function) + " waits for a message from any source (" + tag + ", on " +
             comm_text(*s.comms[e.comm]) + ") that no rank sends it";
    }
    return call_text(e.owner, e.call, e.function) + " waits for a message from rank " + std::to_string(e.from) + " (" +
           tag + ", on " + comm_text(*s.comms[e.comm]) + ") that rank " + std::to_string(e.from) +
           " does not send: it sends " + std::to_string(sent) + " such messages to rank " + std::to_string(e.to) +
           ", which receives " + std::to_string(received) + (e.tag == kAnyTag ? "" : elsewhere(s, e, s.sends));
  });
  s.drop(id);
}

/// The channels (communicator, source, destination) where a receive takes its message's tag (tag_from_send): there
/// the receives, in the order they were posted, take the first message not taken yet, in the order it was sent,
/// that has their tag (any tag, for a receive that takes its message's), as MPI matches them once the messages
/// are sent; a receive of any tag leaves the messages of a tag that later receives naming it still need (the
/// code's own receive had a tag, so MPI matched them all). Their ends leave the sends and receives matched per key;
/// sends no receive takes are left for the wildcard receives, as there.
void match_channels(PhaseState& s, std::vector<std::uint32_t>& left) {
  const auto channel = [&s](std::uint32_t id) { return std::tie(s.ends[id].comm, s.ends[id].from, s.ends[id].to); };
  std::vector<std::tuple<std::uint32_t, std::int32_t, std::int32_t>> channels;
  for (const std::uint32_t id : s.receives) {
    if (s.ends[id].tag_from_send) channels.emplace_back(channel(id));
  }
  if (channels.empty()) return;
  std::sort(channels.begin(), channels.end());
  const auto in_free = [&](std::uint32_t id) {
    return std::binary_search(channels.begin(), channels.end(), channel(id));
  };
  std::vector<std::uint32_t> snd, rcv;
  std::erase_if(s.sends, [&](std::uint32_t id) { return in_free(id) && (snd.push_back(id), true); });
  std::erase_if(s.receives, [&](std::uint32_t id) { return in_free(id) && (rcv.push_back(id), true); });
  // The other ends by key, as match_specific takes them, so that a flaw here can say where its peer's ends went.
  const auto by_key = [&s](std::uint32_t a, std::uint32_t b) { return key(s.ends[a]) < key(s.ends[b]); };
  std::stable_sort(s.sends.begin(), s.sends.end(), by_key);
  std::stable_sort(s.receives.begin(), s.receives.end(), by_key);
  // Ids grow with each owner's program order, and a channel's sends (receives) are all of one rank.
  const auto by_channel = [&](std::uint32_t a, std::uint32_t b) {
    return std::tuple_cat(channel(a), std::tie(a)) < std::tuple_cat(channel(b), std::tie(b));
  };
  std::sort(snd.begin(), snd.end(), by_channel);
  std::sort(rcv.begin(), rcv.end(), by_channel);
  std::size_t i = 0, j = 0;
  while (i < snd.size() || j < rcv.size()) {
    const bool from_sends = j == rcv.size() || (i < snd.size() && !(channel(rcv[j]) < channel(snd[i])));
    const auto at = channel(from_sends ? snd[i] : rcv[j]);
    std::size_t si = i, rj = j;
    while (si < snd.size() && channel(snd[si]) == at) ++si;
    while (rj < rcv.size() && channel(rcv[rj]) == at) ++rj;
    std::vector<bool> taken(si - i, false);
    const std::uint64_t sent = si - i, received = rj - j;
    // Per tag: messages not taken, and receives naming it not matched yet.
    std::map<std::uint32_t, std::int64_t> messages, named;
    for (std::size_t k = i; k < si; ++k) ++messages[s.ends[snd[k]].tag];
    for (std::size_t r = j; r < rj; ++r) named[s.ends[rcv[r]].tag] += s.ends[rcv[r]].tag_from_send ? 0 : 1;
    std::size_t first = 0;  // the first message not taken
    for (std::size_t r = j; r < rj; ++r) {
      const End& e = s.ends[rcv[r]];
      while (first < taken.size() && taken[first]) ++first;
      const auto fits = [&](std::size_t k) {
        const std::uint32_t tag = s.ends[snd[i + k]].tag;
        return e.tag_from_send ? messages[tag] > named[tag] : tag == e.tag;
      };
      std::size_t k = first;
      while (k < taken.size() && (taken[k] || !fits(k))) ++k;
      if (!e.tag_from_send) --named[e.tag];
      if (k == taken.size()) {
        unmatched_receive(s, rcv[r], sent, received);
        continue;
      }
      taken[k] = true;
      --messages[s.ends[snd[i + k]].tag];
      pair(s, snd[i + k], rcv[r]);
    }
    for (std::size_t k = 0; k < taken.size(); ++k) {
      if (taken[k]) continue;
      if (s.wild.empty()) {
        unmatched_send(s, snd[i + k], sent, received);
      } else {
        left.push_back(snd[i + k]);
      }
    }
    i = si;
    j = rj;
  }
}

/// Sends and receives that name their peer and tag, FIFO per key (MPI's non-overtaking rule makes this exact).
/// Sends that no such receive takes are left for the wildcard receives.
void match_specific(PhaseState& s, std::vector<std::uint32_t>& left) {
  const auto by_key = [&s](std::uint32_t a, std::uint32_t b) { return key(s.ends[a]) < key(s.ends[b]); };
  std::stable_sort(s.sends.begin(), s.sends.end(), by_key);  // stable: each key's ends in their owner's order
  std::stable_sort(s.receives.begin(), s.receives.end(), by_key);
  const std::vector<std::uint32_t>& snd = s.sends;
  const std::vector<std::uint32_t>& rcv = s.receives;
  std::size_t i = 0, j = 0;
  while (i < snd.size() || j < rcv.size()) {
    const bool from_sends = j == rcv.size() || (i < snd.size() && !(key(s.ends[rcv[j]]) < key(s.ends[snd[i]])));
    const End& first = s.ends[from_sends ? snd[i] : rcv[j]];
    std::size_t si = i, rj = j;
    while (si < snd.size() && key(s.ends[snd[si]]) == key(first)) ++si;
    while (rj < rcv.size() && key(s.ends[rcv[rj]]) == key(first)) ++rj;
    const std::uint64_t sent = si - i, received = rj - j;
    for (std::size_t k = 0; k < std::min(sent, received); ++k) pair(s, snd[i + k], rcv[j + k]);
    for (std::size_t k = received; k < sent; ++k) {
      if (s.wild.empty()) {
        unmatched_send(s, snd[i + k], sent, received);
      } else {
        left.push_back(snd[i + k]);
      }
    }
    for (std::size_t k = sent; k < received; ++k) unmatched_receive(s, rcv[j + k], sent, received);
    i = si;
    j = rj;
  }
}

/// Receives from MPI_ANY_SOURCE or with MPI_ANY_TAG, in the order each rank posts them, take the messages left: the
/// first that fits their source and tag, lowest source first and each source's in the order it sent them.
void match_wild(PhaseState& s, std::vector<std::uint32_t>& left) {
  if (s.wild.empty()) return;
  const auto at = [&s](std::uint32_t id) { return std::tie(s.ends[id].comm, s.ends[id].to); };
  // Ids grow with each owner's program order, so they order each source's messages as it sent them.
  std::sort(left.begin(), left.end(), [&s](std::uint32_t a, std::uint32_t b) {
    return std::tie(s.ends[a].comm, s.ends[a].to, s.ends[a].from, a) <
           std::tie(s.ends[b].comm, s.ends[b].to, s.ends[b].from, b);
  });
  std::stable_sort(s.wild.begin(), s.wild.end(), [&](std::uint32_t a, std::uint32_t b) { return at(a) < at(b); });
  std::vector<bool> taken(left.size(), false);
  std::size_t from = 0;  // the first message left to the destination of the current receive
  for (const std::uint32_t w : s.wild) {
    const End& rcv = s.ends[w];
    while (from < left.size() && at(left[from]) < at(w)) ++from;
    std::size_t k = from;
    for (; k < left.size() && at(left[k]) == at(w); ++k) {
      const End& snd = s.ends[left[k]];
      if (taken[k]) continue;
      if ((rcv.from == kAnySource || snd.from == rcv.from) && (rcv.tag == kAnyTag || snd.tag == rcv.tag)) break;
    }
    if (k < left.size() && at(left[k]) == at(w)) {
      taken[k] = true;
      pair(s, left[k], w);
    } else {
      unmatched_receive(s, w, 0, 1);
    }
  }
  for (std::size_t k = 0; k < left.size(); ++k) {
    if (!taken[k]) unmatched_send(s, left[k], 1, 0);
  }
}

/// A hash of a member's collectives: what every member must agree on, in order.
std::uint64_t sequence_hash(const PhaseState& s, std::span<const std::uint32_t> mine) {
  std::uint64_t h = mix64(mine.size());
  for (const std::uint32_t k : mine) {
    const Coll& c = s.colls[k];
    h = add_collective(h, c.op, c.root, c.block);
  }
  return h;
}

/// The reference of an instance: of the members that make the most collectives, those whose sequence most members
/// share (the lowest rank on a tie), so that the members named are the few that depart from the others.
std::size_t reference_of(const PhaseState& s, const std::vector<std::span<const std::uint32_t>>& of) {
  std::size_t longest = 0;
  for (const auto& mine : of) longest = std::max(longest, mine.size());
  std::vector<std::uint64_t> hashes(of.size());
  std::unordered_map<std::uint64_t, std::size_t> shared;
  for (std::size_t m = 0; m < of.size(); ++m) {
    hashes[m] = sequence_hash(s, of[m]);
    ++shared[hashes[m]];
  }
  std::size_t reference = of.size();
  for (std::size_t m = 0; m < of.size(); ++m) {
    if (of[m].size() != longest) continue;
    if (reference == of.size() || shared[hashes[m]] > shared[hashes[reference]]) reference = m;
  }
  return reference;
}

/// One communicator instance (the ranks that share a colour): every member must make the same collectives in the
/// same order. A repair drops, on every member, the collectives from the first place where some member departs from
/// the reference. Returns that place (the reference's count when none).
std::size_t check_instance(PhaseState& s, std::span<const std::int64_t> members, std::span<const std::uint32_t> ids) {
  std::vector<std::span<const std::uint32_t>> of(members.size());  // each member's collectives, in order
  std::size_t at = 0;
  for (std::size_t m = 0; m < members.size(); ++m) {
    std::size_t end = at;
    while (end < ids.size() && s.colls[ids[end]].rank == members[m]) ++end;
    of[m] = ids.subspan(at, end - at);
    at = end;
  }
  const std::span<const std::uint32_t> ref = of[reference_of(s, of)];
  std::size_t cut = ref.size();
  for (std::size_t m = 0; m < members.size(); ++m) {
    const std::span<const std::uint32_t> mine = of[m];
    std::size_t d = 0;
    while (d < mine.size() && s.colls[mine[d]].same_as(s.colls[ref[d]])) ++d;
    if (d == ref.size()) continue;
    cut = std::min(cut, d);
    const Coll& want = s.colls[ref[d]];
    const std::int64_t rank = members[m];
    if (d < mine.size()) {
      const Coll& got = s.colls[mine[d]];
      s.flaw(Flaw::CollectiveDiffers, rank, got.call, [&] {
        return call_text(rank, got.call, got.function) + " makes " + coll_text(got) + " as its " + ordinal(d + 1) +
               " collective on " + comm_text(*s.comms[got.comm]) + ", where rank " + std::to_string(want.rank) +
               " makes " + coll_text(want) + " (call " + std::to_string(want.call) + ")";
      });
    } else {
      s.flaw(Flaw::CollectiveMissing, want.rank, want.call, [&] {
        return call_text(want.rank, want.call, want.function) + " (" + coll_text(want) + ", its " + ordinal(d + 1) +
               " collective on " + comm_text(*s.comms[want.comm]) + ") has no partner on rank " + std::to_string(rank) +
               ", which makes " + std::to_string(mine.size()) + " there";
      });
    }
  }
  for (const std::span<const std::uint32_t> mine : of) {
    for (std::size_t d = cut; d < mine.size(); ++d) {
      s.coll_dropped[mine[d]] = true;
      s.fix(Fix::Kind::Drop, s.colls[mine[d]].rank, s.colls[mine[d]].call, s.colls[mine[d]].action);
    }
  }
  return cut;
}

/// Checks every communicator instance, and numbers the collective calls of all members (the groups the progress
/// pass waits on) among those the instance's members agree on.
void check_collectives(PhaseState& s) {
  std::vector<std::uint32_t> ids(s.colls.size());
  for (std::size_t k = 0; k < ids.size(); ++k) ids[k] = static_cast<std::uint32_t>(k);
  const auto place = [&s](std::uint32_t k) {
    const Coll& c = s.colls[k];
    return std::tie(c.comm, c.color, c.rank, c.seq);
  };
  std::sort(ids.begin(), ids.end(), [&](std::uint32_t a, std::uint32_t b) { return place(a) < place(b); });
  for (std::size_t first = 0; first < ids.size();) {
    const std::uint32_t c = s.colls[ids[first]].comm;
    std::size_t last = first;
    while (last < ids.size() && s.colls[ids[last]].comm == c) ++last;
    const CommModel& cm = *s.comms[c];
    std::vector<std::pair<std::int64_t, std::int64_t>> members;  // (colour, rank) of every rank
    if (cm.kind == CommModel::Kind::Self) {
      for (std::size_t k = first; k < last; ++k) members.emplace_back(s.colls[ids[k]].color, s.colls[ids[k]].rank);
      members.erase(std::unique(members.begin(), members.end()), members.end());
    } else {
      members.reserve(static_cast<std::size_t>(s.n));
      for (std::int64_t r = 0; r < s.n; ++r) members.emplace_back(cm.color(r, s.n), r);
      std::sort(members.begin(), members.end());
    }
    std::size_t at = first;
    std::vector<std::int64_t> ranks;
    for (std::size_t m = 0; m < members.size();) {
      std::size_t end = m;
      ranks.clear();
      while (end < members.size() && members[end].first == members[m].first) ranks.push_back(members[end++].second);
      std::size_t stop = at;
      while (stop < last && s.colls[ids[stop]].color == members[m].first) ++stop;
      if (stop > at) check_instance(s, ranks, std::span(ids).subspan(at, stop - at));
      at = stop;
      m = end;
    }
    first = last;
  }
  // Groups: the collectives kept, by (communicator, colour, place), each group's members in rank order.
  std::erase_if(ids, [&s](std::uint32_t k) { return s.coll_dropped[k]; });
  const auto call_of = [&s](std::uint32_t k) {
    const Coll& c = s.colls[k];
    return std::tie(c.comm, c.color, c.seq, c.rank);
  };
  std::sort(ids.begin(), ids.end(), [&](std::uint32_t a, std::uint32_t b) { return call_of(a) < call_of(b); });
  s.group.assign(s.colls.size(), kNone);
  s.group_members = ids;
  s.group_begin.clear();
  for (std::size_t k = 0; k < ids.size(); ++k) {
    const Coll& c = s.colls[ids[k]];
    const bool starts =
        k == 0 || std::tie(c.comm, c.color, c.seq) !=
                      std::tie(s.colls[ids[k - 1]].comm, s.colls[ids[k - 1]].color, s.colls[ids[k - 1]].seq);
    if (starts) s.group_begin.push_back(static_cast<std::uint32_t>(k));
    s.group[ids[k]] = static_cast<std::uint32_t>(s.group_begin.size() - 1);
  }
  s.group_begin.push_back(static_cast<std::uint32_t>(ids.size()));
}

}  // namespace
}  // namespace detail

PhaseChecker::PhaseChecker(std::uint32_t phase, std::int64_t n) : s_(std::make_unique<detail::PhaseState>()) {
  s_->phase = phase;
  s_->n = n;
  s_->out.phase = phase;
  s_->out.n = n;
  s_->added.assign(static_cast<std::size_t>(std::max<std::int64_t>(0, n)), false);
  s_->rank_steps.assign(static_cast<std::size_t>(std::max<std::int64_t>(0, n)), {0, 0});
}

PhaseChecker::~PhaseChecker() = default;
PhaseChecker::PhaseChecker(PhaseChecker&&) noexcept = default;
PhaseChecker& PhaseChecker::operator=(PhaseChecker&&) noexcept = default;

void PhaseChecker::add(const PredictedRank& pr) {
  detail::PhaseState& s = *s_;
  const std::int64_t r = pr.rank;
  if (r < 0 || r >= s.n) {
    throw TraceError("phase " + std::to_string(s.phase) + ": rank " + std::to_string(r) + " is not one of " +
                     std::to_string(s.n));
  }
  if (s.added[static_cast<std::size_t>(r)]) {
    throw TraceError("phase " + std::to_string(s.phase) + ": rank " + std::to_string(r) + " was checked twice");
  }
  s.added[static_cast<std::size_t>(r)] = true;
  ++s.count;
  detail::RankReader(s, pr).read();
}

PhaseConsistency PhaseChecker::finish() {
  detail::PhaseState& s = *s_;
  if (s.count != s.n) {
    throw TraceError("phase " + std::to_string(s.phase) + ": " + std::to_string(s.count) + " of " +
                     std::to_string(s.n) + " ranks were checked");
  }
  s.partner.assign(s.ends.size(), detail::kNone);
  s.dropped.assign(s.ends.size(), false);
  s.coll_dropped.assign(s.colls.size(), false);
  for (const std::uint32_t e : s.bad) s.drop(e);
  std::vector<std::uint32_t> left;
  detail::match_channels(s, left);
  detail::match_specific(s, left);
  detail::match_wild(s, left);
  detail::check_collectives(s);
  detail::check_progress(s);
  std::sort(s.out.received.begin(), s.out.received.end());
  std::sort(s.out.fixes.begin(), s.out.fixes.end());
  s.out.fixes.erase(std::unique(s.out.fixes.begin(), s.out.fixes.end(),
                                [](const Fix& a, const Fix& b) { return !(a < b) && !(b < a); }),
                    s.out.fixes.end());
  return std::move(s.out);
}

PhaseConsistency check_phase(const PhasePredictor& predictor, std::uint32_t phase, std::int64_t n) {
  PhaseChecker checker(phase, n);
  for (std::int64_t r = 0; r < n; ++r) checker.add(predictor.rank(r));
  return checker.finish();
}

}  // namespace p3s::modeler
