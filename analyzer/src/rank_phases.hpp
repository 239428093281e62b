// SPDX-License-Identifier: BSD-3-Clause
// Phases found per location first (the by-rank method): each location's calls are folded on their own, the
// loops whose iterations compute are the units, and the locations' occurrences are then joined by their
// position, so that instances skewed in time across ranks (pipelines, ranks that enter late) stay one phase.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "op_log.hpp"
#include "p3s/analyzer/phase_finder.hpp"
#include "run_phases.hpp"

namespace p3s::analyzer {

/// What one action does, seen from its location: kind, call, peer and root relative to `rank`, communicator and
/// collective operation (no tag, no size). Both phase methods build their symbols from it.
[[nodiscard]] std::uint64_t action_shape(std::int32_t rank, const Op& op, const Action& a) noexcept;

/// What an operation does, for the by-rank search: the call and, per action, its kind, peer (relative to the
/// location's rank), communicator, collective operation and root. Tags and sizes are left out: codes that number
/// messages by iteration, or whose volumes drift from step to step (particles crossing between domains),
/// still repeat.
[[nodiscard]] std::uint64_t operation_shape(std::int32_t rank, const Op& op) noexcept;

/// One location's calls as the by-rank search reads them: every operation's shape, marked where computation
/// precedes it, its shape with its messages' sizes and without its peers, its first peer, and where all processes meet
/// (38 bytes per call, and 8 per call a burst in the threshold's margin marked).
class CallSequence {
 public:
  /// `compute_burst_work`: the least work (the burst metric) of a burst that is computation on this location (see
  /// BurstHistogram; 0: none is told apart, and every call is taken to follow computation).
  CallSequence(std::int32_t rank, std::uint64_t compute_burst_work) : rank_(rank), threshold_(compute_burst_work) {}
  /// Operations in program order, with the logical tick of each; `everyone`: a blocking collective of all
  /// processes (a point where every rank agrees).
  void add(const Op& op, std::uint64_t tick, bool everyone = false);
  /// Room for `calls` calls, so that adding them never copies what is held.
  void reserve(std::uint64_t calls);
  [[nodiscard]] std::int32_t rank() const noexcept { return rank_; }
  /// Whether the location's bursts fell into computation and the rest (else every call is marked).
  [[nodiscard]] bool tells_compute() const noexcept { return threshold_ != 0; }
  [[nodiscard]] const std::vector<std::uint64_t>& shapes() const noexcept { return shapes_; }
  /// Per operation: its call (the region), the operation's type whatever its peers.
  [[nodiscard]] const std::vector<std::uint32_t>& regions() const noexcept { return regions_; }
  /// Per operation: 1 where a compute burst precedes it.
  [[nodiscard]] const std::vector<std::uint8_t>& anchors() const noexcept { return anchors_; }
  [[nodiscard]] const std::vector<std::uint64_t>& ticks() const noexcept { return ticks_; }
  /// Marks (or unmarks) operation `i` as following computation.
  void set_anchor(std::uint64_t i, bool anchor);
  /// Unmarks the calls that a burst in the threshold's margin (at least it, less than twice it: the octave below
  /// the classes of computation, which holds none of them) marked, where the same call never follows a burst of a
  /// class on this location. Such a burst before the call where a step computes is that computation run short;
  /// before any other call it is a delay of the machine (a preemption, a page fault: 30-50 us now and then on a
  /// loaded 2-core machine), which would cut a step in two. Done once, after the last call is added.
  void drop_stray_marks();
  /// Per operation: 1 where it is a blocking collective of all processes.
  [[nodiscard]] const std::vector<std::uint8_t>& syncs() const noexcept { return syncs_; }
  /// Per operation: its shape without its compute mark, with the size class of each of its messages.
  [[nodiscard]] const std::vector<std::uint64_t>& sized() const noexcept { return sized_; }
  /// Operation i's shape without its compute mark.
  [[nodiscard]] std::uint64_t plain_shape(std::uint64_t i) const noexcept;
  /// Per operation: its shape without peers (the call and, per action, its kind, communicator, operation and root).
  [[nodiscard]] const std::vector<std::uint32_t>& peerless() const noexcept { return peerless_; }
  /// Per operation: the world rank of its first message's other side, or -1 where it has none.
  [[nodiscard]] const std::vector<std::int32_t>& peers() const noexcept { return peers_; }
  /// The same calls for finding the program's iterations: no compute marks (the machine's load moves them), and
  /// where `with_sizes`, the size class of every message in each call's shape (a multigrid's levels differ only by
  /// their sizes).
  [[nodiscard]] CallSequence unmarked(bool with_sizes) const;

 private:
  std::int32_t rank_;
  std::uint64_t threshold_;
  std::vector<std::uint64_t> shapes_;
  std::vector<std::uint32_t> regions_;
  std::vector<std::uint8_t> anchors_;
  std::vector<std::uint8_t> syncs_;
  std::vector<std::uint64_t> ticks_;
  std::vector<std::uint64_t> sized_;
  std::vector<std::uint32_t> peerless_;
  std::vector<std::int32_t> peers_;
  std::vector<std::uint64_t> margin_;  // the calls a burst in the threshold's margin marked, in order
};

/// Where at least three locations make the same calls in the same order (an SPMD code's ranks), call i is one
/// point of the program on all of them: it follows computation where most of them say so. A loaded machine
/// stretches some ranks' bursts at random, and a location without a compute class marks every call; the program
/// itself computes before the same calls on every rank. Only the locations that told computation apart vote where
/// there are any: on an oversubscribed machine most ranks of a run can lose their compute class at once.
void agree_on_anchors(std::vector<CallSequence>& calls);

/// The by-rank phases (method in rank_phases.cpp), or nothing (with the reason in `why_not`) when no location
/// has calls. `level`, when given, is taken where every location has as many occurrences there (else the
/// analysis decides as without it). Occurrence k of the run is the k-th occurrence of every location; its phase is the
/// combination of the locations' own phases, and a combination that differs from a more frequent one on at most a fifth
/// of the locations is that one (DESIGN: 80 % of the events alike make one phase; two instances on one location are
/// alike with the same calls in the same order, 80 % of them with the same peers). `without_sizes`: the outermost
/// loops' iterations are found on the calls without their sizes, as a series whose other runs needed it asks.
[[nodiscard]] std::optional<RunPhases> phases_by_rank(std::vector<CallSequence> calls,
                                                      const PhaseFinderOptions& options, std::string& why_not,
                                                      std::optional<PhaseLevel> level = std::nullopt,
                                                      bool without_sizes = false);

}  // namespace p3s::analyzer
