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

/// What `p3s analyze` parses: the library's options plus what the CLI itself does with the runs.
struct AnalyzeArgs {
  analyzer::AnalyzeOptions opts;
  std::vector<fs::path> traces;
  std::string output;
  std::string csv;
  std::string otf2;
  bool report = false;
  bool quiet = false;
  bool show_stats = false;
  bool force = false;
  std::string phases{analyzer::phase_method_name(analyzer::PhaseMethod::Auto)};
  std::string level = "auto";
};

/// The runs, where the results go and what is printed.
void add_output_options(CLI::App* sub, AnalyzeArgs& a) {
  sub->add_option("trace", a.traces,
                  "Trace directory or traces.otf2; several runs of one application (e.g. at 4, 8, 16, 32 "
                  "processes) get their phases by one method, each signature beside its archive")
      ->required();
  sub->add_option("-o,--output", a.output, "Signature file (default: signature.json beside the archive; one run)")
      ->check(output_path());
  sub->add_flag("--report", a.report, "Also print each relevant phase's calls per rank");
  sub->add_flag("-q,--quiet", a.quiet, "Print nothing on success");
  sub->add_flag("--stats", a.show_stats, "Print the analysis' own figures (time per pass, messages in flight)");
  sub->add_option("--logical-csv", a.csv, "Write the logical trace as CSV")->check(output_path());
  sub->add_option("--otf2-logical", a.otf2, "Write the logical trace as an OTF2 archive into this directory")
      ->check(output_path());
  sub->add_flag("--force", a.force,
                "Replace an existing -o file, --logical-csv file or --otf2-logical archive (never an input)");
}

/// The thresholds of the signature and of the loop search.
void add_threshold_options(CLI::App* sub, analyzer::AnalyzeOptions& opts) {
  sub->add_option("--relevance", opts.signature.relevance, "Share of run time that makes a phase relevant")
      ->capture_default_str()
      ->check(number_in(0.0, 1.0));
  sub->add_option("--volume-tolerance", opts.signature.volume_tolerance,
                  "Relative difference of message sizes that still counts as equal")
      ->capture_default_str()
      ->check(number_in(0.0, 1.0));
  sub->add_option("--work-similarity", opts.signature.work_similarity,
                  "Instances of a phase whose work is less similar than this become separate phases")
      ->capture_default_str()
      ->check(number_in(0.0, 1.0));
  sub->add_option("--max-period", opts.max_period, "Longest loop body searched, in ticks")
      ->capture_default_str()
      ->check(integer_in(1, 1 << 24));
}

/// How phases are found, at which level, and in a run that did not finish.
void add_phase_options(CLI::App* sub, AnalyzeArgs& a) {
  sub->add_option("--phases", a.phases,
                  "How phases are found: global-ticks (the run's tick sequence folded), by-rank (each rank's own "
                  "calls folded into steps that begin after computation, then joined by position: MD step kinds, "
                  "pipelines), or auto (both, and by-rank where it describes the run at least twice as briefly: "
                  "repeated phases plus their order folded into loops)")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "by-rank", "global-ticks"}));
  sub->add_option("--phase-level", a.level,
                  "Which loops are the phases: units (the innermost loops that compute, and the steps between "
                  "them), outermost-loops (each iteration of the program's outermost loops, whatever their inner "
                  "loops), collectives (by rank: the calls between collectives of all processes), or auto")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "units", "outermost-loops", "collectives"}));
  sub->add_flag("--partial", a.opts.signature.partial,
                "Analyse a run that did not finish: unmatched receives become local events");
}

/// Refuses a run given twice: it would vote twice in the choice of the series' phases.
void refuse_repeated_runs(const std::vector<fs::path>& anchors, const std::vector<fs::path>& traces) {
  for (std::size_t i = 0; i < anchors.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      std::error_code ec;
      if (fs::weakly_canonical(anchors[i], ec) == fs::weakly_canonical(anchors[j], ec)) {
        throw InputError("'" + traces[i].string() + "' is the run '" + traces[j].string() +
                         "' again; give each run of the series once");
      }
    }
  }
}

/// Checks the outputs before the analysis: none may replace an input, nor an existing file without --force. The
/// signature beside each archive is the run's own and is refreshed by every analysis.
void check_outputs(const AnalyzeArgs& a) {
  if (a.traces.size() > 1 && (!a.output.empty() || !a.csv.empty() || !a.otf2.empty())) {
    throw InputError("-o, --logical-csv and --otf2-logical take one run; with " + std::to_string(a.traces.size()) +
                     " runs, each signature is written beside its archive");
  }
  std::vector<fs::path> anchors;
  for (const fs::path& t : a.traces) anchors.push_back(analyzer::find_anchor(t));
  refuse_repeated_runs(anchors, a.traces);
  if (!a.output.empty()) {
    std::error_code ec;
    const bool own = a.traces.size() == 1 && fs::weakly_canonical(a.output, ec) ==
                                                 fs::weakly_canonical(anchors[0].parent_path() / "signature.json", ec);
    check_output(a.output, anchors, a.force || own, "-o");
  }
  if (!a.csv.empty()) check_output(a.csv, anchors, a.force, "--logical-csv");
  if (!a.otf2.empty()) check_output(fs::path(a.otf2) / "traces.otf2", anchors, a.force, "--otf2-logical archive");
}

/// Refuses runs of different programs: another program's would have its phases found by this one's method, and its
/// signature rewritten so.
void refuse_mixed_programs(const std::vector<analyzer::Signature>& sigs) {
  for (std::size_t i = 1; i < sigs.size(); ++i) {
    const std::string first = program_of(sigs.front().command);
    const std::string other = program_of(sigs[i].command);
    if (!first.empty() && !other.empty() && first != other) {
      throw InputError("the runs are of different programs (" + first + " at " +
                       std::to_string(sigs.front().processes) + " processes, " + other + " at " +
                       std::to_string(sigs[i].processes) + "); analyze each application's runs apart");
    }
  }
}

/// Where each run's signature goes: -o, or signature.json beside its archive.
std::vector<fs::path> signature_paths(const std::vector<analyzer::AnalyzeOptions>& runs, const std::string& output) {
  std::vector<fs::path> outs;
  for (const analyzer::AnalyzeOptions& run : runs) {
    outs.push_back(output.empty() ? analyzer::find_anchor(run.input).parent_path() / "signature.json"
                                  : fs::path(output));
  }
  return outs;
}

/// The analysis' own figures for one run (--stats).
void print_stats(const analyzer::AnalyzeStats& st, const analyzer::Signature& sig) {
  std::printf(
      "stats: records %llu extract %.3f s lamport %.3f s phases %.3f s signature %.3f s "
      "max_in_flight %llu max_open_ticks %llu ticks %llu\n",
      static_cast<unsigned long long>(st.records), st.extract_s, st.lamport_s, st.phases_s, st.signature_s,
      static_cast<unsigned long long>(st.max_in_flight), static_cast<unsigned long long>(st.max_open_ticks),
      static_cast<unsigned long long>(sig.ticks));
}

/// Prints each run's figures (--stats), report and signature path, unless --quiet.
void print_results(const AnalyzeArgs& a, const std::vector<analyzer::Signature>& sigs,
                   const std::vector<analyzer::AnalyzeStats>& stats, const std::vector<fs::path>& outs) {
  for (std::size_t i = 0; i < sigs.size(); ++i) {
    if (a.show_stats) print_stats(stats[i], sigs[i]);
    if (a.quiet) continue;
    if (i > 0) std::cout << '\n';
    std::cout << analyzer::signature_report(sigs[i]);
    if (a.report) std::cout << analyzer::signature_details(sigs[i]);
    std::cout << "signature    " << outs[i].string() << '\n';
  }
}

/// Analyses the runs as one series and writes each signature.
void run_analyze(AnalyzeArgs& a) {
  a.opts.signature.phase_method = analyzer::phase_method_named(a.phases).value();
  if (a.level != "auto") a.opts.signature.phase_level = analyzer::phase_level_named(a.level);
  check_outputs(a);
  if (!a.csv.empty()) a.opts.logical_csv = a.csv;
  if (!a.otf2.empty()) a.opts.otf2_logical = a.otf2;
  std::vector<analyzer::AnalyzeOptions> runs;
  for (const fs::path& t : a.traces) {
    runs.push_back(a.opts);
    runs.back().input = t;
  }
  std::vector<analyzer::AnalyzeStats> stats;
  const std::vector<analyzer::Signature> sigs = analyzer::analyze_series(runs, &stats);
  refuse_mixed_programs(sigs);
  const std::vector<fs::path> outs = signature_paths(runs, a.output);
  // Every run analysed before any signature is written: a run that fails leaves no signature of its series.
  for (std::size_t i = 0; i < sigs.size(); ++i) analyzer::write_signature(sigs[i], outs[i]);
  print_results(a, sigs, stats, outs);
}

}  // namespace

void add_analyze(CLI::App& app) {
  auto args = std::make_shared<AnalyzeArgs>();
  CLI::App* sub = app.add_subcommand("analyze", "Find the phases of a traced run and write its signature");
  add_output_options(sub, *args);
  add_threshold_options(sub, args->opts);
  add_phase_options(sub, *args);
  sub->callback([args] { run_analyze(*args); });
}

}  // namespace p3s::cli
