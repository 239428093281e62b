// SPDX-License-Identifier: BSD-3-Clause
// A simulation's result file (the keys of p3s-replay's result where they mean the same) and its summary.
#include <algorithm>
#include <sstream>

#include <nlohmann/json.hpp>

#include "p3s/json_text.hpp"
#include "p3s/simulate/simulate.hpp"
#include "p3s/table_text.hpp"
#include "p3s/utc_date.hpp"
#include "p3s/version.hpp"
#include "p3s/whole_file.hpp"

namespace p3s::simulate {
namespace {

using nlohmann::json;

json phase_json(const PhaseResult& r) {
  const modeler::TitPhaseStats& s = r.stats;
  return json{{"id", r.id},
              {"calls", r.calls},
              {"weight", r.weight},
              {"main_loop", r.main_loop},
              {"repaired", s.repaired},
              {"replayed", r.simulated},
              {"instances", r.instances},
              {"time_ns", r.time_ns},
              {"time_min_ns", r.time_ns},
              {"time_max_ns", r.time_ns},
              {"time_stddev_ns", 0.0},
              {"compute_ns", s.compute_ns},
              {"compute_max_ns", s.compute_max_ns},
              {"predicted_compute_ns", s.compute_ns},
              {"mpi_ns", std::max(r.time_ns - s.compute_ns, 0.0)},
              {"calls_per_instance", s.calls},
              {"messages_per_instance", s.messages},
              {"bytes_per_instance", s.bytes}};
}

}  // namespace

void write_result(const Result& r, const std::string& source, const Platform& platform, const std::string& command,
                  const std::filesystem::path& path) {
  json phases = json::array();
  for (const PhaseResult& p : r.phases) phases.push_back(phase_json(p));
  const json j{{"schema_version", 1},
               {"tool", std::string("p3s simulate ") + kVersion},
               {"date", utc_now()},
               {"inputs",
                {{"source", source},
                 {"application", r.application},
                 {"work_metric", r.work_metric},
                 {"command", command},
                 {"platform", platform.description},
                 {"platform_file", platform.xml.string()}}},
               {"processes", r.processes},
               {"phases", std::move(phases)},
               {"pet_ns", r.pet_ns},
               {"main_ns", r.main_ns},
               {"replay_wall_ns", r.wall_ns},
               {"notes", r.notes}};
  write_whole_file(path, json_text(j, 1) + '\n');
}

std::string result_summary(const Result& r) {
  std::ostringstream out;
  out << "simulation at n = " << r.processes << '\n';
  out << "phase  weight  instances   time/instance   compute    MPI   calls\n";
  for (const PhaseResult& p : r.phases) {
    out << fmt("%5.0f", p.id) << fmt("%8.0f", static_cast<double>(p.weight));
    if (!p.simulated) {
      out << "  does not occur at this n\n";
      continue;
    }
    out << fmt("%11.0f", p.instances) << pad(time_text(p.time_ns), 16) << pad(time_text(p.stats.compute_ns), 10)
        << pad(time_text(std::max(p.time_ns - p.stats.compute_ns, 0.0)), 9) << fmt("%7.1f", p.stats.calls) << '\n';
  }
  out << "PET          " << time_text(r.pet_ns) << " (weight x simulated time over the phases)\n";
  out << "main loop    " << time_text(r.main_ns) << " (the phases without MPI_Init and MPI_Finalize)\n";
  out << "simulated in " << time_text(r.wall_ns) << '\n';
  for (const std::string& note : r.notes) out << "note: " << note << '\n';
  return out.str();
}

}  // namespace p3s::simulate
