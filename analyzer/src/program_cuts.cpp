// SPDX-License-Identifier: BSD-3-Clause
#include "program_cuts.hpp"

#include <algorithm>
#include <unordered_map>

#include "tick_log.hpp"

namespace p3s::analyzer {
namespace {

/// Whether an operation only completes requests, every one of them started before operation `boundary`.
bool completes_earlier_requests(const Op& op, const std::unordered_map<std::uint64_t, std::uint64_t>& started,
                                std::uint64_t boundary) {
  if (op.actions.empty()) return false;
  for (const Action& a : op.actions) {
    const bool completion = a.kind == mpi::ActionKind::IsendComplete || a.kind == mpi::ActionKind::NbCollComplete ||
                            (a.kind == mpi::ActionKind::Recv && a.request != 0);
    if (!completion) return false;
    const auto it = started.find(a.request);
    if (it == started.end() || it->second >= boundary) return false;
  }
  return true;
}

bool starts_request(const Action& a) {
  return a.request != 0 && (a.kind == mpi::ActionKind::Send || a.kind == mpi::ActionKind::IrecvPost ||
                            a.kind == mpi::ActionKind::NbCollRequest);
}

}  // namespace

void cut_at_program_points(RunPhases& phases, const std::vector<LocationFiles>& locations) {
  const std::size_t count = phases.occurrence_phase.size();
  phases.first_op.assign(locations.size(), {});
  Op op;
  std::uint64_t op_tick = 0;
  std::vector<std::uint64_t> action_ticks;
  for (std::size_t l = 0; l < locations.size(); ++l) {
    // One pass: the tick cut of every occurrence (its first operation at or after the occurrence's first tick),
    // moved past the completions that open it and finish requests of the occurrence before.
    std::vector<std::uint64_t>& first = phases.first_op[l];
    first.assign(count, 0);
    std::unordered_map<std::uint64_t, std::uint64_t> started;  // request -> the operation that started it
    OpReader ops(locations[l].ops);
    TickReader ticks(locations[l].ticks);
    std::size_t next = 1;  // the occurrence whose cut is looked for; occurrence 0 starts at operation 0
    bool moving = false;   // the cuts from `moving_from` to next - 1 (one place) still move past completions
    std::size_t moving_from = 0;
    std::uint64_t i = 0;
    for (; ops.next(op); ++i) {
      ticks.next(op.actions.size(), op_tick, action_ticks);
      // Ticks never go back on a location: the cuts it passes now are all at this operation (the occurrences
      // between them have no operation here).
      if (next < count && phases.first_tick[next] <= op_tick) {
        if (!moving) moving_from = next;
        moving = true;
        while (next < count && phases.first_tick[next] <= op_tick) first[next++] = i;
      }
      if (moving && completes_earlier_requests(op, started, first[next - 1])) {
        for (std::size_t k = moving_from; k < next; ++k) first[k] = i + 1;
      } else {
        moving = false;
      }
      for (const Action& a : op.actions) {
        if (starts_request(a)) started[a.request] = i;
      }
    }
    // Occurrences whose first tick is after this location's last operation are empty here.
    while (next < count) first[next++] = i;
    for (std::size_t k = 1; k < count; ++k) first[k] = std::max(first[k], first[k - 1]);
  }
}

}  // namespace p3s::analyzer
