// SPDX-License-Identifier: BSD-3-Clause
// The replay's phase loop. Each rank runs the phase order of its plan (plan.cpp), and times its instances the way the
// analyzer times phases: each instance ends at the rank's last call of it and begins where the rank's previous instance
// ended, so a rank's instance times tile its time and their mean over ranks is the phase time, pipelines included.
// MPI_Init and MPI_Finalize are not made again: the phases holding them are replayed without them.
#include "p3s/replay/replay.hpp"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

#include "burst.hpp"
#include "communicators.hpp"
#include "executor.hpp"
#include "made_once.hpp"
#include "p3s/error.hpp"
#include "p3s/modeler/dims.hpp"
#include "p3s/modeler/phase_check.hpp"
#include "p3s/modeler/predict.hpp"
#include "runner.hpp"
#include "watchdog.hpp"

namespace p3s::replay {

std::string_view compute_name(Compute c) noexcept { return c == Compute::Sleep ? "sleep" : "spin"; }

std::optional<Compute> compute_named(std::string_view name) noexcept {
  if (name == "spin") return Compute::Spin;
  if (name == "sleep") return Compute::Sleep;
  return std::nullopt;
}

namespace {

using detail::Measured;

/// How many instances of a repeated phase are measured: at least the options' minimum, and as many more as make the
/// measured stretch last `min_time` (a phase's instance times are noisy, their sum much less: each instance starts
/// where the last ended). The typical instance time is the mean over ranks of the last warm-up instance (of the first
/// measured one without warm-up), reduced without blocking while the minimum is measured, so that no barrier
/// separates the instances; every rank then decides alike.
class InstanceCount {
 public:
  InstanceCount(MPI_Comm comm, std::uint64_t count, const ReplayOptions& o) : comm_(comm), count_(count) {
    const auto warmup = static_cast<std::uint64_t>(std::max(0, o.warmup));
    const auto least = static_cast<std::uint64_t>(std::max(1, o.instances));
    if (count <= warmup + least + 1) {
      measured_ = count;  // a phase this short is measured whole, as the application runs it: cold instance too
      return;
    }
    warm_ = warmup;
    most_ = count - warm_ - 1;
    measured_ = least;
    min_time_ns_ = o.min_time_s * 1e9;
    sizing_ = min_time_ns_ > 0 && most_ > measured_;
    sample_at_ = warm_ > 0 ? warm_ - 1 : 0;
    decide_at_ = warm_ + measured_ - 1;
  }
  /// Whether instance `i` is measured: after the warm-up, and before the one instance that follows the measured ones
  /// where the phase has it, so that the last measured instance ends as its neighbours do (ranks that finish a
  /// phase's last instance go on to the next phase's calls, whose waiting slows the ranks still in it).
  [[nodiscard]] bool measured(std::uint64_t i) const noexcept { return i >= warm_ && i < warm_ + measured_; }
  [[nodiscard]] std::uint64_t total() const noexcept {
    return warm_ + measured_ + (warm_ + measured_ < count_ ? 1 : 0);
  }
  /// After instance `i` ended, `ns` after the one before: samples it, or decides how many are measured. The sample
  /// is reduced as whole nanoseconds, so that every rank gets the same sum and decides alike.
  void ended(std::uint64_t i, std::int64_t ns, std::int64_t n) {
    if (!sizing_) return;
    if (i == sample_at_) {
      sample_ = ns;
      MPI_Iallreduce(MPI_IN_PLACE, &sample_, 1, MPI_INT64_T, MPI_SUM, comm_, &request_);
    }
    if (i == decide_at_) {
      MPI_Wait(&request_, MPI_STATUS_IGNORE);
      const double typical = static_cast<double>(sample_) / static_cast<double>(n);
      const double wanted = typical > 0 ? std::ceil(min_time_ns_ / typical) : static_cast<double>(most_);
      measured_ = std::clamp<std::uint64_t>(static_cast<std::uint64_t>(std::min(wanted, 1e18)), measured_, most_);
      sizing_ = false;
    }
  }

 private:
  MPI_Comm comm_;
  std::uint64_t count_ = 0;
  std::uint64_t warm_ = 0;
  std::uint64_t measured_ = 0;
  std::uint64_t most_ = 0;
  double min_time_ns_ = 0;
  bool sizing_ = false;
  std::uint64_t sample_at_ = 0;
  std::uint64_t decide_at_ = 0;
  std::int64_t sample_ = 0;
  MPI_Request request_ = MPI_REQUEST_NULL;
};

/// The longest burst of the rank's plan, in seconds.
double longest_burst_s(const std::vector<PlannedPhase>& phases) {
  double longest = 0;
  for (const PlannedPhase& p : phases) {
    for (const modeler::PredictedCall& c : p.rank.calls) longest = std::max(longest, c.burst_ns.value_or(0));
    longest = std::max(longest, p.rank.tail_ns.value_or(0));
  }
  return longest / 1e9;
}

double largest_size(const std::vector<PlannedPhase>& phases) {
  double largest = 0;
  for (const PlannedPhase& p : phases) {
    for (const modeler::PredictedCall& c : p.rank.calls) {
      for (const modeler::PredictedAction& a : c.actions) largest = std::max({largest, a.bytes, a.block});
    }
  }
  return largest;
}

/// Refuses, on every rank alike, a plan whose ranks disagree on a collective (its operation, root or block) with the
/// other members of its communicator: MPI would pair unlike calls, and a block larger than a member's buffer
/// overruns it. One reduction per communicator, of a hash per phase of its collectives in order, made in the same
/// order at every rank, so that a disagreement cannot leave a rank waiting.
void agree_on_collectives(const ReplayPlan& plan, const detail::Communicators& comms, int rank) {
  const MPI_Comm base = comms.layout().base;
  const std::size_t phases = plan.phases.size();
  // Per communicator: each phase's hash, then its complement (a minimum over both gives the minimum and maximum).
  std::vector<std::vector<std::uint64_t>> hashes(comms.size(), std::vector<std::uint64_t>(2 * phases, 0));
  for (std::size_t p = 0; p < phases; ++p) {
    for (const modeler::PredictedCall& c : plan.phases[p].rank.calls) {
      for (const modeler::PredictedAction& a : c.actions) {
        if (a.kind != mpi::ActionKind::Collective) continue;
        std::uint64_t& h = hashes[comms.index_of(a.comm)][p];
        h = modeler::add_collective(h, a.collective, a.root, modeler::message_count(a.block));
      }
    }
  }
  std::string disagreement;
  for (std::size_t i = 0; i < comms.size(); ++i) {
    std::vector<std::uint64_t>& h = hashes[i];
    for (std::size_t p = 0; p < phases; ++p) h[phases + p] = ~h[p];
    MPI_Allreduce(MPI_IN_PLACE, h.data(), static_cast<int>(h.size()), MPI_UINT64_T, MPI_MIN, comms.at(i));
    for (std::size_t p = 0; p < phases && disagreement.empty(); ++p) {
      if (h[p] == ~h[phases + p]) continue;
      disagreement = "phase " + std::to_string(plan.phases[p].id) + ": the ranks of the communicator " +
                     comms.describe(i) +
                     " disagree on its collectives (an operation, a root or a size differs from rank to rank, rank " +
                     std::to_string(rank) + " among them); the trace was changed after `p3s predict` checked it";
    }
  }
  int failing = disagreement.empty() ? 1 << 30 : rank;
  MPI_Allreduce(MPI_IN_PLACE, &failing, 1, MPI_INT, MPI_MIN, base);
  if (failing != 1 << 30) throw RefusedPlan(rank == failing ? disagreement : std::string());
}

/// One rank's side of the replay: its calls made through the executor, its bursts emulated, where it is kept for
/// the watchdog.
class RankRunner {
 public:
  RankRunner(const ReplayPlan& plan, const ReplayOptions& options, const detail::Communicators& comms, int rank,
             double largest, const detail::RangeHooks& hooks)
      : options_(options),
        executor_(comms, rank, largest, hooks.pacing),
        burst_(options.compute),
        hooks_(hooks),
        rank_(rank) {
    MPI_Comm_dup(comms.layout().base, &sizing_);
    scaled_ = !comms.layout().full();
    // A rank waits for a peer as long as the peer's longest burst, and makes no progress meanwhile: the limit runs
    // from where the longest burst of any rank would have ended.
    double longest = longest_burst_s(plan.phases);
    MPI_Allreduce(MPI_IN_PLACE, &longest, 1, MPI_DOUBLE, MPI_MAX, comms.layout().base);
    watchdog_.emplace(rank, options.watchdog_s + longest, position_);
  }
  ~RankRunner() {
    watchdog_.reset();
    MPI_Comm_free(&sizing_);
  }
  RankRunner(const RankRunner&) = delete;
  RankRunner& operator=(const RankRunner&) = delete;

  /// Runs `count` instances of a phase (its warm-up, measured and trailing ones), measuring into `m`; `last_end` is
  /// where the rank's previous instance ended.
  void run_phase(const PlannedPhase& pm, std::uint64_t count, std::int64_t n, Measured& m, std::int64_t& last_end) {
    InstanceCount instances(sizing_, count, options_);
    position_.phase = pm.id;
    std::vector<double> extra;  // per measured instance: the collectives' time at the predicted size, not made here
    const std::size_t first = m.instances.size();
    for (std::uint64_t i = 0; i < instances.total(); ++i) {
      const bool timed = instances.measured(i);
      position_.instance = static_cast<std::uint32_t>(i);
      extra_ns_ = 0;
      if (hooks_.pacing != nullptr) hooks_.pacing->begin_instance(rank_, pm.id, last_end, timed && hooks_.timed);
      hooks_.noise.instance(pm.id);
      executor_.begin(pm.rank.calls);
      for (std::size_t k = 0; k < pm.rank.calls.size(); ++k) call(pm.rank.calls[k], k, timed ? &m : nullptr);
      const std::int64_t t0 = detail::now_ns();
      emulate(pm.rank.tail_ns.value_or(0), -1);
      executor_.end();
      const std::int64_t end = detail::now_ns();
      if (timed) {
        m.compute_ns += static_cast<double>(end - t0);
        m.predicted_ns += pm.rank.tail_ns.value_or(0);
        m.instances.push_back(static_cast<double>(end - last_end));
        extra.push_back(extra_ns_);
      }
      instances.ended(i, end - last_end, n);
      last_end = end;
    }
    if (scaled_) add_collective_extra(extra, m, first);
  }

 private:
  /// The burst before call k, then the call; its times added to `m` when it is measured.
  void call(const modeler::PredictedCall& c, std::size_t k, Measured* m) {
    position_.call = static_cast<std::uint32_t>(k);
    const double burst_ns = c.burst_ns.value_or(0);
    const std::int64_t t0 = detail::now_ns();
    emulate(burst_ns, static_cast<std::int32_t>(c.function));
    position_.peer = c.actions.empty() ? -1 : c.actions.front().peer;
    const std::int64_t t1 = detail::now_ns();
    if (!detail::made_once(c.function)) executor_.execute(c, k);
    const std::int64_t t2 = detail::now_ns();
    // A collective a range replay step made on fewer ranks than the prediction's takes longer: by its cost measured
    // on the job at several sizes (CollectiveCosts), else as much longer as its algorithm's log2 of the members says
    // (a tree, a recursive doubling) times the call's own time; what is added is settled at the phase's end, from
    // the member that found least (its time in the call is the collective's own, not a wait).
    const std::optional<double> calibrated =
        hooks_.costs != nullptr ? executor_.collective_extra(c, *hooks_.costs) : std::nullopt;
    if (calibrated) {
      extra_ns_ += *calibrated;
    } else if (const double scale = executor_.collective_scale(c); scale > 1) {
      extra_ns_ += (scale - 1) * static_cast<double>(t2 - t1);
    }
    if (m != nullptr) {
      m->compute_ns += static_cast<double>(t1 - t0);
      m->predicted_ns += burst_ns;
      m->mpi_ns += static_cast<double>(t2 - t1);
      m->calls += 1;
      for (const modeler::PredictedAction& a : c.actions) {
        if (a.kind != mpi::ActionKind::Send || a.peer < 0) continue;
        m->messages += 1;
        m->bytes += a.bytes;
      }
    }
  }

  /// Adds to each measured instance (from `first` on) the least extra time any rank of the layout found for it.
  void add_collective_extra(std::vector<double>& extra, Measured& m, std::size_t first) {
    MPI_Allreduce(MPI_IN_PLACE, extra.data(), static_cast<int>(extra.size()), MPI_DOUBLE, MPI_MIN, sizing_);
    for (std::size_t i = 0; i < extra.size() && first + i < m.instances.size(); ++i) {
      m.instances[first + i] += extra[i];
      m.mpi_ns += extra[i];
    }
  }

  /// A burst, the watchdog seeing it as computation; `then` is the function the rank calls next (-1: none).
  void emulate(double ns, std::int32_t then) {
    position_.function = -1;
    ++position_.step;
    position_.computing = true;
    burst_.run(ns);
    position_.computing = false;
    position_.function = then;
    ++position_.step;
  }

  const ReplayOptions& options_;
  detail::Executor executor_;
  detail::BurstEmulator burst_;
  MPI_Comm sizing_ = MPI_COMM_NULL;  ///< the instance counts' own reductions, apart from the replayed communication
  bool scaled_ = false;              ///< a range replay step: collectives may be made on fewer ranks than predicted
  double extra_ns_ = 0;              ///< this instance's collectives' time at the predicted size, not made here
  detail::RangeHooks hooks_;         ///< a range replay step's pacing and noise cue
  std::int64_t rank_ = 0;
  detail::Position position_;
  std::optional<detail::Watchdog> watchdog_;
};

}  // namespace

namespace detail {

RankMeasure run_phases(const ReplayPlan& plan, const ReplayOptions& options, std::int64_t rank, const Layout& layout,
                       const RangeHooks& hooks) {
  const MPI_Comm base = layout.base;
  const modeler::ScopedDimsRule rule(plan.dims_rule);  // communicators' laws in dims(n)
  double largest = largest_size(plan.phases);
  MPI_Allreduce(MPI_IN_PLACE, &largest, 1, MPI_DOUBLE, MPI_MAX, base);
  const Communicators comms(plan.comms, plan.processes, rank, layout);
  agree_on_collectives(plan, comms, static_cast<int>(rank));
  RankMeasure out;
  out.phases.resize(plan.phases.size());
  out.done.assign(plan.phases.size(), false);
  int members = 1;
  MPI_Comm_size(base, &members);
  RankRunner runner(plan, options, comms, static_cast<int>(rank), largest, hooks);
  MPI_Barrier(base);
  const std::int64_t start = now_ns();
  std::int64_t last_end = start;
  for (const modeler::PhaseRun& e : plan.order) {
    if (out.done[e.phase] || e.count == 0) continue;
    out.done[e.phase] = true;
    runner.run_phase(plan.phases.at(e.phase), e.count, members, out.phases[e.phase], last_end);
  }
  MPI_Barrier(base);
  out.wall_ns = now_ns() - start;
  return out;
}

}  // namespace detail

ReplayResult run_replay(const ReplayPlan& plan, const ReplayOptions& options) {
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const detail::RankMeasure m = detail::run_phases(plan, options, rank, detail::Layout{});
  ReplayResult result;
  result.processes = size;
  result.notes = plan.notes;
  result.replay_wall_ns = static_cast<double>(m.wall_ns);
  MPI_Allreduce(MPI_IN_PLACE, &result.replay_wall_ns, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  detail::PhaseAccum accum(plan.phases.size());
  accum.add(m.phases);
  result.phases = detail::phase_times(plan, accum, m.done, size, MPI_COMM_WORLD);
  detail::add_pet(result);
  return result;
}

}  // namespace p3s::replay
