// SPDX-License-Identifier: BSD-3-Clause
// Pass 3: phase occurrences -> signature. Two sweeps over every location's operations:
//  1. per occurrence, the total burst work (to split structurally equal instances that do different work,
//     DESIGN's "burst work at least 90 % similar"), and per phase the bursts found at instance boundaries;
//  2. per phase and location, the representative event list (structure from the first instance, statistics
//     over all matching instances) and every instance's time.
// Burst attribution (the PAS2P second pass): a burst between two calls belongs to the call after it, except
// at instance boundaries, where a phase whose iterations end with computation (the burst before its next
// instance looks like the burst after its last one) keeps the trailing burst; otherwise the boundary burst
// of the last instance would be charged to the neighbouring phase and the first instance would carry the
// neighbour's computation.
#include "signature_builder.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

#include "op_log.hpp"
#include "p3s/analyzer/event.hpp"
#include "tick_log.hpp"

namespace p3s::analyzer {
namespace {

constexpr std::size_t kNone = static_cast<std::size_t>(-1);

struct Boundary {
  Stat internal;  ///< bursts between consecutive instances of the phase
  Stat lead;      ///< bursts before an instance that follows another phase
  Stat trail;     ///< bursts after an instance that another phase follows
};

/// Accumulates one representative event.
struct EventAcc {
  std::uint32_t region = 0;
  std::vector<Action> actions;  ///< structure (kinds, peers, communicators, operations)
  std::vector<Stat> bytes;      ///< per action
  std::vector<Stat> bytes_received;
  /// Per action of the representative instance: for a request's completion, the event that started the
  /// request (-1: before the instance); for a posted receive, the receive that completed it (kind Send when
  /// none was seen).
  std::vector<std::int32_t> started;
  std::vector<Action> completed_by;
  SigEvent out;
};

/// Actions that start a request, and those that complete one.
bool starts_request(const Action& a) {
  return (a.kind == mpi::ActionKind::Send && a.request != 0) || a.kind == mpi::ActionKind::IrecvPost ||
         a.kind == mpi::ActionKind::NbCollRequest;
}
bool completes_request(const Action& a) {
  return (a.kind == mpi::ActionKind::Recv && a.request != 0) || a.kind == mpi::ActionKind::IsendComplete ||
         a.kind == mpi::ActionKind::NbCollComplete;
}

/// Where a request of a representative instance began: the phase, the event in the instance and the action.
struct RequestStart {
  std::uint32_t phase;
  std::size_t occurrence;
  std::uint32_t event;
  std::uint32_t action;
};

struct RepAcc {
  bool initialised = false;
  std::vector<EventAcc> events;
  Stat tail_work;
  Stat tail_ns;
  std::uint64_t mismatched = 0;
};

bool same_structure(const EventAcc& e, const Op& op) {
  if (e.region != op.header.region || e.actions.size() != op.actions.size()) return false;
  for (std::size_t i = 0; i < op.actions.size(); ++i) {
    const Action& a = e.actions[i];
    const Action& b = op.actions[i];
    if (a.kind != b.kind || a.peer != b.peer || a.comm != b.comm || a.op != b.op || a.root != b.root) return false;
  }
  return true;
}

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

std::size_t occurrence_of(const std::vector<std::uint64_t>& first_tick, std::uint64_t tick, std::size_t hint) noexcept {
  if (first_tick.empty()) return 0;
  // Ticks of one location only grow: walk forward from the hint, and search only when far away.
  std::size_t o = std::min(hint, first_tick.size() - 1);
  if (first_tick[o] > tick) o = 0;
  for (int step = 0; step < 8 && o + 1 < first_tick.size() && first_tick[o + 1] <= tick; ++step) ++o;
  if (o + 1 < first_tick.size() && first_tick[o + 1] <= tick) {
    o = static_cast<std::size_t>(std::upper_bound(first_tick.begin(), first_tick.end(), tick) - first_tick.begin()) - 1;
  }
  return o;
}

/// Links requests within representative instances: a completion learns the event that started its request,
/// and a posted receive learns the message that completed it (its peer, tag and size). `rep` is the
/// representative being built by this operation (event `event`), or nullptr.
void link_requests(const Op& op, std::size_t occurrence, RepAcc* rep, std::size_t event, std::uint32_t phase,
                   std::vector<std::map<std::size_t, RepAcc>>& reps, std::size_t location,
                   std::unordered_map<std::uint64_t, RequestStart>& requests) {
  for (std::size_t i = 0; i < op.actions.size(); ++i) {
    const Action& a = op.actions[i];
    if (starts_request(a)) {
      if (rep != nullptr) {
        requests[a.request] = {phase, occurrence, static_cast<std::uint32_t>(event), static_cast<std::uint32_t>(i)};
      } else {
        requests.erase(a.request);  // an id reused outside a representative
      }
    } else if (completes_request(a)) {
      const auto it = requests.find(a.request);
      if (it == requests.end()) continue;
      const RequestStart& start = it->second;
      EventAcc& origin = reps[start.phase].at(location).events[start.event];
      if (origin.actions[start.action].kind == mpi::ActionKind::IrecvPost && a.kind == mpi::ActionKind::Recv) {
        origin.completed_by[start.action] = a;
      }
      if (rep != nullptr && start.occurrence == occurrence) {
        rep->events[event].started[i] = static_cast<std::int32_t>(start.event);
      }
      requests.erase(it);
    }
  }
}

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

OccurrenceLabels build_signature(const TraceDefinitions& defs, const Extracted& extracted,
                                 const std::vector<std::filesystem::path>& tick_files, const PhaseStructure& ps,
                                 Signature& sig) {
  const std::size_t nocc = ps.occurrences.size();
  OccurrenceLabels labels;
  labels.first_tick.resize(nocc);
  for (std::size_t o = 0; o < nocc; ++o) labels.first_tick[o] = ps.occurrences[o].first_tick + 1;

  // Sweep 1: instance work and boundary bursts per structural phase.
  std::vector<double> occ_work(nocc, 0);
  std::vector<Boundary> bounds(ps.phases.size());
  for (std::size_t l = 0; l < extracted.locations.size(); ++l) {
    OpSweep s(extracted.locations[l], tick_files[l], labels.first_tick);
    std::size_t prev = kNone;
    while (s.next()) {
      const std::size_t o = s.occurrence;
      occ_work[o] += static_cast<double>(s.op.header.burst_work);
      if (o == prev) continue;
      if (prev != kNone) {
        const std::uint32_t p = ps.occurrences[o].phase;
        const std::uint32_t q = ps.occurrences[prev].phase;
        const auto burst = static_cast<double>(s.op.header.burst_work);
        if (p == q && o == prev + 1) {
          bounds[p].internal.add(burst);
        } else {
          bounds[p].lead.add(burst);
          bounds[q].trail.add(burst);
        }
      }
      prev = o;
    }
  }
  // Below this much work per location, differences are measurement noise (a few microseconds, or the
  // instructions of that long) whatever the relative difference.
  const double floor_per_location = sig.work_metric == "PAPI_TOT_INS" ? 2e4 : 1e4;
  std::vector<bool> trailing(ps.phases.size(), false);
  for (std::size_t p = 0; p < ps.phases.size(); ++p) {
    const Boundary& b = bounds[p];
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

  // Work split: final phase ids in order of first occurrence.
  const double floor = floor_per_location * static_cast<double>(extracted.locations.size());
  const double tol = 1.0 - sig.options.work_similarity;
  std::vector<std::vector<std::size_t>> by_phase(ps.phases.size());
  for (std::size_t o = 0; o < nocc; ++o) by_phase[ps.occurrences[o].phase].push_back(o);
  std::vector<std::uint32_t> cluster(nocc, 0);
  for (const auto& occs : by_phase) {
    const std::vector<std::uint32_t> c = work_clusters(occs, occ_work, tol, floor);
    for (std::size_t i = 0; i < occs.size(); ++i) cluster[occs[i]] = c[i];
  }
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> final_id;  // (structural, cluster) -> id
  std::vector<std::uint32_t> structural_of;
  labels.phase.resize(nocc);
  labels.instance.resize(nocc);
  std::vector<std::uint64_t> seen;
  for (std::size_t o = 0; o < nocc; ++o) {
    const std::pair<std::uint32_t, std::uint32_t> key{ps.occurrences[o].phase, cluster[o]};
    const auto [it, inserted] = final_id.emplace(key, static_cast<std::uint32_t>(final_id.size()));
    if (inserted) {
      structural_of.push_back(key.first);
      seen.push_back(0);
    }
    labels.phase[o] = it->second;
    labels.instance[o] = seen[it->second]++;
  }
  const std::size_t nphases = final_id.size();

  // Sweep 2: representatives and instance times.
  std::vector<double> inst_time(nocc, 0);
  std::vector<std::map<std::size_t, RepAcc>> reps(nphases);  // phase -> location -> accumulator
  std::unordered_map<std::uint64_t, RequestStart> requests;  // started in a representative, not yet completed
  for (std::size_t l = 0; l < extracted.locations.size(); ++l) {
    requests.clear();
    OpSweep s(extracted.locations[l], tick_files[l], labels.first_tick);
    std::size_t prev = kNone;
    RepAcc* rep = nullptr;
    bool building = false;
    bool mismatch = false;
    std::size_t j = 0;
    double time = 0;
    std::uint64_t first_burst_ns = 0;
    std::uint64_t first_burst_work = 0;
    auto close = [&]() {
      if (prev == kNone) return;
      inst_time[prev] = std::max(inst_time[prev], time);
      if (!building && (mismatch || j != rep->events.size())) ++rep->mismatched;
    };
    while (s.next()) {
      const std::size_t o = s.occurrence;
      const OpHeader& h = s.op.header;
      if (o != prev) {
        first_burst_ns = h.burst_ns;
        first_burst_work = h.burst_work;
        if (prev != kNone && trailing[structural_of[labels.phase[prev]]]) {
          // The boundary burst ends the previous instance.
          time += static_cast<double>(h.burst_ns);
          rep->tail_ns.add(static_cast<double>(h.burst_ns));
          rep->tail_work.add(static_cast<double>(h.burst_work));
          first_burst_ns = 0;
          first_burst_work = 0;
        }
        close();
        prev = o;
        rep = &reps[labels.phase[o]][l];
        building = !rep->initialised;
        rep->initialised = true;
        mismatch = false;
        j = 0;
        time = 0;
      }
      const std::uint64_t burst_ns = j == 0 ? first_burst_ns : h.burst_ns;
      const std::uint64_t burst_work = j == 0 ? first_burst_work : h.burst_work;
      time += static_cast<double>(burst_ns + (h.leave_ns - h.enter_ns));
      if (building) {
        EventAcc e;
        e.region = h.region;
        e.actions = s.op.actions;
        e.bytes.resize(e.actions.size());
        e.bytes_received.resize(e.actions.size());
        e.started.assign(e.actions.size(), -1);
        e.completed_by.resize(e.actions.size());
        rep->events.push_back(std::move(e));
      }
      link_requests(s.op, o, building ? rep : nullptr, j, labels.phase[o], reps, l, requests);
      if (j < rep->events.size() && same_structure(rep->events[j], s.op)) {
        EventAcc& e = rep->events[j];
        e.out.burst_ns.add(static_cast<double>(burst_ns));
        e.out.burst_work.add(static_cast<double>(burst_work));
        e.out.call_ns.add(static_cast<double>(h.leave_ns - h.enter_ns));
        for (std::size_t i = 0; i < s.op.actions.size(); ++i) {
          e.bytes[i].add(static_cast<double>(s.op.actions[i].bytes));
          e.bytes_received[i].add(static_cast<double>(s.op.actions[i].bytes_received));
        }
        if (e.out.callsite.empty() && h.callsite != kNoRef) e.out.callsite = std::string(defs.string(h.callsite));
      } else {
        mismatch = true;
      }
      ++j;
    }
    close();
  }

  // Assemble the phases.
  sig.phases.assign(nphases, {});
  for (std::size_t p = 0; p < nphases; ++p) {
    SigPhase& ph = sig.phases[p];
    ph.id = static_cast<std::uint32_t>(p);
    ph.attribution = trailing[structural_of[p]] ? "trailing" : "leading";
  }
  for (const auto& [key, id] : final_id) {
    if (key.second != 0) {
      // A work variant points at the phase holding its structure's first cluster.
      sig.phases[id].split_from = final_id.at({key.first, 0});
    }
  }
  for (std::size_t o = 0; o < nocc; ++o) {
    SigPhase& ph = sig.phases[labels.phase[o]];
    ++ph.weight;
    ph.ticks = ps.occurrences[o].ticks;
    ph.time_ns.add(inst_time[o]);
    ph.work.add(occ_work[o]);
    sig.accounted_ns += inst_time[o];
  }
  for (std::size_t p = 0; p < nphases; ++p) {
    SigPhase& ph = sig.phases[p];
    for (auto& [l, rep] : reps[p]) {
      const ExtractedLocation& loc = extracted.locations[l];
      SigRank r;
      r.rank = loc.rank;
      r.thread = loc.thread;
      r.tail_work = rep.tail_work;
      r.tail_ns = rep.tail_ns;
      r.mismatched_instances = rep.mismatched;
      for (EventAcc& e : rep.events) {
        const Region* region = defs.region(e.region);
        e.out.call = region != nullptr ? region->name : "region " + std::to_string(e.region);
        e.out.function = region != nullptr ? region->function : mpi::Function::Other;
        for (std::size_t i = 0; i < e.actions.size(); ++i) {
          const Action& a = e.actions[i];
          SigAction sa;
          sa.kind = a.kind;
          sa.peer = a.peer;
          sa.tag = a.tag;
          sa.comm = a.comm;
          sa.request = starts_request(a) || completes_request(a);
          sa.started = e.started[i];
          const Action& done = e.completed_by[i];
          if (a.kind == mpi::ActionKind::IrecvPost && done.kind == mpi::ActionKind::Recv) {
            // A posted receive is described by the message it received.
            sa.peer = done.peer;
            sa.tag = done.tag;
            sa.comm = done.comm;
            e.bytes[i] = Stat{};
            e.bytes[i].add(static_cast<double>(done.bytes));
          }
          if (sa.started >= 0 && a.comm == kNoRef) {
            // A completion that names only its request (MPI_Isend's) takes the communicator of its start.
            for (const Action& origin : rep.events[static_cast<std::size_t>(sa.started)].actions) {
              if (starts_request(origin) && origin.request == a.request) sa.comm = origin.comm;
            }
          }
          sa.offset = sa.peer >= 0 ? sa.peer - loc.rank : 0;
          const Communicator* c = defs.comm(sa.comm);
          sa.comm_size =
              c == nullptr ? 0 : static_cast<std::uint32_t>(c->kind == CommKind::Self ? 1 : c->world_ranks.size());
          if (a.kind == mpi::ActionKind::Collective || a.kind == mpi::ActionKind::NbCollRequest ||
              a.kind == mpi::ActionKind::NbCollComplete) {
            sa.collective = a.op;
            sa.peer = -1;
          }
          sa.root = a.root;
          sa.bytes = e.bytes[i].mean;
          sa.bytes_min = e.bytes[i].min;
          sa.bytes_max = e.bytes[i].max;
          sa.bytes_received = e.bytes_received[i].mean;
          e.out.actions.push_back(std::move(sa));
        }
        r.events.push_back(std::move(e.out));
      }
      ph.ranks.push_back(std::move(r));
    }
    std::sort(ph.ranks.begin(), ph.ranks.end(), [](const SigRank& a, const SigRank& b) {
      return std::tie(a.rank, a.thread) < std::tie(b.rank, b.thread);
    });
  }
  sig.communicators = communicators_used(defs, extracted, sig.phases);
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
  for (std::size_t o = 0; o < nocc; ++o) {
    if (!sig.order.empty() && sig.order.back().phase == labels.phase[o]) {
      ++sig.order.back().count;
    } else {
      sig.order.push_back({labels.phase[o], 1});
    }
  }
  std::uint64_t first = UINT64_MAX;
  std::uint64_t last = 0;
  for (const ExtractedLocation& l : extracted.locations) {
    first = std::min(first, l.first_ns);
    last = std::max(last, l.last_ns);
  }
  sig.run_time_ns = last > first ? static_cast<double>(last - first) : 0;
  return labels;
}

}  // namespace p3s::analyzer
