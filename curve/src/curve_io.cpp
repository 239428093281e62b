// SPDX-License-Identifier: BSD-3-Clause
// The curve as a table, JSON and CSV.
#include <cstdio>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "p3s/curve/curve.hpp"
#include "p3s/json_text.hpp"
#include "p3s/table_text.hpp"
#include "p3s/utc_date.hpp"
#include "p3s/version.hpp"

namespace p3s::curve {
namespace {

using nlohmann::ordered_json;

inline constexpr int kCurveSchemaVersion = 1;

std::string source_of(const Row& r) { return r.predicted ? "predicted" : "measured"; }

ordered_json optional_number(const std::optional<double>& v) { return v ? ordered_json(*v) : ordered_json(); }

}  // namespace

std::string curve_table(const Curve& c) {
  std::ostringstream out;
  out << "        n  source        time      measured     error   speedup  efficiency\n";
  for (const Row& r : c.rows) {
    out << pad(std::to_string(r.n), 9) << "  " << pad(source_of(r), -9) << pad(time_text(r.time_ns), 12)
        << pad(r.predicted && r.measured_ns ? time_text(*r.measured_ns) : "-", 14)
        << pad(r.error ? fmt("%+.1f %%", 100 * *r.error) : "-", 10) << pad(fmt("%.2f", r.speedup), 10)
        << pad(fmt("%.0f %%", 100 * r.efficiency), 12) << '\n';
  }
  out << "speedup and efficiency against n = " << c.baseline << " (" << time_text(c.baseline_ns) << ")\n";
  const Recommendation& rec = c.recommendation;
  out << "recommended n = " << rec.n << ": " << rec.rule << '\n';
  if (rec.fastest && *rec.fastest != rec.n) out << "fastest      n = " << *rec.fastest << '\n';
  bool any = false;
  for (std::size_t k = 0; k < c.phases.size(); ++k) {
    const PhaseLimit& l = c.phases[k];
    if (!any) out << "phases (time over the run at each n):\n";
    any = true;
    std::string calls = l.calls.size() > 48 ? l.calls.substr(0, 45) + "..." : l.calls;
    out << "  phase " << l.id << (l.minor ? " (minor)" : "") << (c.first_to_stop == k ? " (stops first)" : "") << "  "
        << calls << '\n'
        << "   ";
    for (std::size_t i = 0; i < c.rows.size(); ++i) {
      if (l.time_ns[i]) out << " n=" << c.rows[i].n << ": " << time_text(*l.time_ns[i]);
    }
    out << '\n';
    if (l.stops_at) {
      out << "    stops scaling beyond n = " << *l.stops_at << ": " << l.why << '\n';
    } else {
      out << "    scales over every n\n";
    }
  }
  for (const std::string& n : c.notes) out << "note: " << n << '\n';
  return out.str();
}

std::string curve_json(const Curve& c) {
  ordered_json rows = ordered_json::array();
  for (const Row& r : c.rows) {
    rows.push_back(ordered_json{{"n", r.n},
                                {"source", source_of(r)},
                                {"predicted_by", r.predicted ? ordered_json(r.predicted_by) : ordered_json()},
                                {"time_ns", r.time_ns},
                                {"predicted_ns", optional_number(r.predicted_ns)},
                                {"measured_ns", optional_number(r.measured_ns)},
                                {"error", optional_number(r.error)},
                                {"speedup", r.speedup},
                                {"efficiency", r.efficiency},
                                {"gain_per_doubling", optional_number(r.gain)}});
  }
  ordered_json phases = ordered_json::array();
  for (const PhaseLimit& l : c.phases) {
    ordered_json times = ordered_json::array();
    for (const std::optional<double>& t : l.time_ns) times.push_back(optional_number(t));
    phases.push_back(ordered_json{{"id", l.id},
                                  {"calls", l.calls},
                                  {"time_ns", std::move(times)},
                                  {"stops_at", l.stops_at ? ordered_json(*l.stops_at) : ordered_json()},
                                  {"why", l.why},
                                  {"minor", l.minor}});
  }
  const Recommendation& rec = c.recommendation;
  const ordered_json j{
      {"schema_version", kCurveSchemaVersion},
      {"tool", std::string("p3s ") + p3s::kVersion},
      {"date", utc_now()},
      {"options",
       {{"efficiency", c.options.efficiency}, {"gain", c.options.gain}, {"minor_share", c.options.minor_share}}},
      {"baseline", {{"n", c.baseline}, {"time_ns", c.baseline_ns}}},
      {"rows", std::move(rows)},
      {"recommendation",
       {{"n", rec.n},
        {"by_efficiency", rec.by_efficiency},
        {"knee", rec.knee ? ordered_json(*rec.knee) : ordered_json()},
        {"fastest", rec.fastest ? ordered_json(*rec.fastest) : ordered_json()},
        {"rule", rec.rule}}},
      {"phases", std::move(phases)},
      {"first_to_stop", c.first_to_stop ? ordered_json(c.phases[*c.first_to_stop].id) : ordered_json()},
      {"inputs", c.inputs},
      {"notes", c.notes}};
  return json_text(j, 1) + '\n';
}

std::string curve_csv(const Curve& c) {
  std::ostringstream out;
  out << "n,source,time_s,predicted_s,measured_s,error,speedup,efficiency\n";
  const auto seconds = [](const std::optional<double>& ns) { return ns ? fmt("%.9g", *ns / 1e9) : std::string(); };
  for (const Row& r : c.rows) {
    out << r.n << ',' << source_of(r) << ',' << fmt("%.9g", r.time_ns / 1e9) << ',' << seconds(r.predicted_ns) << ','
        << seconds(r.measured_ns) << ',' << (r.error ? fmt("%.6g", *r.error) : "") << ',' << fmt("%.6g", r.speedup)
        << ',' << fmt("%.6g", r.efficiency) << '\n';
  }
  return out.str();
}

}  // namespace p3s::curve
