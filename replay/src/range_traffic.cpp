// SPDX-License-Identifier: BSD-3-Clause
// The predicted traffic between ranges of consecutive ranks, from a model (every rank evaluated, one phase at a time)
// or from an ST4NP (every rank's lines read through the index).
#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "p3s/error.hpp"
#include "p3s/modeler/dims.hpp"
#include "p3s/modeler/predict.hpp"
#include "p3s/replay/ranges.hpp"
#include "p3s/replay/replay.hpp"

namespace p3s::replay {

double RangeTraffic::messages_between(std::int64_t a, std::int64_t b) const {
  double total = 0;
  const auto at = [this](std::int64_t from, std::int64_t to) { return static_cast<std::size_t>(from * ranges + to); };
  for (const Phase& p : phases) {
    total += static_cast<double>(p.weight) * (p.messages[at(a, b)] + (a != b ? p.messages[at(b, a)] : 0.0));
  }
  return total;
}

bool RangeTraffic::talks_outside(std::int64_t rank, std::int64_t a, std::int64_t b) const {
  const std::vector<std::int64_t>& peers = peer_ranges.at(static_cast<std::size_t>(rank));
  return std::any_of(peers.begin(), peers.end(), [a, b](std::int64_t x) { return x != a && x != b; });
}

RangeTraffic empty_traffic(std::int64_t n, std::int64_t c,
                           const std::vector<std::pair<std::uint32_t, std::int64_t>>& phases) {
  if (n < 1) throw InputError("a range replay needs at least one rank, not " + std::to_string(n));
  if (c < 1 || c > n) {
    throw InputError("--ranges " + std::to_string(c) + ": a range holds between 1 and the " + std::to_string(n) +
                     " ranks");
  }
  RangeTraffic t;
  t.processes = n;
  t.range_size = c;
  t.ranges = (n + c - 1) / c;
  const auto cells = static_cast<std::size_t>(t.ranges * t.ranges);
  for (const auto& [id, weight] : phases) {
    t.phases.push_back({id, weight, std::vector<double>(cells, 0.0), std::vector<double>(cells, 0.0), 0});
  }
  t.peer_ranges.assign(static_cast<std::size_t>(n), {});
  return t;
}

void add_rank(RangeTraffic& traffic, std::size_t phase, const modeler::PredictedRank& rank) {
  RangeTraffic::Phase& p = traffic.phases.at(phase);
  const std::int64_t own = traffic.range_of(rank.rank);
  std::vector<std::int64_t>& peers = traffic.peer_ranges.at(static_cast<std::size_t>(rank.rank));
  const auto note_peer = [&](std::int64_t other) {
    const auto it = std::lower_bound(peers.begin(), peers.end(), other);
    if (it == peers.end() || *it != other) peers.insert(it, other);
  };
  for (const modeler::PredictedCall& call : rank.calls) {
    for (const modeler::PredictedAction& a : call.actions) {
      if (a.kind == mpi::ActionKind::Collective || a.kind == mpi::ActionKind::NbCollRequest) {
        p.widest_collective = std::max(p.widest_collective, a.comm_size);
        continue;
      }
      const bool sends = a.kind == mpi::ActionKind::Send;
      if ((!sends && a.kind != mpi::ActionKind::Recv) || a.peer < 0 || a.peer >= traffic.processes) continue;
      const std::int64_t other = traffic.range_of(a.peer);
      if (other != own) note_peer(other);
      if (!sends) continue;  // each message once, at its sender
      const auto cell = static_cast<std::size_t>(own * traffic.ranges + other);
      p.messages[cell] += 1;
      p.bytes[cell] += a.bytes;
    }
  }
}

RangeTraffic traffic_of_model(const modeler::Model& model, std::int64_t n, std::int64_t c) {
  const modeler::ScopedDimsRule rule(model.dims_rule);
  std::map<std::uint32_t, std::int64_t> weight;
  for (const modeler::PhaseRun& e : modeler::order_at(model, n)) {
    weight[e.phase] += static_cast<std::int64_t>(e.count);
  }
  std::vector<std::pair<std::uint32_t, std::int64_t>> phases;
  for (const modeler::PhaseModel& p : model.phases) phases.emplace_back(p.id, weight[p.id]);
  RangeTraffic t = empty_traffic(n, c, phases);
  for (std::size_t k = 0; k < model.phases.size(); ++k) {
    const modeler::PhasePredictor predictor(model.phases[k], n);
    for (std::int64_t r = 0; r < n; ++r) add_rank(t, k, predictor.rank(r));
  }
  return t;
}

RangeTraffic traffic_of_st4np(const std::filesystem::path& dir, std::int64_t n, std::int64_t c) {
  const ReplayPlan first = plan_from_st4np(dir, n, 0);
  std::vector<std::pair<std::uint32_t, std::int64_t>> phases;
  for (const PlannedPhase& p : first.phases) phases.emplace_back(p.id, p.weight);
  RangeTraffic t = empty_traffic(n, c, phases);
  for (std::int64_t r = 0; r < n; ++r) {
    const ReplayPlan plan = r == 0 ? ReplayPlan{} : plan_from_st4np(dir, n, r);
    const ReplayPlan& own = r == 0 ? first : plan;
    for (std::size_t k = 0; k < own.phases.size(); ++k) add_rank(t, k, own.phases[k].rank);
  }
  return t;
}

}  // namespace p3s::replay
