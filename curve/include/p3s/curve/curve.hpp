// SPDX-License-Identifier: BSD-3-Clause
// The scaling curve (stage 6): predicted and measured run times over the process counts, speedup and parallel
// efficiency against a baseline, the recommended process count and the rule that chose it, and per phase where it
// stops scaling and why.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace p3s::curve {

/// One phase of a predicted point, over the run (weight x per-instance times).
struct PhasePoint {
  std::uint32_t id = 0;
  std::string calls;  ///< its MPI functions, as the replay result names them
  std::int64_t weight = 0;
  bool main_loop = true;
  double time_ns = 0;
  double compute_ns = 0;      ///< mean over ranks
  double compute_max_ns = 0;  ///< of the rank that computes most
  double mpi_ns = 0;
  double spread = 0;               ///< (slowest rank's instance time - fastest's) / the mean's
  std::optional<double> messages;  ///< messages sent by all ranks over the run, where known
  std::optional<double> bytes;     ///< their bytes
  bool repaired = false;           ///< predicted repaired: its calls as predicted did not match
};

/// What is known at one process count: a prediction (a replay's PET), a measured run, or both.
struct Point {
  std::int64_t n = 0;
  std::optional<double> predicted_ns;  ///< PET (MPI_Init and MPI_Finalize themselves apart)
  std::optional<double> measured_ns;   ///< the recorded run's time, measured alike
  std::string predicted_by;            ///< "replay", "range replay" or "simulation"
  std::string result;                  ///< the replay result file
  std::string run;                     ///< the measured run's signature
  std::string application;
  std::vector<PhasePoint> phases;  ///< the prediction's, else the measured run's
  double replay_core_s = 0;        ///< cores x wall time the prediction's replay took
};

/// Reads a replay result (p3s-replay -o), a signature (p3s analyze), a recorded run's directory holding one, or a
/// `p3s scale` directory (its results/, runs/ and checks/); what is at the same n is merged. @throws p3s::InputError
/// naming the file when it is none of them, or when two predictions or two runs are at the same n.
[[nodiscard]] std::vector<Point> read_points(const std::vector<std::filesystem::path>& inputs);

struct Options {
  std::optional<std::int64_t> baseline;  ///< the n speedup and efficiency are relative to (default: the smallest)
  double efficiency = 0.5;               ///< the efficiency rule's threshold
  double gain = 0.1;                     ///< the knee rule: a doubling of n that gains less than this share
  double minor_share = 0.05;             ///< a phase under this share of the time at every n is not named a limit
};

struct Row {
  std::int64_t n = 0;
  double time_ns = 0;  ///< the predicted time, else the measured one
  bool predicted = false;
  std::string predicted_by;  ///< the prediction's backend ("replay", "range replay", "simulation"); "" where none
  std::optional<double> predicted_ns;
  std::optional<double> measured_ns;
  std::optional<double> error;  ///< (predicted - measured) / measured
  double speedup = 0;
  double efficiency = 0;
  std::optional<double> gain;  ///< the share of time a doubling of n gains from here to the next row
};

struct Recommendation {
  std::int64_t n = 0;                   ///< the smaller of the two rules' n
  std::int64_t by_efficiency = 0;       ///< the largest n whose efficiency is at least the threshold
  std::optional<std::int64_t> knee;     ///< the first n beyond which a doubling gains less than the share
  std::optional<std::int64_t> fastest;  ///< the n of the shortest time
  std::string rule;                     ///< which rule chose n, in words
};

/// Where a phase stops scaling: the first n beyond which a doubling gains less than the share, and what grows.
struct PhaseLimit {
  std::uint32_t id = 0;
  std::string calls;
  std::vector<std::optional<double>> time_ns;  ///< per row (nullopt: the phase is not at that n)
  std::optional<std::int64_t> stops_at;
  std::string why;
  bool minor = false;  ///< under the minor share of the time at every n
};

struct Curve {
  Options options;
  std::int64_t baseline = 0;
  double baseline_ns = 0;
  std::vector<Row> rows;
  Recommendation recommendation;
  std::vector<PhaseLimit> phases;
  std::optional<std::size_t> first_to_stop;  ///< the phase (not minor) that stops scaling at the smallest n, in phases
  std::vector<std::string> inputs;
  std::vector<std::string> notes;
};

/// @throws p3s::InputError when there are no points, the baseline is none of them, or an option is out of range.
[[nodiscard]] Curve make_curve(const std::vector<Point>& points, const Options& options);

/// The table printed by `p3s curve`: rows, recommendation, phases.
[[nodiscard]] std::string curve_table(const Curve& c);
/// The curve as JSON (share/doc/curve-format.md) and CSV (one line per row).
[[nodiscard]] std::string curve_json(const Curve& c);
[[nodiscard]] std::string curve_csv(const Curve& c);

/// The points in Extra-P's JSON input format: parameter "p" (the process count), callpaths "run" and
/// "run->phase N", metrics time, time_predicted, time_measured, compute, mpi (seconds), visits, messages, bytes; one
/// value per point (p3s keeps one run and one prediction per n).
[[nodiscard]] std::string extrap_json(const std::vector<Point>& points);

/// Draws the curve with gnuplot into `dir`: time.svg/png (time versus n, log axes, the ideal line, measured and
/// predicted points, the error of points with both), speedup.svg/png, phases.svg/png (the phases' time stacked per
/// n). Each file is written whole. @throws p3s::Error when gnuplot is missing (saying how to install it) or fails.
void draw_plots(const Curve& c, const std::filesystem::path& dir, bool force);

}  // namespace p3s::curve
