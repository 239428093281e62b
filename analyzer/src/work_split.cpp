// SPDX-License-Identifier: BSD-3-Clause
// Work populations and burst attribution at instance boundaries (the first sweep of pass 3).
// Burst attribution (the PAS2P second pass): a burst between two calls belongs to the call after it, except
// at instance boundaries, where a phase whose iterations end with computation (the burst before its next
// instance looks like the burst after its last one) keeps the trailing burst; otherwise the boundary burst
// of the last instance would be charged to the neighbouring phase and the first instance would carry the
// neighbour's computation.
#include "work_split.hpp"

#include <algorithm>
#include <cmath>

#include "signature_builder.hpp"

namespace p3s::analyzer {
namespace {

constexpr std::size_t kNone = static_cast<std::size_t>(-1);

/// Spread of sorted values [lo, hi): 1.4826 x their median absolute deviation (robust standard deviation).
double robust_spread(const std::vector<double>& v, std::size_t lo, std::size_t hi) {
  const double median = v[lo + (hi - lo) / 2];
  std::vector<double> dev;
  dev.reserve(hi - lo);
  for (std::size_t k = lo; k < hi; ++k) dev.push_back(std::abs(v[k] - median));
  std::nth_element(dev.begin(), dev.begin() + static_cast<std::ptrdiff_t>(dev.size() / 2), dev.end());
  return 1.4826 * dev[dev.size() / 2];
}

/// Plain standard deviation of sorted values [lo, hi).
double plain_spread(const std::vector<double>& v, std::size_t lo, std::size_t hi) {
  double sum = 0;
  for (std::size_t k = lo; k < hi; ++k) sum += v[k];
  const double mean = sum / static_cast<double>(hi - lo);
  double sq = 0;
  for (std::size_t k = lo; k < hi; ++k) sq += (v[k] - mean) * (v[k] - mean);
  return std::sqrt(sq / static_cast<double>(hi - lo));
}

/// Top-down split of sorted instance works into populations: the widest gap that leaves at least `min_size`
/// instances on each side separates two populations when it exceeds `tol` of the larger value, the absolute
/// `floor`, and four times the spread of either side; each side is split again the same way. Populations
/// smaller than `min_size` cannot arise, so warm-up instances and scheduling hiccups stay in their phase. The
/// smaller side's spread is also taken without the median's robustness: a few instances slowed by different
/// amounts (a loaded or oversubscribed machine) are scattered outliers, while a real work variant is as tight
/// as the code it runs.
void split_sorted(const std::vector<double>& v, std::size_t lo, std::size_t hi, std::size_t min_size, double tol,
                  double floor, std::vector<std::size_t>& starts) {
  if (hi - lo < 2 * min_size) return;
  std::size_t cut = 0;
  double widest = -1;
  for (std::size_t k = lo + min_size; k + min_size <= hi; ++k) {
    if (v[k] - v[k - 1] > widest) {
      widest = v[k] - v[k - 1];
      cut = k;
    }
  }
  const bool low_smaller = cut - lo < hi - cut;
  const double noise = std::max({robust_spread(v, lo, cut), robust_spread(v, cut, hi),
                                 low_smaller ? plain_spread(v, lo, cut) : plain_spread(v, cut, hi)});
  if (widest <= tol * v[cut] || widest <= floor || widest <= 4 * noise) return;
  split_sorted(v, lo, cut, min_size, tol, floor, starts);
  starts.push_back(cut);
  split_sorted(v, cut, hi, min_size, tol, floor, starts);
}

/// Work populations of a structural phase's occurrences (DESIGN: instances whose burst work is less than
/// `work_similarity` alike are different phases). Returns a population number per occurrence, 0 being the
/// population of the phase's first occurrence. A population needs 10 % of the instances and at least 3.
std::vector<std::uint32_t> work_clusters(const std::vector<std::size_t>& occs, const std::vector<double>& work,
                                         double tol, double floor) {
  const std::size_t n = occs.size();
  std::vector<std::uint32_t> cluster(n, 0);
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return work[occs[a]] < work[occs[b]]; });
  std::vector<double> sorted(n);
  for (std::size_t k = 0; k < n; ++k) sorted[k] = work[occs[order[k]]];
  std::vector<std::size_t> starts;
  split_sorted(sorted, 0, n, std::max<std::size_t>(3, n / 10), tol, floor, starts);
  if (starts.empty()) return cluster;
  std::map<std::uint32_t, std::uint32_t> renumber;  // population -> number in order of first appearance
  std::vector<std::uint32_t> population(n, 0);
  for (std::size_t k = 0; k < n; ++k) {
    population[order[k]] =
        static_cast<std::uint32_t>(std::upper_bound(starts.begin(), starts.end(), k) - starts.begin());
  }
  for (std::size_t i = 0; i < n; ++i) {
    const auto [it, inserted] = renumber.emplace(population[i], static_cast<std::uint32_t>(renumber.size()));
    cluster[i] = it->second;
  }
  return cluster;
}

}  // namespace

InstanceWork measure_instances(const Extracted& extracted, const std::vector<std::filesystem::path>& tick_files,
                               const RunPhases& phases) {
  InstanceWork w;
  const std::size_t count = phases.occurrence_phase.size();
  w.occurrence_work.assign(count, 0);
  std::vector<std::uint64_t> first(count, UINT64_MAX);
  std::vector<std::uint64_t> last(count, 0);
  w.bounds.resize(phases.phase_count);
  for (std::size_t l = 0; l < extracted.locations.size(); ++l) {
    OpSweep s(extracted.locations[l], l, tick_files[l], phases);
    std::size_t prev = kNone;
    while (s.next()) {
      const std::size_t o = s.occurrence;
      w.occurrence_work[o] += static_cast<double>(s.op.header.burst_work);
      if (s.op_tick != 0) {
        first[o] = std::min(first[o], s.op_tick);
        last[o] = std::max(last[o], s.op_tick);
      }
      if (o == prev) continue;
      if (prev != kNone) {
        const std::uint32_t p = phases.occurrence_phase[o];
        const std::uint32_t q = phases.occurrence_phase[prev];
        const auto burst = static_cast<double>(s.op.header.burst_work);
        if (p == q && o == prev + 1) {
          w.bounds[p].internal.add(burst);
        } else {
          w.bounds[p].lead.add(burst);
          w.bounds[q].trail.add(burst);
        }
      }
      prev = o;
    }
  }
  w.occurrence_ticks = phases.occurrence_ticks;
  if (w.occurrence_ticks.empty()) {
    w.occurrence_ticks.resize(count);
    for (std::size_t o = 0; o < count; ++o) w.occurrence_ticks[o] = first[o] <= last[o] ? last[o] - first[o] + 1 : 0;
  }
  return w;
}

std::vector<bool> trailing_phases(const InstanceWork& w, double floor_per_location) {
  std::vector<bool> trailing(w.bounds.size(), false);
  for (std::size_t p = 0; p < w.bounds.size(); ++p) {
    const InstanceWork::Boundary& b = w.bounds[p];
    if (b.internal.n == 0 || b.trail.n == 0) continue;
    // Leading unless the burst before an instance clearly does not look like the phase's own (more than 10 %
    // and more than noise away from the bursts between its instances) while the one after its last instance
    // does. Compared in the work metric: wall time also holds the waits of a loaded machine, which made the
    // choice flip between runs of one application.
    const double lead_gap = b.lead.n == 0 ? 0 : std::abs(b.lead.mean - b.internal.mean);
    const double trail_gap = std::abs(b.trail.mean - b.internal.mean);
    trailing[p] = lead_gap > std::max(0.1 * std::max(b.internal.mean, b.lead.mean), floor_per_location) &&
                  trail_gap < lead_gap / 2;
  }
  return trailing;
}

FinalPhases split_by_work(const RunPhases& phases, const std::vector<double>& occurrence_work, double tol, double floor,
                          const std::vector<std::uint32_t>& unsplit) {
  const std::size_t nocc = phases.occurrence_phase.size();
  std::vector<std::vector<std::size_t>> by_phase(phases.phase_count);
  for (std::size_t o = 0; o < nocc; ++o) by_phase[phases.occurrence_phase[o]].push_back(o);
  std::vector<std::uint32_t> cluster(nocc, 0);
  for (std::size_t p = 0; p < by_phase.size(); ++p) {
    const std::vector<std::size_t>& occs = by_phase[p];
    if (std::find(unsplit.begin(), unsplit.end(), p) != unsplit.end()) continue;
    const std::vector<std::uint32_t> c = work_clusters(occs, occurrence_work, tol, floor);
    for (std::size_t i = 0; i < occs.size(); ++i) cluster[occs[i]] = c[i];
  }
  FinalPhases f;
  f.phase.resize(nocc);
  f.instance.resize(nocc);
  std::vector<std::uint64_t> seen;
  for (std::size_t o = 0; o < nocc; ++o) {
    const std::pair<std::uint32_t, std::uint32_t> key{phases.occurrence_phase[o], cluster[o]};
    const auto [it, inserted] = f.final_id.emplace(key, static_cast<std::uint32_t>(f.final_id.size()));
    if (inserted) {
      f.structural_of.push_back(key.first);
      seen.push_back(0);
    }
    f.phase[o] = it->second;
    f.instance[o] = seen[it->second]++;
  }
  return f;
}

}  // namespace p3s::analyzer
