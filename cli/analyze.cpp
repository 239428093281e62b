// SPDX-License-Identifier: BSD-3-Clause
// `p3s analyze DIR|ARCHIVE [-o signature.json] [--report] [--logical-csv F] [--otf2-logical DIR] [thresholds]`
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "p3s/analyzer/analyze.hpp"
#include "p3s/analyzer/signature.hpp"
#include "p3s/analyzer/trace_reader.hpp"
#include "subcommands.hpp"

namespace p3s::cli {

void add_analyze(CLI::App& app) {
  auto opts = std::make_shared<analyzer::AnalyzeOptions>();
  auto output = std::make_shared<std::string>();
  auto csv = std::make_shared<std::string>();
  auto otf2 = std::make_shared<std::string>();
  auto report = std::make_shared<bool>(false);
  auto quiet = std::make_shared<bool>(false);
  auto show_stats = std::make_shared<bool>(false);
  auto phases = std::make_shared<std::string>(analyzer::phase_method_name(analyzer::PhaseMethod::Auto));
  CLI::App* sub = app.add_subcommand("analyze", "Find the phases of a traced run and write its signature");
  sub->add_option("trace", opts->input, "Trace directory or traces.otf2")->required();
  sub->add_option("-o,--output", *output, "Signature file (default: signature.json beside the archive)");
  sub->add_flag("--report", *report, "Also print each relevant phase's calls per rank");
  sub->add_flag("-q,--quiet", *quiet, "Print nothing on success");
  sub->add_flag("--stats", *show_stats, "Print the analysis' own figures (time per pass, messages in flight)");
  sub->add_option("--logical-csv", *csv, "Write the logical trace as CSV");
  sub->add_option("--otf2-logical", *otf2, "Write the logical trace as an OTF2 archive into this directory");
  sub->add_option("--relevance", opts->signature.relevance, "Share of run time that makes a phase relevant")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  sub->add_option("--volume-tolerance", opts->signature.volume_tolerance,
                  "Relative difference of message sizes that still counts as equal")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  sub->add_option("--work-similarity", opts->signature.work_similarity,
                  "Instances of a phase whose work is less similar than this become separate phases")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  sub->add_option("--max-period", opts->max_period, "Longest loop body searched, in ticks")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 24));
  sub->add_option("--phases", *phases,
                  "How phases are found: global-ticks (the run's tick sequence folded), by-rank (each rank's own "
                  "calls folded into steps that begin after computation, then joined by position: MD step kinds, "
                  "pipelines), or auto (both, and by-rank where it describes the run at least twice as briefly: "
                  "repeated phases plus their order folded into loops)")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "by-rank", "global-ticks"}));
  sub->add_flag("--partial", opts->signature.partial,
                "Analyse a run that did not finish: unmatched receives become local events");
  sub->callback([opts, output, csv, otf2, report, quiet, show_stats, phases] {
    opts->signature.phase_method = analyzer::phase_method_named(*phases).value();
    if (!csv->empty()) opts->logical_csv = *csv;
    if (!otf2->empty()) opts->otf2_logical = *otf2;
    analyzer::AnalyzeStats stats;
    const analyzer::Signature sig = analyzer::analyze(*opts, &stats);
    const std::filesystem::path out = output->empty()
                                          ? analyzer::find_anchor(opts->input).parent_path() / "signature.json"
                                          : std::filesystem::path(*output);
    analyzer::write_signature(sig, out);
    if (*show_stats) {
      std::printf(
          "stats: records %llu extract %.3f s lamport %.3f s phases %.3f s signature %.3f s "
          "max_in_flight %llu max_open_ticks %llu ticks %llu\n",
          static_cast<unsigned long long>(stats.records), stats.extract_s, stats.lamport_s, stats.phases_s,
          stats.signature_s, static_cast<unsigned long long>(stats.max_in_flight),
          static_cast<unsigned long long>(stats.max_open_ticks), static_cast<unsigned long long>(sig.ticks));
    }
    if (*quiet) return;
    std::cout << analyzer::signature_report(sig);
    if (*report) std::cout << analyzer::signature_details(sig);
    std::cout << "signature    " << out.string() << '\n';
  });
}

}  // namespace p3s::cli
