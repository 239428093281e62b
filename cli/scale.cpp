// SPDX-License-Identifier: BSD-3-Clause
// `p3s scale -o DIR --fit N,... --predict N,... [options] -- COMMAND with {n}`: the whole method, resumable.
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "p3s/error.hpp"
#include "p3s/scale/scale.hpp"
#include "p3s/shell_words.hpp"
#include "self_path.hpp"
#include "subcommands.hpp"

namespace p3s::cli {
namespace {

struct ScaleArgs {
  scale::ScaleOptions o;
  std::string dir;
  std::string backend = "replay";
  std::string launcher;
  std::string far_point;
  std::optional<std::int64_t> baseline;
  std::string fit;
  std::string predict;
  std::string validate;
};

/// "4,8,16" as numbers. @throws p3s::InputError naming the option when it is no such list.
std::vector<std::int64_t> counts(const std::string& list, const std::string& option) {
  std::vector<std::int64_t> out;
  std::size_t at = 0;
  while (!list.empty() && at <= list.size()) {
    const std::size_t comma = std::min(list.find(',', at), list.size());
    const std::string word = list.substr(at, comma - at);
    std::int64_t n = 0;
    const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), n);
    if (word.empty() || ec != std::errc() || end != word.data() + word.size() || n < 1 || n > (1LL << 30)) {
      throw InputError(option + " '" + list + "' is no list of process counts (e.g. 4,8,16)");
    }
    out.push_back(n);
    at = comma + 1;
  }
  return out;
}

void run(ScaleArgs& a) {
  scale::ScaleOptions& o = a.o;
  o.dir = a.dir;
  o.fit = counts(a.fit, "--fit");
  o.predict = counts(a.predict, "--predict");
  o.validate = counts(a.validate, "--validate");
  o.backend = a.backend == "range"      ? scale::Backend::Range
              : a.backend == "simulate" ? scale::Backend::Simulate
                                        : scale::Backend::Replay;
  o.launcher = split_words(a.launcher);
  o.far_point = split_words(a.far_point);
  o.curve.baseline = a.baseline;
  o.p3s = self_executable();
  o.p3s_replay = beside_self("p3s-replay");
  try {
    scale::run_scale(o);
  } catch (const scale::Interrupted& e) {
    std::fprintf(stderr, "p3s scale: %s\n", e.what());
    g_exit_code = 128 + e.signal();
  }
}

}  // namespace

void add_scale(CLI::App& app) {
  auto a = std::make_shared<ScaleArgs>();
  CLI::App* sub = app.add_subcommand(
      "scale", "Record, analyze, model and replay in one resumable command, then print the curve and the best n");
  sub->add_option("-o,--output", a->dir, "Directory of the runs, model, results, curve and plots (resumed)")
      ->required();
  // Lists as one word each ("4,8,16"): a list option just before -- would take -- as its own end.
  sub->add_option("--fit", a->fit, "Process counts to record and fit, comma-separated (three or more)")->required();
  sub->add_option("--predict", a->predict, "Process counts to predict, comma-separated")->required();
  sub->add_option("--validate", a->validate,
                  "Also record real runs at these n and put them beside the predictions (costs those runs)");
  sub->add_option("--backend", a->backend,
                  "How each predicted n is measured: replay (n ranks), range (a few) or simulate (SimGrid, no job)")
      ->check(CLI::IsMember({"replay", "range", "simulate"}));
  sub->add_option("--platform", a->o.platform, "Simulate backend: the machine file (p3s calibrate -o)")
      ->check(CLI::ExistingFile);
  sub->add_option("--ranges", a->o.ranges, "Range backend: ranks per range (the cores of a node; default 8)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--compute", a->o.compute, "How the replay emulates bursts: spin (default) or sleep")
      ->check(CLI::IsMember({"spin", "sleep"}));
  sub->add_option("--launcher", a->launcher,
                  "How a replay is started, {n} for its ranks (default: the command's words up to {n})");
  sub->add_option("--far-point", a->far_point,
                  "A run of the application with a reduced input at a larger n, to calibrate compute time there");
  sub->add_option("--baseline", a->baseline, "The n speedup and efficiency are against (default: the smallest)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--efficiency", a->o.curve.efficiency, "Recommend no n whose efficiency is below this (0.5)")
      ->check(CLI::Range(0.01, 1.0));
  sub->add_option("--gain", a->o.curve.gain, "The knee: a doubling of n that gains less than this share (0.1)")
      ->check(CLI::Range(0.001, 0.999));
  sub->add_flag("--force", a->o.force, "Redo every step, and reuse a directory made for another command");
  sub->add_option("command", a->o.command, "The application's command after --, {n} where the process count goes")
      ->required()
      ->allow_extra_args();
  sub->callback([a] { run(*a); });
}

}  // namespace p3s::cli
