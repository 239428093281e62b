// SPDX-License-Identifier: BSD-3-Clause
// `p3s predict app.model --np N [-o DIR [--logical] [--repair]] [--force] [--compare SIG_AT_N]`
#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <iostream>

#include "p3s/error.hpp"
#include "p3s/modeler/dims.hpp"
#include "p3s/modeler/fit.hpp"
#include "p3s/modeler/lt4nc.hpp"
#include "p3s/modeler/model.hpp"
#include "p3s/modeler/predict.hpp"
#include "p3s/output_lock.hpp"
#include "p3s/outputs.hpp"
#include "subcommands.hpp"
#include "validators.hpp"

namespace p3s::cli {

void add_predict(CLI::App& app) {
  auto model = std::make_shared<std::string>();
  auto np = std::make_shared<std::int64_t>(0);
  auto logical = std::make_shared<bool>(false);
  auto output = std::make_shared<std::string>();
  auto compare = std::make_shared<std::string>();
  CLI::App* sub = app.add_subcommand("predict", "Evaluate a model at a process count");
  sub->add_option("model", *model, "Model file written by `p3s model`")->required()->check(CLI::ExistingFile);
  sub->add_option("--np", *np, "Process count")->required()->check(integer_in(1, std::int64_t{1} << 24));
  sub->add_flag("--logical", *logical,
                "Write the logical trace (LT4NC) into -o DIR rather than the executable one (ST4NP), which needs "
                "compute-time laws");
  sub->add_option("-o,--output", *output,
                  "Output directory: the executable trace at that count (ST4NP), which p3s-replay runs")
      ->check(output_path());
  auto force = std::make_shared<bool>(false);
  sub->add_flag("--force", *force, "Replace a trace already in the output directory");
  auto repair = std::make_shared<bool>(false);
  sub->add_flag("--repair", *repair,
                "Write a phase whose predicted calls do not match (a receive without its send, a collective without "
                "all its members, a request never completed) with what does not match dropped, recorded in the trace; "
                "without it such a prediction is refused");
  sub->add_option("--compare", *compare, "Compare the prediction with this real run's signature at the same count")
      ->check(CLI::ExistingPath);
  sub->callback([=] {
    const modeler::Model m = modeler::read_model(*model);
    const modeler::ScopedDimsRule rule(m.dims_rule);  // every law in dims(n) follows the runs' MPI
    const std::vector<std::int64_t> fitted_n = m.fitted_counts();
    if (!fitted_n.empty()) {
      const auto [lo, hi] = std::minmax_element(fitted_n.begin(), fitted_n.end());
      if (*np < *lo) {
        std::cout << "note: n = " << *np << " is below the smallest fitted count (" << *lo
                  << "); the laws were fitted above it and may not hold there\n";
      } else if (*np > *hi) {
        const double times = static_cast<double>(*np) / static_cast<double>(*hi);
        std::cout << "note: n = " << *np << " is " << std::fixed << std::setprecision(times < 10 ? 1 : 0) << times
                  << std::defaultfloat << "x the largest fitted count (" << *hi << ")"
                  << (times > 16 ? "; laws extrapolated this far are a guess: fit runs at larger counts" : "") << '\n';
      }
    }
    if (const std::optional<std::string> threads = modeler::threads_note(m.limits)) {
      std::cout << "note: " << *threads << '\n';
    }
    for (const modeler::PhaseModel& p : m.phases) {
      for (const std::uint32_t g : p.approximate_groups(*np)) {
        std::cout << "note: phase " << p.id << ", group " << g << " (" << p.groups[g].call
                  << "): no law reproduces it; the calls of the fitted run at n = "
                  << p.groups[g].measured.source(*np).n << " stand in (approximate, not extrapolated)\n";
      }
      for (const std::string& caveat : p.caveats(*np, fitted_n))
        std::cout << "note: phase " << p.id << ": " << caveat << '\n';
    }
    if (*logical && output->empty()) throw InputError("--logical writes a directory: give it with -o DIR");
    if (!output->empty()) {
      const std::filesystem::path dir(*output);
      OutputDirectory made(dir);  // a directory made here goes again when nothing could be written into it
      // Held from the check of what is there to the last file written: two predictions into one directory at once
      // would leave a mix of both, and both would say they wrote it.
      const OutputLock lock(dir);
      const std::string what = *logical ? "the logical trace's" : "the executable trace's";
      for (const char* file : {"lt4nc.json", "ranks.jsonl", "ranks.index"}) refuse_existing(dir / file, *force, what);
      const auto announce = [&](double bytes) {
        if (bytes < 1e9) return;
        std::cout << "writing about " << std::fixed << std::setprecision(1) << bytes / 1e9 << std::defaultfloat
                  << " GB at n = " << *np << " into " << dir.string() << " (" << std::setprecision(3)
                  << bytes / static_cast<double>(*np) / 1e3 << " kB per rank) ..." << std::endl;
      };
      const modeler::PredictionCheck check =
          modeler::write_lt4nc(m, *np, dir, !*logical,
                               *repair ? modeler::OnInconsistency::Repair : modeler::OnInconsistency::Refuse, announce);
      made.keep();
      for (const std::string& note : check.notes()) std::cout << "repaired: " << note << '\n';
      std::cout << (*logical ? "lt4nc        " : "st4np        ") << *output << "/lt4nc.json (" << *np << " ranks"
                << (check.repaired() ? ", repaired" : ", checked") << ")\n";
    }
    if (!compare->empty()) {
      const std::filesystem::path p(*compare);
      const std::vector<modeler::Run> runs = modeler::load_runs(std::span(&p, 1), 1);
      if (runs.front().n() != *np) {
        throw InputError("signature '" + p.string() + "' is a run at " + std::to_string(runs.front().n()) +
                         " processes, not " + std::to_string(*np) + "; compare with a run at --np");
      }
      std::cout << modeler::validation_report(modeler::compare_with(m, runs.front()));
    }
    if (output->empty() && compare->empty()) {
      std::cout << "n = " << *np << '\n';
      for (const modeler::PhaseModel& p : m.phases) {
        std::cout << "phase " << p.id << "  weight " << p.weight_at(*np) << "  " << p.calls << '\n';
      }
    }
  });
}

}  // namespace p3s::cli
