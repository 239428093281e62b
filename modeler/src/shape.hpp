// SPDX-License-Identifier: BSD-3-Clause
// A phase's shape: every rank's representative calls cut into groups of consecutive calls to one MPI function,
// and the groups of all ranks of all runs merged into one sequence that each rank follows, skipping the groups
// it does not call.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "p3s/analyzer/signature.hpp"
#include "p3s/modeler/model.hpp"
#include "p3s/modeler/pattern.hpp"

namespace p3s::modeler::detail {

/// One call of a rank, as the learners see it.
struct Call {
  std::size_t event = 0;                      ///< index in the rank's events
  std::array<std::int64_t, 2> peers{-1, -1};  ///< PointToPoint slots (-1: null)
  std::array<std::uint32_t, 2> tags{0, 0};
  std::array<double, 2> bytes{0, 0};
  double burst_work = 0;
  double burst_ns = 0;  ///< the burst's wall-clock time
  /// The first peer's offset from the rank (0 for no peer): lets the shape merge align the calls of ranks that
  /// skip some (a pipeline's boundary ranks) by direction, not only by function.
  std::int64_t offset = 0;
  /// The first peer's label in a frame (stable_label()), set by the caller for Alignment::Label.
  Label label{0, 0, 0};
  /// Per slot: whether it receives (a blocking or posted receive) rather than sends.
  std::array<bool, 2> receives{false, false};
  /// A completion call: how many requests it completes, and a hash of the sources of the receives among them (a
  /// loop's MPI_Waitall completes its step's two requests, not the twelve of an exchange before the loop).
  std::uint32_t completes = 0;
  std::uint64_t completed_from = 0;
  /// What the exchange the call belongs to does (set by rank_groups()): a hash of the functions, roles and tags of
  /// its calls, the same at every rank and n that makes the same exchange whatever its peers.
  std::uint64_t exchange = 0;

  /// The tag of the first slot that has a peer (the second's where the first is null).
  [[nodiscard]] std::uint32_t first_tag() const { return peers[0] >= 0 ? tags[0] : tags[1]; }
};

/// An MPI function as the shape tells groups apart: its vocabulary entry, and its name (which tells functions
/// outside the vocabulary apart).
struct FunctionKey {
  mpi::Function function = mpi::Function::Other;
  std::string call;
  friend auto operator<=>(const FunctionKey&, const FunctionKey&) = default;
};

/// Consecutive calls of one rank to one MPI function.
struct RankGroup {
  FunctionKey function;
  Role role = Role::Local;
  std::vector<Call> calls;
  /// On the first group of a folded loop body (fold_loops()): how many groups the body has; 0 elsewhere.
  std::uint32_t loop = 0;
  /// On the same group: how many times the body was made in a row.
  std::uint32_t iterations = 0;
};

/// The role of one event.
[[nodiscard]] Role role_of(const analyzer::SigEvent& e);
/// The slots of a point-to-point call and what each does: a send, a blocking receive, or a posted receive (an
/// empty slot is nullopt). A function outside the vocabulary is told by its actions.
[[nodiscard]] SlotKinds slot_kinds(const analyzer::SigEvent& e);
/// Whether the call starts requests that a completion call completes (MPI_Isend, MPI_Irecv, ...).
[[nodiscard]] bool starts_requests(const analyzer::SigEvent& e);
/// A rank's events cut into groups.
[[nodiscard]] std::vector<RankGroup> rank_groups(const analyzer::SigRank& rank);

/// A rank's groups with each loop folded: a body of groups of calls to different functions (MPI_Irecv, MPI_Send,
/// MPI_Wait) repeated at least twice in a row becomes one group per body group holding every iteration's calls,
/// the first marked with the body's size and the iterations (RankGroup::loop, RankGroup::iterations). A body
/// repeats either as single calls with the same functions and tags each time, whatever their peers (a recursive
/// halving along a row of log2(columns) steps: each folded group is a counted repetition a pattern can learn), or
/// (their tags the same each time or, with LoopTags::Counter, stepping as the loop's counter: any two iterations
/// draw a line, so one step for the whole body tells a counter from a coincidence), or
/// as the same calls to the same peers each time, whatever their tags and however many calls each group has (the
/// planes of a wavefront: a receive from north and west, a send south and east; the stages of a pipelined
/// sweep), where no peer is both sent to and received from in the body: on a side of 2, where a step either way
/// reaches the same rank, a sweep and the sweep back would be taken for one loop. Either way the number of groups
/// then stays the same however many iterations n gives. Without `steps`, only the second kind is folded: where some
/// rank's loops make the same exchanges, a rank whose single calls repeat with other peers (the sweeps of one
/// stage each along every axis on a side of 2) is made of such loops, not of one over all of them.
/// The functions a loop body calls: what tells the same loop apart in runs at other process counts.
using BodyKey = std::set<FunctionKey>;

/// How the tags of a loop's steps relate from one iteration to the next (FoldRules).
enum class LoopTags : std::uint8_t {
  Equal,    ///< every iteration sends and receives with the same tags
  Counter,  ///< each tag steps by the same amount, not 0, from one iteration to the next: the loop's counter
            ///< (`do i = 1, steps ... tag = i`), which numbers the iterations
};

/// Which loops fold_loops() folds: single calls whose peers change (`steps`), their tags as `tags` says, and loops
/// of the same exchanges (all, or only those whose body calls one of `exchanges`' sets of functions).
struct FoldRules {
  bool steps = true;
  LoopTags tags = LoopTags::Equal;
  const std::set<BodyKey>* exchanges = nullptr;
};

[[nodiscard]] std::vector<RankGroup> fold_loops(std::vector<RankGroup> groups, const FoldRules& rules = {});
/// The bodies of the loops of the same exchanges the groups hold (the second kind of fold_loops()), by the functions
/// they call.
[[nodiscard]] std::set<BodyKey> exchange_bodies(const std::vector<RankGroup>& groups);

/// The merged shape: one (function, role) per group, and each rank's calls regrouped by it.
struct Shape {
  std::vector<std::pair<FunctionKey, Role>> groups;
  std::vector<std::vector<RankGroup>> ranks;  ///< per input rank, per shape group (no calls where it has none)
  std::vector<PhaseLoop> loops;               ///< the shape groups the ranks' folded loops fall in, in order
  /// Per loop, per input rank: the iterations its folded loop there made (0: none folded there; kNoIterations
  /// where several of its loops fell in one).
  std::vector<std::vector<std::uint32_t>> loop_iterations;
  /// Whether the alignment put the calls one rank makes at one step of its folded loop into several groups (the
  /// step's peers change direction from one iteration to the next, and the directions of other ranks' steps fell
  /// between them): no group then holds that rank's call of every iteration, and the loop is no PhaseLoop.
  bool steps_split = false;
};

/// Shape::loop_iterations of a rank whose folded loops disagree.
inline constexpr std::uint32_t kNoIterations = UINT32_MAX;

/// How much of a call the shape merge aligns on besides its function.
enum class Alignment : std::uint8_t {
  Function,   ///< the MPI function and role only
  Direction,  ///< and whether the peer is a lower or higher rank
  Step,       ///< and whether it is a neighbour (offset +-1) or farther
  Label,      ///< and the peer's label in a frame (Call::label): calls to the same neighbour of a grid at every n
  Tag,        ///< and the message's tag: a code that tags each direction of its exchanges (a multigrid code's
              ///< axes) makes the same exchange with the same tag however its process grid is cut
  /// As Tag, and a run of calls to one function is cut where the tag changes: two loops of one function, each
  /// tagging its messages alike (a ring's n - 1 steps, then a recursive halving's log2 n), are two groups, each
  /// with its own frame and count.
  TagRuns,
  /// As Tag, and a call pairs only with calls of the same kind of exchange (Call::exchange): a code whose coarse
  /// levels leave some ranks idle makes there exchanges of its own (a half exchange: receives from both sides and
  /// their waits, no send) that the full exchanges of other runs must not absorb call by call.
  TagExchange,
};

/// Merges the ranks' calls into their shortest common supersequence (progressively, rank by rank); the shape's
/// groups are its runs of calls to one function. `runs`, when given, names each rank's run (its n): of the
/// alignments that pair as many calls, the one pairing most calls with the size a rank of the same run has there
/// is taken.
[[nodiscard]] Shape merge_shapes(const std::vector<const std::vector<RankGroup>*>& ranks, Alignment alignment,
                                 std::span<const std::int64_t> runs = {});

}  // namespace p3s::modeler::detail
