// SPDX-License-Identifier: BSD-3-Clause
// The plan of a range replay: n predicted ranks measured a few nodes at a time. The ranks are cut into ranges of C
// consecutive ranks (one node's worth, as a job's ranks are placed on nodes in order); each step of the replay
// measures two ranges at once, one per measurement node, while black holes stand in for the ranks outside them and
// noise ranks load the network with the traffic the full run has in flight and the step does not. This header plans
// the steps from the predicted traffic between ranges; it needs no MPI.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "p3s/modeler/model.hpp"
#include "p3s/modeler/phase_check.hpp"
#include "p3s/modeler/predict.hpp"
#include "p3s/replay/replay.hpp"

namespace p3s::replay {

/// The predicted point-to-point traffic between ranges of C consecutive ranks, per phase instance, and which ranges
/// each rank exchanges messages with.
struct RangeTraffic {
  std::int64_t processes = 0;
  std::int64_t range_size = 0;  ///< C
  std::int64_t ranges = 0;      ///< ceil(processes / C); the last may hold fewer ranks
  struct Phase {
    std::uint32_t id = 0;
    std::int64_t weight = 0;             ///< instances at n
    std::vector<double> messages;        ///< ranges x ranges, row = sender's range: messages per instance
    std::vector<double> bytes;           ///< the same, in bytes
    std::int64_t widest_collective = 0;  ///< the most ranks a collective of the phase spans (0: none)
  };
  std::vector<Phase> phases;
  /// Per rank: the other ranges it sends to or receives from in some phase, ascending.
  std::vector<std::vector<std::int64_t>> peer_ranges;

  [[nodiscard]] std::int64_t range_of(std::int64_t rank) const { return rank / range_size; }
  /// The ranks of range `range`: [first, last).
  [[nodiscard]] std::int64_t first_rank(std::int64_t range) const { return range * range_size; }
  [[nodiscard]] std::int64_t end_rank(std::int64_t range) const {
    return std::min(processes, (range + 1) * range_size);
  }
  /// Messages between ranges a and b (both ways) over the whole run (each phase's instances times its weight).
  [[nodiscard]] double messages_between(std::int64_t a, std::int64_t b) const;
  /// Whether `rank` exchanges messages with a range other than a and b: a measured rank that needs a black hole.
  [[nodiscard]] bool talks_outside(std::int64_t rank, std::int64_t a, std::int64_t b) const;
};

/// Records one rank's calls of one phase instance in the traffic (its sends, each message once; its collectives'
/// spans). RangeTraffic::phases must already hold the phase at index `phase`.
void add_rank(RangeTraffic& traffic, std::size_t phase, const modeler::PredictedRank& rank);

/// The empty traffic of n ranks in ranges of C: every matrix zero, one phase per (id, weight).
/// @throws p3s::InputError when C is not between 1 and n.
[[nodiscard]] RangeTraffic empty_traffic(std::int64_t n, std::int64_t c,
                                         const std::vector<std::pair<std::uint32_t, std::int64_t>>& phases);

/// The traffic of a model's prediction at n (every rank's calls of every phase evaluated once, one phase at a time).
/// @throws p3s::ModelError when the model cannot be evaluated at n; p3s::InputError for a bad C.
[[nodiscard]] RangeTraffic traffic_of_model(const modeler::Model& model, std::int64_t n, std::int64_t c);
/// The traffic of an ST4NP written by `p3s predict -o DIR` for n ranks.
/// @throws p3s::InputError when DIR is not a whole ST4NP for n ranks, or for a bad C.
[[nodiscard]] RangeTraffic traffic_of_st4np(const std::filesystem::path& dir, std::int64_t n, std::int64_t c);

/// One step of a range replay: two ranges measured at once (second = -1 where there is one range in all).
struct RangeStep {
  std::int64_t first = 0;
  std::int64_t second = -1;
  /// Whether the step times the range's events (its first measurement) or only replays them untimed, as the partner
  /// a range that was measured already needs to talk with.
  bool first_timed = true;
  bool second_timed = true;
  /// Ranks of the two ranges with messages to or from ranks outside them: each gets a black hole.
  std::int64_t black_holes = 0;
  /// Over the whole run (instances times weights): messages between the two ranges, and between them and outside.
  double between_messages = 0;
  double external_messages = 0;
  /// Per phase, per instance: the messages between ranges that the full run has and the step does not (between
  /// ranges of which at most one is measured): what the noise ranks send. Never below zero.
  std::vector<double> noise_messages;
  /// Per phase: the mean size of those messages, in bytes.
  std::vector<double> noise_bytes;
};

/// The steps of a range replay and the job they need.
struct RangeSchedule {
  std::int64_t processes = 0;
  std::int64_t range_size = 0;
  std::int64_t ranges = 0;
  std::vector<RangeStep> steps;
  std::int64_t black_holes = 0;  ///< the most any step needs
  std::int64_t noise_ranks = 0;  ///< 2 (a sender and a receiver) where some step has noise to send, else 0
  /// The replay job's ranks: 2 x C measured ranks (C where there is one range), then the black holes, then noise.
  [[nodiscard]] std::int64_t job_size() const;
  std::vector<std::string> notes;  ///< what the steps approximate (collectives wider than two ranges)
};

/// Pairs the ranges into steps until each has been measured once. The lowest unmeasured range that talks with another
/// unmeasured range goes first, with the unmeasured range it exchanges most messages with as its partner, so that the
/// two measurement nodes carry between them what those two nodes carry in the full run (ranges along a line pair in
/// order); a range whose partners were all measured already takes the measured one it talks with most (replayed
/// untimed, for the messages only), and a range that talks with no other pairs with the next one not yet measured.
/// Ties go to the lower range.
[[nodiscard]] RangeSchedule schedule_ranges(const RangeTraffic& traffic);

/// Where a range replay reads each rank's calls: a model (each measured rank evaluates its own, after the check
/// `p3s predict` makes) or an ST4NP directory.
struct RangeSource {
  std::string path;
  const modeler::Model* model = nullptr;  ///< null for an ST4NP
  modeler::OnInconsistency policy = modeler::OnInconsistency::Refuse;
};

/// Runs the schedule's steps on the job (collective over MPI_COMM_WORLD, which must hold at least
/// schedule.job_size() - schedule.noise_ranks ranks): in each step the first ranks replay the predicted ranks of the
/// two ranges, as a full replay does on their own communicator, a message with a rank outside them going to the
/// measured rank's black hole, which discards what it is sent and answers each receive with a message of the
/// requested tag and size (completing no earlier than its sender sent it, where a step before measured that); the
/// last two ranks, where the job has them, send the step's noise; the other ranks serve as black holes or wait.
/// ReplayOptions::range_passes passes over the steps, the last one measured. The ranges timed in a step give their
/// ranks' phase times; the result holds every predicted rank's, as a full replay at n would. `meta` is the plan of
/// predicted rank 0 (its phases' ids, names and weights and its notes name the result's phases).
/// @throws RefusedPlan on every rank alike when the job is too small.
[[nodiscard]] ReplayResult run_range_replay(const ReplayPlan& meta, const RangeSource& source,
                                            const RangeTraffic& traffic, const RangeSchedule& schedule,
                                            const ReplayOptions& options);

/// The schedule for people: one line per step (ranges, their ranks, timed or not, black holes, messages), the job
/// size and the notes.
[[nodiscard]] std::string schedule_summary(const RangeSchedule& schedule);
/// The schedule as JSON text (the range replay's result file holds it).
[[nodiscard]] std::string schedule_json(const RangeSchedule& schedule);

}  // namespace p3s::replay
