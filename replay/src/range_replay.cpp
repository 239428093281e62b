// SPDX-License-Identifier: BSD-3-Clause
// A range replay's steps on a job smaller than the prediction: the measured ranges replayed as a full replay does,
// on their own communicator, black holes standing in for the ranks outside them.
#include <mpi.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "p3s/error.hpp"
#include "p3s/replay/ranges.hpp"
#include "runner.hpp"

namespace p3s::replay {
namespace {

using detail::kHoleRequestTag;

/// Who does what in one step: per job rank, the predicted rank it replays (-1: none), and per measured job rank its
/// black hole's job rank (-1: none).
struct StepRoles {
  std::vector<std::int64_t> replays;
  std::vector<int> hole_of;
  std::vector<int> serves;  ///< per job rank: the measured job rank it is the black hole of (-1: none)
  std::vector<bool> timed;  ///< per job rank: whether its predicted rank's range is timed in this step
};

StepRoles roles_of(const RangeTraffic& t, const RangeStep& step, std::int64_t measured_slots, int job) {
  StepRoles r;
  r.replays.assign(static_cast<std::size_t>(job), -1);
  r.hole_of.assign(static_cast<std::size_t>(job), -1);
  r.serves.assign(static_cast<std::size_t>(job), -1);
  r.timed.assign(static_cast<std::size_t>(job), false);
  std::size_t slot = 0;
  int next_hole = static_cast<int>(measured_slots);
  for (const auto& [range, timed] : {std::pair{step.first, step.first_timed}, {step.second, step.second_timed}}) {
    if (range < 0) continue;
    for (std::int64_t p = t.first_rank(range); p < t.end_rank(range); ++p, ++slot) {
      r.replays[slot] = p;
      r.timed[slot] = timed;
      if (!t.talks_outside(p, step.first, step.second)) continue;
      r.hole_of[slot] = next_hole;
      r.serves[static_cast<std::size_t>(next_hole)] = static_cast<int>(slot);
      ++next_hole;
    }
  }
  return r;
}

/// A black hole's service to one measured rank until it says the step is over: what it is sent is received and
/// dropped; each request is answered with a message of the requested tag and count.
void serve_as_hole(MPI_Comm holes, int partner) {
  std::vector<char> in;
  std::vector<char> zeros;
  std::vector<MPI_Request> replies;
  for (;;) {
    MPI_Status st;
    MPI_Probe(partner, MPI_ANY_TAG, holes, &st);
    if (st.MPI_TAG != kHoleRequestTag) {
      int count = 0;
      MPI_Get_count(&st, MPI_BYTE, &count);
      in.resize(static_cast<std::size_t>(count) + 1);
      MPI_Recv(in.data(), count, MPI_BYTE, partner, st.MPI_TAG, holes, MPI_STATUS_IGNORE);
      continue;
    }
    std::array<std::int64_t, 2> request{};
    MPI_Recv(request.data(), 2, MPI_INT64_T, partner, kHoleRequestTag, holes, MPI_STATUS_IGNORE);
    if (request[0] < 0) break;
    if (static_cast<std::size_t>(request[1]) >= zeros.size()) {
      // The replies in flight read the buffer: they end before it grows.
      MPI_Waitall(static_cast<int>(replies.size()), replies.data(), MPI_STATUSES_IGNORE);
      replies.clear();
      zeros.assign(static_cast<std::size_t>(request[1]) + 1, 0);
    }
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Isend(zeros.data(), static_cast<int>(request[1]), MPI_BYTE, partner, static_cast<int>(request[0]), holes, &r);
    replies.push_back(r);
    if (replies.size() >= 64) {
      MPI_Waitall(static_cast<int>(replies.size()), replies.data(), MPI_STATUSES_IGNORE);
      replies.clear();
    }
  }
  MPI_Waitall(static_cast<int>(replies.size()), replies.data(), MPI_STATUSES_IGNORE);
}

ReplayPlan plan_of(const RangeSource& source, std::int64_t n, std::int64_t rank) {
  if (source.model != nullptr) return plan_from_model(*source.model, source.path, n, rank, source.policy);
  return plan_from_st4np(source.path, n, rank);
}

/// Refuses, on every rank alike (each holds the same schedule), a job too small for the schedule.
void check_job(const RangeSchedule& schedule, int job, int me) {
  const std::int64_t needed = schedule.job_size() - schedule.noise_ranks;
  if (job >= needed) return;
  throw RefusedPlan(me != 0 ? std::string()
                            : "this range replay needs " + std::to_string(needed) + " ranks (" +
                                  std::to_string(needed - schedule.black_holes) + " measured and " +
                                  std::to_string(schedule.black_holes) + " black holes), the job has " +
                                  std::to_string(job) + "; run it with -np " + std::to_string(schedule.job_size()));
}

/// What the steps of a range replay share on every job rank.
struct Job {
  const RangeSource& source;
  const RangeTraffic& traffic;
  ReplayOptions options;  ///< the current pass's (the passes before the last measure fewer instances)
  MPI_Comm holes = MPI_COMM_NULL;
  MPI_Comm noise = MPI_COMM_NULL;
  int noise_leader = -1;  ///< the first noise rank (-1: the job has none)
  detail::Pacing pacing;
  detail::CollectiveCosts costs;
  detail::PhaseAccum accum;
  std::vector<int> done;
  std::int64_t noise_sent = 0;  ///< messages this rank sent as a noise rank
};

/// The noise of one step: per phase id, its messages per instance and their size.
detail::NoiseLoad noise_load(const RangeTraffic& t, const RangeStep& step) {
  detail::NoiseLoad out;
  for (std::size_t p = 0; p < t.phases.size() && p < step.noise_messages.size(); ++p) {
    if (step.noise_messages[p] > 0) out[t.phases[p].id] = {step.noise_messages[p], step.noise_bytes[p]};
  }
  return out;
}

/// A measured rank's part of a step: replays its predicted rank, adding what it measured to the job's sums where
/// its range is timed. Returns its wall time.
std::int64_t replay_in_step(Job& job, const StepRoles& roles, MPI_Comm base, int me) {
  const auto w = static_cast<std::size_t>(me);
  const RangeTraffic& t = job.traffic;
  detail::Layout layout;
  layout.base = base;
  layout.base_rank.assign(static_cast<std::size_t>(t.processes), -1);
  for (std::size_t j = 0; j < roles.replays.size() && roles.replays[j] >= 0; ++j) {
    layout.base_rank[static_cast<std::size_t>(roles.replays[j])] = static_cast<int>(j);
  }
  layout.holes = job.holes;
  layout.hole = roles.hole_of[w];
  detail::RangeHooks hooks{&job.pacing, roles.timed[w], {}, &job.costs};
  if (w == 0 && job.noise_leader >= 0) hooks.noise = detail::NoiseCue{job.noise, job.noise_leader};
  const ReplayPlan plan = plan_of(job.source, t.processes, roles.replays[w]);
  const detail::RankMeasure m = detail::run_phases(plan, job.options, roles.replays[w], layout, hooks);
  hooks.noise.end();
  if (layout.hole >= 0) {
    const std::array<std::int64_t, 2> end{-1, 0};
    MPI_Send(end.data(), 2, MPI_INT64_T, layout.hole, kHoleRequestTag, job.holes);
  }
  if (roles.timed[w]) job.accum.add(m.phases);
  for (std::size_t p = 0; p < m.done.size() && p < job.done.size(); ++p) {
    job.done[p] = job.done[p] || m.done[p] ? 1 : 0;
  }
  return m.wall_ns;
}

/// One step, on this job rank: replays its predicted rank, serves as a black hole or a noise rank, or waits.
/// Returns the step's wall time on a measured rank (0 elsewhere).
std::int64_t run_step(Job& job, const RangeStep& step, const StepRoles& roles, int me) {
  const auto w = static_cast<std::size_t>(me);
  MPI_Comm base = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, roles.replays[w] >= 0 ? 0 : MPI_UNDEFINED, me, &base);
  std::int64_t wall = 0;
  if (roles.replays[w] >= 0) {
    wall = replay_in_step(job, roles, base, me);
    MPI_Comm_free(&base);
  } else if (roles.serves[w] >= 0) {
    serve_as_hole(job.holes, roles.serves[w]);
  } else if (job.noise_leader >= 0 && (me == job.noise_leader || me == job.noise_leader + 1)) {
    const bool leader = me == job.noise_leader;
    job.noise_sent +=
        detail::serve_as_noise(job.noise, leader, 0, leader ? me + 1 : job.noise_leader, noise_load(job.traffic, step));
  }
  return wall;
}

std::string range_note(const RangeSchedule& s, int job, int passes, bool noise) {
  return "range replay: " + std::to_string(s.processes) + " ranks measured in " + std::to_string(s.steps.size()) +
         " steps of two ranges of " + std::to_string(s.range_size) + " on " + std::to_string(job) + " ranks, " +
         std::to_string(passes) + (passes == 1 ? " pass" : " passes") +
         " (the last one measured); messages with ranks outside a step's ranges went to black holes, which answer a "
         "receive no earlier than its sender sent it in the step that measured the sender's range (the time since "
         "their phase instances began), or at once where that range was not measured yet; collectives with members "
         "outside the ranges ran on the step's ranks, each instance given the time they would take longer at the "
         "predicted size (by their cost a + b x log2(members) or a + b x members timed on the job at 2, 4, 8, ... "
         "ranks and fitted, below; a collective not timed so, log2 of the predicted members over log2 of the step's "
         "times the time of the member that waited least), and a phase with a collective over all ranks takes its "
         "slowest rank's time; " +
         (noise ? "two noise ranks sent each other, per instance of each phase of the measured ranges (cued by the "
                  "step's first rank), the messages between other ranges that the full run has in flight then, of "
                  "the phase's mean size"
                : std::string("the network traffic of the other ranges (noise) was not emulated") +
                      (s.noise_ranks > 0 ? " (the job had no room for the 2 noise ranks)" : ""));
}

}  // namespace

ReplayResult run_range_replay(const ReplayPlan& meta, const RangeSource& source, const RangeTraffic& traffic,
                              const RangeSchedule& schedule, const ReplayOptions& options) {
  int me = 0;
  int job = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &job);
  check_job(schedule, job, me);
  const std::int64_t slots = schedule.job_size() - schedule.black_holes - schedule.noise_ranks;
  Job j{source,
        traffic,
        options,
        MPI_COMM_NULL,
        MPI_COMM_NULL,
        -1,
        detail::Pacing(schedule.range_size),
        detail::CollectiveCosts::calibrate(meta, slots, MPI_COMM_WORLD),
        detail::PhaseAccum(meta.phases.size()),
        std::vector<int>(meta.phases.size(), 0),
        0};
  MPI_Comm_dup(MPI_COMM_WORLD, &j.holes);
  MPI_Comm_dup(MPI_COMM_WORLD, &j.noise);
  // The noise ranks are the job's last two where it has room for them (a job without them runs, unloaded).
  if (schedule.noise_ranks == 2 && job >= schedule.job_size())
    j.noise_leader = static_cast<int>(schedule.job_size()) - 2;
  double wall_ns = 0;
  const int passes = std::max(1, options.range_passes);
  for (int pass = 0; pass < passes; ++pass) {
    // Each pass measures every step again, its black holes paced by the send times of the passes before (and of the
    // steps before in this pass); the last pass's measurements are the result.
    j.accum = detail::PhaseAccum(meta.phases.size());
    std::fill(j.done.begin(), j.done.end(), 0);
    // A pass before the last gives send times only: one warm-up instance and two measured ones are enough.
    j.options = options;
    if (pass + 1 < passes) {
      j.options.warmup = std::min(options.warmup, 1);
      j.options.instances = std::min(options.instances, 2);
      j.options.min_time_s = 0;
    }
    // Passes go through the steps forward and backward in turn: a pipeline's sweeps both ways across the ranges
    // are each paced in one pass by send times measured in the same pass.
    for (std::size_t k = 0; k < schedule.steps.size(); ++k) {
      const RangeStep& step = schedule.steps[pass % 2 == 0 ? k : schedule.steps.size() - 1 - k];
      auto wall = static_cast<double>(run_step(j, step, roles_of(traffic, step, slots, job), me));
      MPI_Allreduce(MPI_IN_PLACE, &wall, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      wall_ns += wall;
      j.pacing.share(MPI_COMM_WORLD);
    }
  }
  MPI_Comm_free(&j.holes);
  MPI_Comm_free(&j.noise);
  std::vector<int>& done = j.done;
  MPI_Allreduce(MPI_IN_PLACE, done.data(), static_cast<int>(done.size()), MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &j.noise_sent, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  ReplayResult result;
  result.processes = schedule.processes;
  result.notes = meta.notes;
  result.notes.insert(result.notes.end(), schedule.notes.begin(), schedule.notes.end());
  result.notes.push_back(range_note(schedule, job, passes, j.noise_leader >= 0));
  for (const std::string& line : j.costs.describe()) result.notes.push_back("range replay: " + line);
  result.replay_wall_ns = wall_ns;
  result.job_ranks = job;
  result.noise_messages = static_cast<double>(j.noise_sent);
  result.range_schedule = schedule_json(schedule);
  const std::vector<bool> ran(done.begin(), done.end());
  result.phases = detail::phase_times(meta, j.accum, ran, schedule.processes, MPI_COMM_WORLD);
  // A phase with a collective over every rank ends together on every rank of the full run: each rank's instance
  // time there is the slowest's. The ranges measured apart do not wait for the slowest range, so such a phase takes
  // its slowest rank's time.
  for (std::size_t p = 0; p < result.phases.size() && p < traffic.phases.size(); ++p) {
    if (traffic.phases[p].widest_collective < schedule.processes) continue;
    result.phases[p].time_ns = result.phases[p].time_max_ns;
  }
  detail::add_pet(result);
  return result;
}

}  // namespace p3s::replay
