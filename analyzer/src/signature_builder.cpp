// SPDX-License-Identifier: BSD-3-Clause
// Pass 3: phase occurrences -> signature. Two sweeps over every location's operations:
//  1. per occurrence, the total burst work (to split structurally equal instances that do different work,
//     DESIGN's "burst work at least 90 % similar"), and per phase the bursts found at instance boundaries
//     (work_split.cpp);
//  2. per phase and location, the representative event list (structure from the first instance, statistics
//     over all matching instances) and every instance's time (representatives.cpp).
// This file puts the signature together from them.
#include "signature_builder.hpp"

#include <algorithm>
#include <set>

#include "representatives.hpp"
#include "work_split.hpp"

namespace p3s::analyzer {
namespace {

/// The communicators the phases' actions name, with their members and the calls that created them.
std::vector<SigComm> communicators_used(const TraceDefinitions& defs, const Extracted& extracted,
                                        const std::vector<SigPhase>& phases) {
  std::set<std::uint32_t> ids;
  for (const SigPhase& ph : phases) {
    for (const SigRank& r : ph.ranks) {
      for (const SigEvent& e : r.events) {
        for (const SigAction& a : e.actions) ids.insert(a.comm);
      }
    }
  }
  std::vector<SigComm> out;
  for (const std::uint32_t id : ids) {
    const Communicator* c = defs.comm(id);
    if (c == nullptr) continue;
    SigComm sc;
    sc.id = id;
    sc.kind = c->kind;
    if (c->kind == CommKind::Group || c->kind == CommKind::Inter) sc.ranks = c->world_ranks;
    const auto made = extracted.created_by.find(id);
    if (made != extracted.created_by.end()) sc.created_by = made->second;
    sc.parent = c->parent;
    out.push_back(std::move(sc));
  }
  return out;
}

/// The phases with their weights, logical lengths, instance times and work, and their representatives.
void assemble_phases(const InstanceWork& work, const RunPhases& occurrences, const FinalPhases& f,
                     const std::vector<bool>& trailing, const Representatives& reps, Signature& sig) {
  const std::size_t nphases = f.structural_of.size();
  sig.phases.assign(nphases, {});
  for (std::size_t p = 0; p < nphases; ++p) {
    SigPhase& ph = sig.phases[p];
    ph.id = static_cast<std::uint32_t>(p);
    ph.attribution = trailing[f.structural_of[p]] ? "trailing" : "leading";
    ph.structure = f.structural_of[p];
    ph.step = ph.structure < occurrences.step_kind.size() && occurrences.step_kind[ph.structure] != 0;
  }
  for (const auto& [key, id] : f.final_id) {
    if (key.second != 0) {
      // A work variant points at the phase holding its structure's first cluster.
      sig.phases[id].split_from = f.final_id.at({key.first, 0});
    }
  }
  const std::vector<double>& time = reps.instance_time();
  for (std::size_t o = 0; o < f.phase.size(); ++o) {
    SigPhase& ph = sig.phases[f.phase[o]];
    ++ph.weight;
    ph.ticks = work.occurrence_ticks[o];
    ph.time_ns.add(time[o]);
    ph.work.add(work.occurrence_work[o]);
    sig.accounted_ns += time[o];
  }
  for (std::size_t p = 0; p < nphases; ++p) sig.phases[p].ranks = reps.ranks(static_cast<std::uint32_t>(p));
}

/// Statistics, shares, relevance and coverage, the run-length phase order, and the run time.
void finish_signature(const Extracted& extracted, const std::vector<std::uint32_t>& phase_of, Signature& sig) {
  for (SigPhase& ph : sig.phases) {
    ph.time_ns.finish();
    ph.work.finish();
    for (SigRank& r : ph.ranks) {
      r.tail_ns.finish();
      r.tail_work.finish();
      for (SigEvent& e : r.events) {
        e.burst_ns.finish();
        e.burst_work.finish();
        e.call_ns.finish();
        e.calls.finish();
      }
    }
  }
  double coverage = 0;
  for (SigPhase& ph : sig.phases) {
    ph.share = sig.accounted_ns > 0 ? static_cast<double>(ph.weight) * ph.time_ns.mean / sig.accounted_ns : 0;
    ph.relevant = ph.share >= sig.options.relevance;
    if (ph.relevant) coverage += ph.share;
  }
  sig.coverage = coverage;
  sig.order.clear();
  for (const std::uint32_t phase : phase_of) {
    if (!sig.order.empty() && sig.order.back().phase == phase) {
      ++sig.order.back().count;
    } else {
      sig.order.push_back({phase, 1});
    }
  }
  std::uint64_t first = UINT64_MAX;
  std::uint64_t last = 0;
  for (const ExtractedLocation& l : extracted.locations) {
    first = std::min(first, l.first_ns);
    last = std::max(last, l.last_ns);
  }
  sig.run_time_ns = last > first ? static_cast<double>(last - first) : 0;
  // Outside phases: on every location, the time before its first call and after its last; as instance times
  // are means over the locations, so is this.
  double outside = 0;
  for (const ExtractedLocation& l : extracted.locations)
    outside += static_cast<double>((l.first_ns - first) + (last - l.last_ns));
  sig.outside_ns = extracted.locations.empty() ? 0 : outside / static_cast<double>(extracted.locations.size());
}

}  // namespace

OccurrenceLabels build_signature(const TraceDefinitions& defs, const Extracted& extracted,
                                 const std::vector<std::filesystem::path>& tick_files, const RunPhases& occurrences,
                                 Signature& sig) {
  OccurrenceLabels labels;
  labels.occurrences = &occurrences;
  const InstanceWork work = measure_instances(extracted, tick_files, occurrences);
  // Below this much work per location, differences are measurement noise (a few microseconds, or the
  // instructions of that long) whatever the relative difference.
  const double floor_per_location = sig.work_metric == "PAPI_TOT_INS" ? 2e4 : 1e4;
  const std::vector<bool> trailing = trailing_phases(work, floor_per_location);
  const FinalPhases phases =
      split_by_work(occurrences, work.occurrence_work, 1.0 - sig.options.work_similarity,
                    floor_per_location * static_cast<double>(extracted.locations.size()), sig.options.unsplit);
  labels.phase = phases.phase;
  labels.instance = phases.instance;

  const Representatives reps(defs, extracted, tick_files, occurrences, phases, trailing);
  assemble_phases(work, occurrences, phases, trailing, reps, sig);
  sig.communicators = communicators_used(defs, extracted, sig.phases);
  finish_signature(extracted, labels.phase, sig);
  return labels;
}

}  // namespace p3s::analyzer
