// SPDX-License-Identifier: BSD-3-Clause
// The page of a `p3s scale` directory.
#include "p3s/report/report.hpp"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include <nlohmann/json.hpp>

#include "html.hpp"
#include "p3s/error.hpp"
#include "p3s/modeler/fit.hpp"
#include "p3s/modeler/model.hpp"
#include "p3s/outputs.hpp"
#include "p3s/shell_words.hpp"
#include "p3s/table_text.hpp"
#include "p3s/utc_date.hpp"
#include "p3s/version.hpp"
#include "p3s/whole_file.hpp"

namespace p3s::report {
namespace {

namespace fs = std::filesystem;
using detail::escaped;

constexpr const char* kStyle = R"(
body { font-family: sans-serif; margin: 2em auto; max-width: 72em; color: #222; line-height: 1.4; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; border-bottom: 1px solid #ccc; margin-top: 1.6em; }
table { border-collapse: collapse; margin: 0.6em 0; } th, td { padding: 0.2em 0.7em; border-bottom: 1px solid #e4e4e4; }
th { text-align: left; background: #f3f3f3; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.answer { font-size: 1.2em; background: #eef5ff; border-left: 4px solid #1f77b4; padding: 0.6em 1em; }
figure { display: inline-block; margin: 0.5em; } figure img { width: 40em; max-width: 100%; border: 1px solid #ddd; }
pre { background: #f7f7f7; padding: 0.8em; overflow-x: auto; font-size: 0.85em; }
code { background: #f3f3f3; padding: 0 0.2em; } .note { color: #666; font-size: 0.9em; }
)";

std::string cell(const std::string& text, bool number = false) {
  return std::string(number ? "<td class=\"num\">" : "<td>") + escaped(text) + "</td>";
}

std::string percent(double share) { return fmt("%.1f %%", 100 * share); }

/// The file's bytes. @throws p3s::Error when it cannot be read.
std::string file_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read '" + path.string() + "'");
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

/// The application's command as `p3s scale` ran it ("" where the directory does not say).
std::string command_of(const fs::path& dir) {
  std::ifstream in(dir / "scale-state.json");
  if (!in) return {};
  try {
    return join_words(nlohmann::json::parse(in).at("command").get<std::vector<std::string>>());
  } catch (const std::exception&) {
    return {};
  }
}

std::string answer(const curve::Curve& c) {
  const curve::Recommendation& r = c.recommendation;
  std::string out = "<p class=\"answer\">Recommended: <b>n = " + std::to_string(r.n) + "</b>, " + escaped(r.rule);
  if (r.fastest && *r.fastest != r.n) out += ". The shortest time is at n = " + std::to_string(*r.fastest);
  if (c.first_to_stop) {
    const curve::PhaseLimit& l = c.phases[*c.first_to_stop];
    out += ". Phase " + std::to_string(l.id) + " stops scaling first, beyond n = " + std::to_string(*l.stops_at) +
           ": " + escaped(l.why);
  }
  return out + ".</p>\n";
}

std::string rows_table(const curve::Curve& c) {
  std::string out =
      "<table><tr><th>n</th><th>source</th><th>time</th><th>measured</th><th>error</th>"
      "<th>speedup</th><th>efficiency</th></tr>\n";
  for (const curve::Row& r : c.rows) {
    out += "<tr>" + cell(std::to_string(r.n), true) + cell(r.predicted ? "predicted" : "measured") +
           cell(time_text(r.time_ns), true) +
           cell(r.predicted && r.measured_ns ? time_text(*r.measured_ns) : "", true) +
           cell(r.error ? fmt("%+.1f %%", 100 * *r.error) : "", true) + cell(fmt("%.2f", r.speedup), true) +
           cell(percent(r.efficiency), true) + "</tr>\n";
  }
  return out + "</table>\n<p class=\"note\">Speedup and efficiency against n = " + std::to_string(c.baseline) + " (" +
         time_text(c.baseline_ns) + "). Times leave out the time inside MPI_Init and MPI_Finalize.</p>\n";
}

/// The plots as images in the page: drawn into a directory of their own, read, and that directory removed.
std::string plots(const curve::Curve& c, const fs::path& output) {
  const fs::path tmp = output.parent_path() / (".p3s-report-plots." + std::to_string(::getpid()));
  std::string out;
  try {
    curve::draw_plots(c, tmp, true);
    for (const char* name : {"time", "speedup", "phases"}) {
      const fs::path svg = tmp / (std::string(name) + ".svg");
      if (!fs::exists(svg)) continue;
      out += "<figure><img alt=\"" + std::string(name) + " versus n\" src=\"data:image/svg+xml;base64," +
             detail::base64(file_bytes(svg)) + "\"></figure>\n";
    }
  } catch (...) {
    std::error_code ec;
    fs::remove_all(tmp, ec);
    throw;
  }
  std::error_code ec;
  fs::remove_all(tmp, ec);
  return out;
}

std::string limits(const curve::Curve& c) {
  std::string out = "<table><tr><th>phase</th><th>calls</th><th>stops scaling beyond</th><th>why</th></tr>\n";
  for (const curve::PhaseLimit& l : c.phases) {
    out += "<tr>" + cell(std::to_string(l.id) + (l.minor ? " (minor)" : ""), true) + cell(l.calls) +
           cell(l.stops_at ? "n = " + std::to_string(*l.stops_at) : "scales over every n") + cell(l.why) + "</tr>\n";
  }
  return out + "</table>\n";
}

}  // namespace

namespace {

/// Per phase: its calls, share, weight law and every law of its fit with its error; the whole readable model.
std::string laws(const fs::path& model_path) {
  if (!fs::exists(model_path)) return "<p class=\"note\">No model in this directory.</p>\n";
  const modeler::Model model = modeler::read_model(model_path);
  const fs::path report_path = modeler::fit_report_path(model_path);
  std::optional<modeler::FitReport> fit;
  if (fs::exists(report_path)) fit = modeler::read_fit_report(report_path);
  std::string out = "<p>Fitted on n = ";
  const std::vector<std::int64_t> fitted = model.fitted_counts();
  for (std::size_t i = 0; i < fitted.size(); ++i) out += (i ? ", " : "") + std::to_string(fitted[i]);
  out += ".</p>\n<table><tr><th>phase</th><th>calls</th><th>share</th><th>instances</th><th>laws</th></tr>\n";
  for (const modeler::PhaseModel& p : model.phases) {
    const modeler::PhaseReport* r = nullptr;
    if (fit) {
      for (const modeler::PhaseReport& x : fit->phases) {
        if (x.id == p.id) r = &x;
      }
    }
    std::string law_list;
    if (r != nullptr) {
      for (const modeler::LawFit& l : r->laws) {
        law_list += "<li><code>" + escaped(l.equation) + "</code> " + escaped(l.law) + " (within " +
                    percent(l.max_rel_error) + ")</li>";
      }
    }
    out += "<tr>" + cell(std::to_string(p.id), true) + cell(p.calls) +
           cell(r != nullptr ? percent(r->share) : "", true) + "<td><code>" + escaped(modeler::weight_text(p)) +
           "</code></td><td><details><summary>" + std::to_string(r != nullptr ? r->laws.size() : 0) +
           " laws</summary><ul>" + law_list + "</ul></details></td></tr>\n";
  }
  out += "</table>\n";
  if (fit) {
    out += "<details><summary>The whole model, as <code>p3s model --report</code> prints it</summary><pre>" +
           escaped(modeler::model_report(model, *fit)) + "</pre></details>\n";
    if (fit->validation) {
      out += "<p>The model fitted without its largest run, checked against it:</p><pre>" +
             escaped(modeler::validation_report(*fit->validation)) + "</pre>\n";
    }
  }
  return out;
}

/// The recorded runs: fitted and checking ones.
std::string runs(const std::vector<curve::Point>& points) {
  std::string out = "<table><tr><th>n</th><th>measured time</th><th>run</th></tr>\n";
  for (const curve::Point& p : points) {
    if (!p.measured_ns) continue;
    out += "<tr>" + cell(std::to_string(p.n), true) + cell(time_text(*p.measured_ns), true) + cell(p.run) + "</tr>\n";
  }
  return out + "</table>\n";
}

/// Cores x time the prediction used (the recorded runs, the replays) against the runs it replaces.
std::string cost(const std::vector<curve::Point>& points) {
  double recorded = 0;
  double replays = 0;
  double replaced = 0;
  for (const curve::Point& p : points) {
    const auto n = static_cast<double>(p.n);
    if (p.measured_ns && !p.predicted_ns) recorded += n * *p.measured_ns / 1e9;
    if (p.predicted_ns) {
      replays += p.replay_core_s;
      replaced += n * *p.predicted_ns / 1e9;
    }
  }
  std::string out = "<table><tr><th></th><th>core-seconds</th></tr>\n";
  out += "<tr>" + cell("the recorded runs (each n x its time)") + cell(fmt("%.1f", recorded), true) + "</tr>\n";
  out += "<tr>" + cell("the replays (their cores x their wall time)") + cell(fmt("%.1f", replays), true) + "</tr>\n";
  out += "<tr>" + cell("the predicted runs, had they been run (each n x its predicted time)") +
         cell(fmt("%.1f", replaced), true) + "</tr>\n</table>\n";
  if (replaced > 0) {
    out += "<p>The replays cost " + percent(replays / replaced) + " of the runs they predict.</p>\n";
  }
  return out;
}

}  // namespace

void write_report(const ReportOptions& o) {
  refuse_existing(o.output, o.force, "report");
  const std::vector<curve::Point> points = curve::read_points({o.dir});
  const curve::Curve c = curve::make_curve(points, o.curve);
  const std::string command = command_of(o.dir);
  std::string page = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>p3s: " +
                     escaped(command.empty() ? o.dir.string() : command) + "</title><style>" + kStyle +
                     "</style></head><body>\n";
  page += "<h1>How it scales: <code>" + escaped(command.empty() ? o.dir.string() : command) + "</code></h1>\n";
  page += answer(c);
  page += "<h2>The curve</h2>\n" + rows_table(c) + plots(c, o.output);
  page += "<h2>Where the phases stop scaling</h2>\n" + limits(c);
  page += "<h2>The phases and their laws</h2>\n" + laws(o.dir / "app.model");
  page += "<h2>The recorded runs</h2>\n" + runs(points);
  page += "<h2>What the prediction cost</h2>\n" + cost(points);
  for (const std::string& n : c.notes) page += "<p class=\"note\">" + escaped(n) + "</p>\n";
  page += "<p class=\"note\">Written by p3s " + std::string(kVersion) + " on " + utc_now() + " from " +
          escaped(o.dir.string()) + ".</p>\n</body></html>\n";
  write_whole_file(o.output, page);
}

}  // namespace p3s::report
