// SPDX-License-Identifier: BSD-3-Clause
// `p3s recover DIR`: rebuild the archive of a run that died before MPI_Finalize.
#include <cstdio>
#include <string>

#include "p3s/interpose/recover.hpp"
#include "subcommands.hpp"

namespace p3s::cli {

void add_recover(CLI::App& app) {
  auto dir = std::make_shared<std::string>();
  CLI::App* sub = app.add_subcommand("recover", "Rebuild DIR/traces.otf2 from the raw logs of a run that died");
  sub->add_option("dir", *dir, "Trace directory")->required();
  sub->callback([dir] {
    const interpose::RecoverReport r = interpose::recover(*dir);
    std::string ranks;
    for (int rank : r.incomplete_ranks) ranks += (ranks.empty() ? "" : ",") + std::to_string(rank);
    std::printf(
        "p3s recover: wrote %s: %llu events from %d of %d ranks; %s\n", r.archive.c_str(),
        static_cast<unsigned long long>(r.events), r.ranks_with_logs, r.world_size,
        r.complete ? "the run was complete" : ("the run was incomplete (ranks " + ranks + " ended early)").c_str());
    for (const interpose::TornLog& t : r.torn) std::printf("p3s recover: %s\n", interpose::torn_text(t).c_str());
  });
}

}  // namespace p3s::cli
