// SPDX-License-Identifier: BSD-3-Clause
// What the check of one phase keeps while its ranks are added (phase_check.cpp) and what the passes of finish() share:
// the message ends and their pairs, the collectives and their groups, each rank's steps for the progress pass
// (phase_progress.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "p3s/modeler/phase_check.hpp"

namespace p3s::modeler::detail {

inline constexpr std::uint32_t kNone = 0xffffffffU;

/// One end of a message: a send (made by `from`) or a receive (made by `to`), made by its owner.
struct End {
  std::int32_t owner = 0;
  std::uint32_t comm = 0;
  std::int32_t from = 0;  ///< a receive's may be kAnySource
  std::int32_t to = 0;
  std::uint32_t tag = 0;
  std::int32_t call = 0;
  std::int32_t action = 0;
  std::int32_t done_call = -1;  ///< the completion of its request, where it started one
  std::int32_t done_action = -1;
  mpi::Function function = mpi::Function::Other;
  bool send = false;
  bool synchronous = false;    ///< a send that completes only once its receive is posted (MPI_Ssend, MPI_Issend)
  bool tag_from_send = false;  ///< a receive that takes its message's tag (PredictedAction::tag_from_send)
  double bytes = 0;
};

/// One collective of one rank: its place among the rank's collectives on that communicator, and what every member
/// must agree on.
struct Coll {
  std::uint32_t comm = 0;
  std::int32_t color = 0;  ///< colours and ranks are world ranks or smaller (n fits in 31 bits)
  std::int32_t rank = 0;
  std::uint32_t seq = 0;
  std::int32_t root = -1;
  std::int32_t call = 0;
  std::int32_t action = 0;
  mpi::Collective op = mpi::Collective::None;
  mpi::Function function = mpi::Function::Other;
  std::int64_t block = 0;
  [[nodiscard]] bool same_as(const Coll& o) const noexcept { return op == o.op && root == o.root && block == o.block; }
};

/// What a rank does, in order, as the progress pass sees it: a message leaves (eagerly: MPI may buffer a standard
/// send), a receive is posted, the rank waits for one end's other end, for every member of a collective, or for
/// the requests a completion names.
struct Step {
  enum class Kind : std::uint8_t { Issue, Post, Await, Collective, Complete };
  Kind kind = Kind::Issue;
  mpi::Function function = mpi::Function::Other;  // 16 bytes a step: a phase holds one per message end and call
  std::int32_t call = 0;                          ///< -1: the end of the instance, which waits for the requests left
  std::uint32_t ref = 0;                          ///< an end, a collective, or the first of `count` awaited ends
  std::uint32_t count = 0;
};

struct PhaseState {
  std::uint32_t phase = 0;
  std::int64_t n = 0;
  std::vector<const CommModel*> comms;  ///< distinct communicators at n, by id
  std::unordered_map<const CommModel*, std::uint32_t> ids;
  std::vector<End> ends;                                  ///< by id, as added
  std::vector<std::uint32_t> sends, receives, wild, bad;  ///< ends by role
  std::vector<std::uint32_t> partner;                     ///< per end: the end it matches, kNone when none
  std::vector<bool> dropped;                              ///< per end: a repair drops it
  std::vector<Coll> colls;                                ///< by id, as added
  std::vector<std::uint32_t> group;  ///< per collective: the collective call of all members it belongs to
  std::vector<bool> coll_dropped;
  std::vector<std::uint32_t> group_members;  ///< collectives by group, each group's members consecutive
  std::vector<std::uint32_t> group_begin;    ///< per group: its first in group_members (and one past the last)
  std::vector<Step> steps;
  std::vector<std::uint32_t> awaits;                                ///< the ends that Complete steps wait for
  std::vector<std::pair<std::uint32_t, std::uint32_t>> rank_steps;  ///< per rank: its steps [first, last)
  std::vector<bool> added;
  std::int64_t count = 0;
  PhaseConsistency out;

  /// The communicator's id: models that give the same members at n and were created by the same call are one, as
  /// the LT4NC's table numbers them.
  std::uint32_t comm_id(const CommModel* c);
  /// Counts a flaw; words are made only for the first few.
  void flaw(Flaw f, std::int64_t rank, std::int32_t call, const std::function<std::string()>& what);
  void fix(Fix::Kind kind, std::int64_t rank, std::int32_t call, std::int32_t action, double bytes = 0,
           bool follows = false);
  /// Drops an end, and the completion of its request where it has one.
  void drop(std::uint32_t end);
  /// Drops a collective call on every member.
  void drop_group(std::uint32_t g);
};

std::string comm_text(const CommModel& c);
/// "call 57 (MPI_Sendrecv)", or "the end of the instance" for call -1.
std::string call_ref(std::int32_t call, mpi::Function f);
/// "rank 4, call 57 (MPI_Sendrecv)".
std::string call_text(std::int64_t rank, std::int32_t call, mpi::Function f);

/// The progress pass: runs every rank's steps as far as they go, sends leaving at once (MPI may buffer a standard
/// send; a synchronous one waits for its receive) and collectives waiting for every member. Ranks that cannot finish
/// wait for each other: each is a Flaw::Blocked, and the repair drops what they wait for (the message, with its
/// other end; the collective, on every member) and runs again, until every rank finishes.
void check_progress(PhaseState& s);

}  // namespace p3s::modeler::detail
