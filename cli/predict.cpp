// SPDX-License-Identifier: BSD-3-Clause
// `p3s predict app.model --np N [-o DIR [--format st4np|lt4nc|otf2|tit [--times RESULT] [--flops F]] [--strict]]
// [--force] [--compare SIG_AT_N]`, and `p3s predict ST4NP -o DIR --format tit`: an executable trace in SimGrid's
// time-independent format.
#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <iostream>

#include "p3s/curve/curve.hpp"
#include "p3s/error.hpp"
#include "p3s/modeler/dims.hpp"
#include "p3s/modeler/fit.hpp"
#include "p3s/modeler/lt4nc.hpp"
#include "p3s/modeler/model.hpp"
#include "p3s/modeler/predict.hpp"
#include "p3s/modeler/timed_trace.hpp"
#include "p3s/modeler/tit_trace.hpp"
#include "p3s/output_lock.hpp"
#include "p3s/outputs.hpp"
#include "st4np_input.hpp"
#include "subcommands.hpp"
#include "validators.hpp"

namespace p3s::cli {
namespace {

/// What `p3s predict` parses.
struct PredictArgs {
  std::string model;
  std::int64_t np = 0;
  bool logical = false;
  std::string format = "st4np";
  std::string times;
  double flops = 1e9;
  std::string output;
  bool force = false;
  bool strict = false;
  std::string compare;
};

/// The model, the count, what is written and what it is compared with.
void add_predict_options(CLI::App* sub, PredictArgs& a) {
  sub->add_option("model", a.model,
                  "Model file written by `p3s model` (or, with --format tit, an executable trace's directory: an "
                  "ST4NP written by `p3s predict -o` or by hand)")
      ->required()
      ->check(CLI::ExistingPath);
  sub->add_option("--np", a.np, "Process count (an ST4NP's is its own)")->check(integer_in(1, std::int64_t{1} << 24));
  sub->add_flag("--logical", a.logical,
                "Write the logical trace (LT4NC) into -o DIR rather than the executable one (ST4NP), which needs "
                "compute-time laws");
  sub->add_option("-o,--output", a.output,
                  "Output directory: the executable trace at that count (ST4NP), which p3s-replay runs")
      ->check(output_path());
  sub->add_option("--format", a.format,
                  "What -o DIR holds: st4np (the executable trace), lt4nc (the logical one, as --logical), otf2 "
                  "(the predicted run as an OTF2 archive timed by --times, for trace viewers), or tit (SimGrid's "
                  "time-independent trace, for smpirun -replay)")
      ->check(CLI::IsMember({"st4np", "lt4nc", "otf2", "tit"}));
  sub->add_option("--flops", a.flops,
                  "--format tit: the speed (flop/s) of the simulated hosts the compute actions are written for, so "
                  "that each burst takes its predicted time there")
      ->check(number_in(1, 1e18));
  sub->add_option("--times", a.times,
                  "--format otf2: the replay result (p3s-replay -o) of this model at --np whose phase times the "
                  "archive takes")
      ->check(CLI::ExistingFile);
  sub->add_flag("--force", a.force, "Replace a trace already in the output directory");
  sub->add_flag("--strict", a.strict,
                "Refuse a prediction with a phase whose predicted calls do not match (a receive without its send, a "
                "collective without all its members, a request never completed); without it such a phase is written "
                "repaired, what does not match dropped, recorded in the trace and said");
  sub->add_option("--compare", a.compare, "Compare the prediction with this real run's signature at the same count")
      ->check(CLI::ExistingPath);
}

/// Notes a count outside the fitted ones: below them, or so far above that the laws are extrapolated.
void note_fitted_range(std::int64_t np, const std::vector<std::int64_t>& fitted_n) {
  if (fitted_n.empty()) return;
  const auto [lo, hi] = std::minmax_element(fitted_n.begin(), fitted_n.end());
  if (np < *lo) {
    std::cout << "note: n = " << np << " is below the smallest fitted count (" << *lo
              << "); the laws were fitted above it and may not hold there\n";
  } else if (np > *hi) {
    const double times = static_cast<double>(np) / static_cast<double>(*hi);
    std::cout << "note: n = " << np << " is " << std::fixed << std::setprecision(times < 10 ? 1 : 0) << times
              << std::defaultfloat << "x the largest fitted count (" << *hi << ")"
              << (times > 16 ? "; laws extrapolated this far are a guess: fit runs at larger counts" : "") << '\n';
  }
}

/// Notes what limits the prediction at `np`: the fitted counts, the threads, and each phase's approximations and
/// caveats.
void note_limits(const modeler::Model& m, std::int64_t np) {
  const std::vector<std::int64_t> fitted_n = m.fitted_counts();
  note_fitted_range(np, fitted_n);
  if (const std::optional<std::string> threads = modeler::threads_note(m.limits)) {
    std::cout << "note: " << *threads << '\n';
  }
  for (const modeler::PhaseModel& p : m.phases) {
    for (const std::uint32_t g : p.approximate_groups(np)) {
      std::cout << "note: phase " << p.id << ", group " << g << " (" << p.groups[g].call
                << "): no law reproduces it; the calls of the fitted run at n = " << p.groups[g].measured.source(np).n
                << " stand in (approximate, not extrapolated)\n";
    }
    for (const std::string& caveat : p.caveats(np, fitted_n))
      std::cout << "note: phase " << p.id << ": " << caveat << '\n';
  }
}

/// Writes the trace at --np into -o DIR: the executable one (ST4NP), or the logical one (LT4NC) with --logical.
void write_trace(const modeler::Model& m, const PredictArgs& a) {
  const std::filesystem::path dir(a.output);
  OutputDirectory made(dir);  // a directory made here goes again when nothing could be written into it
  // Held from the check of what is there to the last file written: two predictions into one directory at once
  // would leave a mix of both, and both would say they wrote it.
  const OutputLock lock(dir);
  const std::string what = a.logical ? "the logical trace's" : "the executable trace's";
  for (const char* file : {"lt4nc.json", "ranks.jsonl", "ranks.index"}) refuse_existing(dir / file, a.force, what);
  const auto announce = [&](double bytes) {
    if (bytes < 1e9) return;
    std::cout << "writing about " << std::fixed << std::setprecision(1) << bytes / 1e9 << std::defaultfloat
              << " GB at n = " << a.np << " into " << dir.string() << " (" << std::setprecision(3)
              << bytes / static_cast<double>(a.np) / 1e3 << " kB per rank) ..." << std::endl;
  };
  const modeler::PredictionCheck check =
      modeler::write_lt4nc(m, a.np, dir, !a.logical, modeler::on_inconsistency(a.strict), announce);
  made.keep();
  for (const std::string& note : check.notes()) std::cout << "repaired: " << note << '\n';
  const std::string step = modeler::time_step_text(m.phases, a.np);
  if (!step.empty()) std::cout << "time step    " << step << '\n';
  std::cout << (a.logical ? "lt4nc        " : "st4np        ") << a.output << "/lt4nc.json (" << a.np << " ranks"
            << (check.repaired() ? ", repaired" : ", checked") << ")\n";
}

/// Each phase's time per instance in a replay result of the model at `np`. @throws p3s::InputError when the file is
/// no replay result, is at another n, or is of another model.
modeler::PhaseTimes replay_times(const modeler::Model& m, const std::string& path, std::int64_t np) {
  const std::string want =
      "' is no replay result: give --times what p3s-replay -o (or p3s simulate -o) wrote for "
      "this model at n = " +
      std::to_string(np);
  std::vector<curve::Point> points;
  try {
    points = curve::read_points({std::filesystem::path(path)});
  } catch (const InputError&) {
    throw InputError("'" + path + want);  // the reader takes what is no result for a damaged signature
  }
  const curve::Point& p = points.front();
  if (points.size() != 1 || !p.predicted_ns) throw InputError("'" + path + want);
  if (p.n != np) {
    throw InputError("'" + path + "' is a replay at n = " + std::to_string(p.n) + ", not " + std::to_string(np));
  }
  modeler::PhaseTimes times;
  times.source = path;
  for (const curve::PhasePoint& q : p.phases) {
    const auto model = std::find_if(m.phases.begin(), m.phases.end(), [&](const auto& x) { return x.id == q.id; });
    if (model == m.phases.end() || model->calls != q.calls || model->weight_at(np) != q.weight) {
      throw InputError("'" + path + "' is a replay of another model: its phase " + std::to_string(q.id) + " (" +
                       q.calls + ", weight " + std::to_string(q.weight) +
                       ") is not this model's at n = " + std::to_string(np));
    }
    if (q.weight > 0) times.instance_ns[q.id] = q.time_ns / static_cast<double>(q.weight);
  }
  return times;
}

/// Writes the predicted run at --np as an OTF2 archive into -o DIR, timed by the replay result --times.
void write_otf2(const modeler::Model& m, const PredictArgs& a) {
  if (a.times.empty()) {
    throw InputError(
        "--format otf2 takes its times from a replay: give --times RESULT, what p3s-replay -o wrote for "
        "this model at n = " +
        std::to_string(a.np));
  }
  const modeler::PhaseTimes times = replay_times(m, a.times, a.np);
  const std::filesystem::path dir(a.output);
  OutputDirectory made(dir);
  const OutputLock lock(dir);
  refuse_existing(dir / "traces.otf2", a.force, "an OTF2 archive's");
  const modeler::TimedTrace t =
      modeler::write_timed_otf2(m, a.np, times, dir, modeler::on_inconsistency(a.strict), a.model);
  made.keep();
  for (const std::string& note : t.check.notes()) std::cout << "repaired: " << note << '\n';
  for (const std::uint32_t id : t.untimed) {
    std::cout << "note: phase " << id << " has no time in '" << a.times << "' and is left out of the archive\n";
  }
  if (t.squeezed_instances > 0) {
    std::cout << "note: in " << t.squeezed_instances
              << " rank instances the predicted bursts were longer than the replayed instance and were shortened\n";
  }
  std::cout << "otf2         " << (dir / "traces.otf2").string() << " (" << a.np << " ranks, " << t.events
            << " events, " << std::setprecision(4) << t.run_ns / 1e9 << " s"
            << (t.check.repaired() ? ", repaired" : ", checked") << ")\n";
}

/// Writes the run at --np in SimGrid's time-independent format into -o DIR with `write` (given the directory and
/// the options).
template <typename Write>
void write_tit(const PredictArgs& a, Write&& write) {
  const std::filesystem::path dir(a.output);
  OutputDirectory made(dir);
  const OutputLock lock(dir);
  refuse_existing(dir / "traces.txt", a.force, "a time-independent trace's");
  modeler::TitOptions options;
  options.flops = a.flops;
  const modeler::TitTrace t = write(dir, options);
  made.keep();
  for (const std::string& note : t.check.notes()) std::cout << "repaired: " << note << '\n';
  for (const std::string& note : t.notes) std::cout << "note: " << note << '\n';
  std::cout << "tit          " << (dir / "traces.txt").string() << " (" << a.np << " ranks, " << t.actions
            << " actions, compute for hosts of " << a.flops << " flop/s"
            << (t.check.repaired() ? ", repaired" : ", checked") << ")\n";
}

/// Compares the prediction at `np` with a real run's signature at that count.
void compare_with_run(const modeler::Model& m, std::int64_t np, const std::string& signature) {
  const std::filesystem::path p(signature);
  const std::vector<modeler::Run> runs = modeler::load_runs(std::span(&p, 1), 1);
  if (runs.front().n() != np) {
    throw InputError("signature '" + p.string() + "' is a run at " + std::to_string(runs.front().n()) +
                     " processes, not " + std::to_string(np) + "; compare with a run at --np");
  }
  std::cout << modeler::validation_report(modeler::compare_with(m, runs.front()));
}

/// An executable trace (ST4NP directory) written in the time-independent format: all `p3s predict` does with one.
void export_st4np(PredictArgs& a) {
  if (a.format != "tit" || a.output.empty()) {
    throw InputError("'" + a.model +
                     "' is a directory: p3s predict reads an executable trace (ST4NP) only to write it in SimGrid's "
                     "format, with --format tit -o DIR");
  }
  if (a.logical || a.strict || !a.compare.empty() || !a.times.empty()) {
    throw InputError("--logical, --strict, --compare and --times go with a model, not an ST4NP");
  }
  const modeler::St4np trace = read_st4np_at_own_count(a.model, a.np);
  write_tit(a, [&](const std::filesystem::path& dir, const modeler::TitOptions& options) {
    return modeler::write_tit(trace, dir, options);
  });
}

void run_predict(PredictArgs a) {
  std::error_code ec;
  if (std::filesystem::is_directory(a.model, ec)) return export_st4np(a);
  if (a.np <= 0) throw InputError("a model is evaluated at a process count: give --np N");
  if (a.format == "lt4nc") a.logical = true;
  const modeler::Model m = modeler::read_model(a.model);
  const modeler::ScopedDimsRule rule(m.dims_rule);  // every law in dims(n) follows the runs' MPI
  note_limits(m, a.np);
  if (a.logical && a.format != "st4np" && a.format != "lt4nc") {
    throw InputError("--logical and --format " + a.format + " name two outputs: give one");
  }
  if ((a.logical || a.format != "st4np") && a.output.empty()) {
    throw InputError("--" + std::string(a.logical ? "logical" : "format " + a.format) +
                     " writes a directory: give it with -o DIR");
  }
  if (!a.times.empty() && a.format != "otf2") throw InputError("--times is for --format otf2");
  if (a.format == "otf2") {
    write_otf2(m, a);
  } else if (a.format == "tit") {
    write_tit(a, [&](const std::filesystem::path& dir, const modeler::TitOptions& options) {
      return modeler::write_tit(m, a.np, dir, modeler::on_inconsistency(a.strict), options);
    });
  } else if (!a.output.empty()) {
    write_trace(m, a);
  }
  if (!a.compare.empty()) compare_with_run(m, a.np, a.compare);
  if (a.output.empty() && a.compare.empty()) {
    std::cout << "n = " << a.np << '\n';
    for (const modeler::PhaseModel& p : m.phases) {
      std::cout << "phase " << p.id << "  weight " << p.weight_at(a.np) << "  " << p.calls << '\n';
    }
    const std::string step = modeler::time_step_text(m.phases, a.np);
    if (!step.empty()) std::cout << "time step    " << step << '\n';
  }
}

}  // namespace

void add_predict(CLI::App& app) {
  auto args = std::make_shared<PredictArgs>();
  CLI::App* sub = app.add_subcommand("predict", "Evaluate a model at a process count");
  add_predict_options(sub, *args);
  sub->callback([args] { run_predict(*args); });
}

}  // namespace p3s::cli
