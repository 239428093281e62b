// SPDX-License-Identifier: BSD-3-Clause
// The progress pass of a phase check: whether every rank can make all its calls once its messages are matched. A
// message received before its sender gets to send it, by ranks that each wait for the next (round a ring, or a
// grid's side), hangs a replay as surely as a message nobody sends.
#include <deque>

#include "phase_state.hpp"

namespace p3s::modeler::detail {
namespace {

/// Rounds of a repair: each drops what every waiting rank waits for, so a phase whose calls wait for each other at
/// many places takes a round per place; past this many the phase is refused even when a repair was asked for.
constexpr int kRepairRounds = 256;

class Progress {
 public:
  explicit Progress(PhaseState& s) : s_(s) {}

  /// Runs every rank's steps as far as they go; returns the ranks left waiting, in rank order.
  std::vector<std::int64_t> run() {
    const auto n = static_cast<std::size_t>(s_.n);
    pc_.assign(n, 0);
    sub_.assign(n, 0);
    queued_.assign(n, true);
    issued_.assign(s_.ends.size(), false);
    posted_.assign(s_.ends.size(), false);
    arrived_.assign(s_.group_begin.empty() ? 0 : s_.group_begin.size() - 1, 0);
    std::deque<std::int64_t> queue;
    for (std::size_t r = 0; r < n; ++r) {
      pc_[r] = s_.rank_steps[r].first;
      queue.push_back(static_cast<std::int64_t>(r));
    }
    queue_ = &queue;
    while (!queue.empty()) {
      const std::int64_t r = queue.front();
      queue.pop_front();
      queued_[static_cast<std::size_t>(r)] = false;
      advance(r);
    }
    std::vector<std::int64_t> stuck;
    for (std::size_t r = 0; r < n; ++r) {
      if (pc_[r] < s_.rank_steps[r].second) stuck.push_back(static_cast<std::int64_t>(r));
    }
    return stuck;
  }

  /// What a waiting rank waits for, in words: its call, the call of the other rank it needs, and where that rank is.
  [[nodiscard]] std::string waiting(std::int64_t r, std::size_t others) const {
    const Step& st = s_.steps[pc_[static_cast<std::size_t>(r)]];
    std::string s = call_text(r, st.call, st.function);
    if (st.kind == Step::Kind::Collective) {
      const std::int64_t m = absent(s_.group[st.ref]);
      const Coll& c = s_.colls[st.ref];
      s += " waits in " + std::string(mpi::name(c.op)) + " on " + comm_text(*s_.comms[c.comm]) + " for rank " +
           std::to_string(m) + ", which " + where(m);
    } else {
      const std::uint32_t e = unsatisfied(r);
      const End& other = s_.ends[s_.partner[e]];
      const std::string theirs = "rank " + std::to_string(other.owner) + "'s " + call_ref(other.call, other.function);
      s += s_.ends[e].send ? " waits until the receive of " + theirs + " is posted"
                           : " waits for the message of " + theirs;
      s += ", and rank " + std::to_string(other.owner) + " " + where(other.owner);
    }
    return s + " (" + std::to_string(others) + " ranks wait for each other)";
  }

  /// The call a waiting rank waits in (-1: at the end of the instance).
  [[nodiscard]] std::int32_t call_of(std::int64_t r) const { return s_.steps[pc_[static_cast<std::size_t>(r)]].call; }

  /// Drops what a waiting rank waits for: the message (both ends, with their completions), or the collective on
  /// every member.
  void unblock(std::int64_t r) {
    const Step& st = s_.steps[pc_[static_cast<std::size_t>(r)]];
    if (st.kind == Step::Kind::Collective) {
      s_.drop_group(s_.group[st.ref]);
      return;
    }
    const std::uint32_t e = unsatisfied(r);
    s_.drop(e);
    s_.drop(s_.partner[e]);
  }

 private:
  /// Whether an end no longer holds its owner: its other end has left (a receive) or is posted (a synchronous
  /// send), or it has none (MPI_PROC_NULL, or dropped by a repair), or it is a standard send, which MPI may buffer.
  [[nodiscard]] bool satisfied(std::uint32_t e) const {
    const std::uint32_t p = s_.partner[e];
    if (s_.dropped[e] || p == kNone || s_.dropped[p]) return true;
    const End& end = s_.ends[e];
    if (!end.send) return issued_[p];
    return !end.synchronous || posted_[p];
  }

  /// The end a waiting rank waits for (its step is an Await or a Complete).
  [[nodiscard]] std::uint32_t unsatisfied(std::int64_t r) const {
    const auto k = static_cast<std::size_t>(r);
    const Step& st = s_.steps[pc_[k]];
    return st.kind == Step::Kind::Await ? st.ref : s_.awaits[st.ref + sub_[k]];
  }

  /// The first member of a collective call that has not reached it.
  [[nodiscard]] std::int64_t absent(std::uint32_t g) const {
    for (std::uint32_t k = s_.group_begin[g]; k < s_.group_begin[g + 1]; ++k) {
      const std::uint32_t c = s_.group_members[k];
      const auto m = static_cast<std::size_t>(s_.colls[c].rank);
      const bool there = pc_[m] < s_.rank_steps[m].second && s_.steps[pc_[m]].kind == Step::Kind::Collective &&
                         s_.steps[pc_[m]].ref == c && sub_[m] != 0;
      if (!there) return s_.colls[c].rank;
    }
    return s_.colls[s_.group_members[s_.group_begin[g]]].rank;
  }

  [[nodiscard]] std::string where(std::int64_t q) const {
    const auto k = static_cast<std::size_t>(q);
    if (pc_[k] >= s_.rank_steps[k].second) return "has made all its calls";
    const Step& st = s_.steps[pc_[k]];
    return std::string(st.call < 0 ? "waits at " : "waits in ") + call_ref(st.call, st.function);
  }

  void wake(std::int64_t r) {
    const auto k = static_cast<std::size_t>(r);
    if (queued_[k]) return;
    queued_[k] = true;
    queue_->push_back(r);
  }

  void wake_partner(std::uint32_t e) {
    if (s_.partner[e] != kNone) wake(s_.ends[s_.partner[e]].owner);
  }

  void advance(std::int64_t r) {
    const auto k = static_cast<std::size_t>(r);
    const std::uint32_t last = s_.rank_steps[k].second;
    for (; pc_[k] < last; ++pc_[k]) {
      const Step& st = s_.steps[pc_[k]];
      switch (st.kind) {
        case Step::Kind::Issue:
          issued_[st.ref] = true;
          wake_partner(st.ref);
          break;
        case Step::Kind::Post:
          posted_[st.ref] = true;
          wake_partner(st.ref);
          break;
        case Step::Kind::Await:
          if (!satisfied(st.ref)) return;
          break;
        case Step::Kind::Complete:
          // The replay waits until every request of the call is complete, whichever completion function it is.
          for (; sub_[k] < st.count; ++sub_[k]) {
            if (!satisfied(s_.awaits[st.ref + sub_[k]])) return;
          }
          sub_[k] = 0;
          break;
        case Step::Kind::Collective:
          if (!arrive(k, st.ref)) return;
          break;
      }
    }
  }

  /// Collectives synchronise their members (MPI allows it, so a replay must not rely on less): the last member to
  /// arrive lets the others go.
  bool arrive(std::size_t k, std::uint32_t c) {
    if (s_.coll_dropped[c] || s_.group[c] == kNone) return true;
    const std::uint32_t g = s_.group[c];
    const std::uint32_t size = s_.group_begin[g + 1] - s_.group_begin[g];
    if (sub_[k] == 0) {
      sub_[k] = 1;
      if (++arrived_[g] == size) {
        for (std::uint32_t m = s_.group_begin[g]; m < s_.group_begin[g + 1]; ++m) {
          wake(s_.colls[s_.group_members[m]].rank);
        }
      }
    }
    if (arrived_[g] < size) return false;
    sub_[k] = 0;
    return true;
  }

  PhaseState& s_;
  std::vector<std::uint32_t> pc_;   ///< per rank: its next step
  std::vector<std::uint32_t> sub_;  ///< per rank: requests complete so far, or whether it reached its collective
  std::vector<bool> queued_;
  std::vector<bool> issued_;  ///< per end: the message left
  std::vector<bool> posted_;  ///< per end: the receive is posted
  std::vector<std::uint32_t> arrived_;
  std::deque<std::int64_t>* queue_ = nullptr;
};

}  // namespace

void check_progress(PhaseState& s) {
  Progress progress(s);
  for (int round = 0;; ++round) {
    const std::vector<std::int64_t> stuck = progress.run();
    if (stuck.empty()) return;
    for (const std::int64_t r : stuck) {
      s.flaw(Flaw::Blocked, r, progress.call_of(r), [&] { return progress.waiting(r, stuck.size()); });
    }
    if (round == kRepairRounds) {
      s.out.repairable = false;
      return;
    }
    for (const std::int64_t r : stuck) progress.unblock(r);
  }
}

}  // namespace p3s::modeler::detail
