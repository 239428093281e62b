// SPDX-License-Identifier: BSD-3-Clause
// A phase evaluated at n: every rank's calls, generated from the group models, with the work of their bursts.
#include "p3s/modeler/predict.hpp"

#include <cmath>
#include <map>

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

std::int64_t count_at(const ExactLaw& law, std::int64_t n) {
  const std::optional<std::int64_t> c = law.integer_at(n);
  if (!c) return std::max<std::int64_t>(0, std::llround(law.value_at(static_cast<double>(n))));
  return std::max<std::int64_t>(0, *c);
}

}  // namespace

PhasePredictor::PhasePredictor(const PhaseModel& phase, std::int64_t n)
    : phase_(phase), n_(n), weight_(phase.weight_at(n)), class_ranks_(phase.work.size(), 0) {
  if (n < 1) throw ModelError("a prediction needs at least one process, not " + std::to_string(n));
  if (!phase.work.empty()) {
    for (std::int64_t r = 0; r < n; ++r) ++class_ranks_[class_of(phase, cases_of(phase, r, n), r, n)];
  }
}

double PhasePredictor::class_work(std::size_t cls) const {
  double w = 0;
  for (const BurstModel& b : phase_.work.at(cls).bursts) w += detail::burst_work_at(b, n_, class_ranks_[cls], weight_);
  return w;
}

PredictedRank PhasePredictor::rank(std::int64_t r) const {
  PredictedRank out;
  out.rank = r;
  const std::vector<std::uint32_t> cases = cases_of(phase_, r, n_);
  const std::size_t cls = phase_.work.empty() ? 0 : class_of(phase_, cases, r, n_);
  // Each call's burst position, to share a position's work among its calls once all are generated.
  std::vector<std::tuple<std::int32_t, std::uint32_t, std::uint32_t>> burst_of;
  std::vector<std::vector<Entry>> entries(phase_.groups.size());
  std::vector<std::vector<std::size_t>> call_of(phase_.groups.size());  // group -> entry -> call index
  std::vector<std::vector<bool>> completed(phase_.groups.size());
  for (std::size_t g = 0; g < phase_.groups.size(); ++g) {
    const GroupModel& gm = phase_.groups[g];
    const auto gi = static_cast<std::int32_t>(g);
    switch (gm.role) {
      case Role::PointToPoint: {
        std::size_t which = 0;
        entries[g] = gm.pattern.generate(r, n_, &which);
        completed[g].assign(entries[g].size(), false);
        for (const Entry& e : entries[g]) {
          PredictedCall c;
          c.function = gm.function;
          c.call = gm.call;
          for (std::size_t s = 0; s < static_cast<std::size_t>(gm.slots); ++s) {
            if (e.peers[s] < 0 || !gm.slot_kinds[s]) continue;
            PredictedAction a;
            a.kind = *gm.slot_kinds[s];
            a.peer = e.peers[s];
            a.comm = &gm.comm;
            a.comm_size = gm.comm.size_of(r, n_);
            if (which < gm.traits.size() && e.term < gm.traits[which].size()) {
              const TermTraits& t = gm.traits[which][e.term];
              a.tag = static_cast<std::uint32_t>(t.tag[s]);
              a.bytes = std::max(0.0, t.bytes[s].value_at(static_cast<double>(n_)) *
                                          std::pow(t.bytes_step_factor[s], static_cast<double>(e.index)));
            }
            c.actions.push_back(std::move(a));
          }
          call_of[g].push_back(out.calls.size());
          out.calls.push_back(std::move(c));
          burst_of.emplace_back(gi, static_cast<std::uint32_t>(which), e.term);
        }
        break;
      }
      case Role::Completion: {
        const std::int64_t count = count_at(gm.count, n_);
        for (std::int64_t k = 0; k < count; ++k) {
          PredictedCall c;
          c.function = gm.function;
          c.call = gm.call;
          if (static_cast<std::size_t>(k) < gm.completes.size()) {
            for (const RequestRef& ref : gm.completes[static_cast<std::size_t>(k)]) {
              if (ref.group >= g || cases[ref.group] != ref.pattern_case) continue;
              const GroupModel& started = phase_.groups[ref.group];
              for (std::size_t e = 0; e < entries[ref.group].size(); ++e) {
                const Entry& en = entries[ref.group][e];
                if (en.term != ref.term || completed[ref.group][e] || en.null()) continue;
                if (ref.index >= 0 && en.index != ref.index) continue;
                completed[ref.group][e] = true;
                const PredictedCall& origin = out.calls[call_of[ref.group][e]];
                for (const PredictedAction& o : origin.actions) {
                  PredictedAction a;
                  a.started = static_cast<std::int32_t>(call_of[ref.group][e]);
                  a.comm = o.comm;
                  a.comm_size = o.comm_size;
                  if (o.kind == mpi::ActionKind::IrecvPost) {
                    a.kind = mpi::ActionKind::Recv;
                    a.peer = o.peer;
                    a.tag = o.tag;
                    a.bytes = o.bytes;
                  } else if (o.kind == mpi::ActionKind::Send && started.starts_requests) {
                    a.kind = mpi::ActionKind::IsendComplete;
                  } else {
                    continue;
                  }
                  c.actions.push_back(std::move(a));
                }
              }
            }
          }
          out.calls.push_back(std::move(c));
          burst_of.emplace_back(gi, 0, static_cast<std::uint32_t>(k));
        }
        break;
      }
      case Role::Collective:
      case Role::Local: {
        const std::int64_t count = count_at(gm.count, n_);
        for (std::int64_t k = 0; k < count; ++k) {
          PredictedCall c;
          c.function = gm.function;
          c.call = gm.call;
          if (gm.role == Role::Collective && static_cast<std::size_t>(k) < gm.collectives.size()) {
            const CollectiveEntry& ce = gm.collectives[static_cast<std::size_t>(k)];
            PredictedAction a;
            a.kind = mpi::ActionKind::Collective;
            a.collective = ce.op;
            a.comm = &ce.comm;
            a.comm_size = ce.comm.size_of(r, n_);
            bool is_root = true;
            if (ce.root) {
              a.root = ce.comm.member(r, n_, count_at(*ce.root, n_));
              is_root = a.root == r;
            }
            a.bytes = ce.bytes_at(n_, a.comm_size, is_root);
            a.bytes_received = ce.received_at(n_, a.comm_size, is_root);
            c.actions.push_back(std::move(a));
          }
          out.calls.push_back(std::move(c));
          burst_of.emplace_back(gi, 0, static_cast<std::uint32_t>(k));
        }
        break;
      }
    }
  }
  if (phase_.work.empty()) return out;
  const WorkClass& wc = phase_.work[cls];
  const std::int64_t ranks = class_ranks_[cls];
  std::map<std::tuple<std::int32_t, std::uint32_t, std::uint32_t>, std::int64_t> calls_per_burst;
  for (const auto& b : burst_of) ++calls_per_burst[b];
  for (const BurstModel& b : wc.bursts) {
    const double w = detail::burst_work_at(b, n_, ranks, weight_);
    if (b.group < 0) {
      out.tail_work = w;
      continue;
    }
    const auto key = std::make_tuple(b.group, b.pattern_case, b.term);
    const auto it = calls_per_burst.find(key);
    if (it == calls_per_burst.end()) continue;
    for (std::size_t i = 0; i < burst_of.size(); ++i) {
      if (burst_of[i] == key) out.calls[i].burst_work = w / static_cast<double>(it->second);
    }
  }
  return out;
}

}  // namespace p3s::modeler
