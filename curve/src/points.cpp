// SPDX-License-Identifier: BSD-3-Clause
// Reading the points of a curve: replay results, signatures of recorded runs, and `p3s scale` directories.
#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <system_error>

#include <nlohmann/json.hpp>

#include "p3s/analyzer/run_time.hpp"
#include "p3s/analyzer/signature.hpp"
#include "p3s/curve/curve.hpp"
#include "p3s/error.hpp"
#include "p3s/modeler/series.hpp"
#include "p3s/mpi/vocabulary.hpp"

namespace p3s::curve {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// One input as read: a prediction or a measured run (or a prediction that carries its comparison's run).
struct Read {
  Point point;
  bool explicit_run = false;                     ///< a signature given as such, not a result's comparison
  std::optional<analyzer::Signature> signature;  ///< the measured run's, where one was read
};

Read from_result(const json& j, const fs::path& path) {
  Read out;
  Point& p = out.point;
  p.n = j.at("processes").get<std::int64_t>();
  p.predicted_ns = j.at("pet_ns").get<double>();
  p.result = path.string();
  p.application = j.at("inputs").value("application", "");
  const bool range = j.contains("range");
  const bool simulated = j.value("tool", "").starts_with("p3s simulate");
  p.predicted_by = simulated ? "simulation" : range ? "range replay" : "replay";
  // A simulation runs on one core here; a replay on a core per rank of its job.
  const double cores = simulated ? 1.0 : range ? j.at("range").at("job_ranks").get<double>() : static_cast<double>(p.n);
  p.replay_core_s = cores * j.at("replay_wall_ns").get<double>() / 1e9;
  for (const json& ph : j.at("phases")) {
    if (!ph.at("replayed").get<bool>()) continue;
    PhasePoint q;
    q.id = ph.at("id").get<std::uint32_t>();
    q.calls = ph.at("calls").get<std::string>();
    q.weight = ph.at("weight").get<std::int64_t>();
    q.main_loop = ph.at("main_loop").get<bool>();
    q.repaired = ph.value("repaired", false);  // results of an earlier p3s-replay do not say
    const auto w = static_cast<double>(q.weight);
    const double t = ph.at("time_ns").get<double>();
    q.time_ns = w * t;
    q.compute_ns = w * ph.at("compute_ns").get<double>();
    q.compute_max_ns = w * ph.value("compute_max_ns", ph.at("compute_ns").get<double>());
    q.mpi_ns = w * ph.at("mpi_ns").get<double>();
    q.spread = t > 0 ? (ph.at("time_max_ns").get<double>() - ph.at("time_min_ns").get<double>()) / t : 0;
    if (ph.contains("messages_per_instance")) {  // results of an earlier p3s-replay do not have them
      q.messages = w * ph.at("messages_per_instance").get<double>();
      q.bytes = w * ph.at("bytes_per_instance").get<double>();
    }
    p.phases.push_back(std::move(q));
  }
  if (j.contains("comparison")) {
    p.measured_ns = j.at("comparison").at("real_ns").get<double>();
    p.run = j.at("comparison").at("signature").get<std::string>();
  }
  if (p.n <= 0 || *p.predicted_ns < 0) throw InputError("'" + path.string() + "' holds no process count or PET");
  return out;
}

/// The point of a measured run: its time, and its phases as `s` has them.
Read from_signature(const analyzer::Signature& s, const fs::path& path) {
  Read out;
  out.explicit_run = true;
  out.point.n = s.processes;
  out.point.measured_ns = analyzer::run_time(s).apart_ns;
  out.point.run = path.string();
  for (const analyzer::SigPhase& ph : s.phases) {
    PhasePoint q;
    q.id = ph.id;
    q.calls = analyzer::phase_calls(ph);
    q.weight = static_cast<std::int64_t>(ph.weight);
    const analyzer::PhaseRunTime t = analyzer::phase_run_time(ph, s.processes);
    q.main_loop = !t.init_or_finalize;
    q.time_ns = t.apart_ns;
    q.compute_ns = std::min(q.time_ns, static_cast<double>(ph.weight) * analyzer::phase_compute_ns(ph, s.processes));
    q.mpi_ns = q.time_ns - q.compute_ns;
    q.compute_max_ns = static_cast<double>(ph.weight) * analyzer::phase_compute_max_ns(ph);
    double messages = 0;
    double bytes = 0;
    for (const analyzer::SigRank& r : ph.ranks) {
      for (const analyzer::SigEvent& e : r.events) {
        for (const analyzer::SigAction& a : e.actions) {
          if (a.kind != mpi::ActionKind::Send || a.peer < 0) continue;
          messages += 1;
          bytes += a.bytes;
        }
      }
    }
    q.messages = static_cast<double>(ph.weight) * messages;
    q.bytes = static_cast<double>(ph.weight) * bytes;
    out.point.phases.push_back(std::move(q));
  }
  return out;
}

Read from_signature(const fs::path& path) {
  analyzer::Signature s = analyzer::read_signature(path);
  Read out = from_signature(s, path);
  out.signature = std::move(s);
  return out;
}

/// A file: a replay result or a signature, told apart by the tool that wrote it.
Read read_file(const fs::path& path) {
  // What p3s analyze names signature.json is read once, by the signature's own reader (LU's are hundreds of MB).
  if (path.filename() == "signature.json") return from_signature(path);
  std::ifstream in(path);
  if (!in) throw InputError("cannot read '" + path.string() + "'");
  json j;
  try {
    j = json::parse(in);
  } catch (const json::exception&) {
    throw InputError("'" + path.string() + "' is no JSON: give replay results (p3s-replay -o) or signatures");
  }
  const std::string tool = j.is_object() ? j.value("tool", "") : "";
  if (tool.starts_with("p3s-replay") || tool.starts_with("p3s simulate")) {
    if (j.value("schema_version", 0) != 1) {
      throw InputError("'" + path.string() + "' is a replay result of another schema version; use this p3s's replay");
    }
    try {
      return from_result(j, path);
    } catch (const json::exception& e) {
      throw InputError("'" + path.string() + "' is no whole replay result: " + e.what());
    }
  }
  j = json();  // a signature is read again by its own reader, which checks it
  return from_signature(path);
}

/// The files a directory stands for: a recorded run's signature, or a `p3s scale` directory's results and runs.
std::vector<fs::path> files_of(const fs::path& dir) {
  if (fs::is_regular_file(dir / "signature.json")) return {dir / "signature.json"};
  std::vector<fs::path> out;
  std::error_code ec;
  if (fs::is_directory(dir / "results")) {
    for (const fs::directory_entry& e : fs::directory_iterator(dir / "results", ec)) {
      if (e.path().extension() == ".json") out.push_back(e.path());
    }
  }
  for (const char* runs : {"runs", "checks"}) {  // the fitted runs, and the real runs that check predictions
    if (!fs::is_directory(dir / runs)) continue;
    for (const fs::directory_entry& e : fs::directory_iterator(dir / runs, ec)) {
      if (fs::is_regular_file(e.path() / "signature.json")) out.push_back(e.path() / "signature.json");
    }
  }
  if (out.empty()) {
    throw InputError(
        "'" + dir.string() +
        "' holds no signature.json, results/*.json, runs/*/signature.json or checks/*/signature.json: nothing "
        "to draw a curve of");
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// Adds `r` to the point at its n.
void merge(Point& into, bool& explicit_run, const Read& r) {
  const Point& p = r.point;
  if (p.predicted_ns) {
    if (into.predicted_ns) {
      throw InputError("two predictions at n = " + std::to_string(p.n) + ": '" + into.result + "' and '" + p.result +
                       "'; give one");
    }
    const std::optional<double> measured = into.measured_ns;
    const std::string run = into.run;
    into = p;
    if (explicit_run) {  // a run given as such wins over the result's comparison
      into.measured_ns = measured;
      into.run = run;
    }
    return;
  }
  if (into.phases.empty()) into.phases = p.phases;  // a prediction's phases win over the run's
  if (explicit_run) {
    throw InputError("two measured runs at n = " + std::to_string(p.n) + ": '" + into.run + "' and '" + p.run +
                     "'; give one");
  }
  into.measured_ns = p.measured_ns;
  into.run = p.run;
  explicit_run = true;
}

}  // namespace

std::vector<Point> read_points(const std::vector<fs::path>& inputs) {
  std::map<std::int64_t, std::pair<Point, bool>> at;  // n -> point, whether its run was given as such
  std::vector<modeler::Run> measured;
  for (const fs::path& in : inputs) {
    if (!fs::exists(in)) throw InputError("'" + in.string() + "' does not exist");
    for (const fs::path& file : fs::is_directory(in) ? files_of(in) : std::vector<fs::path>{in}) {
      Read r = read_file(file);
      auto [it, added] = at.try_emplace(r.point.n, Point{}, false);
      if (added) it->second.first.n = r.point.n;
      merge(it->second.first, it->second.second, r);
      if (r.signature) measured.push_back({file, std::move(*r.signature)});
    }
  }
  // A point without a prediction shows its run's phases as the model relates them: the kinds of one phase merged,
  // as across the series of runs given.
  if (measured.size() > 1) {
    (void)modeler::relate_phases_merging_kinds(measured);
    for (const modeler::Run& run : measured) {
      Point& p = at.at(run.n()).first;
      if (!p.predicted_ns) p.phases = from_signature(run.signature, run.path).point.phases;
    }
  }
  std::vector<Point> out;
  for (auto& [n, p] : at) out.push_back(std::move(p.first));
  return out;
}

}  // namespace p3s::curve
