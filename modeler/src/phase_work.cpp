// SPDX-License-Identifier: BSD-3-Clause
// The work of a phase's bursts per class of ranks: burst positions, the time per class at each, each rank's work.
#include "phase_work.hpp"

#include <cstdint>
#include <map>
#include <vector>

#include "work_model.hpp"

namespace p3s::modeler::detail {
namespace {

/// A rank's calls of one phase with the burst positions each may stand for (call_candidates).
struct RankPositions {
  std::vector<std::uint32_t> cases;  ///< the rank's pattern case per group
  std::vector<const Call*> calls;    ///< group by group
  std::vector<std::vector<BurstKey>> candidates;
};

RankPositions rank_positions(const RankData& d, const PhaseModel& pm) {
  const std::vector<GroupModel>& groups = pm.groups;
  RankPositions out;
  out.cases.assign(groups.size(), 0);
  std::vector<BurstKey> own;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const RankGroup* rg = d.at[g];
    const auto group = static_cast<std::int32_t>(g);
    if (groups[g].role == Role::PointToPoint) {
      std::size_t which = 0;
      const std::vector<Entry> entries = groups[g].entries(d.r, d.n, &which);
      out.cases[g] = static_cast<std::uint32_t>(which);
      if (rg == nullptr) continue;
      for (std::size_t k = 0; k < rg->calls.size() && k < entries.size(); ++k) {
        own.push_back({group, out.cases[g], entries[k].term});
        out.calls.push_back(&rg->calls[k]);
      }
    } else if (rg != nullptr) {
      for (std::size_t k = 0; k < rg->calls.size(); ++k) {
        // A loop's calls: one burst position, whatever their number.
        own.push_back({group, 0, pm.in_loop(g) ? 0 : static_cast<std::uint32_t>(k)});
        out.calls.push_back(&rg->calls[k]);
      }
    }
  }
  out.candidates = rank_candidates(pm, own, out.cases);
  return out;
}

/// Per run (n) and pattern cases (the work class a rank is in, but for splits by work), the time per rank at each
/// position of the calls that stand for nothing but their own: what the class computes there, as its time law at
/// a position is per rank (every call at it summed), for the calls that follow skipped ones to choose between.
using ClassKey = std::pair<std::int64_t, std::vector<std::uint32_t>>;
using PositionTimes = std::map<ClassKey, std::map<BurstKey, double>>;

PositionTimes position_times(const std::vector<RankData>& ranks, const std::vector<RankPositions>& positions) {
  PositionTimes sums;
  std::map<ClassKey, double> members;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const RankPositions& p = positions[i];
    const ClassKey cls{ranks[i].n, p.cases};
    members[cls] += 1;
    std::map<BurstKey, double>& at = sums[cls];
    for (std::size_t k = 0; k < p.calls.size(); ++k) {
      if (p.candidates[k].size() == 1) at[p.candidates[k].front()] += p.calls[k]->burst_ns;
    }
  }
  for (auto& [cls, at] : sums) {
    for (auto& [key, t] : at) t /= members.at(cls);
  }
  return sums;
}

/// Burst work of one rank by burst position, with its work class.
RankWork rank_work(const RankData& d, const RankPositions& p, const std::map<BurstKey, double>& times) {
  RankWork w;
  w.n = d.n;
  w.r = d.r;
  w.cases = p.cases;
  const auto time_at = [&](const BurstKey& key) {
    const auto it = times.find(key);
    return it == times.end() ? 0.0 : it->second;
  };
  std::size_t first = SIZE_MAX;  // the rank's first call in the phase
  BurstKey first_key;
  for (std::size_t k = 0; k < p.calls.size(); ++k) {
    const BurstKey key = stands_for(p.candidates[k], time_at);
    w.work[key] += p.calls[k]->burst_work;
    w.time[key] += p.calls[k]->burst_ns;
    if (p.calls[k]->event < first) {
      first = p.calls[k]->event;
      first_key = key;
    }
  }
  // A trailing phase's tail is the computation before its next instance's first call: it goes with that call,
  // so that the burst positions mean the same in every run (the analyzer's leading/trailing choice can differ
  // between runs of one application).
  if (d.rank->tail_work.n != 0) {
    w.work[first_key] += d.rank->tail_work.mean;
    w.time[first_key] += d.rank->tail_ns.mean;
  }
  return w;
}

}  // namespace

void fit_work(PhaseModel& pm, PhaseReport& pr, const std::vector<RankData>& ranks,
              const std::map<std::int64_t, std::int64_t>& weight_by_n) {
  std::vector<RankPositions> positions;
  for (const RankData& d : ranks) positions.push_back(rank_positions(d, pm));
  const PositionTimes times = position_times(ranks, positions);
  std::vector<RankWork> work;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    work.push_back(rank_work(ranks[i], positions[i], times.at({ranks[i].n, positions[i].cases})));
  }
  LearntWork learnt = learn_work(work, weight_by_n);
  pm.work = std::move(learnt.classes);
  pr.measured = std::move(learnt.measured);
}

}  // namespace p3s::modeler::detail
