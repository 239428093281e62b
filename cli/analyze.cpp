// SPDX-License-Identifier: BSD-3-Clause
// `p3s analyze DIR|ARCHIVE... [-o signature.json] [--report] [--logical-csv F] [--otf2-logical DIR] [thresholds]`
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <vector>

#include "p3s/analyzer/analyze.hpp"
#include "p3s/analyzer/signature.hpp"
#include "p3s/analyzer/trace_reader.hpp"
#include "p3s/error.hpp"
#include "p3s/modeler/series.hpp"
#include "p3s/outputs.hpp"
#include "subcommands.hpp"
#include "validators.hpp"

namespace p3s::cli {
namespace {

namespace fs = std::filesystem;

/// Whether `p` is a file of the archive whose anchor is `anchor`: the anchor, its definitions, or anything in its
/// event directory.
bool in_archive(const fs::path& p, const fs::path& anchor) {
  std::error_code ec;
  const fs::path a = fs::weakly_canonical(anchor, ec);
  const fs::path q = fs::weakly_canonical(p, ec);
  if (q == a || q == fs::path(a).replace_extension(".def")) return true;
  const fs::path inside = q.lexically_relative(a.parent_path() / a.stem());
  return !inside.empty() && *inside.begin() != "..";
}

/// Refuses an output that would write into an input archive, and one that exists unless `force`.
void check_output(const fs::path& out, const std::vector<fs::path>& anchors, bool force, const std::string& what) {
  for (const fs::path& anchor : anchors) {
    if (in_archive(out, anchor)) {
      throw InputError(what + " '" + out.string() + "' would write over the input archive " + anchor.string() +
                       "; choose another path");
    }
  }
  refuse_existing(out, force, what);
}

/// The program a recorded command runs, without its launcher ("./cg.W.x" of "mpirun -np 8 ./cg.W.x").
std::string program_of(const std::string& command) {
  const std::string app = modeler::application_command(command);
  return app.substr(0, app.find(' '));
}

}  // namespace

void add_analyze(CLI::App& app) {
  auto opts = std::make_shared<analyzer::AnalyzeOptions>();
  auto traces = std::make_shared<std::vector<std::filesystem::path>>();
  auto output = std::make_shared<std::string>();
  auto csv = std::make_shared<std::string>();
  auto otf2 = std::make_shared<std::string>();
  auto report = std::make_shared<bool>(false);
  auto quiet = std::make_shared<bool>(false);
  auto show_stats = std::make_shared<bool>(false);
  auto phases = std::make_shared<std::string>(analyzer::phase_method_name(analyzer::PhaseMethod::Auto));
  auto level = std::make_shared<std::string>("auto");
  CLI::App* sub = app.add_subcommand("analyze", "Find the phases of a traced run and write its signature");
  sub->add_option("trace", *traces,
                  "Trace directory or traces.otf2; several runs of one application (e.g. at 4, 8, 16, 32 "
                  "processes) get their phases by one method, each signature beside its archive")
      ->required();
  sub->add_option("-o,--output", *output, "Signature file (default: signature.json beside the archive; one run)")
      ->check(output_path());
  sub->add_flag("--report", *report, "Also print each relevant phase's calls per rank");
  sub->add_flag("-q,--quiet", *quiet, "Print nothing on success");
  sub->add_flag("--stats", *show_stats, "Print the analysis' own figures (time per pass, messages in flight)");
  sub->add_option("--logical-csv", *csv, "Write the logical trace as CSV")->check(output_path());
  sub->add_option("--otf2-logical", *otf2, "Write the logical trace as an OTF2 archive into this directory")
      ->check(output_path());
  auto force = std::make_shared<bool>(false);
  sub->add_flag("--force", *force,
                "Replace an existing -o file, --logical-csv file or --otf2-logical archive (never an input)");
  sub->add_option("--relevance", opts->signature.relevance, "Share of run time that makes a phase relevant")
      ->capture_default_str()
      ->check(number_in(0.0, 1.0));
  sub->add_option("--volume-tolerance", opts->signature.volume_tolerance,
                  "Relative difference of message sizes that still counts as equal")
      ->capture_default_str()
      ->check(number_in(0.0, 1.0));
  sub->add_option("--work-similarity", opts->signature.work_similarity,
                  "Instances of a phase whose work is less similar than this become separate phases")
      ->capture_default_str()
      ->check(number_in(0.0, 1.0));
  sub->add_option("--max-period", opts->max_period, "Longest loop body searched, in ticks")
      ->capture_default_str()
      ->check(integer_in(1, 1 << 24));
  sub->add_option("--phases", *phases,
                  "How phases are found: global-ticks (the run's tick sequence folded), by-rank (each rank's own "
                  "calls folded into steps that begin after computation, then joined by position: MD step kinds, "
                  "pipelines), or auto (both, and by-rank where it describes the run at least twice as briefly: "
                  "repeated phases plus their order folded into loops)")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "by-rank", "global-ticks"}));
  sub->add_option("--phase-level", *level,
                  "Which loops are the phases: units (the innermost loops that compute, and the steps between "
                  "them), outermost-loops (each iteration of the program's outermost loops, whatever their inner "
                  "loops), collectives (by rank: the calls between collectives of all processes), or auto")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "units", "outermost-loops", "collectives"}));
  sub->add_flag("--partial", opts->signature.partial,
                "Analyse a run that did not finish: unmatched receives become local events");
  sub->callback([opts, traces, output, csv, otf2, report, quiet, show_stats, phases, level, force] {
    opts->signature.phase_method = analyzer::phase_method_named(*phases).value();
    if (*level != "auto") opts->signature.phase_level = analyzer::phase_level_named(*level);
    if (traces->size() > 1 && (!output->empty() || !csv->empty() || !otf2->empty())) {
      throw InputError("-o, --logical-csv and --otf2-logical take one run; with " + std::to_string(traces->size()) +
                       " runs, each signature is written beside its archive");
    }
    // Outputs are checked before the analysis: none may replace an input, nor an existing file without --force.
    // The signature beside each archive is the run's own and is refreshed by every analysis.
    std::vector<fs::path> anchors;
    for (const fs::path& t : *traces) anchors.push_back(analyzer::find_anchor(t));
    // A run given twice would vote twice in the choice of the series' phases.
    for (std::size_t i = 0; i < anchors.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        std::error_code ec;
        if (fs::weakly_canonical(anchors[i], ec) == fs::weakly_canonical(anchors[j], ec)) {
          throw InputError("'" + (*traces)[i].string() + "' is the run '" + (*traces)[j].string() +
                           "' again; give each run of the series once");
        }
      }
    }
    if (!output->empty()) {
      std::error_code ec;
      const bool own = traces->size() == 1 && fs::weakly_canonical(*output, ec) ==
                                                  fs::weakly_canonical(anchors[0].parent_path() / "signature.json", ec);
      check_output(*output, anchors, *force || own, "-o");
    }
    if (!csv->empty()) check_output(*csv, anchors, *force, "--logical-csv");
    if (!otf2->empty()) check_output(fs::path(*otf2) / "traces.otf2", anchors, *force, "--otf2-logical archive");
    if (!csv->empty()) opts->logical_csv = *csv;
    if (!otf2->empty()) opts->otf2_logical = *otf2;
    std::vector<analyzer::AnalyzeOptions> runs;
    for (const std::filesystem::path& t : *traces) {
      runs.push_back(*opts);
      runs.back().input = t;
    }
    std::vector<analyzer::AnalyzeStats> stats;
    const std::vector<analyzer::Signature> sigs = analyzer::analyze_series(runs, &stats);
    // One application's runs: another program's would have its phases found by this one's method, and its
    // signature rewritten so.
    for (std::size_t i = 1; i < sigs.size(); ++i) {
      const std::string first = program_of(sigs.front().command);
      const std::string other = program_of(sigs[i].command);
      if (!first.empty() && !other.empty() && first != other) {
        throw InputError("the runs are of different programs (" + first + " at " +
                         std::to_string(sigs.front().processes) + " processes, " + other + " at " +
                         std::to_string(sigs[i].processes) + "); analyze each application's runs apart");
      }
    }
    std::vector<std::filesystem::path> outs;
    for (const analyzer::AnalyzeOptions& run : runs) {
      outs.push_back(output->empty() ? analyzer::find_anchor(run.input).parent_path() / "signature.json"
                                     : std::filesystem::path(*output));
    }
    // Every run analysed before any signature is written: a run that fails leaves no signature of its series.
    for (std::size_t i = 0; i < sigs.size(); ++i) analyzer::write_signature(sigs[i], outs[i]);
    for (std::size_t i = 0; i < sigs.size(); ++i) {
      if (*show_stats) {
        const analyzer::AnalyzeStats& st = stats[i];
        std::printf(
            "stats: records %llu extract %.3f s lamport %.3f s phases %.3f s signature %.3f s "
            "max_in_flight %llu max_open_ticks %llu ticks %llu\n",
            static_cast<unsigned long long>(st.records), st.extract_s, st.lamport_s, st.phases_s, st.signature_s,
            static_cast<unsigned long long>(st.max_in_flight), static_cast<unsigned long long>(st.max_open_ticks),
            static_cast<unsigned long long>(sigs[i].ticks));
      }
      if (*quiet) continue;
      if (i > 0) std::cout << '\n';
      std::cout << analyzer::signature_report(sigs[i]);
      if (*report) std::cout << analyzer::signature_details(sigs[i]);
      std::cout << "signature    " << outs[i].string() << '\n';
    }
  });
}

}  // namespace p3s::cli
