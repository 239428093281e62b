// SPDX-License-Identifier: BSD-3-Clause
// `mpirun -np N p3s-replay app.model|ST4NP_DIR [--compute spin|sleep] [--instances M] [--min-time S] [--warmup W]
//  [--watchdog S] [--strict] -o result.json [--force] [--compare SIG_AT_N]`: replays the prediction at N (the job's
//  size). `mpirun -np K p3s-replay app.model|ST4NP_DIR --np N --ranges C -o result.json [...]`: a range replay of
//  the prediction at N, C ranks at a time, on K ranks; with --schedule-only, its plan (steps and job size) alone.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <iostream>
#include <new>
#include <string>

#include "p3s/analyzer/signature.hpp"
#include "p3s/error.hpp"
#include "p3s/modeler/model.hpp"
#include "p3s/outputs.hpp"
#include "p3s/replay/ranges.hpp"
#include "p3s/replay/replay.hpp"
#include "p3s/user_text.hpp"
#include "p3s/whole_file.hpp"

namespace {

/// Every rank's own outcome, agreed: true when all succeeded; otherwise the first failing rank's message is
/// printed once and every rank returns false together (no rank is left waiting in a collective).
bool all_ok(bool ok, const std::string& message, int rank) {
  int failing = ok ? 1 << 30 : rank;
  MPI_Allreduce(MPI_IN_PLACE, &failing, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (failing == 1 << 30) return true;
  if (rank == failing) std::fprintf(stderr, "p3s-replay: %s\n", p3s::user_text(message).c_str());
  return false;
}

std::string command_line(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) s += (i != 0 ? " " : "") + std::string(argv[i]);
  return s;
}

/// The result file must be a file in an existing directory, and none of the replay's inputs.
void check_output(const std::string& output, const std::string& input) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path out = fs::absolute(output, ec);
  if (fs::is_directory(out, ec)) throw p3s::InputError("-o '" + output + "' is a directory; name the result file");
  const fs::path parent = out.parent_path();
  if (!fs::is_directory(parent, ec)) {
    throw p3s::InputError("-o '" + output + "': the directory '" + parent.string() + "' does not exist");
  }
  const fs::path in = fs::weakly_canonical(input, ec);
  const fs::path target = fs::weakly_canonical(out, ec);
  const bool inside = fs::is_directory(in) && target.parent_path() == in;
  if (target == in || inside) {
    throw p3s::InputError("-o '" + output + "' is " + (inside ? "inside the trace" : "the model") +
                          " the replay reads; write the result elsewhere");
  }
}

/// What the command line asks for.
struct Args {
  std::string input;
  std::string output;
  std::string compute = "spin";
  std::string compare;
  bool force = false;
  bool strict = false;
  std::int64_t np = 0;      ///< the predicted ranks of a range replay (0: the job's size)
  std::int64_t ranges = 0;  ///< ranks per range (0: full mode)
  bool schedule_only = false;
  p3s::replay::ReplayOptions options;
};

void add_options(CLI::App& app, Args& a) {
  app.add_option("input", a.input,
                 "Model file written by `p3s model` (each rank evaluates its own calls), or the directory of an "
                 "executable trace written by `p3s predict -o` for this many ranks")
      ->required()
      ->check(CLI::ExistingPath);
  app.add_option("-o,--output", a.output, "Result file (JSON); with --schedule-only, the schedule's (optional)")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            // `-o=X`: CLI11 reads a short option's value as =X, not the X meant.
            if (!text.empty() && text.front() == '=')
              return "'" + text + "' begins with '=': write -o " + text.substr(1);
            return {};
          },
          "PATH"));
  app.add_flag("--force", a.force, "Replace an existing result file");
  app.add_option("--compute", a.compute, "How bursts are emulated: spin (busy, as the application) or sleep")
      ->check(CLI::IsMember({"spin", "sleep"}))
      ->capture_default_str();
  app.add_option("--instances", a.options.instances, "Measured instances of each repeated phase, at least")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  app.add_option("--min-time", a.options.min_time_s,
                 "Seconds the measured instances of a repeated phase last together, at least (more instances are "
                 "measured, up to the phase's weight; 0: exactly --instances)")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  app.add_option("--warmup", a.options.warmup, "Instances run before measuring a repeated phase")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  app.add_option("--watchdog", a.options.watchdog_s, "Seconds without progress before a rank reports where it is stuck")
      ->check(CLI::Range(1.0, 1e6))
      ->capture_default_str();
  app.add_option("--compare", a.compare, "Signature of a real run at the same process count to compare with")
      ->check(CLI::ExistingFile);
  app.add_flag("--strict", a.strict,
               "With a model: refuse it where a phase's predicted calls do not match (a receive without its send, a "
               "collective without all its members); without it such a phase is replayed repaired, what does not "
               "match dropped, as `p3s predict` writes it, and the result's notes say so (an ST4NP was checked when "
               "it was written)");
  app.add_option("--np", a.np, "Ranks of the predicted run a range replay measures (default: the job's size)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 30));
  app.add_option("--ranges", a.ranges,
                 "Range replay: measure the ranks C consecutive ones at a time (C: the cores of one node), two "
                 "ranges per step")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 30));
  app.add_option("--passes", a.options.range_passes,
                 "Range replay: passes over the steps; each pass's black holes answer no earlier than the senders sent "
                 "in the passes and steps before, the last pass is the result")
      ->check(CLI::Range(1, 16));
  app.add_flag("--schedule-only", a.schedule_only,
               "With --ranges: print the range replay's steps and the job size it needs, and replay nothing");
}

/// The problem with the options together, or an empty string.
std::string bad_combination(const Args& a, int size) {
  if (a.schedule_only && a.ranges == 0) return "--schedule-only plans a range replay: give --ranges C";
  const std::int64_t n = a.np != 0 ? a.np : size;
  if (a.ranges > n) {
    return "--ranges " + std::to_string(a.ranges) + ": a range holds between 1 and the " + std::to_string(n) + " ranks";
  }
  if (a.ranges == 0 && a.np != 0 && a.np != size) {
    return "--np " + std::to_string(a.np) + ": a full replay runs the prediction at the job's size (" +
           std::to_string(size) + " ranks); run it with -np " + std::to_string(a.np) + " or plan one with --ranges";
  }
  if (!a.schedule_only && a.output.empty()) return "-o: name the result file";
  return {};
}

/// Rank 0's plan of a range replay: printed, and written to -o when given. Returns the message of what failed, or
/// an empty string.
std::string plan_ranges(const Args& a, int size) {
  try {
    if (!a.output.empty()) {
      check_output(a.output, a.input);
      p3s::refuse_existing(a.output, a.force, "schedule");
    }
    const std::int64_t n = a.np != 0 ? a.np : size;
    p3s::replay::RangeTraffic traffic;
    if (std::filesystem::is_directory(a.input)) {
      traffic = p3s::replay::traffic_of_st4np(a.input, n, a.ranges);
    } else {
      const p3s::modeler::Model model = p3s::modeler::read_model(a.input);
      traffic = p3s::replay::traffic_of_model(model, n, a.ranges);
    }
    const p3s::replay::RangeSchedule schedule = p3s::replay::schedule_ranges(traffic);
    std::cout << p3s::replay::schedule_summary(schedule);
    if (!a.output.empty()) {
      p3s::write_whole_file(a.output, p3s::replay::schedule_json(schedule));
      std::cout << "schedule     " << a.output << '\n';
    }
    std::cout << std::flush;
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

/// The problem with a parsed number of seconds that CLI11's ranges let through (NaN: every comparison with it is
/// false), or an empty string.
std::string bad_seconds(const p3s::replay::ReplayOptions& o) {
  for (const auto& [name, value] : {std::pair{"--watchdog", o.watchdog_s}, {"--min-time", o.min_time_s}}) {
    if (!std::isfinite(value)) return std::string(name) + ": " + std::to_string(value) + " is no number of seconds";
  }
  return {};
}

/// What the comparison would refuse after the replay, refused before it: the measurement is not thrown away.
void check_comparable(const std::string& compare, std::int64_t size) {
  const p3s::analyzer::Signature real = p3s::analyzer::read_signature(compare);
  if (real.processes != size) {
    throw p3s::InputError("--compare: '" + compare + "' is a run at " + std::to_string(real.processes) +
                          " processes, the replay at " + std::to_string(size) + "; compare runs at the same n");
  }
  if (!real.complete) {
    throw p3s::InputError("--compare: '" + compare +
                          "' is a run that ended before MPI_Finalize; compare with a complete run");
  }
}

/// This rank's plan from the model (read into `model`, which the plan points into) or the ST4NP, after the checks
/// that need no replay.
p3s::replay::ReplayPlan load_plan(const Args& a, int size, int rank, p3s::modeler::Model& model) {
  check_output(a.output, a.input);
  p3s::refuse_existing(a.output, a.force, "result");
  const std::int64_t n = a.ranges > 0 && a.np != 0 ? a.np : size;
  if (!a.compare.empty() && rank == 0) check_comparable(a.compare, n);
  // A range replay's ranks each replay one predicted rank per step: the plan here is predicted rank 0's, for the
  // report (the phases, their names and weights).
  const std::int64_t own = a.ranges > 0 ? 0 : rank;
  if (std::filesystem::is_directory(a.input)) {
    if (a.strict) {
      throw p3s::InputError(
          "--strict applies to a model: an ST4NP was checked, and repaired where needed, by `p3s "
          "predict` when it wrote it");
    }
    return p3s::replay::plan_from_st4np(a.input, n, own);
  }
  model = p3s::modeler::read_model(a.input);
  return p3s::replay::plan_from_model(model, a.input, n, own, p3s::modeler::on_inconsistency(a.strict));
}

/// The plan, or the message of why this rank has none (empty when it has one).
std::string try_load_plan(const Args& a, int size, int rank, p3s::modeler::Model& model,
                          p3s::replay::ReplayPlan& plan) {
  try {
    plan = load_plan(a, size, rank, model);
  } catch (const p3s::Error& e) {
    return e.what();
  } catch (const std::bad_alloc&) {
    return "not enough memory to hold this rank's part of the trace; replay a smaller count or free memory";
  } catch (const std::exception& e) {
    return std::string("cannot read the trace: ") + e.what();
  }
  return {};
}

/// Rank 0 writes the result file and prints the summary; the message of what failed, or an empty string.
std::string report(const Args& a, const p3s::replay::ReplayPlan& plan, const p3s::replay::ReplayResult& result,
                   const std::string& command) {
  try {
    std::optional<p3s::replay::Comparison> comparison;
    if (!a.compare.empty()) comparison = p3s::replay::compare_with_run(plan, result, a.compare);
    p3s::replay::write_result(result, plan, {command, a.options}, comparison, a.output);
    std::cout << p3s::replay::result_summary(result);
    if (comparison) std::cout << p3s::replay::comparison_summary(*comparison);
    std::cout << "result       " << a.output << '\n' << std::flush;
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

/// A range replay of the prediction at --np (default: the job's size) on this job.
p3s::replay::ReplayResult run_ranges(const Args& a, int size, const p3s::modeler::Model& model,
                                     const p3s::replay::ReplayPlan& plan) {
  const std::int64_t n = a.np != 0 ? a.np : size;
  const bool st4np = std::filesystem::is_directory(a.input);
  const p3s::replay::RangeTraffic traffic =
      st4np ? p3s::replay::traffic_of_st4np(a.input, n, a.ranges) : p3s::replay::traffic_of_model(model, n, a.ranges);
  const p3s::replay::RangeSchedule schedule = p3s::replay::schedule_ranges(traffic);
  const p3s::replay::RangeSource source{a.input, st4np ? nullptr : &model, p3s::modeler::on_inconsistency(a.strict)};
  return p3s::replay::run_range_replay(plan, source, traffic, schedule, a.options);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CLI::App app("Replay a p3s model's prediction at the job's process count with real MPI and predict its run time",
               "p3s-replay");
  Args a;
  add_options(app, a);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = rank == 0 ? app.exit(e) : (e.get_exit_code() == 0 ? 0 : 2);
    MPI_Finalize();
    return code == 0 ? 0 : 2;
  }
  a.options.compute = *p3s::replay::compute_named(a.compute);
  if (const std::string bad = bad_seconds(a.options); !bad.empty()) {
    if (rank == 0) std::fprintf(stderr, "p3s-replay: %s\n", bad.c_str());
    MPI_Finalize();
    return 2;
  }
  if (const std::string bad = bad_combination(a, size); !bad.empty()) {
    if (rank == 0) std::fprintf(stderr, "p3s-replay: %s\n", bad.c_str());
    MPI_Finalize();
    return 2;
  }
  if (a.schedule_only) {
    const std::string failed = rank == 0 ? plan_ranges(a, size) : std::string();
    const bool ok = all_ok(failed.empty(), failed, rank);
    MPI_Finalize();
    return ok ? 0 : 1;
  }
  p3s::modeler::Model model;  // outlives the plan, which points into it
  p3s::replay::ReplayPlan plan;
  const std::string error = try_load_plan(a, size, rank, model, plan);
  if (!all_ok(error.empty(), error, rank)) {
    MPI_Finalize();
    return 1;
  }
  p3s::replay::ReplayResult result;
  try {
    result = a.ranges > 0 ? run_ranges(a, size, model, plan) : p3s::replay::run_replay(plan, a.options);
  } catch (const p3s::replay::RefusedPlan& e) {
    if (*e.what() != '\0') std::fprintf(stderr, "p3s-replay: %s\n", p3s::user_text(e.what()).c_str());
    MPI_Finalize();
    return 1;
  } catch (const std::exception& e) {
    // A failure of MPI (or of memory) during the phases is one rank's, and the others may be waiting on it.
    std::fprintf(stderr, "p3s-replay: rank %d: %s\n", rank,
                 dynamic_cast<const std::bad_alloc*>(&e) != nullptr ? "not enough memory for the replay's buffers"
                                                                    : p3s::user_text(e.what()).c_str());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const std::string failed = rank == 0 ? report(a, plan, result, command_line(argc, argv)) : std::string();
  const bool ok = all_ok(failed.empty(), failed, rank);
  MPI_Finalize();
  return ok ? 0 : 1;
}
