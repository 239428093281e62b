// SPDX-License-Identifier: BSD-3-Clause
// `p3s summary DIR [--json]`: what an archive holds, per rank.
#include "p3s/analyzer/summary.hpp"

#include "subcommands.hpp"

#include <cstdio>
#include <string>

namespace p3s::cli {
namespace {

struct SummaryOptions {
  std::string trace;
  bool json = false;
};

}  // namespace

void add_summary(CLI::App& app) {
  auto opts = std::make_shared<SummaryOptions>();
  CLI::App* sub = app.add_subcommand(
      "summary", "Per-rank counts of an OTF2 archive (p3s or Score-P): MPI calls, messages, collectives, time in MPI");
  sub->add_option("trace", opts->trace, "Trace directory (as given to p3s record -o) or .otf2 anchor file")->required();
  sub->add_flag("--json", opts->json, "Print JSON (schema_version 1) instead of a table");
  sub->callback([opts] {
    const analyzer::Summary s = analyzer::summarize(opts->trace);
    const std::string text = opts->json ? analyzer::summary_json(s) : analyzer::summary_text(s);
    std::fputs(text.c_str(), stdout);
  });
}

}  // namespace p3s::cli
