// SPDX-License-Identifier: BSD-3-Clause
// `p3s record -o DIR [--counters ...] [--callsite] -- COMMAND...`
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>

#include "p3s/interpose/config.hpp"
#include "p3s/interpose/record.hpp"
#include "p3s/trace/schema.hpp"
#include "subcommands.hpp"
#include "validators.hpp"

extern char** environ;

namespace p3s::cli {
namespace {

std::string self_executable() {
  std::error_code ec;
  return std::filesystem::read_symlink("/proc/self/exe", ec).string();
}

void print(const interpose::RecordResult& r) {
  const auto prop = [&](const char* key) {
    const auto it = r.properties.find(key);
    return it == r.properties.end() ? std::string() : it->second;
  };
  if (!r.failure.empty()) {
    const std::string dir = std::filesystem::path(r.archive).parent_path().string();
    std::fprintf(stderr,
                 "p3s record: no trace was written: %s; the raw logs are kept in %s/p3s-raw: make room and run "
                 "`p3s recover %s`\n",
                 r.failure.c_str(), dir.c_str(), dir.c_str());
  } else if (r.recovered && r.recovery.complete) {
    std::fprintf(stderr,
                 "p3s record: the archive could not be written at MPI_Finalize (see above); rebuilt it from the raw "
                 "logs: %llu events of %d ranks into %s\n",
                 static_cast<unsigned long long>(r.recovery.events), r.recovery.ranks_with_logs, r.archive.c_str());
  } else if (r.recovered) {
    std::string ranks;
    for (int rank : r.recovery.incomplete_ranks) ranks += (ranks.empty() ? "" : ",") + std::to_string(rank);
    std::fprintf(stderr,
                 "p3s record: the run ended before MPI_Finalize (exit status %d); recovered %llu events of %d "
                 "ranks into %s (incomplete ranks: %s)\n",
                 r.exit_code, static_cast<unsigned long long>(r.recovery.events), r.recovery.ranks_with_logs,
                 r.archive.c_str(), ranks.empty() ? "none" : ranks.c_str());
    for (const interpose::TornLog& t : r.recovery.torn) {
      std::fprintf(stderr, "p3s record: %s\n", interpose::torn_text(t).c_str());
    }
  } else if (r.archive_written) {
    std::fprintf(stderr, "p3s record: wrote %s (%s ranks, work metric %s)\n", r.archive.c_str(),
                 prop(trace::property::kProcesses).c_str(), prop(trace::property::kWorkMetric).c_str());
  } else {
    std::fprintf(stderr,
                 "p3s record: no trace was written (exit status %d): the command never called MPI_Init under the "
                 "recorder (is it an MPI program, and does its launcher pass LD_PRELOAD to the ranks?), or the "
                 "recorder disabled tracing, and then said why in a line beginning \"p3s:\" on the command's "
                 "standard error\n",
                 r.exit_code);
  }
  const std::string note = prop(trace::property::kCountersNote);
  if (!note.empty()) std::fprintf(stderr, "p3s record: note: %s\n", note.c_str());
}

}  // namespace

void add_record(CLI::App& app) {
  auto opts = std::make_shared<interpose::RecordOptions>();
  auto counters = std::make_shared<std::string>("auto");
  auto help_env = std::make_shared<bool>(false);
  auto help_env_md = std::make_shared<bool>(false);
  CLI::App* sub =
      app.add_subcommand("record", "Run an MPI command with the recorder preloaded and write DIR/traces.otf2");
  sub->add_option("-o,--output", opts->dir, "Trace directory (required)")->check(output_path());
  sub->add_option("--counters", *counters, "Work counters: auto, papi, cputime or none")
      ->check(CLI::IsMember({"auto", "papi", "cputime", "none"}));
  sub->add_flag("--callsite", opts->callsite, "Record the calling location of every MPI call");
  sub->add_option("--buffer-mb", opts->buffer_mb, "Event buffer per thread in MiB")->check(integer_in(1, 4096));
  sub->add_flag("--keep-raw", opts->keep_raw, "Keep the raw per-thread logs");
  sub->add_flag("--force", opts->force, "Replace an archive already in DIR");
  sub->add_option("--preload", opts->preload, "Path of libp3s-interpose.so (default: next to this p3s)");
  sub->add_flag("--help-env", *help_env, "List the P3S_* environment variables and exit");
  sub->add_flag("--help-env-markdown", *help_env_md, "The same table in Markdown (README)")->group("");
  sub->add_option("command", opts->command, "The command to trace, after --")->allow_extra_args();
  sub->callback([opts, counters, help_env, help_env_md] {
    if (*help_env || *help_env_md) {
      std::fputs((*help_env_md ? interpose::env_table_markdown() : interpose::env_table_text()).c_str(), stdout);
      return;
    }
    // -o is checked here rather than by CLI11, so that --help-env works alone.
    if (opts->dir.empty()) throw CLI::RequiredError("--output");
    if (*counters == "papi")
      opts->counters = interpose::CountersRequest::Papi;
    else if (*counters == "cputime")
      opts->counters = interpose::CountersRequest::CpuTime;
    else if (*counters == "none")
      opts->counters = interpose::CountersRequest::None;
    if (opts->preload.empty()) opts->preload = interpose::default_preload_path(self_executable());
    for (char** e = environ; *e != nullptr; ++e) opts->environment.emplace_back(*e);
    const interpose::RecordResult r = interpose::record(*opts);
    print(r);
    // A trace the recorder could not write (a full disk) keeps the command's status, as an untraced run would
    // end; a command that never ran under the recorder is an error of the call.
    g_exit_code = r.exit_code != 0 || !r.failure.empty() ? r.exit_code : (r.archive_written ? 0 : 1);
  });
}

}  // namespace p3s::cli
