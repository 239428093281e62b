// SPDX-License-Identifier: BSD-3-Clause
#include "orient.hpp"

#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "p3s/modeler/dims.hpp"

namespace p3s::modeler::detail {
namespace {

/// One constant label of a group's term: where it is and its components.
struct Step {
  std::size_t group = 0;
  std::size_t term = 0;
  std::size_t slot = 0;
  Label label{0, 0, 0};
};

/// The constant label of slot s of term `term` of a group that has one case in a periodic frame, where that term
/// is one call.
std::optional<Label> constant_label(const GroupModel& g, std::size_t term, std::size_t s) {
  if (g.role != Role::PointToPoint || g.pattern.cases.size() != 1) return std::nullopt;
  const Program& p = g.pattern.cases.front().program;
  if (!frame_periodic(p.frame) || term >= p.terms.size()) return std::nullopt;
  const Term& t = p.terms[term];
  const bool once = t.count.is_constant() && t.count.b == Rational::make(1);
  // A step made only where its side is longer than 2 (the second exchange of a pair there) is one call wherever its
  // direction can be seen.
  const std::optional<std::pair<int, std::size_t>> side = side_of(t.count.basis);
  const bool where_longer = !t.count.is_constant() && side && longer_than_two(t.count.basis) &&
                            t.count.a == Rational::make(1) && t.count.b == Rational::make(0);
  if ((!once && !where_longer) || s >= t.slots.size() || t.slots[s].empty()) return std::nullopt;
  Label l{0, 0, 0};
  for (std::size_t d = 0; d < t.slots[s].size(); ++d) {
    const IndexedLaw& law = t.slots[s][d];
    if (law.step != 0 || !law.base.is_constant() || !law.base.b.is_integer()) return std::nullopt;
    l[d] = law.base.b.num;
  }
  if (where_longer && (side->first != frame_dims(p.frame) || l[side->second] == 0)) return std::nullopt;
  return l;
}

std::size_t terms_of(const GroupModel& g) {
  return g.pattern.cases.size() == 1 ? g.pattern.cases.front().program.terms.size() : 0;
}

/// The only non-zero component of a label, or nullopt (no step, or a step along several dimensions).
std::optional<std::size_t> axis_of(const Label& l) {
  std::optional<std::size_t> axis;
  for (std::size_t d = 0; d < l.size(); ++d) {
    if (l[d] == 0) continue;
    if (axis) return std::nullopt;
    axis = d;
  }
  return axis;
}

/// Whether some fitted run had the side along `axis` (its ranks holding data, with a grain) longer than twice the
/// step (the two directions differ).
bool seen_both_ways(Frame frame, const GridLayout& layout, std::size_t axis, std::int64_t step,
                    std::span<const std::int64_t> fitted_n) {
  for (const std::int64_t n : fitted_n) {
    if (label_period(frame, n, axis, layout) > 2 * std::abs(step)) return true;
  }
  return false;
}

void set_label(GroupModel& g, std::size_t term, std::size_t s, const Label& l) {
  Term& t = g.pattern.cases.front().program.terms[term];
  for (std::size_t d = 0; d < t.slots[s].size(); ++d) t.slots[s][d] = IndexedLaw::constant(l[d]);
}

}  // namespace

void orient_steps(std::vector<GroupModel>& groups, std::span<const std::int64_t> fitted_n) {
  // Per (function, slot, frame, layout, axis, distance), the steps in the order the phase makes them; consecutive
  // ones pair.
  using Key = std::tuple<std::string, std::size_t, Frame, GridLayout, std::size_t, std::int64_t>;
  std::map<Key, std::vector<Step>> runs;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (std::size_t term = 0; term < terms_of(groups[g]); ++term) {
      for (std::size_t s = 0; s < 2; ++s) {
        const std::optional<Label> l = constant_label(groups[g], term, s);
        if (!l) continue;
        const std::optional<std::size_t> axis = axis_of(*l);
        if (!axis) continue;
        const Program& p = groups[g].pattern.cases.front().program;
        runs[{groups[g].call, s, p.frame, p.layout, *axis, std::abs((*l)[*axis])}].push_back({g, term, s, *l});
      }
    }
  }
  // Votes per (function, slot): +1 for pairs seen to step forward first, -1 back first.
  std::map<std::pair<std::string, std::size_t>, int> votes;
  for (const auto& [key, steps] : runs) {
    const auto& [call, slot, frame, layout, axis, distance] = key;
    if (!seen_both_ways(frame, layout, axis, distance, fitted_n)) continue;
    for (std::size_t k = 0; k + 1 < steps.size(); k += 2) {
      const std::int64_t first = steps[k].label[axis];
      const std::int64_t second = steps[k + 1].label[axis];
      if (first == -second) votes[{call, slot}] += first > 0 ? 1 : -1;
    }
  }
  for (const auto& [key, steps] : runs) {
    const auto& [call, slot, frame, layout, axis, distance] = key;
    const auto vote = votes.find({call, slot});
    if (vote == votes.end() || vote->second == 0 || seen_both_ways(frame, layout, axis, distance, fitted_n)) {
      continue;
    }
    const std::int64_t forward_first = vote->second > 0 ? 1 : -1;
    for (std::size_t k = 0; k + 1 < steps.size(); k += 2) {
      Label a = steps[k].label;
      Label b = steps[k + 1].label;
      a[axis] = forward_first * distance;
      b[axis] = -forward_first * distance;
      set_label(groups[steps[k].group], steps[k].term, steps[k].slot, a);
      set_label(groups[steps[k + 1].group], steps[k + 1].term, steps[k + 1].slot, b);
    }
  }
}

void meet_steps(std::vector<GroupModel>& groups, std::span<const std::int64_t> fitted_n) {
  // Per (frame, grain, box, axis, distance, communicator kind, tag): the sending and the receiving steps in order.
  using Key = std::tuple<Frame, std::int64_t, std::array<std::int64_t, 3>, std::size_t, std::int64_t, CommModel::Kind,
                         std::int64_t>;
  std::map<Key, std::pair<std::vector<Step>, std::vector<Step>>> ends;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const GroupModel& gm = groups[g];
    for (std::size_t term = 0; term < terms_of(gm); ++term) {
      for (std::size_t s = 0; s < 2; ++s) {
        if (!gm.slot_kinds[s]) continue;
        const bool send = *gm.slot_kinds[s] == mpi::ActionKind::Send;
        const std::optional<Label> l = constant_label(gm, term, s);
        const std::optional<std::size_t> axis = l ? axis_of(*l) : std::nullopt;
        if (!axis) continue;
        const Program& p = gm.pattern.cases.front().program;
        const std::int64_t tag =
            !gm.traits.empty() && term < gm.traits.front().size() ? gm.traits.front()[term].tag[s] : 0;
        auto& [sends, receives] =
            ends[{p.frame, p.layout.grain, p.layout.box, *axis, std::abs((*l)[*axis]), gm.comm.kind, tag}];
        (send ? sends : receives).push_back({g, term, s, *l});
      }
    }
  }
  for (const auto& [key, steps] : ends) {
    const auto& [frame, grain, box, axis, distance, comm, tag] = key;
    const auto& [sends, receives] = steps;
    if (sends.size() != receives.size() || seen_both_ways(frame, GridLayout{grain, box}, axis, distance, fitted_n)) {
      continue;
    }
    for (std::size_t k = 0; k < sends.size(); ++k) {
      Label l = receives[k].label;
      l[axis] = -sends[k].label[axis];
      if (l != receives[k].label) set_label(groups[receives[k].group], receives[k].term, receives[k].slot, l);
    }
  }
}

}  // namespace p3s::modeler::detail
