// SPDX-License-Identifier: BSD-3-Clause
// `p3s curve DIR|result.json|signature.json... [--baseline n] [--json F] [--csv F] [--plots DIR]`: the scaling curve.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "p3s/curve/curve.hpp"
#include "p3s/outputs.hpp"
#include "p3s/whole_file.hpp"
#include "subcommands.hpp"

namespace p3s::cli {
namespace {

struct CurveOptions {
  std::vector<std::string> inputs;
  std::optional<std::int64_t> baseline;
  double efficiency = 0.5;
  double gain = 0.1;
  std::string json;
  std::string csv;
  std::string plots;
  std::string extrap;
  bool force = false;
};

void run_curve(const CurveOptions& o) {
  std::vector<std::filesystem::path> inputs(o.inputs.begin(), o.inputs.end());
  curve::Options options;
  options.baseline = o.baseline;
  options.efficiency = o.efficiency;
  options.gain = o.gain;
  // Every output is refused before any is written.
  if (!o.json.empty()) refuse_existing(o.json, o.force, "curve");
  if (!o.csv.empty()) refuse_existing(o.csv, o.force, "curve");
  if (!o.extrap.empty()) refuse_existing(o.extrap, o.force, "Extra-P file");
  const std::vector<curve::Point> points = curve::read_points(inputs);
  const curve::Curve c = curve::make_curve(points, options);
  if (!o.plots.empty()) curve::draw_plots(c, o.plots, o.force);
  if (!o.json.empty()) write_whole_file(o.json, curve::curve_json(c));
  if (!o.csv.empty()) write_whole_file(o.csv, curve::curve_csv(c));
  if (!o.extrap.empty()) write_whole_file(o.extrap, curve::extrap_json(points));
  std::fputs(curve::curve_table(c).c_str(), stdout);
}

}  // namespace

void add_curve(CLI::App& app) {
  auto opts = std::make_shared<CurveOptions>();
  CLI::App* sub = app.add_subcommand(
      "curve",
      "Predicted time, speedup and efficiency per process count, the recommended n, where phases stop scaling");
  sub->add_option("inputs", opts->inputs,
                  "Replay results (p3s-replay -o), recorded runs (their directory or signature.json), or a p3s scale "
                  "directory")
      ->required();
  sub->add_option("--baseline", opts->baseline, "The n speedup and efficiency are against (default: the smallest)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--efficiency", opts->efficiency,
                  "Recommend no n whose parallel efficiency is below this (default 0.5)")
      ->check(CLI::Range(0.01, 1.0));
  sub->add_option("--gain", opts->gain,
                  "The knee: recommend no n beyond which doubling n gains less than this share of the time "
                  "(default 0.1)")
      ->check(CLI::Range(0.001, 0.999));
  sub->add_option("--json", opts->json, "Write the curve as JSON (share/doc/curve-format.md)");
  sub->add_option("--csv", opts->csv, "Write the curve as CSV, one line per n");
  sub->add_option("--plots", opts->plots, "Draw time, speedup and per-phase plots (SVG and PNG, by gnuplot) into DIR");
  sub->add_option("--extrap", opts->extrap,
                  "Write the points in Extra-P's JSON input format (per phase: times, visits, messages, bytes)");
  sub->add_flag("--force", opts->force, "Replace outputs that exist");
  sub->callback([opts] { run_curve(*opts); });
}

}  // namespace p3s::cli
