// SPDX-License-Identifier: BSD-3-Clause
// Predicting on a machine one does not have (stage 5 without the target): the model's prediction at n written in
// SimGrid's time-independent format and replayed by SMPI on a platform described by a machine file (what
// `p3s calibrate` measures) or a SimGrid platform; a few instances of each phase are simulated and multiplied by
// its weight, as the replay measures them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "p3s/modeler/model.hpp"
#include "p3s/modeler/phase_check.hpp"
#include "p3s/modeler/st4np.hpp"
#include "p3s/modeler/tit_trace.hpp"

namespace p3s::simulate {

/// SMPI's correction of the nominal latency and bandwidth for messages of `bytes` or more (up to the next factor's
/// size): a message of s bytes there takes latency x `latency` + s / (bandwidth x `bandwidth`). What a calibration
/// fits where one line (latency + size / bandwidth) does not fit every message size (eager and rendezvous
/// protocols, caches).
struct Factor {
  std::int64_t bytes = 0;
  double latency = 1;
  double bandwidth = 1;
  friend bool operator==(const Factor&, const Factor&) = default;
};

/// A machine as the simulation sees it: a cluster of nodes of `cores_per_node` cores joined by one network.
struct Machine {
  double latency_s = 1e-6;        ///< between nodes
  double bandwidth_Bps = 1.25e9;  ///< between nodes, bytes per second
  double loopback_latency_s = 5e-7;
  double loopback_bandwidth_Bps = 1e10;  ///< inside a node
  double flops = 1e9;                    ///< speed of a core (flop/s): a burst of t seconds computes t x flops
  std::int64_t cores_per_node = 1;
  std::vector<Factor> factors;  ///< by ascending size, the first at 0 bytes; none: the nominal values at every size
  std::string measured_on;      ///< where and when it was measured ("" for a description written by hand)
  std::string date;
};

/// Reads a machine file (share/doc/simulate-format.md). @throws p3s::InputError naming the file and the key.
[[nodiscard]] Machine read_machine(const std::filesystem::path& path);

/// What smpirun runs on: a platform file and the hosts the ranks go to, in rank order.
struct Platform {
  std::filesystem::path xml;
  std::filesystem::path hostfile;
  double flops = 1e9;                     ///< the hosts' core speed the compute actions are written for
  std::string latency_factors = "0:1";    ///< SMPI's smpi/lat-factor ("bytes:factor;..."), from the machine's factors
  std::string bandwidth_factors = "0:1";  ///< SMPI's smpi/bw-factor
  std::string description;                ///< one line: "cluster of 4 nodes x 16 cores, 1 us, 10 GB/s, 1 Gflop/s"
};

/// Writes the cluster of ceil(n / cores) nodes of `machine` into `dir` (platform.xml, hosts: consecutive ranks on a
/// node, as mpirun places them by default).
[[nodiscard]] Platform write_cluster(const Machine& machine, std::int64_t n, const std::filesystem::path& dir);

struct Options {
  int instances = 3;  ///< instances of a repeated phase simulated, after the first
  modeler::OnInconsistency policy = modeler::OnInconsistency::Refuse;
  std::filesystem::path work;  ///< where the traces and SMPI's logs go (kept)
  std::string smpirun = "smpirun";
};

/// One phase's simulated time and what its instance holds.
struct PhaseResult {
  std::uint32_t id = 0;
  std::string calls;
  std::int64_t weight = 0;
  bool main_loop = true;
  bool simulated = false;  ///< false for a phase with no instance at n
  int instances = 0;       ///< instances simulated
  double time_ns = 0;      ///< per instance
  modeler::TitPhaseStats stats;
};

struct Result {
  std::int64_t processes = 0;
  std::string application;  ///< as the model or trace names it
  std::string work_metric;
  std::vector<PhaseResult> phases;
  double pet_ns = 0;   ///< sum of weight x time
  double main_ns = 0;  ///< the same over the main-loop phases
  double wall_ns = 0;  ///< what the simulations took here
  std::vector<std::string> notes;
};

/// Simulates the model at n on the platform: per phase, the first instance alone and then with `instances` more,
/// the difference giving the time per instance (the first carries the start). @throws p3s::InputError when smpirun
/// is not installed (saying how to install it); p3s::Error when a simulation fails (naming its log).
[[nodiscard]] Result simulate(const modeler::Model& model, std::int64_t n, const Platform& platform,
                              const Options& options);
/// Simulates an executable trace (ST4NP: `p3s predict -o DIR`, or written by hand) at its own n, phase by phase as
/// above, with the weights its order gives. @throws p3s::InputError as above, and when a rank's lines are damaged.
[[nodiscard]] Result simulate(const modeler::St4np& trace, const Platform& platform, const Options& options);

/// Writes result.json (share/doc/simulate-format.md; the keys of p3s-replay's result where they mean the same),
/// whole or not at all.
void write_result(const Result& result, const std::string& source, const Platform& platform, const std::string& command,
                  const std::filesystem::path& path);
/// The readable summary: per phase weight, time per instance, compute and MPI time; PET.
[[nodiscard]] std::string result_summary(const Result& result);

}  // namespace p3s::simulate
