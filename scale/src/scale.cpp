// SPDX-License-Identifier: BSD-3-Clause
// `p3s scale`: record, analyze, model, replay and curve, each step once.
#include "p3s/scale/scale.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <system_error>

#include <nlohmann/json.hpp>

#include "p3s/child_process.hpp"
#include "p3s/error.hpp"
#include "p3s/modeler/series.hpp"
#include "p3s/report/report.hpp"
#include "p3s/shell_words.hpp"
#include "p3s/whole_file.hpp"
#include "progress.hpp"
#include "state.hpp"

namespace p3s::scale {
namespace {

namespace fs = std::filesystem;
using detail::Progress;
using detail::State;

constexpr const char* kAt = "{n}";

std::string np(std::int64_t n) { return "np" + std::to_string(n); }

/// The whole text of a file ("" when it cannot be read: the step that reads it says why).
std::string file_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string n_list(const std::vector<std::int64_t>& ns) {
  std::string out;
  for (const std::int64_t n : ns) out += (out.empty() ? "" : " ") + std::to_string(n);
  return out;
}

std::vector<std::string> operator+(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

/// One step to run unless done: what the state calls it, how progress names it, what it is made from, what it
/// leaves, and the command that makes it.
struct Step {
  std::string kind;
  std::string name;
  std::string label;
  std::string key;
  std::vector<fs::path> outputs;
  std::vector<std::string> argv;
  fs::path log;
};

/// A step's command made only when the step must run (a range replay's job size needs a schedule first).
using LateCommand = std::function<std::vector<std::string>()>;

class Runner {
 public:
  Runner(State& state, Progress& progress) : state_(state), progress_(progress) {}

  /// Runs the step unless the state has it done from the same key and its outputs are there; returns its serial.
  /// `late`, where given, makes the command in place of `s.argv`.
  std::int64_t run(const Step& s, const LateCommand& late = {}) {
    progress_.begin(s.kind, s.label);
    const std::optional<std::int64_t> done = state_.done(s.name, s.key);
    const bool there = std::all_of(s.outputs.begin(), s.outputs.end(), [](const fs::path& p) {
      std::error_code ec;
      return fs::exists(p, ec);
    });
    if (done && there) {
      progress_.end(true);
      return *done;
    }
    const int status = run_child(late ? late() : s.argv, s.log, [this] { progress_.tick(); });
    if (status != 0) {
      const std::string last = last_line(s.log);
      throw Error(s.label + " failed (exit status " + std::to_string(status) + ")" + (last.empty() ? "" : ": " + last) +
                  "; its output: " + s.log.string());
    }
    const std::int64_t serial = state_.mark(s.name, s.key);
    progress_.end(false);
    return serial;
  }

 private:
  State& state_;
  Progress& progress_;
};

void validate(const ScaleOptions& o) {
  const std::set<std::int64_t> fit(o.fit.begin(), o.fit.end());
  if (fit.size() < 3) throw InputError("--fit needs three or more different process counts (a law needs them)");
  if (o.predict.empty()) throw InputError("--predict needs one process count or more");
  for (const std::int64_t n : o.fit) {
    if (n < 1) throw InputError("--fit: process counts are 1 or more");
  }
  for (const std::int64_t n : o.predict) {
    if (n < 1) throw InputError("--predict: process counts are 1 or more");
  }
  for (const std::int64_t n : o.validate) {
    if (fit.contains(n)) throw InputError("--validate " + std::to_string(n) + " is a fitted n: it checks nothing");
  }
  (void)default_launcher(o.command);  // the command must say where n goes
  if (!o.launcher.empty() &&
      std::none_of(o.launcher.begin(), o.launcher.end(), [](const std::string& w) { return w.find(kAt) != w.npos; })) {
    throw InputError("--launcher must say where the replay's ranks go with {n} (e.g. \"mpirun -np {n}\")");
  }
  if (o.compute != "spin" && o.compute != "sleep") throw InputError("--compute is spin or sleep");
  if ((o.backend == Backend::Simulate) != !o.platform.empty()) {
    throw InputError(o.platform.empty() ? "--backend simulate needs --platform machine.json (p3s calibrate -o)"
                                        : "--platform goes with --backend simulate");
  }
  if (!o.platform.empty() && o.platform.extension() == ".xml") {
    throw InputError(
        "--backend simulate takes a machine file (p3s calibrate -o); simulate on a SimGrid platform "
        "with p3s simulate --hostfile");
  }
}

/// The job size a range replay of n needs: p3s-replay --schedule-only's.
std::int64_t range_job(const ScaleOptions& o, std::int64_t n, const fs::path& model) {
  const fs::path schedule = o.dir / "logs" / ("schedule." + np(n) + ".json");
  const fs::path log = o.dir / "logs" / ("schedule." + np(n) + ".log");
  const std::vector<std::string> argv{o.p3s_replay.string(),
                                      model.string(),
                                      "--np",
                                      std::to_string(n),
                                      "--ranges",
                                      std::to_string(o.ranges > 0 ? o.ranges : 8),
                                      "--schedule-only",
                                      "-o",
                                      schedule.string(),
                                      "--force"};
  if (run_child(argv, log) != 0) {
    throw Error("the range replay's schedule at n = " + std::to_string(n) + " failed: " + last_line(log) +
                "; its output: " + log.string());
  }
  std::ifstream in(schedule);
  try {
    return nlohmann::json::parse(in).at("job_size").get<std::int64_t>();
  } catch (const std::exception& e) {
    throw Error("cannot read the job size from '" + schedule.string() + "': " + e.what());
  }
}

/// The curve of the fit runs and the targets' results, written to DIR and printed.
void write_curve(const ScaleOptions& o) {
  std::vector<fs::path> inputs;
  for (const std::int64_t n : o.fit) inputs.push_back(o.dir / "runs" / np(n) / "signature.json");
  for (const std::int64_t n : o.predict) inputs.push_back(o.dir / "results" / (np(n) + ".json"));
  for (const std::int64_t n : o.validate) inputs.push_back(o.dir / "checks" / np(n) / "signature.json");
  const curve::Curve c = curve::make_curve(curve::read_points(inputs), o.curve);
  curve::draw_plots(c, o.dir / "plots", true);
  write_whole_file(o.dir / "curve.json", curve::curve_json(c));
  write_whole_file(o.dir / "curve.csv", curve::curve_csv(c));
  report::write_report({o.dir, o.dir / "report.html", true, o.curve});
  std::fputs(curve::curve_table(c).c_str(), stdout);
  std::fflush(stdout);
}

/// The steps in order, each returning what the next are made from.
class Pipeline {
 public:
  Pipeline(const ScaleOptions& o, State& state, Progress& progress)
      : o_(o), state_(state), runner_(state, progress), self_(o.p3s.string()), logs_(o.dir / "logs") {}

  /// Records every fit run; returns the key of the series (each run's serial).
  std::string record_runs() {
    std::string key = "runs";
    for (const std::int64_t n : o_.fit) {
      const fs::path dir = o_.dir / "runs" / np(n);
      const std::int64_t serial =
          record(dir, at_n(o_.command, n), "record " + np(n), "record n = " + std::to_string(n), np(n));
      runs_.push_back(dir.string());
      signatures_.push_back(dir / "signature.json");
      key += " " + np(n) + "#" + std::to_string(serial);
    }
    return key;
  }

  /// Records and analyzes the far point (DIR/far, apart from the runs: its input is not the runs'); returns its key.
  std::string far_point() {
    const fs::path dir = o_.dir / "far";
    const std::int64_t recorded = record(dir, o_.far_point, "record far", "record the far point", "far");
    return " far#" + std::to_string(analyze_alone(dir, recorded, "analyze far", "analyze the far point", "far"));
  }

  /// Analyzes the runs together and models them; returns the model's serial.
  std::int64_t model(const std::string& runs_key, const std::string& far_key) {
    const std::int64_t analyzed =
        runner_.run({"analyze", "analyze", "analyze n = " + n_list(o_.fit) + " together", runs_key, signatures_,
                     std::vector<std::string>{self_, "analyze"} + runs_ + std::vector<std::string>{"-q", "--force"},
                     logs_ / "analyze.log"});
    std::vector<std::string> argv = std::vector<std::string>{self_, "model"} + runs_;
    // A phase some run lacks is left out and named in the model's log rather than stopping the answer.
    argv = argv + std::vector<std::string>{"-o", model_.string(), "--force", "--report", "--allow-missing"};
    if (!far_key.empty()) argv = argv + std::vector<std::string>{"--far-point", (o_.dir / "far").string()};
    return runner_.run({"model",
                        "model",
                        "model",
                        "analyze#" + std::to_string(analyzed) + far_key,
                        {model_},
                        argv,
                        logs_ / "model.log"});
  }

  /// Records and analyzes the real runs that check the predictions (each alone: they are no part of the fit).
  void record_checks() {
    for (const std::int64_t n : o_.validate) {
      const fs::path dir = o_.dir / "checks" / np(n);
      const std::string label = "record n = " + std::to_string(n) + " to check the prediction";
      const std::int64_t recorded = record(dir, at_n(o_.command, n), "record check " + np(n), label, "check." + np(n));
      analyze_alone(dir, recorded, "analyze check " + np(n), "analyze n = " + std::to_string(n), "check." + np(n));
    }
  }

  /// Measures every target n with the backend.
  void replay_targets(std::int64_t modelled) {
    if (o_.backend == Backend::Simulate) {
      simulate_targets(modelled);
      return;
    }
    const std::vector<std::string> launcher = o_.launcher.empty() ? default_launcher(o_.command) : o_.launcher;
    const bool range = o_.backend == Backend::Range;
    const std::string ranges = std::to_string(o_.ranges > 0 ? o_.ranges : 8);
    for (const std::int64_t n : o_.predict) {
      const fs::path result = o_.dir / "results" / (np(n) + ".json");
      std::vector<std::string> argv{
          o_.p3s_replay.string(), model_.string(), "-o", result.string(), "--force", "--compute", o_.compute};
      const std::string name = "replay " + np(n);
      const std::string key = "model#" + std::to_string(modelled) + " " + (range ? "range " + ranges : "replay") + " " +
                              o_.compute + " " + join_words(launcher);
      Step step{"replay",
                name,
                range ? "range replay n = " + std::to_string(n) : "replay n = " + std::to_string(n),
                key,
                {result},
                at_n(launcher, n) + argv,
                logs_ / ("replay." + np(n) + ".log")};
      LateCommand late;
      if (range) {
        late = [&] {
          return at_n(launcher, range_job(o_, n, model_)) + argv +
                 std::vector<std::string>{"--np", std::to_string(n), "--ranges", ranges};
        };
      }
      runner_.run(step, late);
    }
  }

 private:
  /// Simulates every target n on the machine file (p3s simulate, SMPI's traces and logs under logs/); a changed
  /// machine file is another step.
  void simulate_targets(std::int64_t modelled) {
    const std::string machine = file_text(o_.platform);
    for (const std::int64_t n : o_.predict) {
      const fs::path result = o_.dir / "results" / (np(n) + ".json");
      const std::string key = "model#" + std::to_string(modelled) + " simulate " + o_.platform.string() + " " +
                              std::to_string(std::hash<std::string>{}(machine));
      runner_.run({"replay",
                   "replay " + np(n),
                   "simulate n = " + std::to_string(n),
                   key,
                   {result},
                   {self_, "simulate", model_.string(), "--np", std::to_string(n), "--platform", o_.platform.string(),
                    "-o", result.string(), "--work", (logs_ / ("simulation." + np(n))).string(), "--force"},
                   logs_ / ("replay." + np(n) + ".log")});
    }
  }

  /// Records `command` into `dir` (log: logs/record.LOG.log); returns the step's serial.
  std::int64_t record(const fs::path& dir, const std::vector<std::string>& command, const std::string& name,
                      const std::string& label, const std::string& log) {
    return runner_.run({"record",
                        name,
                        label,
                        join_words(command),
                        {dir / "traces.otf2"},
                        std::vector<std::string>{self_, "record", "-o", dir.string(), "--force", "--"} + command,
                        logs_ / ("record." + log + ".log")});
  }

  /// Analyzes one recorded run by itself (no series); returns the step's serial.
  std::int64_t analyze_alone(const fs::path& dir, std::int64_t recorded, const std::string& name,
                             const std::string& label, const std::string& log) {
    return runner_.run({"analyze",
                        name,
                        label,
                        log + "#" + std::to_string(recorded),
                        {dir / "signature.json"},
                        {self_, "analyze", dir.string(), "-q", "--force"},
                        logs_ / ("analyze." + log + ".log")});
  }

  const ScaleOptions& o_;
  State& state_;
  Runner runner_;
  std::string self_;
  fs::path logs_;
  fs::path model_ = o_.dir / "app.model";
  std::vector<std::string> runs_;
  std::vector<fs::path> signatures_;
};

State opened_state(const ScaleOptions& o) {
  State state = State::load(o.dir);
  if (!state.empty() && state.command() != o.command && !o.force) {
    throw InputError("'" + o.dir.string() + "' holds the steps of another command (" + join_words(state.command()) +
                     "); give another -o, or --force to start again");
  }
  if (o.force) state.clear();
  state.set_command(o.command);
  state.save();
  return state;
}

}  // namespace

std::vector<std::string> default_launcher(const std::vector<std::string>& command) {
  const std::size_t words = modeler::launcher_words(command);
  const std::vector<std::string> launcher(command.begin(), command.begin() + static_cast<std::ptrdiff_t>(words));
  if (std::none_of(command.begin(), command.end(), [](const std::string& w) { return w.find(kAt) != w.npos; })) {
    throw InputError("the command must say where the process count goes with {n} (e.g. mpirun -np {n} ./app)");
  }
  if (std::none_of(launcher.begin(), launcher.end(), [](const std::string& w) { return w.find(kAt) != w.npos; })) {
    throw InputError("cannot tell the MPI launcher from the application in '" + join_words(command) +
                     "'; say how a replay is started with --launcher \"mpirun -np {n} ...\"");
  }
  return launcher;
}

std::vector<std::string> at_n(const std::vector<std::string>& words, std::int64_t n) {
  std::vector<std::string> out = words;
  for (std::string& w : out) {
    for (std::size_t at = w.find(kAt); at != std::string::npos; at = w.find(kAt, at)) {
      w.replace(at, 3, std::to_string(n));
    }
  }
  return out;
}

void run_scale(const ScaleOptions& o) {
  validate(o);
  for (const char* sub : {"runs", "results", "logs"}) fs::create_directories(o.dir / sub);
  if (!o.validate.empty()) fs::create_directories(o.dir / "checks");
  State state = opened_state(o);
  const bool far = !o.far_point.empty();
  const std::size_t checks = o.validate.size();
  Progress progress(o.fit.size() + o.predict.size() + 3 + (far ? 2 : 0) + 2 * checks, ::isatty(2) == 1);
  for (std::size_t i = 0; i < o.fit.size() + (far ? 1 : 0) + checks; ++i) progress.plan("record");
  for (std::size_t i = 0; i < (far ? 2 : 1) + checks; ++i) progress.plan("analyze");
  progress.plan("model");
  for (std::size_t i = 0; i < o.predict.size(); ++i) progress.plan("replay");
  progress.plan("curve");
  Pipeline pipeline(o, state, progress);
  const std::string runs_key = pipeline.record_runs();
  const std::string far_key = far ? pipeline.far_point() : "";
  pipeline.replay_targets(pipeline.model(runs_key, far_key));
  pipeline.record_checks();
  progress.begin("curve", "curve");
  write_curve(o);
  progress.end(false);
}

}  // namespace p3s::scale
