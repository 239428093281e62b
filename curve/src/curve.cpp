// SPDX-License-Identifier: BSD-3-Clause
// Speedup, efficiency, the recommended process count, and where each phase stops scaling.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>

#include "p3s/curve/curve.hpp"
#include "p3s/error.hpp"
#include "p3s/table_text.hpp"

namespace p3s::curve {
namespace {

std::string percent(double share) { return fmt("%.0f %%", 100 * share); }

/// The share of time a doubling of n gains from (n0, t0) to (n1, t1), n1 > n0: 1 - (t1/t0)^(1/log2(n1/n0)).
double gain_per_doubling(std::int64_t n0, double t0, std::int64_t n1, double t1) {
  if (t0 <= 0) return 0;
  const double doublings = std::log2(static_cast<double>(n1) / static_cast<double>(n0));
  return 1 - std::pow(std::max(t1, 0.0) / t0, 1 / doublings);
}

std::vector<Row> rows_of(const std::vector<Point>& points) {
  std::vector<Row> rows;
  for (const Point& p : points) {
    if (!p.predicted_ns && !p.measured_ns) continue;
    Row r;
    r.n = p.n;
    r.predicted_ns = p.predicted_ns;
    r.measured_ns = p.measured_ns;
    r.predicted = p.predicted_ns.has_value();
    if (r.predicted) r.predicted_by = p.predicted_by;
    r.time_ns = r.predicted ? *p.predicted_ns : *p.measured_ns;
    if (p.predicted_ns && p.measured_ns && *p.measured_ns > 0) {
      r.error = (*p.predicted_ns - *p.measured_ns) / *p.measured_ns;
    }
    rows.push_back(r);
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.n < b.n; });
  for (std::size_t i = 0; i + 1 < rows.size(); ++i) {
    rows[i].gain = gain_per_doubling(rows[i].n, rows[i].time_ns, rows[i + 1].n, rows[i + 1].time_ns);
  }
  return rows;
}

Recommendation recommend(const std::vector<Row>& rows, const Options& o) {
  Recommendation r;
  r.by_efficiency = rows.front().n;
  double fastest = rows.front().time_ns;
  r.fastest = rows.front().n;
  for (const Row& row : rows) {
    if (row.efficiency >= o.efficiency) r.by_efficiency = std::max(r.by_efficiency, row.n);
    if (row.time_ns < fastest) {
      fastest = row.time_ns;
      r.fastest = row.n;
    }
    if (!r.knee && row.gain && *row.gain < o.gain) r.knee = row.n;
  }
  const std::string eff = "the largest n whose efficiency is at least " + percent(o.efficiency) +
                          " (n = " + std::to_string(r.by_efficiency) + ")";
  if (!r.knee) {
    r.n = r.by_efficiency;
    r.rule = eff + "; a doubling still gains " + percent(o.gain) + " or more up to the largest n";
  } else if (*r.knee < r.by_efficiency) {
    r.n = *r.knee;
    r.rule = "the knee: beyond n = " + std::to_string(*r.knee) + " a doubling of n gains less than " + percent(o.gain) +
             " of the time (" + eff + " is larger)";
  } else {
    r.n = r.by_efficiency;
    r.rule = eff + " (the knee, where a doubling gains less than " + percent(o.gain) +
             ", is at n = " + std::to_string(*r.knee) + ")";
  }
  return r;
}

/// The kind of communication a phase's calls make.
std::string communication_of(const std::string& calls) {
  bool collective = false;
  for (const char* c : {"MPI_All", "MPI_Reduce", "MPI_Bcast", "MPI_Barrier", "MPI_Gather", "MPI_Scatter", "MPI_Scan",
                        "MPI_Exscan", "MPI_Ialltoall", "MPI_Iallreduce", "MPI_Ibcast", "MPI_Ireduce"}) {
    collective = collective || calls.find(c) != std::string::npos;
  }
  bool p2p = false;
  for (const char* c : {"send", "recv", "Send", "Recv"}) p2p = p2p || calls.find(c) != std::string::npos;
  if (collective && p2p) return "communication (point-to-point and collectives)";
  return collective ? "collectives" : "point-to-point communication";
}

/// What keeps a phase from scaling between two points: the part of its time most above ideal scaling. The rank
/// that computes most sets the pace where the ranks compute unevenly: the others' wait in MPI is its doing.
std::string why_stops(const PhasePoint& a, std::int64_t na, const PhasePoint& b, std::int64_t nb) {
  const double ideal = static_cast<double>(na) / static_cast<double>(nb);
  const double compute_excess = b.compute_ns - ideal * a.compute_ns;
  const double busiest_excess = b.compute_max_ns - ideal * a.compute_max_ns;
  const double mpi_excess = b.mpi_ns - ideal * a.mpi_ns;
  const std::string span = " from n = " + std::to_string(na) + " to " + std::to_string(nb);
  std::string why;
  if (b.compute_max_ns > 1.25 * b.compute_ns && busiest_excess > 0 &&
      busiest_excess >= 0.5 * std::max(compute_excess, mpi_excess)) {
    why = "imbalance: the rank that computes most computes " + fmt("%.1f", b.compute_max_ns / b.compute_ns) +
          " times the mean, and " + percent(a.compute_max_ns > 0 ? b.compute_max_ns / a.compute_max_ns : 0) +
          " of its compute remains" + span + " (a serial part or an uneven split; the others wait for it in MPI)";
  } else if (compute_excess >= mpi_excess) {
    why = "compute: its time does not shrink as 1/n (" + percent(a.compute_ns > 0 ? b.compute_ns / a.compute_ns : 0) +
          " of it remains" + span + ": a serial part)";
  } else {
    why = communication_of(b.calls) + ": its time in MPI goes from " +
          percent(a.time_ns > 0 ? a.mpi_ns / a.time_ns : 0) + " to " +
          percent(b.time_ns > 0 ? b.mpi_ns / b.time_ns : 0) + " of the phase";
  }
  if (b.weight > a.weight) {
    why += "; it repeats more often (" + std::to_string(a.weight) + " -> " + std::to_string(b.weight) + " times)";
  }
  if (b.spread > 0.25) why += "; its slowest rank takes " + percent(b.spread) + " longer than its fastest";
  return why;
}

std::vector<PhaseLimit> limits_of(const std::vector<Point>& points, const std::vector<Row>& rows, const Options& o) {
  // A phase is known by its number and its calls (a run's and a prediction's phases are numbered alike when the
  // model was fitted on the runs).
  using Key = std::pair<std::uint32_t, std::string>;
  std::map<Key, PhaseLimit> by_id;
  std::map<Key, std::vector<std::pair<std::int64_t, const PhasePoint*>>> series;
  for (const Point& p : points) {
    const auto row = std::find_if(rows.begin(), rows.end(), [&](const Row& r) { return r.n == p.n; });
    if (row == rows.end()) continue;
    for (const PhasePoint& ph : p.phases) {
      PhaseLimit& l = by_id[{ph.id, ph.calls}];
      l.id = ph.id;
      l.calls = ph.calls;
      l.time_ns.resize(rows.size());
      l.time_ns[static_cast<std::size_t>(row - rows.begin())] = ph.time_ns;
      series[{ph.id, ph.calls}].emplace_back(p.n, &ph);
    }
  }
  std::vector<PhaseLimit> out;
  for (auto& [key, l] : by_id) {
    l.minor = true;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (l.time_ns[i] && rows[i].time_ns > 0 && *l.time_ns[i] >= o.minor_share * rows[i].time_ns) l.minor = false;
    }
    const auto& s = series[key];
    for (std::size_t i = 0; i + 1 < s.size(); ++i) {
      const auto [n0, a] = s[i];
      const auto [n1, b] = s[i + 1];
      if (gain_per_doubling(n0, a->time_ns, n1, b->time_ns) >= o.gain) continue;
      l.stops_at = n0;
      l.why = why_stops(*a, n0, *b, n1);
      break;
    }
    out.push_back(std::move(l));
  }
  return out;
}

/// Where a prediction was replayed with phases repaired (their calls as predicted did not match, and what did not was
/// dropped), how far its time is to be trusted: those phases and their share of it.
std::optional<std::string> repaired_note(const Point& p) {
  std::string ids;
  double repaired_ns = 0;
  double total_ns = 0;
  for (const PhasePoint& q : p.phases) {
    total_ns += q.time_ns;
    if (!q.repaired) continue;
    ids += (ids.empty() ? "" : ", ") + std::to_string(q.id);
    repaired_ns += q.time_ns;
  }
  if (ids.empty()) return std::nullopt;
  return "at n = " + std::to_string(p.n) + " the prediction's phases " + ids + " (" +
         percent(total_ns > 0 ? repaired_ns / total_ns : 0.0) +
         " of its time) were repaired: their calls as predicted did not match, and what did not was dropped from the "
         "replay; that time is less certain than the rest";
}

}  // namespace

Curve make_curve(const std::vector<Point>& points, const Options& options) {
  if (!(options.efficiency > 0 && options.efficiency <= 1)) throw InputError("--efficiency must be in (0, 1]");
  if (!(options.gain > 0 && options.gain < 1)) throw InputError("--gain must be in (0, 1)");
  Curve c;
  c.options = options;
  c.rows = rows_of(points);
  if (c.rows.empty()) throw InputError("no point has a predicted or measured time: nothing to draw a curve of");
  c.baseline = options.baseline.value_or(c.rows.front().n);
  const auto base = std::find_if(c.rows.begin(), c.rows.end(), [&](const Row& r) { return r.n == c.baseline; });
  if (base == c.rows.end()) {
    throw InputError("the baseline n = " + std::to_string(c.baseline) + " is none of the points' process counts");
  }
  c.baseline_ns = base->time_ns;
  for (Row& r : c.rows) {
    r.speedup = r.time_ns > 0 ? c.baseline_ns / r.time_ns : 0;
    r.efficiency = r.speedup * static_cast<double>(c.baseline) / static_cast<double>(r.n);
  }
  c.recommendation = recommend(c.rows, options);
  c.phases = limits_of(points, c.rows, options);
  for (std::size_t i = 0; i < c.phases.size(); ++i) {
    const PhaseLimit& l = c.phases[i];
    if (l.minor || !l.stops_at) continue;
    if (!c.first_to_stop || *l.stops_at < *c.phases[*c.first_to_stop].stops_at) c.first_to_stop = i;
  }
  std::string application;
  for (const Point& p : points) {
    if (!p.result.empty()) c.inputs.push_back(p.result);
    if (!p.run.empty()) c.inputs.push_back(p.run);
    if (!p.application.empty() && !application.empty() && p.application != application) {
      c.notes.push_back("the predictions come from different applications ('" + application + "', '" + p.application +
                        "'): their phases are compared by number only");
    }
    if (!p.application.empty()) application = p.application;
    if (std::optional<std::string> repaired = repaired_note(p)) c.notes.push_back(std::move(*repaired));
  }
  return c;
}

}  // namespace p3s::curve
