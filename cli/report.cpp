// SPDX-License-Identifier: BSD-3-Clause
// `p3s report DIR -o report.html [--force]`: the page of a `p3s scale` directory.
#include <memory>
#include <optional>
#include <string>

#include "p3s/report/report.hpp"
#include "subcommands.hpp"

namespace p3s::cli {

void add_report(CLI::App& app) {
  auto o = std::make_shared<report::ReportOptions>();
  auto dir = std::make_shared<std::string>();
  auto output = std::make_shared<std::string>();
  auto baseline = std::make_shared<std::optional<std::int64_t>>();
  CLI::App* sub = app.add_subcommand(
      "report", "One self-contained HTML page of a p3s scale directory: curve, plots, laws, validation, cost");
  sub->add_option("dir", *dir, "A p3s scale directory")->required()->check(CLI::ExistingDirectory);
  sub->add_option("-o,--output", *output, "The page (HTML)")->required();
  sub->add_option("--baseline", *baseline, "The n speedup and efficiency are against (default: the smallest)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--efficiency", o->curve.efficiency, "Recommend no n whose efficiency is below this (0.5)")
      ->check(CLI::Range(0.01, 1.0));
  sub->add_option("--gain", o->curve.gain, "The knee: a doubling of n that gains less than this share (0.1)")
      ->check(CLI::Range(0.001, 0.999));
  sub->add_flag("--force", o->force, "Replace the page if it exists");
  sub->callback([o, dir, output, baseline] {
    o->dir = *dir;
    o->output = *output;
    o->curve.baseline = *baseline;
    report::write_report(*o);
  });
}

}  // namespace p3s::cli
