// SPDX-License-Identifier: BSD-3-Clause
// The replay's result file and summaries, and its comparison with a real run.
#include <cmath>
#include <cstdio>
#include <sstream>

#include <nlohmann/json.hpp>

#include "p3s/analyzer/run_time.hpp"
#include "p3s/error.hpp"
#include "p3s/json_text.hpp"
#include "p3s/modeler/series.hpp"
#include "p3s/replay/replay.hpp"
#include "p3s/table_text.hpp"
#include "p3s/utc_date.hpp"
#include "p3s/version.hpp"
#include "p3s/whole_file.hpp"

namespace p3s::replay {
namespace {

using nlohmann::json;

inline constexpr int kResultSchemaVersion = 1;

}  // namespace

Comparison compare_with_run(const ReplayPlan& plan, const ReplayResult& result,
                            const std::filesystem::path& signature) {
  analyzer::Signature s = analyzer::read_signature(signature);
  if (s.processes != result.processes) {
    throw InputError("signature '" + signature.string() + "' is a run at " + std::to_string(s.processes) +
                     " processes, the replay at " + std::to_string(result.processes) + "; compare runs at the same n");
  }
  Comparison c;
  c.signature = signature.string();
  c.processes = s.processes;
  std::vector<modeler::PhaseKey> ours;  // a plan does not mark the time step: related by calls alone
  for (const PlannedPhase& p : plan.phases) ours.push_back({p.calls, false});
  // The run's phases related to the plan's, the kinds of each merged into it.
  const std::vector<std::optional<std::uint32_t>> related = modeler::relate_merging_kinds(ours, s);
  std::vector<bool> used(s.phases.size(), false);
  for (std::size_t i = 0; i < result.phases.size(); ++i) {
    const PhaseTime& t = result.phases[i];
    PhaseComparison pc;
    pc.id = t.id;
    pc.replayed = t.replayed;
    pc.main_loop = t.main_loop;
    pc.predicted_ns = static_cast<double>(t.weight) * t.time_ns;
    pc.predicted_compute_ns = t.predicted_compute_ns;
    if (i < related.size() && related[i]) {
      for (std::size_t j = 0; j < s.phases.size(); ++j) {
        if (s.phases[j].id != *related[i]) continue;
        used[j] = true;
        pc.run_phase = s.phases[j].listed_id();
        const auto [real, apart, init_or_finalize] = analyzer::phase_run_time(s.phases[j], s.processes);
        pc.real_ns = real;
        c.real_excluded_ns += apart;
        pc.real_compute_ns = analyzer::phase_compute_ns(s.phases[j], s.processes);
      }
    }
    c.predicted_ns += pc.predicted_ns;
    c.real_ns += pc.real_ns;
    if (pc.main_loop) {
      c.predicted_main_ns += pc.predicted_ns;
      c.real_main_ns += pc.real_ns;
    }
    c.phases.push_back(pc);
  }
  for (std::size_t j = 0; j < s.phases.size(); ++j) {
    if (used[j]) continue;
    // A phase the model does not know: its time is the prediction's to miss.
    const auto [real, apart, init_or_finalize] = analyzer::phase_run_time(s.phases[j], s.processes);
    c.real_ns += real;
    c.real_excluded_ns += apart;
    if (!init_or_finalize) c.real_main_ns += real;
  }
  return c;
}

std::string result_summary(const ReplayResult& r) {
  std::ostringstream out;
  out << "replay at n = " << r.processes;
  if (r.job_ranks > 0) out << " (range replay on " << r.job_ranks << " ranks)";
  out << '\n';
  out << "phase  weight  instances   time/instance  spread (min..max over ranks)   compute    MPI   calls\n";
  for (const PhaseTime& t : r.phases) {
    out << fmt("%5.0f", t.id) << fmt("%8.0f", static_cast<double>(t.weight));
    if (!t.replayed) {
      out << "  does not occur at this n\n";
      continue;
    }
    out << fmt("%11.0f", t.instances) << pad(time_text(t.time_ns), 16) << "  "
        << pad((time_text(t.time_min_ns) + " .. " + time_text(t.time_max_ns)), -30) << pad(time_text(t.compute_ns), 9)
        << pad(time_text(t.mpi_ns), 9) << fmt("%7.1f", t.calls_per_instance) << '\n';
  }
  out << "PET          " << time_text(r.pet_ns)
      << " (weight x time over the phases; MPI_Init and MPI_Finalize apart)\n";
  out << "main loop    " << time_text(r.main_ns) << " (the phases without MPI_Init and MPI_Finalize)\n";
  out << "replay wall  " << time_text(r.replay_wall_ns);
  if (r.job_ranks > 0 && r.pet_ns > 0) {
    out << " on " << r.job_ranks << " ranks (" << fmt("%.1f", 100 * r.replay_wall_ns / r.pet_ns)
        << " % of the predicted run time)";
  }
  out << '\n';
  for (const std::string& note : r.notes) out << "note: " << note << '\n';
  return out.str();
}

std::string comparison_summary(const Comparison& c) {
  std::ostringstream out;
  out << "compared with " << c.signature << " (n = " << c.processes << ")\n";
  out << "phase  run phase     predicted          real    error   compute: predicted      real    error\n";
  const auto err = [](double p, double r) {
    return r > 0 ? fmt("%7.1f %%", 100 * (p - r) / r) : std::string("      -");
  };
  for (const PhaseComparison& p : c.phases) {
    out << fmt("%5.0f", p.id) << (p.run_phase ? fmt("%11.0f", *p.run_phase) : std::string("          -"));
    if (!p.replayed) {
      out << "  does not occur at this n\n";
      continue;
    }
    out << pad(time_text(p.predicted_ns), 14) << pad(time_text(p.real_ns), 14) << err(p.predicted_ns, p.real_ns)
        << pad(time_text(p.predicted_compute_ns), 19) << pad(time_text(p.real_compute_ns), 10)
        << err(p.predicted_compute_ns, p.real_compute_ns) << '\n';
  }
  out << "main loop  predicted " << time_text(c.predicted_main_ns) << ", real " << time_text(c.real_main_ns)
      << ", error " << fmt("%.1f %%", 100 * c.main_error()) << '\n';
  out << "total      predicted " << time_text(c.predicted_ns) << ", real " << time_text(c.real_ns) << ", error "
      << fmt("%.1f %%", 100 * c.error()) << " (MPI_Init and MPI_Finalize apart: " << time_text(c.real_excluded_ns)
      << " in the run)\n";
  return out.str();
}

void write_result(const ReplayResult& r, const ReplayPlan& plan, const ResultInputs& inputs,
                  const std::optional<Comparison>& comparison, const std::filesystem::path& path) {
  json phases = json::array();
  for (const PhaseTime& t : r.phases) {
    phases.push_back(json{{"id", t.id},
                          {"calls", t.calls},
                          {"weight", t.weight},
                          {"main_loop", t.main_loop},
                          {"repaired", t.repaired},
                          {"replayed", t.replayed},
                          {"instances", t.instances},
                          {"time_ns", t.time_ns},
                          {"time_min_ns", t.time_min_ns},
                          {"time_max_ns", t.time_max_ns},
                          {"time_stddev_ns", t.time_stddev_ns},
                          {"compute_ns", t.compute_ns},
                          {"compute_max_ns", t.compute_max_ns},
                          {"predicted_compute_ns", t.predicted_compute_ns},
                          {"mpi_ns", t.mpi_ns},
                          {"mpi_ns_per_call", t.calls_per_instance > 0 ? t.mpi_ns / t.calls_per_instance : 0.0},
                          {"calls_per_instance", t.calls_per_instance},
                          {"messages_per_instance", t.messages_per_instance},
                          {"bytes_per_instance", t.bytes_per_instance}});
  }
  json j{{"schema_version", kResultSchemaVersion},
         {"tool", std::string("p3s-replay ") + p3s::kVersion},
         {"date", utc_now()},
         {"inputs",
          {{"source", plan.source},
           {"application", plan.application},
           {"work_metric", plan.work_metric},
           {"command", inputs.command},
           {"compute", compute_name(inputs.options.compute)},
           {"instances", inputs.options.instances},
           {"min_time_s", inputs.options.min_time_s},
           {"warmup", inputs.options.warmup}}},
         {"processes", r.processes},
         {"phases", std::move(phases)},
         {"pet_ns", r.pet_ns},
         {"main_ns", r.main_ns},
         {"replay_wall_ns", r.replay_wall_ns},
         {"notes", r.notes}};
  if (r.job_ranks > 0) {
    j["range"] = json{
        {"job_ranks", r.job_ranks}, {"noise_messages", r.noise_messages}, {"schedule", json::parse(r.range_schedule)}};
  }
  if (comparison) {
    json cp = json::array();
    for (const PhaseComparison& p : comparison->phases) {
      cp.push_back(json{{"id", p.id},
                        {"run_phase", p.run_phase ? json(*p.run_phase) : json()},
                        {"replayed", p.replayed},
                        {"main_loop", p.main_loop},
                        {"predicted_ns", p.predicted_ns},
                        {"real_ns", p.real_ns},
                        {"predicted_compute_ns", p.predicted_compute_ns},
                        {"real_compute_ns", p.real_compute_ns}});
    }
    j["comparison"] = json{{"signature", comparison->signature},
                           {"phases", std::move(cp)},
                           {"predicted_ns", comparison->predicted_ns},
                           {"real_ns", comparison->real_ns},
                           {"real_excluded_ns", comparison->real_excluded_ns},
                           {"error", comparison->error()},
                           {"predicted_main_ns", comparison->predicted_main_ns},
                           {"real_main_ns", comparison->real_main_ns},
                           {"main_error", comparison->main_error()}};
  }
  write_whole_file(path, json_text(j, 1) + '\n');
}

}  // namespace p3s::replay
