// SPDX-License-Identifier: BSD-3-Clause
// `p3s simulate app.model|ST4NP --np N --platform machine.json|platform.xml [--hostfile H] -o result.json`: the
// prediction at N (or an executable trace at its own N) replayed by SimGrid's SMPI on a described machine.
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <variant>

#include "p3s/error.hpp"
#include "p3s/modeler/model.hpp"
#include "p3s/outputs.hpp"
#include "p3s/simulate/simulate.hpp"
#include "st4np_input.hpp"
#include "subcommands.hpp"
#include "validators.hpp"

namespace p3s::cli {
namespace {

struct SimulateArgs {
  std::string model;
  std::int64_t np = 0;
  std::string platform;
  std::string hostfile;
  std::int64_t cores = 0;
  double flops = 0;
  int instances = 3;
  std::string output;
  std::string work;
  bool force = false;
  bool strict = false;
  std::string command;  ///< what the result records as its command
};

/// The platform: a machine file's cluster written into the work directory, or the user's platform and hosts.
simulate::Platform platform_of(const SimulateArgs& a, const std::filesystem::path& work) {
  if (std::filesystem::path(a.platform).extension() == ".xml") {
    if (a.hostfile.empty()) {
      throw InputError("a SimGrid platform needs --hostfile: the hosts of the ranks, in rank order (smpirun's)");
    }
    simulate::Platform p;
    p.xml = a.platform;
    p.hostfile = a.hostfile;
    p.flops = a.flops > 0 ? a.flops : 1e9;
    p.description = "SimGrid platform " + a.platform + " (hosts " + a.hostfile + "), compute written for " +
                    std::to_string(p.flops / 1e9) + " Gflop/s";
    return p;
  }
  if (!a.hostfile.empty()) throw InputError("--hostfile goes with a SimGrid platform (.xml), not a machine file");
  simulate::Machine m = simulate::read_machine(a.platform);
  if (a.cores > 0) m.cores_per_node = a.cores;
  if (a.flops > 0) m.flops = a.flops;
  return simulate::write_cluster(m, a.np, work);
}

/// The input's run: a model's at --np, or an ST4NP's own (--np, where given, must be its count).
std::variant<modeler::Model, modeler::St4np> read_input(SimulateArgs& a) {
  std::error_code ec;
  if (!std::filesystem::is_directory(a.model, ec)) {
    if (a.np <= 0) throw InputError("a model is simulated at a process count: give --np N");
    return modeler::read_model(a.model);
  }
  if (a.strict) throw InputError("--strict goes with a model; an ST4NP was checked (or repaired) when written");
  return read_st4np_at_own_count(a.model, a.np);
}

void run_simulate(SimulateArgs& a) {
  refuse_existing(a.output, a.force, "simulation result");
  const auto input = read_input(a);
  const std::filesystem::path work(a.work.empty() ? a.output + ".simulation" : a.work);
  std::filesystem::create_directories(work);
  const simulate::Platform platform = platform_of(a, work);
  simulate::Options options;
  options.instances = a.instances;
  options.work = work;
  options.policy = modeler::on_inconsistency(a.strict);
  const simulate::Result r = std::holds_alternative<modeler::Model>(input)
                                 ? simulate::simulate(std::get<modeler::Model>(input), a.np, platform, options)
                                 : simulate::simulate(std::get<modeler::St4np>(input), platform, options);
  simulate::write_result(r, a.model, platform, a.command, a.output);
  std::cout << "platform     " << platform.description << '\n' << simulate::result_summary(r);
  std::cout << "result       " << a.output << " (traces and SMPI's output in " << work.string() << ")\n";
}

}  // namespace

void add_simulate(CLI::App& app) {
  auto a = std::make_shared<SimulateArgs>();
  CLI::App* sub = app.add_subcommand(
      "simulate", "Simulate the prediction at a process count on a described machine (SimGrid's SMPI)");
  sub->add_option("model", a->model,
                  "Model file written by `p3s model`, or an executable trace (ST4NP directory: `p3s predict -o`)")
      ->required()
      ->check(CLI::ExistingPath);
  sub->add_option("--np", a->np, "Process count (a model's; an ST4NP is simulated at its own)")
      ->check(integer_in(1, std::int64_t{1} << 20));
  sub->add_option("--platform", a->platform,
                  "A machine file (p3s calibrate -o, or written by hand: share/doc/simulate-format.md), or a SimGrid "
                  "platform (.xml) with --hostfile")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("--hostfile", a->hostfile, "With a SimGrid platform: the hosts of the ranks, as smpirun reads them")
      ->check(CLI::ExistingFile);
  sub->add_option("--cores-per-node", a->cores, "Ranks per node of the machine file's cluster (default: its own)")
      ->check(integer_in(1, 1 << 20));
  sub->add_option("--flops", a->flops, "Speed of a core (flop/s) (default: the machine file's, else 1 Gflop/s)")
      ->check(number_in(1, 1e18));
  sub->add_option("--instances", a->instances, "Instances of each repeated phase simulated after the first")
      ->check(integer_in(1, 1000));
  sub->add_option("-o,--output", a->output, "Result file (the keys of p3s-replay's result)")
      ->required()
      ->check(output_path());
  sub->add_option("--work", a->work,
                  "Where the traces and SMPI's output go (default: the result's name + .simulation)");
  sub->add_flag("--force", a->force, "Replace an existing result");
  sub->add_flag("--strict", a->strict,
                "Refuse a prediction with an inconsistent phase, as `p3s predict --strict` (without it the phase is "
                "simulated repaired, and said so)");
  sub->callback([a] {
    a->command = "p3s simulate " + a->model + (a->np > 0 ? " --np " + std::to_string(a->np) : "") + " --platform " +
                 a->platform + (a->hostfile.empty() ? "" : " --hostfile " + a->hostfile) + " -o " + a->output;
    run_simulate(*a);
  });
}

}  // namespace p3s::cli
