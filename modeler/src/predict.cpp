// SPDX-License-Identifier: BSD-3-Clause
// A phase evaluated at n: every rank's calls, generated from the group models, with the work of their bursts.
#include "p3s/modeler/predict.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "p3s/error.hpp"
#include "work_model.hpp"

namespace p3s::modeler {
namespace {

/// The pattern case rank r uses at n (cases.size() when none applies).
std::uint32_t case_of(const Pattern& p, std::int64_t r, std::int64_t n) {
  for (std::size_t c = 0; c < p.cases.size(); ++c) {
    if (p.cases[c].when.holds(r, n)) return static_cast<std::uint32_t>(c);
  }
  return static_cast<std::uint32_t>(p.cases.size());
}

std::vector<std::uint32_t> cases_of(const PhaseModel& pm, std::int64_t r, std::int64_t n) {
  std::vector<std::uint32_t> out(pm.groups.size(), 0);
  for (std::size_t g = 0; g < pm.groups.size(); ++g) {
    if (pm.groups[g].role == Role::PointToPoint) out[g] = case_of(pm.groups[g].pattern, r, n);
  }
  return out;
}

/// The work class with these cases; a rank in a class no fitted run had (it appears only at larger n) takes the
/// class with the most ranks.
std::size_t class_of(const PhaseModel& pm, const std::vector<std::uint32_t>& cases, std::int64_t r, std::int64_t n) {
  std::size_t best = 0;
  std::int64_t most = -1;
  for (std::size_t k = 0; k < pm.work.size(); ++k) {
    if (pm.work[k].cases == cases && pm.work[k].when.holds(r, n)) return k;
    const std::int64_t ranks = pm.work[k].largest_run_ranks;
    if (ranks > most) {
      most = ranks;
      best = k;
    }
  }
  return best;
}

/// Checks before any rank is generated that the group's laws can be evaluated at n: its pattern's counts and
/// peers are whole numbers there and its communicators exist. @throws p3s::ModelError naming the phase, the group
/// and where the law would be whole.
void check_group(const PhaseModel& phase, std::size_t g, std::int64_t n) {
  const GroupModel& gm = phase.groups[g];
  const std::string where = "phase " + std::to_string(phase.id) + ", group " + std::to_string(g) + " (" + gm.call + ")";
  if (const std::optional<Unevaluable> u = gm.pattern.unevaluable_at(n)) {
    throw ModelError(where + ": " + u->what + " " + u->law.to_string() + " is not a whole number" +
                     (u->count ? " of calls" : "") + " at n = " + std::to_string(n) + " (it is at " +
                     whole_nearby(u->law, n, u->count) + "); predict at such n, or record a run at " +
                     std::to_string(n) + " processes and fit the model again with it");
  }
  try {
    if (gm.role == Role::PointToPoint) gm.comm.check_at(n);
    for (const CollectiveEntry& c : gm.collectives) c.comm.check_at(n);
  } catch (const ModelError& e) {
    throw ModelError(where + ": " + e.what());
  }
}

}  // namespace

double GroupModel::message_bytes(std::size_t which, std::size_t term, std::size_t slot, std::int64_t n,
                                 std::int64_t index, std::int64_t r) const {
  const TermTraits& t = traits.at(which).at(term);
  if (t.block[slot] && r >= 0 && which < pattern.cases.size()) {
    const Program& p = pattern.cases[which].program;
    return t.block[slot]->at(p.frame, p.layout, n, r, index);
  }
  double bytes =
      t.bytes[slot].value_at(static_cast<double>(n)) * std::pow(t.bytes_step_factor[slot], static_cast<double>(index));
  if (t.face_axis[slot] >= 0 && which < pattern.cases.size()) {
    const Program& p = pattern.cases[which].program;
    bytes *= face_points(p.frame, p.layout, n, static_cast<std::size_t>(t.face_axis[slot]), t.face_margins[slot]);
  }
  return bytes;
}

namespace {

/// The block every member of a collective passes, from the laws all members evaluate alike: a non-root's for a
/// rooted operation, the bytes each rank sends over the members otherwise (Score-P's counting, which the recorder
/// follows: an Allreduce of b bytes on m ranks counts m x b sent).
double block_of(const CollectiveEntry& ce, std::int64_t n, std::int64_t members) {
  const auto m = static_cast<double>(std::max<std::int64_t>(1, members));
  switch (ce.op) {
    case mpi::Collective::Bcast:
    case mpi::Collective::Scatter:
    case mpi::Collective::Scatterv:
      return ce.received_at(n, members, false);
    case mpi::Collective::Gather:
    case mpi::Collective::Gatherv:
    case mpi::Collective::Reduce:
      return ce.bytes_at(n, members, false);
    case mpi::Collective::Scan:
    case mpi::Collective::Exscan:
      // A member sends as many blocks as it receives on average: (m + 1) / 2 each, or (m - 1) / 2 when exclusive.
      return (ce.bytes_at(n, members, true) + ce.received_at(n, members, true)) /
             std::max(1.0, ce.exclusive ? m - 1 : m + 1);
    default:
      return ce.bytes_at(n, members, true) / m;
  }
}

}  // namespace

PhasePredictor::PhasePredictor(const PhaseModel& phase, std::int64_t n)
    : phase_(phase), n_(n), weight_(phase.weight_at(n)), class_ranks_(phase.work.size(), 0) {
  if (n < 1) throw ModelError("a prediction needs at least one process, not " + std::to_string(n));
  for (std::size_t g = 0; g < phase.groups.size(); ++g) check_group(phase, g, n);
  if (!phase.work.empty()) {
    for (std::int64_t r = 0; r < n; ++r) ++class_ranks_[modeler::class_of(phase, cases_of(phase, r, n), r, n)];
  }
}

double PhasePredictor::class_work(std::size_t cls) const {
  double w = 0;
  for (const BurstModel& b : phase_.work.at(cls).bursts) w += b.work.at(n_, class_ranks_[cls], weight_);
  return w;
}

std::size_t PhasePredictor::class_of(std::int64_t r) const {
  return modeler::class_of(phase_, cases_of(phase_, r, n_), r, n_);
}

std::optional<double> PhasePredictor::class_time(std::size_t cls) const {
  return phase_.work.at(cls).time_at(n_, class_ranks_[cls], weight_);
}

namespace {

/// One rank's calls in one instance of a phase, built group by group.
class RankBuilder {
 public:
  RankBuilder(const PhaseModel& phase, std::int64_t n, std::int64_t r)
      : phase_(phase),
        n_(n),
        r_(r),
        cases_(cases_of(phase, r, n)),
        entries_(phase.groups.size()),
        call_of_(phase.groups.size()),
        completed_(phase.groups.size()) {
    out_.rank = r;
  }

  PredictedRank build(const std::vector<std::int64_t>& class_ranks, std::int64_t weight) {
    for (std::size_t g = 0; g < phase_.groups.size(); ++g) {
      switch (phase_.groups[g].role) {
        case Role::PointToPoint:
          point_to_point(g);
          break;
        case Role::Completion:
          completions(g);
          break;
        case Role::Collective:
        case Role::Local:
          others(g);
          break;
      }
    }
    if (phase_.work.empty()) {
      for (const PhaseLoop& loop : phase_.loops) interleave(loop);
      return std::move(out_);
    }
    const std::size_t cls = class_of(phase_, cases_, r_, n_);
    stand_for_skipped(phase_.work[cls], class_ranks[cls], weight);
    for (const PhaseLoop& loop : phase_.loops) interleave(loop);
    share_work(phase_.work[cls], class_ranks[cls], weight);
    return std::move(out_);
  }

 private:
  using BurstPlace = std::tuple<std::int32_t, std::uint32_t, std::uint32_t>;  ///< (group, case, term)

  PredictedCall& add_call(const GroupModel& gm, BurstPlace place, std::int64_t iteration = 0) {
    out_.calls.emplace_back();
    out_.calls.back().function = gm.function;
    out_.calls.back().call = gm.call;
    burst_of_.push_back(place);
    iteration_of_.push_back(iteration);
    return out_.calls.back();
  }

  /// The iteration of call k of the `count` calls a group makes at the rank in a loop of repeated iterations
  /// (GroupModel::iterations): as many calls in each.
  [[nodiscard]] std::int64_t iteration_of_call(const GroupModel& gm, std::int64_t k, std::int64_t count) const {
    if (!gm.iterations || count <= 0) return 0;
    return k * gm.iterations_at(n_) / count;
  }

  /// The burst positions of calls that follow calls this rank skips: where the class computes most, as the model
  /// was fitted (detail::call_candidates). Calls are still group by group here.
  void stand_for_skipped(const WorkClass& wc, std::int64_t ranks, std::int64_t weight) {
    // A model without compute-time laws (schema 2) was fitted with every call at its own position.
    if (!std::all_of(wc.bursts.begin(), wc.bursts.end(), [](const BurstModel& b) { return b.time.has_value(); })) {
      return;
    }
    std::vector<detail::BurstKey> own;
    for (const auto& [g, which, term] : burst_of_) own.push_back({g, which, term});
    std::map<detail::BurstKey, double> law_at_n;
    for (const BurstModel& b : wc.bursts) law_at_n[{b.group, b.pattern_case, b.term}] = b.time->at(n_, ranks, weight);
    const auto value = [&](const detail::BurstKey& key) {
      const auto it = law_at_n.find(key);
      return it == law_at_n.end() ? 0.0 : it->second;
    };
    const std::vector<std::vector<detail::BurstKey>> candidates = detail::rank_candidates(phase_, own, cases_);
    for (std::size_t i = 0; i < own.size(); ++i) {
      const detail::BurstKey key = detail::stands_for(candidates[i], value);
      burst_of_[i] = {key.group, key.pattern_case, key.term};
    }
  }

  /// The burst position of call k of a group that is not point-to-point: its own, or the group's in a loop.
  [[nodiscard]] std::uint32_t call_place(std::size_t g, std::int64_t k) const {
    return phase_.in_loop(g) ? 0 : static_cast<std::uint32_t>(k);
  }

  /// The pattern's calls, with the peers, tags, sizes and communicator of each slot.
  void point_to_point(std::size_t g) {
    const GroupModel& gm = phase_.groups[g];
    std::size_t which = 0;
    entries_[g] = gm.entries(r_, n_, &which);
    completed_[g].assign(entries_[g].size(), false);
    for (const Entry& e : entries_[g]) {
      call_of_[g].push_back(out_.calls.size());
      PredictedCall& c =
          add_call(gm, {static_cast<std::int32_t>(g), static_cast<std::uint32_t>(which), e.term}, e.iteration);
      for (std::size_t s = 0; s < static_cast<std::size_t>(gm.slots); ++s) {
        if (e.peers[s] < 0 || !gm.slot_kinds[s]) continue;
        PredictedAction a;
        a.kind = *gm.slot_kinds[s];
        a.peer = e.peers[s];
        a.comm = &gm.comm;
        a.comm_size = gm.comm.size_of(r_, n_);
        if (which < gm.traits.size() && e.term < gm.traits[which].size()) {
          const TermTraits& t = gm.traits[which][e.term];
          a.tag = static_cast<std::uint32_t>(t.tag[s]);
          a.tag_from_send = t.tag_varies[s] && a.kind != mpi::ActionKind::Send;
          a.bytes = std::max(0.0, gm.message_bytes(which, e.term, s, n_, gm.size_index(e), r_));
        }
        c.actions.push_back(std::move(a));
      }
    }
  }

  /// Completion calls: each completes the requests of the terms it refers to that this rank started and that
  /// are not complete yet (a posted receive completes as the message it receives).
  void completions(std::size_t g) {
    const GroupModel& gm = phase_.groups[g];
    if (gm.per_request) {
      per_request(g);
      return;
    }
    if (gm.per_batch) {
      per_batch(g);
      return;
    }
    const std::int64_t count = gm.count_at(r_, n_);
    for (std::int64_t k = 0; k < count; ++k) {
      const std::int64_t iteration = iteration_of_call(gm, k, count);
      PredictedCall& c = add_call(gm, {static_cast<std::int32_t>(g), 0, call_place(g, k)}, iteration);
      // The calls of a loop's iterations: the k-th of the group's completes (its references are the same in
      // every iteration) what was started up to its own iteration.
      const std::size_t ref_call =
          gm.iterations ? static_cast<std::size_t>(k % std::max<std::int64_t>(1, count / gm.iterations_at(n_)))
                        : static_cast<std::size_t>(k);
      if (ref_call >= gm.completes.size()) continue;
      const std::int64_t upto = gm.iterations ? iteration : std::numeric_limits<std::int64_t>::max();
      for (const RequestRef& ref : gm.completes[ref_call]) {
        if (ref.group >= g || cases_[ref.group] != ref.pattern_case) continue;
        complete_term(ref, c, upto);
      }
    }
  }

  /// One call per pending request of the terms the group completes, in the order they were started.
  void per_request(std::size_t g) {
    const GroupModel& gm = phase_.groups[g];
    std::set<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>> refs;
    for (const auto& call : gm.completes) {
      for (const RequestRef& ref : call) refs.insert({ref.group, ref.pattern_case, ref.term});
    }
    // The requests in the order they are completed: by term, or in a loop iteration by iteration.
    std::vector<std::tuple<std::int64_t, std::size_t, std::uint32_t, std::size_t>> pending;  // (iteration, #, group, e)
    for (const auto& [sg, pattern_case, term] : refs) {
      if (sg >= g || cases_[sg] != pattern_case) continue;
      for (std::size_t e = 0; e < entries_[sg].size(); ++e) {
        const Entry& en = entries_[sg][e];
        if (en.term != term || completed_[sg][e] || en.null()) continue;
        pending.emplace_back(gm.iterations ? en.iteration : 0, pending.size(), sg, e);
      }
    }
    std::sort(pending.begin(), pending.end());
    std::uint32_t k = 0;
    for (const auto& [iteration, order, sg, e] : pending) {
      complete_entry(sg, e, add_call(gm, {static_cast<std::int32_t>(g), 0, call_place(g, k++)}, iteration));
    }
  }

  /// One call completing every pending request of the terms the group completes, where there is one.
  void per_batch(std::size_t g) {
    const GroupModel& gm = phase_.groups[g];
    bool pending = false;
    for (const auto& call : gm.completes) {
      for (const RequestRef& ref : call) {
        if (ref.group >= g || cases_[ref.group] != ref.pattern_case) continue;
        for (std::size_t e = 0; e < entries_[ref.group].size(); ++e) {
          const Entry& en = entries_[ref.group][e];
          pending = pending || (en.term == ref.term && !completed_[ref.group][e] && !en.null());
        }
      }
    }
    if (!pending) return;
    PredictedCall& c = add_call(gm, {static_cast<std::int32_t>(g), 0, call_place(g, 0)});
    for (const auto& call : gm.completes) {
      for (const RequestRef& ref : call) {
        if (ref.group < g && cases_[ref.group] == ref.pattern_case) complete_term(ref, c);
      }
    }
  }

  void complete_term(const RequestRef& ref, PredictedCall& c,
                     std::int64_t upto = std::numeric_limits<std::int64_t>::max()) {
    for (std::size_t e = 0; e < entries_[ref.group].size(); ++e) {
      const Entry& en = entries_[ref.group][e];
      if (en.term != ref.term || completed_[ref.group][e] || en.null()) continue;
      if (ref.index >= 0 && en.index != ref.index) continue;
      if (en.iteration > upto) continue;
      complete_entry(ref.group, e, c);
    }
  }

  void complete_entry(std::size_t group, std::size_t e, PredictedCall& c) {
    const GroupModel& started = phase_.groups[group];
    completed_[group][e] = true;
    const std::size_t origin = call_of_[group][e];
    for (const PredictedAction& o : out_.calls[origin].actions) {
      PredictedAction a;
      a.started = static_cast<std::int32_t>(origin);
      a.comm = o.comm;
      a.comm_size = o.comm_size;
      if (o.kind == mpi::ActionKind::IrecvPost) {
        a.kind = mpi::ActionKind::Recv;
        a.peer = o.peer;
        a.tag = o.tag;
        a.tag_from_send = o.tag_from_send;
        a.bytes = o.bytes;
      } else if (o.kind == mpi::ActionKind::Send && started.starts_requests) {
        a.kind = mpi::ActionKind::IsendComplete;
      } else {
        continue;
      }
      c.actions.push_back(std::move(a));
    }
  }

  /// Collectives (operation, communicator, root, sizes at r) and calls that move no data.
  void others(std::size_t g) {
    const GroupModel& gm = phase_.groups[g];
    const std::int64_t count = gm.count_at(r_, n_);
    for (std::int64_t k = 0; k < count; ++k) {
      PredictedCall& c =
          add_call(gm, {static_cast<std::int32_t>(g), 0, call_place(g, k)}, iteration_of_call(gm, k, count));
      if (gm.role != Role::Collective || static_cast<std::size_t>(k) >= gm.collectives.size()) continue;
      const CollectiveEntry& ce = gm.collectives[static_cast<std::size_t>(k)];
      PredictedAction a;
      a.kind = mpi::ActionKind::Collective;
      a.collective = ce.op;
      a.comm = &ce.comm;
      a.comm_size = ce.comm.size_of(r_, n_);
      bool is_root = true;
      if (ce.root) {
        a.root = ce.comm.member(r_, n_, count_value(*ce.root, n_));
        is_root = a.root == r_;
      }
      a.block = block_of(ce, n_, a.comm_size);
      if (ce.op == mpi::Collective::Scan || ce.op == mpi::Collective::Exscan) {
        // The member's own counts, as the recorder makes them: a block to each member after it (and itself unless
        // exclusive), one from each member before it (and itself).
        const auto me = static_cast<double>(ce.comm.index_of(r_, n_));
        const double own = ce.exclusive ? 0 : 1;
        a.bytes = a.block * (static_cast<double>(a.comm_size) - me - 1 + own);
        a.bytes_received = a.block * (me + own);
      } else {
        a.bytes = ce.bytes_at(n_, a.comm_size, is_root);
        a.bytes_received = ce.received_at(n_, a.comm_size, is_root);
      }
      c.actions.push_back(std::move(a));
    }
  }

  /// Puts the calls of a loop's groups (consecutive, group by group) in iteration order: the t-th call of each
  /// group, in group order, before the (t+1)-th; completions keep pointing at the calls that started them.
  void interleave(const PhaseLoop& loop) {
    if (phase_.groups.at(loop.first).iterations) {
      by_iteration(loop);
      return;
    }
    std::vector<std::vector<std::size_t>> by_group(loop.groups);
    std::size_t begin = out_.calls.size();
    std::size_t end = 0;
    for (std::size_t i = 0; i < burst_of_.size(); ++i) {
      const auto g = static_cast<std::uint32_t>(std::get<0>(burst_of_[i]));
      if (g < loop.first || g - loop.first >= loop.groups) continue;
      by_group[g - loop.first].push_back(i);
      begin = std::min(begin, i);
      end = std::max(end, i + 1);
    }
    if (begin >= end) return;
    std::vector<std::size_t> order;  // the new order of [begin, end), as old indices
    for (std::size_t t = 0; order.size() < end - begin; ++t) {
      for (const std::vector<std::size_t>& calls : by_group) {
        if (t < calls.size()) order.push_back(calls[t]);
      }
    }
    reorder(begin, order);
  }

  /// A loop whose iterations repeat the same calls: the calls of its groups (consecutive, group by group) in
  /// iteration order, group by group within an iteration.
  void by_iteration(const PhaseLoop& loop) {
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < burst_of_.size(); ++i) {
      const auto g = static_cast<std::uint32_t>(std::get<0>(burst_of_[i]));
      if (g >= loop.first && g - loop.first < loop.groups) order.push_back(i);
    }
    if (order.empty()) return;
    const std::size_t begin = order.front();
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return iteration_of_[a] < iteration_of_[b]; });
    reorder(begin, order);
  }

  /// Moves the calls `order` (old indices) to begin, begin + 1, ...; completions keep pointing at the calls that
  /// started them.
  void reorder(std::size_t begin, const std::vector<std::size_t>& order) {
    std::vector<std::int32_t> moved(out_.calls.size());
    for (std::size_t i = 0; i < moved.size(); ++i) moved[i] = static_cast<std::int32_t>(i);
    for (std::size_t k = 0; k < order.size(); ++k) moved[order[k]] = static_cast<std::int32_t>(begin + k);
    std::vector<PredictedCall> calls;
    std::vector<BurstPlace> places;
    std::vector<std::int64_t> iterations;
    for (const std::size_t i : order) {
      calls.push_back(std::move(out_.calls[i]));
      places.push_back(burst_of_[i]);
      iterations.push_back(iteration_of_[i]);
    }
    for (std::size_t k = 0; k < order.size(); ++k) {
      out_.calls[begin + k] = std::move(calls[k]);
      burst_of_[begin + k] = places[k];
      iteration_of_[begin + k] = iterations[k];
    }
    for (PredictedCall& c : out_.calls) {
      for (PredictedAction& a : c.actions) {
        if (a.started >= 0) a.started = moved[static_cast<std::size_t>(a.started)];
      }
    }
  }

  /// The work class's burst laws at n, each position's work and time shared among the calls at that position.
  /// A class's ranks do the same work per instance, but not all at the same positions (a rank on a grid's boundary
  /// skips a send, and its computation goes with the next call), and the laws of a position are the class's: so
  /// the rank's own positions are scaled to add up to the class's work and time per rank (the time to its
  /// compute-time law where it has one).
  void share_work(const WorkClass& wc, std::int64_t ranks, std::int64_t weight) {
    std::map<BurstPlace, std::int64_t> calls_per_burst;
    for (const BurstPlace& b : burst_of_) ++calls_per_burst[b];
    const bool timed = std::all_of(wc.bursts.begin(), wc.bursts.end(), [](const BurstModel& b) { return b.time; });
    const auto present = [&](const BurstModel& b) {
      return b.group < 0 || calls_per_burst.count(BurstPlace{b.group, b.pattern_case, b.term}) != 0;
    };
    std::vector<std::pair<double, double>> laws;  // each burst's work and time at n, evaluated once
    double class_work = 0, own_work = 0, class_time = 0, own_time = 0, own_fixed = 0;
    for (const BurstModel& b : wc.bursts) {
      const double w = b.work.at(n_, ranks, weight);
      const double t = timed ? b.time->at(n_, ranks, weight) : 0;
      laws.emplace_back(w, t);
      class_work += w;
      class_time += t;
      if (present(b)) {
        own_work += w;
        own_time += t;
        if (timed && !b.time->scaling) own_fixed += t;
      }
    }
    if (timed) class_time = wc.time_at(n_, ranks, weight).value_or(class_time);
    const double work_scale = own_work > 0 ? class_work / own_work : 1;
    // The class's compute time law moves the time of the positions that shrink with n (the time per unit of work
    // drifts as each rank's data shrinks); positions whose time does not shrink (a root's serial part, control
    // code) keep their laws' time, unless the law leaves them nothing.
    const double shrinking = own_time - own_fixed;
    const bool split_scale = shrinking > 0 && class_time > own_fixed;
    const double time_scale = split_scale    ? (class_time - own_fixed) / shrinking
                              : own_time > 0 ? class_time / own_time
                                             : 1;
    if (timed) {  // a call at a position without a law computes nothing: its time is 0, not unknown
      out_.tail_ns = 0;
      for (PredictedCall& c : out_.calls) c.burst_ns = 0;
    }
    for (std::size_t k = 0; k < wc.bursts.size(); ++k) {
      const BurstModel& b = wc.bursts[k];
      const double w = work_scale * laws[k].first;
      const double scale = split_scale && !b.time->scaling ? 1 : time_scale;
      const std::optional<double> t = timed ? std::optional<double>(scale * laws[k].second) : std::nullopt;
      if (b.group < 0) {
        out_.tail_work = w;
        out_.tail_ns = t;
        continue;
      }
      const BurstPlace key{b.group, b.pattern_case, b.term};
      const auto it = calls_per_burst.find(key);
      if (it == calls_per_burst.end()) continue;
      const auto share = static_cast<double>(it->second);
      for (std::size_t i = 0; i < burst_of_.size(); ++i) {
        if (burst_of_[i] != key) continue;
        out_.calls[i].burst_work = w / share;
        if (t) out_.calls[i].burst_ns = *t / share;
      }
    }
  }

  const PhaseModel& phase_;
  std::int64_t n_;
  std::int64_t r_;
  std::vector<std::uint32_t> cases_;
  PredictedRank out_;
  std::vector<BurstPlace> burst_of_;               ///< per call: its burst position
  std::vector<std::int64_t> iteration_of_;         ///< per call: its iteration in a loop of repeated iterations
  std::vector<std::vector<Entry>> entries_;        ///< per point-to-point group: the pattern's entries
  std::vector<std::vector<std::size_t>> call_of_;  ///< group -> entry -> call index
  std::vector<std::vector<bool>> completed_;       ///< group -> entry -> its request was completed
};

}  // namespace

PredictedRank PhasePredictor::rank(std::int64_t r) const {
  return RankBuilder(phase_, n_, r).build(class_ranks_, weight_);
}

}  // namespace p3s::modeler
