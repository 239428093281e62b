// SPDX-License-Identifier: BSD-3-Clause
// `p3s model SIG_OR_DIR... -o app.model [--validate-with SIG] [--no-holdout] [--search-candidates N]
// [--predict-at N,...] [--far-point SIG] [--allow-missing] [--report] [-q]`
#include <iostream>

#include "p3s/error.hpp"
#include "p3s/modeler/fit.hpp"
#include "p3s/outputs.hpp"
#include "subcommands.hpp"
#include "validators.hpp"

namespace p3s::cli {
namespace {

struct ModelArgs {
  std::vector<std::string> inputs;
  std::string output;
  std::string validate;
  std::string far_point;
  bool no_holdout = false;
  bool allow_missing = false;
  bool report = false;
  bool quiet = false;
  bool force = false;
  std::size_t candidates = modeler::SearchOptions{}.max_candidates;
  std::vector<std::int64_t> predict_at;
};

void add_model_options(CLI::App* sub, ModelArgs& a) {
  sub->add_option("signatures", a.inputs, "signature.json files, or the run directories holding them")
      ->required()
      ->check(CLI::ExistingPath);
  sub->add_option("-o,--output", a.output, "Model file to write")->required()->check(output_path());
  sub->add_option("--validate-with", a.validate,
                  "Validate against this run's signature and fit on all the others (default: hold the largest "
                  "run out, validate, then fold it in)")
      ->check(CLI::ExistingPath);
  sub->add_flag("--no-holdout", a.no_holdout, "Fit on every run without validating");
  sub->add_option("--far-point", a.far_point,
                  "Signature of a run of the same program with a reduced input at a larger process count: "
                  "calibrates each phase's compute time where the fitted runs cannot show it")
      ->check(CLI::ExistingPath);
  sub->add_flag("--allow-missing", a.allow_missing,
                "Model the series even where a relevant phase of one run has no counterpart in another (it is left "
                "out, and named in the report); without it that stops the fit");
  sub->add_flag("--report", a.report, "Print the equations of every phase and its SCIC table");
  sub->add_option("--search-candidates", a.candidates,
                  "Candidate expressions the peer search may try per quantity (a count, so fits do not depend on "
                  "the machine's speed or load)")
      ->capture_default_str()
      ->check(integer_in(1, std::int64_t{1} << 40));
  sub->add_option("--predict-at", a.predict_at,
                  "Process counts the model will be predicted at: counts, peers and communicator sizes follow laws "
                  "that are whole numbers there whenever such laws reproduce the runs")
      ->delimiter(',')
      ->check(integer_in(1, std::int64_t{1} << 24));
  sub->add_flag("-q,--quiet", a.quiet, "Print nothing on success");
  sub->add_flag("--force", a.force, "Replace an existing model file and its report");
}

/// Checked before the fit: no input is written over, and no earlier model without --force.
void check_outputs(const ModelArgs& a, const std::vector<std::filesystem::path>& inputs) {
  const std::filesystem::path report_file = modeler::fit_report_path(a.output);
  for (const std::filesystem::path& out : {std::filesystem::path(a.output), report_file}) {
    std::error_code ec;
    for (const std::filesystem::path& in : inputs) {
      if (std::filesystem::equivalent(in, out, ec)) {
        throw InputError("-o '" + a.output + "' would write over the input '" + in.string() + "'");
      }
    }
    refuse_existing(out, a.force, out == report_file ? "the fit report" : "-o");
  }
}

void print_fit(const ModelArgs& a, const modeler::Fit& fit, const std::filesystem::path& report_path) {
  if (a.report) std::cout << modeler::model_report(fit.model, fit.report) << '\n';
  if (fit.report.validation) std::cout << modeler::validation_report(*fit.report.validation);
  for (const std::string& u : fit.report.unrelated) std::cout << "note: " << u << '\n';
  if (!fit.report.kinds_merged.empty()) {
    std::cout << "note: " << fit.report.kinds_merged.size()
              << " phases of the runs call the same MPI functions as a phase of their run but have no counterpart "
                 "in the others: each is merged into that phase as a kind of it (the fit report lists them)\n";
  }
  if (const std::optional<std::string> threads = modeler::threads_note(fit.model.limits)) {
    std::cout << "note: " << *threads << '\n';
  }
  for (const modeler::PhaseReport& p : fit.report.phases) {
    for (const std::string& n : p.notes) std::cout << "note: phase " << p.id << ": " << n << '\n';
  }
  for (const modeler::Model::Input& in : fit.model.inputs) {
    const std::string step = modeler::time_step_text(fit.model.phases, in.n);
    if (!step.empty()) std::cout << "time step    at n = " << in.n << ": " << step << '\n';
  }
  std::cout << "model        " << a.output << " (" << fit.model.phases.size() << " phases, fitted on n =";
  for (const modeler::Model::Input& in : fit.model.inputs) std::cout << ' ' << in.n;
  std::cout << ")\nfit report   " << report_path.string() << '\n';
}

void run_model(const ModelArgs& a) {
  const std::vector<std::filesystem::path> paths(a.inputs.begin(), a.inputs.end());
  check_outputs(a, paths);
  modeler::ModelOptions opts;
  opts.hold_out_largest = !a.no_holdout;
  opts.allow_missing = a.allow_missing;
  if (!a.validate.empty()) opts.validate_with = a.validate;
  if (!a.far_point.empty()) opts.far_point = a.far_point;
  opts.fit.search.max_candidates = a.candidates;
  opts.fit.evaluate_at = a.predict_at;
  modeler::Fit fit = modeler::build_model(paths, opts);
  const std::filesystem::path report_path = modeler::fit_report_path(a.output);
  fit.report.model = std::filesystem::absolute(a.output).string();
  // The report first: a model file whose report is missing was not written whole.
  modeler::write_fit_report(fit.report, report_path);
  modeler::write_model(fit.model, a.output);
  if (!a.quiet) print_fit(a, fit, report_path);
}

}  // namespace

void add_model(CLI::App& app) {
  auto a = std::make_shared<ModelArgs>();
  CLI::App* sub = app.add_subcommand(
      "model", "Learn how each phase scales with the process count from the signatures of three or more runs");
  add_model_options(sub, *a);
  sub->callback([a] { run_model(*a); });
}

}  // namespace p3s::cli
