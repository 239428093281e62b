// SPDX-License-Identifier: BSD-3-Clause
// The fit report beside a model file (share/doc/model-format.md): JSON, written whole under a temporary name.
#include <fstream>

#include <nlohmann/json.hpp>

#include "p3s/error.hpp"
#include "p3s/json_text.hpp"
#include "p3s/modeler/fit.hpp"
#include "p3s/schema_version.hpp"
#include "p3s/whole_file.hpp"

namespace p3s::modeler {
namespace {

using nlohmann::json;

json validation_json(const Validation& v) {
  json phases = json::array();
  for (const PhaseCheck& c : v.phases) {
    phases.push_back(json{{"phase", c.phase},
                          {"run_phase", c.run_phase ? json(*c.run_phase) : json(nullptr)},
                          {"relevant", c.relevant},
                          {"error", c.error},
                          {"pattern_exact", c.pattern_exact},
                          {"first_mismatch", c.first_mismatch},
                          {"comms_predicted", c.comms_predicted},
                          {"comms_actual", c.comms_actual},
                          {"weight_predicted", c.weight_predicted},
                          {"weight_actual", c.weight_actual},
                          {"volume_error_mean", c.volume_error_mean},
                          {"volume_error_max", c.volume_error_max},
                          {"volume_error_total", c.volume_error_total},
                          {"work_error_mean", c.work_error_mean},
                          {"work_error_max", c.work_error_max},
                          {"work_error_total", c.work_error_total},
                          {"approximate_groups", c.approximate_groups},
                          {"approximate_sizes", c.approximate_sizes},
                          {"caveats", c.caveats}});
  }
  json j{{"n", v.n},
         {"signature", v.signature},
         {"fitted_on", v.fitted_on},
         {"phases", std::move(phases)},
         {"unrelated", v.unrelated}};
  if (v.time_step) {
    j["time_step"] = {
        {"kinds", v.time_step->kinds}, {"predicted", v.time_step->predicted}, {"actual", v.time_step->actual}};
  }
  return j;
}

Validation validation_from(const json& j) {
  Validation v;
  v.n = j.at("n").get<std::int64_t>();
  v.signature = j.at("signature").get<std::string>();
  v.fitted_on = j.at("fitted_on").get<std::vector<std::int64_t>>();
  for (const json& c : j.at("phases")) {
    PhaseCheck p;
    p.phase = c.at("phase").get<std::uint32_t>();
    if (c.contains("run_phase") && !c.at("run_phase").is_null()) p.run_phase = c.at("run_phase").get<std::uint32_t>();
    p.relevant = c.value("relevant", false);
    p.error = c.value("error", std::string());
    p.pattern_exact = c.at("pattern_exact").get<bool>();
    p.first_mismatch = c.at("first_mismatch").get<std::string>();
    p.comms_predicted = c.at("comms_predicted").get<std::int64_t>();
    p.comms_actual = c.at("comms_actual").get<std::int64_t>();
    p.weight_predicted = c.at("weight_predicted").get<std::int64_t>();
    p.weight_actual = c.at("weight_actual").get<std::int64_t>();
    p.volume_error_mean = c.at("volume_error_mean").get<double>();
    p.volume_error_max = c.at("volume_error_max").get<double>();
    p.volume_error_total = c.value("volume_error_total", 0.0);
    p.work_error_mean = c.at("work_error_mean").get<double>();
    p.work_error_max = c.at("work_error_max").get<double>();
    p.work_error_total = c.at("work_error_total").get<double>();
    p.approximate_groups = c.value("approximate_groups", std::vector<std::uint32_t>{});
    p.approximate_sizes = c.value("approximate_sizes", std::vector<std::uint32_t>{});
    p.caveats = c.value("caveats", std::vector<std::string>{});
    v.phases.push_back(p);
  }
  v.unrelated = j.at("unrelated").get<std::vector<std::string>>();
  if (j.contains("time_step")) {
    const json& t = j.at("time_step");
    v.time_step = StepCheck{t.at("kinds").get<std::vector<std::uint32_t>>(), t.at("predicted").get<std::int64_t>(),
                            t.at("actual").get<std::int64_t>()};
  }
  return v;
}

json phase_json(const PhaseReport& p) {
  json classes = json::array();
  for (const std::vector<ScicRow>& rows : p.measured) {
    json jr = json::array();
    for (const ScicRow& r : rows) {
      jr.push_back(json{{"n", r.n},
                        {"ranks", r.ranks},
                        {"work_per_rank", r.work_per_rank},
                        {"total", r.total},
                        {"time_per_rank", r.time_per_rank}});
    }
    classes.push_back(std::move(jr));
  }
  json laws = json::array();
  for (const LawFit& l : p.laws) {
    json jl{{"law", l.law}, {"equation", l.equation}, {"max_rel_error", l.max_rel_error}};
    if (l.loo_rel_error) jl["loo_rel_error"] = *l.loo_rel_error;
    laws.push_back(std::move(jl));
  }
  return json{{"id", p.id},
              {"calls", p.calls},
              {"relevant", p.relevant},
              {"share", p.share},
              {"total_work_spread", p.total_work_spread},
              {"measured", std::move(classes)},
              {"notes", p.notes},
              {"laws", std::move(laws)},
              {"approximate_groups", p.approximate_groups}};
}

PhaseReport phase_from(const json& j) {
  PhaseReport p;
  p.id = j.at("id").get<std::uint32_t>();
  p.calls = j.at("calls").get<std::string>();
  p.relevant = j.at("relevant").get<bool>();
  p.share = j.at("share").get<double>();
  p.total_work_spread = j.at("total_work_spread").get<double>();
  for (const json& rows : j.at("measured")) {
    std::vector<ScicRow> out;
    for (const json& r : rows) {
      out.push_back({r.at("n").get<std::int64_t>(), r.at("ranks").get<std::int64_t>(),
                     r.at("work_per_rank").get<double>(), r.at("total").get<double>(), r.value("time_per_rank", 0.0)});
    }
    p.measured.push_back(std::move(out));
  }
  p.notes = j.at("notes").get<std::vector<std::string>>();
  p.approximate_groups = j.value("approximate_groups", std::vector<std::uint32_t>{});
  // Reports written before laws were listed have none.
  for (const json& l : j.value("laws", json::array())) {
    LawFit f{l.at("law").get<std::string>(), l.at("equation").get<std::string>(), l.at("max_rel_error").get<double>()};
    if (l.contains("loo_rel_error")) f.loo_rel_error = l.at("loo_rel_error").get<double>();
    p.laws.push_back(std::move(f));
  }
  return p;
}

}  // namespace

std::filesystem::path fit_report_path(const std::filesystem::path& model) { return model.string() + ".report.json"; }

void write_fit_report(const FitReport& r, const std::filesystem::path& path) {
  json phases = json::array();
  for (const PhaseReport& p : r.phases) phases.push_back(phase_json(p));
  json j{{"schema_version", r.schema_version},
         {"tool", r.tool},
         {"date", r.date},
         {"model", r.model},
         {"fitted_on", r.fitted_on},
         {"phases", std::move(phases)},
         {"unrelated", r.unrelated},
         {"kinds_merged", r.kinds_merged}};
  if (r.validation) j["validation"] = validation_json(*r.validation);
  write_whole_file(path, json_text(j, 1) + '\n');
}

FitReport read_fit_report(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw InputError("cannot read fit report '" + path.string() + "'; `p3s model` writes it beside the model");
  FitReport r;
  try {
    const json j = parse_input(in);
    r.schema_version = checked_schema_version(
        j, path,
        {"fit report", kFitReportSchemaVersion, kFitReportSchemaVersion, "re-run `p3s model` on its signatures"});
    r.tool = j.at("tool").get<std::string>();
    r.date = j.value("date", std::string());
    r.model = j.at("model").get<std::string>();
    r.fitted_on = j.at("fitted_on").get<std::vector<std::int64_t>>();
    for (const json& p : j.at("phases")) r.phases.push_back(phase_from(p));
    r.unrelated = j.at("unrelated").get<std::vector<std::string>>();
    r.kinds_merged = j.value("kinds_merged", std::vector<std::string>{});
    if (j.contains("validation")) r.validation = validation_from(j.at("validation"));
  } catch (const nlohmann::json::exception& e) {
    throw InputError("fit report '" + path.string() + "' is not a p3s fit report (" + e.what() +
                     "); re-run `p3s model`");
  }
  return r;
}

}  // namespace p3s::modeler
