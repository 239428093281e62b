// SPDX-License-Identifier: BSD-3-Clause
// `p3s model SIG_OR_DIR... -o app.model [--validate-with SIG] [--no-holdout] [--search-candidates N]
// [--predict-at N,...] [--far-point SIG] [--report] [-q]`
#include <iostream>

#include "p3s/error.hpp"
#include "p3s/modeler/fit.hpp"
#include "p3s/outputs.hpp"
#include "subcommands.hpp"
#include "validators.hpp"

namespace p3s::cli {

void add_model(CLI::App& app) {
  auto inputs = std::make_shared<std::vector<std::string>>();
  auto output = std::make_shared<std::string>();
  auto validate = std::make_shared<std::string>();
  auto no_holdout = std::make_shared<bool>(false);
  auto report = std::make_shared<bool>(false);
  auto quiet = std::make_shared<bool>(false);
  auto candidates = std::make_shared<std::size_t>(modeler::SearchOptions{}.max_candidates);
  auto predict_at = std::make_shared<std::vector<std::int64_t>>();
  CLI::App* sub = app.add_subcommand(
      "model", "Learn how each phase scales with the process count from the signatures of three or more runs");
  sub->add_option("signatures", *inputs, "signature.json files, or the run directories holding them")
      ->required()
      ->check(CLI::ExistingPath);
  sub->add_option("-o,--output", *output, "Model file to write")->required()->check(output_path());
  sub->add_option("--validate-with", *validate,
                  "Validate against this run's signature and fit on all the others (default: hold the largest "
                  "run out, validate, then fold it in)")
      ->check(CLI::ExistingPath);
  sub->add_flag("--no-holdout", *no_holdout, "Fit on every run without validating");
  auto far_point = std::make_shared<std::string>();
  sub->add_option("--far-point", *far_point,
                  "Signature of a run of the same program with a reduced input at a larger process count: "
                  "calibrates each phase's compute time where the fitted runs cannot show it")
      ->check(CLI::ExistingPath);
  sub->add_flag("--report", *report, "Print the equations of every phase and its SCIC table");
  sub->add_option("--search-candidates", *candidates,
                  "Candidate expressions the peer search may try per quantity (a count, so fits do not depend on "
                  "the machine's speed or load)")
      ->capture_default_str()
      ->check(integer_in(1, std::int64_t{1} << 40));
  sub->add_option("--predict-at", *predict_at,
                  "Process counts the model will be predicted at: counts, peers and communicator sizes follow laws "
                  "that are whole numbers there whenever such laws reproduce the runs")
      ->delimiter(',')
      ->check(integer_in(1, std::int64_t{1} << 24));
  sub->add_flag("-q,--quiet", *quiet, "Print nothing on success");
  auto force = std::make_shared<bool>(false);
  sub->add_flag("--force", *force, "Replace an existing model file and its report");
  sub->callback([=] {
    std::vector<std::filesystem::path> paths(inputs->begin(), inputs->end());
    // Checked before the fit: no input is written over, and no earlier model without --force.
    const std::filesystem::path report_file = modeler::fit_report_path(*output);
    for (const std::filesystem::path& out : {std::filesystem::path(*output), report_file}) {
      std::error_code ec;
      for (const std::filesystem::path& in : paths) {
        if (std::filesystem::equivalent(in, out, ec)) {
          throw InputError("-o '" + *output + "' would write over the input '" + in.string() + "'");
        }
      }
      refuse_existing(out, *force, out == report_file ? "the fit report" : "-o");
    }
    modeler::ModelOptions opts;
    opts.hold_out_largest = !*no_holdout;
    if (!validate->empty()) opts.validate_with = *validate;
    if (!far_point->empty()) opts.far_point = *far_point;
    opts.fit.search.max_candidates = *candidates;
    opts.fit.evaluate_at = *predict_at;
    modeler::Fit fit = modeler::build_model(paths, opts);
    const std::filesystem::path report_path = modeler::fit_report_path(*output);
    fit.report.model = std::filesystem::absolute(*output).string();
    // The report first: a model file whose report is missing was not written whole.
    modeler::write_fit_report(fit.report, report_path);
    modeler::write_model(fit.model, *output);
    if (*quiet) return;
    if (*report) std::cout << modeler::model_report(fit.model, fit.report) << '\n';
    if (fit.report.validation) std::cout << modeler::validation_report(*fit.report.validation);
    for (const std::string& u : fit.report.unrelated) std::cout << "note: " << u << '\n';
    if (const std::optional<std::string> threads = modeler::threads_note(fit.model.limits)) {
      std::cout << "note: " << *threads << '\n';
    }
    for (const modeler::PhaseReport& p : fit.report.phases) {
      for (const std::string& n : p.notes) std::cout << "note: phase " << p.id << ": " << n << '\n';
    }
    std::cout << "model        " << *output << " (" << fit.model.phases.size() << " phases, fitted on n =";
    for (const modeler::Model::Input& in : fit.model.inputs) std::cout << ' ' << in.n;
    std::cout << ")\nfit report   " << report_path.string() << '\n';
  });
}

}  // namespace p3s::cli
