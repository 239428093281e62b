// SPDX-License-Identifier: BSD-3-Clause
// Each phase's time per instance as SMPI simulates it: its time-independent trace with one instance, then with a
// few more, each replayed by smpirun on the platform; the difference is the time of the added instances.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <set>

#include "p3s/child_process.hpp"
#include "p3s/error.hpp"
#include "p3s/modeler/dims.hpp"
#include "p3s/modeler/tit_trace.hpp"
#include "p3s/simulate/simulate.hpp"

namespace p3s::simulate {
namespace {

namespace fs = std::filesystem;

/// SMPI's default collective algorithms route through rank 0; these are the well-known ones (recursive doubling,
/// binomial trees, ring, linear), each replayed here at 12 and 16 ranks (some selectors fail at counts that are no
/// power of two: pairwise alltoall, Bruck's allgather).
const std::vector<std::string> kCollectives = {
    "--cfg=smpi/allreduce:rdb",         "--cfg=smpi/bcast:binomial_tree",
    "--cfg=smpi/reduce:binomial",       "--cfg=smpi/barrier:ompi_recursivedoubling",
    "--cfg=smpi/alltoall:basic_linear", "--cfg=smpi/gather:ompi_binomial",
    "--cfg=smpi/allgather:ring",        "--cfg=smpi/scatter:ompi_binomial"};

/// `name` found in PATH (or as given, where it holds a slash); empty when it is nowhere.
std::string in_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string candidate = dirs.substr(start, end - start) + "/" + name;
    if (end > start && ::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

/// The simulated time SMPI's replay printed last ("... Simulation time 0.117882"); negative when none.
double simulated_s(const fs::path& log) {
  std::ifstream in(log);
  std::string line;
  double t = -1;
  const std::string mark = "Simulation time ";
  while (std::getline(in, line)) {
    const std::size_t at = line.rfind(mark);
    if (at != std::string::npos) t = std::strtod(line.c_str() + at + mark.size(), nullptr);
  }
  return t;
}

/// A phase as the simulation needs it: its id, calls and instances at n.
struct PhaseToRun {
  std::uint32_t id = 0;
  std::string calls;
  std::int64_t weight = 0;
};

class Simulation {
 public:
  Simulation(modeler::TitWriter& writer, std::int64_t n, const Platform& platform, const Options& options,
             std::string smpirun)
      : writer_(writer), n_(n), platform_(platform), options_(options), smpirun_(std::move(smpirun)) {}

  /// Seconds SMPI simulates `count` instances of phase `p` (index `index`) in.
  double run(const PhaseToRun& p, std::size_t index, std::uint64_t count) {
    const std::string name = "phase" + std::to_string(p.id) + ".x" + std::to_string(count);
    const fs::path dir = options_.work / name;
    const modeler::TitTrace t = writer_.write(dir, {modeler::PhaseRun{static_cast<std::uint32_t>(index), count}});
    notes_.insert(t.notes.begin(), t.notes.end());
    std::vector<std::string> argv{smpirun_,
                                  "-np",
                                  std::to_string(n_),
                                  "-platform",
                                  platform_.xml.string(),
                                  "-hostfile",
                                  platform_.hostfile.string(),
                                  "-replay",
                                  (dir / "traces.txt").string()};
    argv.insert(argv.end(), kCollectives.begin(), kCollectives.end());
    // The platform's latency and bandwidth as they are, or as a calibration's factors make them per message size
    // (SMPI's default factors model another machine's MPI).
    argv.insert(argv.end(), {"--cfg=smpi/bw-factor:" + platform_.bandwidth_factors,
                             "--cfg=smpi/lat-factor:" + platform_.latency_factors, "--cfg=network/crosstraffic:0"});
    const fs::path log = options_.work / (name + ".log");
    const int status = run_child(argv, log);
    const double s = simulated_s(log);
    if (status != 0 || s < 0) {
      throw Error("SMPI's simulation of phase " + std::to_string(p.id) + " (" + std::to_string(count) +
                  " instances at n = " + std::to_string(n_) + ") failed (exit status " + std::to_string(status) +
                  "): " + last_line(log) + "; its output: " + log.string());
    }
    return s;
  }

  PhaseResult phase(const PhaseToRun& p, std::size_t index) {
    PhaseResult r;
    r.id = p.id;
    r.calls = p.calls;
    r.weight = p.weight;
    if (r.weight <= 0) return r;
    r.simulated = true;
    const double first = run(p, index, 1);
    r.instances = 1;
    r.time_ns = first * 1e9;
    const auto more = std::min<std::int64_t>(r.weight, 1 + std::max(options_.instances, 1));
    if (more > 1) {
      const double all = run(p, index, static_cast<std::uint64_t>(more));
      const double per = (all - first) / static_cast<double>(more - 1);
      r.time_ns = (per > 0 ? per : all / static_cast<double>(more)) * 1e9;
      r.instances = static_cast<int>(more);
    }
    r.stats = writer_.stats()[index];
    r.main_loop = r.stats.main_loop;
    return r;
  }

  [[nodiscard]] const std::set<std::string>& notes() const { return notes_; }

 private:
  modeler::TitWriter& writer_;
  std::int64_t n_;
  const Platform& platform_;
  const Options& options_;
  std::string smpirun_;
  std::set<std::string> notes_;
};

/// smpirun's path, once the work directory is made. @throws p3s::InputError saying how to install SimGrid where it
/// is not installed.
std::string find_smpirun(const Options& options) {
  std::string smpirun = in_path(options.smpirun);
  if (smpirun.empty()) {
    throw InputError(
        "p3s simulate runs SimGrid's smpirun, which is not installed here: install SimGrid "
        "(Debian: apt-get install libsimgrid-dev) and run it again");
  }
  std::error_code ec;
  fs::create_directories(options.work, ec);
  if (ec) throw Error("cannot create '" + options.work.string() + "': " + ec.message());
  return smpirun;
}

/// Every phase simulated with the writer's traces; the notes are the writer's and `notes`.
Result simulate_phases(const std::vector<PhaseToRun>& phases, modeler::TitWriter& writer, std::int64_t n,
                       const Platform& platform, const Options& options, std::string smpirun,
                       std::vector<std::string> notes) {
  const auto start = std::chrono::steady_clock::now();
  Simulation sim(writer, n, platform, options, std::move(smpirun));
  Result out;
  out.processes = n;
  for (std::size_t p = 0; p < phases.size(); ++p) {
    out.phases.push_back(sim.phase(phases[p], p));
    const PhaseResult& r = out.phases.back();
    out.pet_ns += static_cast<double>(r.weight) * r.time_ns;
    if (r.main_loop) out.main_ns += static_cast<double>(r.weight) * r.time_ns;
  }
  out.notes.assign(sim.notes().begin(), sim.notes().end());
  out.notes.insert(out.notes.end(), notes.begin(), notes.end());
  out.wall_ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace

Result simulate(const modeler::Model& model, std::int64_t n, const Platform& platform, const Options& options) {
  std::string smpirun = find_smpirun(options);  // before the prediction is checked: a missing SimGrid first
  const modeler::ScopedDimsRule rule(model.dims_rule);
  modeler::TitWriter writer(model, n, options.policy, modeler::TitOptions{platform.flops});
  std::vector<PhaseToRun> phases;
  for (const modeler::PhaseModel& p : model.phases) phases.push_back({p.id, p.calls, p.weight_at(n)});
  std::vector<std::string> repaired;
  for (const std::string& note : writer.check().notes()) repaired.push_back("repaired: " + note);
  Result out = simulate_phases(phases, writer, n, platform, options, std::move(smpirun), std::move(repaired));
  out.application = model.application;
  out.work_metric = model.work_metric;
  return out;
}

Result simulate(const modeler::St4np& trace, const Platform& platform, const Options& options) {
  std::string smpirun = find_smpirun(options);
  modeler::TitWriter writer(trace, modeler::TitOptions{platform.flops});
  std::vector<PhaseToRun> phases;
  for (const modeler::St4npPhase& p : trace.phases) phases.push_back({p.id, p.calls, p.weight});
  Result out = simulate_phases(phases, writer, trace.processes, platform, options, std::move(smpirun), trace.notes);
  out.application = trace.application;
  out.work_metric = trace.work_metric;
  return out;
}

}  // namespace p3s::simulate
