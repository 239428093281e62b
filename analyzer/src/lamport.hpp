// SPDX-License-Identifier: BSD-3-Clause
// Exact message matching and Lamport clocks over all locations of a run, streaming: every location's
// operations are consumed in order, a location blocks on a receive until the matching send was processed, and
// the location with the smallest clock runs next, so memory holds the messages and collectives in flight and
// the ticks not yet final, never the trace.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "op_log.hpp"
#include "p3s/hash.hpp"

namespace p3s::analyzer {

/// The operations of one location, in program order.
class OpSource {
 public:
  virtual ~OpSource() = default;
  /// Fills `op` with the next operation; false at the end.
  virtual bool next(Op& op) = 0;
};

/// Where the engine's results go, per location, in program order.
class LamportSink {
 public:
  virtual ~LamportSink() = default;
  /// `op_tick`: the tick the operation belongs to (its first tick-carrying action's, or, for an operation
  /// without one, the next such action's on the same location). `action_ticks[i]` is the tick of action i
  /// (0 for actions that carry none).
  virtual void on_op(std::size_t location, std::uint64_t index, const Op& op, std::uint64_t op_tick,
                     std::span<const std::uint64_t> action_ticks) = 0;
  /// Called with every tick, in increasing order, once no event can land on it any more.
  /// `events` is the number of events at the tick (0 for an empty tick), `symbol` their combined feature.
  virtual void on_tick(std::uint64_t tick, std::uint32_t events, std::uint64_t symbol) = 0;
};

struct LamportLocation {
  std::int32_t rank = -1;  ///< world rank (the sender/receiver identity used for matching)
  std::unique_ptr<OpSource> source;
};

struct LamportOptions {
  /// Continue past receives without a send and incomplete collectives (a recovered, incomplete trace):
  /// they are counted and advance their location's clock by one.
  bool partial = false;
};

/// What could not be matched.
struct MatchIssue {
  std::int32_t rank = -1;
  std::size_t location = 0;
  std::uint64_t op_index = 0;  ///< position of the MPI call in its location (0-based)
  std::string description;     ///< one line: what was waited for
};

struct LamportResult {
  std::uint64_t ticks = 0;   ///< highest tick
  std::uint64_t events = 0;  ///< tick-carrying actions
  std::uint64_t operations = 0;
  std::uint64_t messages = 0;                  ///< matched messages
  std::uint64_t max_in_flight = 0;             ///< most messages sent and not yet received at any point
  std::uint64_t max_open_ticks = 0;            ///< most ticks not yet final at any point
  std::vector<MatchIssue> unmatched_receives;  ///< blocked forever (only with partial; else an error)
  std::vector<MatchIssue> incomplete_collectives;
  std::uint64_t unmatched_sends = 0;  ///< messages never received
  std::vector<MatchIssue> unmatched_send_examples;
};

/// Members of a communicator (0 when unknown: its collectives then do not synchronise).
using CommSize = std::function<std::uint32_t(std::uint32_t comm)>;
/// The feature of one tick-carrying action, hashed into its tick's symbol.
using ActionFeature = std::function<std::uint64_t(std::int32_t rank, const Op& op, const Action& action)>;

/// Runs matching and Lamport clocks to the end of every location.
/// Rules: a send is the location's clock + 1 and carries it; a receive completes at max(clock, send) + 1; a
/// blocking collective ends for all members at max(members' clocks) + 1; a non-blocking one completes at
/// max(clock, members' clocks when they started it) + 1. Messages match FIFO per (communicator, source,
/// destination, tag) — exact under MPI's non-overtaking rule — taking the first queued message of the same
/// size (a receive completed out of posting order by Waitany still finds its own message); collectives match
/// per communicator by call order.
/// @throws TraceError when a receive has no send or a collective never completes (unless options.partial).
LamportResult run_lamport(std::vector<LamportLocation> locations, const CommSize& comm_size,
                          const ActionFeature& feature, LamportSink& sink, const LamportOptions& options = {});

}  // namespace p3s::analyzer
