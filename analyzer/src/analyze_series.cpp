// SPDX-License-Identifier: BSD-3-Clause
// `p3s analyze DIR DIR...`: the runs of one application at several process counts, their phases found by one
// method, so that the model relates the same phases at every n.
#include <algorithm>
#include <string>

#include "p3s/analyzer/analyze.hpp"
#include "p3s/error.hpp"

namespace p3s::analyzer {

namespace {

/// The phase ids in the order they run (counts left out): runs whose skeletons are equal have the same phases.
std::vector<std::uint32_t> skeleton(const Signature& sig) {
  std::vector<std::uint32_t> out;
  for (const PhaseRunEntry& r : sig.order) out.push_back(r.phase);
  return out;
}

/// Where every run has the same phases in the same order, a phase relevant in one run is relevant in all, so that
/// every run shows the same relevant phases (a phase near the relevance share crosses it as n changes its time).
void relevant_in_any(std::vector<Signature>& sigs) {
  for (const Signature& s : sigs) {
    if (s.phases.size() != sigs.front().phases.size() || skeleton(s) != skeleton(sigs.front())) return;
  }
  for (std::size_t p = 0; p < sigs.front().phases.size(); ++p) {
    const bool any = std::any_of(sigs.begin(), sigs.end(), [p](const Signature& s) { return s.phases[p].relevant; });
    for (Signature& s : sigs) s.phases[p].relevant = any;
  }
  for (Signature& s : sigs) {
    s.coverage = 0;
    for (const SigPhase& ph : s.phases) s.coverage += ph.relevant ? ph.share : 0;
  }
}

}  // namespace

std::vector<Signature> analyze_series(const std::vector<AnalyzeOptions>& runs, std::vector<AnalyzeStats>* stats) {
  std::vector<Signature> sigs;
  std::vector<AnalyzeStats> local(runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i) sigs.push_back(analyze(runs[i], &local[i]));
  const auto chose = [&](PhaseMethod m) {
    return static_cast<std::size_t>(
        std::count_if(sigs.begin(), sigs.end(), [m](const Signature& s) { return s.phase_method == m; }));
  };
  const std::size_t by_rank = chose(PhaseMethod::ByRank);
  const std::size_t by_ticks = chose(PhaseMethod::GlobalTicks);
  if (by_rank != 0 && by_ticks != 0) {
    // The method most runs choose on their own (a tie: the ticks, which do not depend on the machine's load);
    // the other runs are analysed again with it, unless it finds no phases there.
    const PhaseMethod series = by_rank > by_ticks ? PhaseMethod::ByRank : PhaseMethod::GlobalTicks;
    const std::string why = "the series' method: " + std::to_string(std::max(by_rank, by_ticks)) + " of " +
                            std::to_string(runs.size()) + " runs choose it on their own";
    for (std::size_t i = 0; i < runs.size(); ++i) {
      if (sigs[i].phase_method == series) continue;
      const std::string alone = "; alone, this run's would be " + std::string(phase_method_name(sigs[i].phase_method)) +
                                (sigs[i].phase_method_note.empty() ? "" : ": " + sigs[i].phase_method_note);
      AnalyzeOptions forced = runs[i];
      forced.signature.phase_method = series;
      try {
        AnalyzeStats again;
        Signature sig = analyze(forced, &again);
        sig.options.phase_method = runs[i].signature.phase_method;
        sig.phase_method_note = why + alone;
        sigs[i] = std::move(sig);
        local[i] = again;
      } catch (const InputError& e) {
        sigs[i].phase_method_note += "; not " + std::string(phase_method_name(series)) + " as the series: " + e.what();
      }
    }
  }
  relevant_in_any(sigs);
  if (stats != nullptr) *stats = std::move(local);
  return sigs;
}

}  // namespace p3s::analyzer
