// SPDX-License-Identifier: BSD-3-Clause
#include "series_level.hpp"

#include <algorithm>
#include <array>
#include <string>

namespace p3s::analyzer::detail {

namespace {

/// A run analysed again at the series' level.
struct Moved {
  std::size_t run = 0;
  Signature sig;
  AnalyzeStats stats;
};

}  // namespace

void same_level(std::vector<Signature>& sigs, std::vector<AnalyzeStats>& stats, const AnalyzeAt& again) {
  std::array<std::size_t, 3> votes{0, 0, 0};
  for (const Signature& s : sigs) {
    if (s.phase_method != PhaseMethod::ByRank) return;
    ++votes[static_cast<std::size_t>(s.phase_level)];
  }
  std::vector<std::size_t> order;  // the levels some run took, by votes, a tie to the coarser
  for (std::size_t l = 0; l < votes.size(); ++l) {
    if (votes[l] > 0) order.push_back(l);
  }
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return votes[a] != votes[b] ? votes[a] > votes[b] : a > b; });
  std::vector<Moved> taken;  // the most voted level in the runs that can take it, until a level every run can
  for (const std::size_t candidate : order) {
    const auto level = static_cast<PhaseLevel>(candidate);
    const bool most_voted = candidate == order.front();
    std::vector<Moved> moved;
    bool every = true;
    for (std::size_t i = 0; i < sigs.size() && (every || most_voted); ++i) {
      if (sigs[i].phase_level == level) continue;
      Moved m{i, {}, {}};
      m.sig = again(i, level, m.stats);
      if (m.sig.phase_level != level) {
        every = false;
        continue;
      }
      m.sig.phase_method_note = "the series' level, " + std::string(phase_level_name(level)) + ": " +
                                std::to_string(votes[candidate]) + " of " + std::to_string(sigs.size()) +
                                " runs take it" + (most_voted ? "" : ", and every run can") +
                                "; before, this run's was " + std::string(phase_level_name(sigs[i].phase_level)) +
                                (sigs[i].phase_method_note.empty() ? "" : " (" + sigs[i].phase_method_note + ")");
      moved.push_back(std::move(m));
    }
    if (most_voted || every) taken = std::move(moved);
    if (every) break;
  }
  for (Moved& m : taken) {
    sigs[m.run] = std::move(m.sig);
    stats[m.run] = m.stats;
  }
}

}  // namespace p3s::analyzer::detail
