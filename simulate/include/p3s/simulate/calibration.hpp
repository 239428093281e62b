// SPDX-License-Identifier: BSD-3-Clause
// A machine file measured rather than written by hand (`p3s calibrate`): what p3s-calibrate measured on the user's
// machine (ping-pong times over message sizes inside a node and between two, collectives, a core's speed), and the
// machine the simulation sees fitted to it: nominal latency and bandwidth and SMPI's factors per size range.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "p3s/simulate/simulate.hpp"

namespace p3s::simulate {

/// One message size of a ping-pong: the median one-way time (half a round trip).
struct PingPong {
  std::int64_t bytes = 0;
  double seconds = 0;
};

/// A collective on all the job's ranks: the median time of one call (the slowest rank's), `bytes` per rank.
struct CollectiveCost {
  std::string operation;  ///< "MPI_Allreduce", ...
  std::int64_t bytes = 0;
  double seconds = 0;
};

/// What p3s-calibrate measured (its output file, share/doc/simulate-format.md).
struct Measurements {
  std::int64_t processes = 0;
  std::vector<std::string> hosts;  ///< of each rank
  std::int64_t cores = 0;          ///< online cores of the first rank's node
  std::string mpi_library;
  std::string date;
  std::vector<PingPong> inside_node;    ///< the first rank and another on its node (empty: none there)
  std::vector<PingPong> between_nodes;  ///< the first rank and the first rank on another node (empty: one node)
  std::vector<CollectiveCost> collectives;
  double flops = 0;  ///< a core's speed on a multiply-add loop
};

/// Reads p3s-calibrate's output. @throws p3s::InputError naming the file and what is wrong.
[[nodiscard]] Measurements read_measurements(const std::filesystem::path& path);

/// A link fitted to ping-pong times: the nominal latency (the smallest message's time less its bytes over the
/// bandwidth) and bandwidth (the slope of the two largest messages), and per range between two measured sizes the
/// factors that make latency x f_lat + s / (bandwidth x f_bw) pass through both ends.
struct LinkFit {
  double latency_s = 0;
  double bandwidth_Bps = 0;
  std::vector<Factor> factors;
  double max_error = 0;  ///< the largest relative error of the fitted line at a measured size
};

/// @throws p3s::InputError when there are fewer than three sizes or a time is not positive.
[[nodiscard]] LinkFit fit_link(std::vector<PingPong> points);

/// The machine the measurements describe: between nodes the fit of `between_nodes` (or, measured on one node, of
/// `inside_node`, said in `notes`), inside a node the fit of `inside_node`; SMPI's factors from the link between
/// nodes where measured; `cores_per_node` given (> 0) or the node's cores.
[[nodiscard]] Machine calibrated_machine(const Measurements& m, std::int64_t cores_per_node,
                                         std::vector<std::string>& notes);

/// Writes the machine file (schema version 1) with the measurements it was fitted to, whole or not at all.
void write_machine(const Machine& machine, const Measurements& m, const std::vector<std::string>& notes,
                   const std::filesystem::path& path);

}  // namespace p3s::simulate
