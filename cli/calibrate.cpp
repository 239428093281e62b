// SPDX-License-Identifier: BSD-3-Clause
// `p3s calibrate -o machine.json [-- mpirun -np 2 ...]`: the machine file of `p3s simulate`, measured on this machine
// by the MPI job p3s-calibrate and fitted as SimGrid's network model takes it.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "p3s/child_process.hpp"
#include "p3s/error.hpp"
#include "p3s/outputs.hpp"
#include "p3s/simulate/calibration.hpp"
#include "p3s/table_text.hpp"
#include "self_path.hpp"
#include "subcommands.hpp"
#include "validators.hpp"

namespace p3s::cli {
namespace {

struct CalibrateArgs {
  std::string output;
  bool force = false;
  bool quick = false;
  std::int64_t cores = 0;
  std::vector<std::string> launcher;
};

std::string link_text(double latency_s, double bandwidth_Bps) {
  return time_text(latency_s * 1e9) + " latency, " + fmt("%.3g", bandwidth_Bps / 1e9) + " GB/s";
}

void print_machine(const simulate::Machine& m, const simulate::Measurements& x, const std::vector<std::string>& notes,
                   const std::string& output) {
  std::cout << "measured on  " << m.measured_on << ", " << m.date << '\n';
  std::cout << "network      " << link_text(m.latency_s, m.bandwidth_Bps) << " (" << m.factors.size()
            << " size ranges, SMPI's factors)\n";
  std::cout << "inside node  " << link_text(m.loopback_latency_s, m.loopback_bandwidth_Bps) << '\n';
  std::cout << "core         " << fmt("%.3g", m.flops / 1e9) << " Gflop/s, " << m.cores_per_node << " cores per node\n";
  std::cout << "collectives  " << x.collectives.size() << " measured on " << x.processes << " ranks\n";
  for (const std::string& n : notes) std::cout << "note: " << n << '\n';
  std::cout << "machine file " << output << '\n';
}

void run_calibrate(const CalibrateArgs& a) {
  refuse_existing(a.output, a.force, "machine file");
  const std::filesystem::path measured = a.output + ".measured.json";
  const std::filesystem::path log = a.output + ".calibrate.log";
  std::vector<std::string> argv = a.launcher.empty() ? std::vector<std::string>{"mpirun", "-np", "2"} : a.launcher;
  argv.insert(argv.end(), {beside_self("p3s-calibrate").string(), "-o", measured.string()});
  if (a.quick) argv.emplace_back("--quick");
  std::error_code ec;
  std::filesystem::remove(measured, ec);
  const int status = run_child(argv, log);
  if (status != 0 || !std::filesystem::exists(measured)) {
    throw Error("the calibration job failed (exit status " + std::to_string(status) + "): " + last_line(log) +
                "; its output: " + log.string());
  }
  const simulate::Measurements x = simulate::read_measurements(measured);
  std::vector<std::string> notes;
  const simulate::Machine m = simulate::calibrated_machine(x, a.cores, notes);
  simulate::write_machine(m, x, notes, a.output);
  std::filesystem::remove(measured, ec);
  std::filesystem::remove(log, ec);
  print_machine(m, x, notes, a.output);
}

}  // namespace

void add_calibrate(CLI::App& app) {
  auto a = std::make_shared<CalibrateArgs>();
  CLI::App* sub = app.add_subcommand("calibrate",
                                     "Measure this machine's network and cores into a machine file for `p3s simulate`");
  sub->add_option("-o,--output", a->output, "Machine file to write (share/doc/simulate-format.md)")
      ->required()
      ->check(output_path());
  sub->add_option("--cores-per-node", a->cores, "Cores of a node (default: those of the first rank's node)")
      ->check(integer_in(1, 1 << 20));
  sub->add_flag("--quick", a->quick, "Fewer repetitions (a rough file in a second or two)");
  sub->add_flag("--force", a->force, "Replace an existing machine file");
  sub->add_option("launcher", a->launcher,
                  "After --: how to start the MPI job (default: mpirun -np 2); ranks on two nodes measure the network")
      ->allow_extra_args();
  sub->callback([a] { run_calibrate(*a); });
}

}  // namespace p3s::cli
