// SPDX-License-Identifier: BSD-3-Clause
// p3s-calibrate's measurements read back, the links fitted to them, and the machine file written from the fit.
#include "p3s/simulate/calibration.hpp"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "json_file.hpp"
#include "p3s/error.hpp"
#include "p3s/json_text.hpp"
#include "p3s/version.hpp"
#include "p3s/whole_file.hpp"

namespace p3s::simulate {
namespace {

using nlohmann::json;

/// A field of the measurements, of the type asked; the error names the file and the key.
template <typename T>
T field(const json& j, const char* key, const std::filesystem::path& path) {
  try {
    return j.at(key).get<T>();
  } catch (const json::exception&) {
    throw InputError("'" + path.string() + "' is no output of p3s-calibrate: '" + key + "' is missing or wrong");
  }
}

std::vector<PingPong> curve_of(const json& j, const char* key, const std::filesystem::path& path) {
  std::vector<PingPong> out;
  if (!j.contains(key)) return out;
  if (!j.at(key).is_array()) throw InputError("'" + path.string() + "': " + key + " is no list of sizes and times");
  for (const json& p : j.at(key)) {
    out.push_back(PingPong{field<std::int64_t>(p, "bytes", path), field<double>(p, "seconds", path)});
  }
  return out;
}

json curve_json(const std::vector<PingPong>& points) {
  json out = json::array();
  for (const PingPong& p : points) out.push_back({{"bytes", p.bytes}, {"seconds", p.seconds}});
  return out;
}

/// The line through two measured points (intercept, slope), the slope at least `min_slope`; where the intercept
/// would fall under a thousandth of `latency` (noise, or a larger message that costs more than the line says), the
/// line from there through the first point, so that it still gives the time of the range's own size.
std::pair<double, double> segment(const PingPong& a, const PingPong& b, double min_slope, double latency) {
  const double slope = std::max((b.seconds - a.seconds) / static_cast<double>(b.bytes - a.bytes), min_slope);
  const double floor = 1e-3 * latency;
  const double intercept = a.seconds - slope * static_cast<double>(a.bytes);
  if (intercept >= floor || a.bytes == 0) return {std::max(intercept, floor), slope};
  return {floor, (a.seconds - floor) / static_cast<double>(a.bytes)};
}

}  // namespace

Measurements read_measurements(const std::filesystem::path& path) {
  const json j = detail::json_file(path, "measurements", "p3s-calibrate did not write it whole");
  if (!j.is_object()) throw InputError("'" + path.string() + "' is no output of p3s-calibrate");
  Measurements m;
  m.processes = field<std::int64_t>(j, "processes", path);
  m.hosts = field<std::vector<std::string>>(j, "hosts", path);
  m.cores = field<std::int64_t>(j, "cores", path);
  m.mpi_library = field<std::string>(j, "mpi_library", path);
  m.date = field<std::string>(j, "date", path);
  m.flops = field<double>(j, "flops", path);
  m.inside_node = curve_of(j, "inside_node", path);
  m.between_nodes = curve_of(j, "between_nodes", path);
  const json none = json::array();
  for (const json& c : j.contains("collectives") && j.at("collectives").is_array() ? j.at("collectives") : none) {
    m.collectives.push_back(CollectiveCost{field<std::string>(c, "operation", path),
                                           field<std::int64_t>(c, "bytes", path), field<double>(c, "seconds", path)});
  }
  return m;
}

LinkFit fit_link(std::vector<PingPong> points) {
  std::sort(points.begin(), points.end(), [](const PingPong& a, const PingPong& b) { return a.bytes < b.bytes; });
  points.erase(std::unique(points.begin(), points.end(),
                           [](const PingPong& a, const PingPong& b) { return a.bytes == b.bytes; }),
               points.end());
  if (points.size() < 3) throw InputError("a ping-pong of fewer than three message sizes cannot be fitted");
  for (const PingPong& p : points) {
    if (!(p.seconds > 0) || !std::isfinite(p.seconds) || p.bytes < 0) {
      throw InputError("a ping-pong time is not a positive number of seconds (" + std::to_string(p.bytes) + " bytes)");
    }
  }
  LinkFit fit;
  const PingPong& last = points.back();
  const PingPong& before = points[points.size() - 2];
  const double slope = (last.seconds - before.seconds) / static_cast<double>(last.bytes - before.bytes);
  fit.bandwidth_Bps = slope > 0 ? 1 / slope : static_cast<double>(last.bytes) / last.seconds;
  fit.latency_s = std::max(points.front().seconds - static_cast<double>(points.front().bytes) / fit.bandwidth_Bps,
                           1e-3 * points.front().seconds);
  // Factors from each measured size up to the next; the last range goes on from the largest but one.
  const double min_slope = 1e-3 / fit.bandwidth_Bps;
  for (std::size_t i = 0; i + 1 < points.size(); ++i) {
    const auto [intercept, per_byte] = segment(points[i], points[i + 1], min_slope, fit.latency_s);
    fit.factors.push_back(
        Factor{i == 0 ? 0 : points[i].bytes, intercept / fit.latency_s, 1 / (per_byte * fit.bandwidth_Bps)});
  }
  for (std::size_t i = 0; i < points.size(); ++i) {
    const Factor& f = fit.factors[std::min(i, fit.factors.size() - 1)];
    const double b = static_cast<double>(points[i].bytes);
    const double model = fit.latency_s * f.latency + b / (fit.bandwidth_Bps * f.bandwidth);
    fit.max_error = std::max(fit.max_error, std::abs(model - points[i].seconds) / points[i].seconds);
  }
  return fit;
}

Machine calibrated_machine(const Measurements& m, std::int64_t cores_per_node, std::vector<std::string>& notes) {
  if (m.inside_node.empty() && m.between_nodes.empty()) {
    throw InputError("the calibration measured no ping-pong: run it on two ranks or more");
  }
  Machine out;
  const LinkFit network = fit_link(m.between_nodes.empty() ? m.inside_node : m.between_nodes);
  out.latency_s = network.latency_s;
  out.bandwidth_Bps = network.bandwidth_Bps;
  out.factors = network.factors;
  if (m.between_nodes.empty()) {
    notes.push_back(
        "measured inside one node only: the network between nodes is taken as alike; calibrate with "
        "ranks on two nodes for it");
  }
  const LinkFit node = m.inside_node.empty() ? network : fit_link(m.inside_node);
  if (m.inside_node.empty()) notes.push_back("one rank per node: inside a node is taken as between nodes");
  out.loopback_latency_s = node.latency_s;
  out.loopback_bandwidth_Bps = node.bandwidth_Bps;
  out.flops = m.flops > 0 ? m.flops : out.flops;
  out.cores_per_node = cores_per_node > 0 ? cores_per_node : std::max<std::int64_t>(m.cores, 1);
  out.measured_on = (m.hosts.empty() ? std::string("?") : m.hosts.front()) + " (" + std::to_string(m.processes) +
                    " ranks, " + m.mpi_library + ")";
  out.date = m.date;
  return out;
}

void write_machine(const Machine& machine, const Measurements& m, const std::vector<std::string>& notes,
                   const std::filesystem::path& path) {
  json factors = json::array();
  for (const Factor& f : machine.factors) {
    factors.push_back({{"bytes", f.bytes}, {"latency", f.latency}, {"bandwidth", f.bandwidth}});
  }
  json collectives = json::array();
  for (const CollectiveCost& c : m.collectives) {
    collectives.push_back({{"operation", c.operation}, {"bytes", c.bytes}, {"seconds", c.seconds}});
  }
  const json out = {{"schema_version", 1},
                    {"tool", std::string("p3s calibrate ") + kVersion},
                    {"latency_s", machine.latency_s},
                    {"bandwidth_Bps", machine.bandwidth_Bps},
                    {"loopback_latency_s", machine.loopback_latency_s},
                    {"loopback_bandwidth_Bps", machine.loopback_bandwidth_Bps},
                    {"flops", machine.flops},
                    {"cores_per_node", machine.cores_per_node},
                    {"factors", factors},
                    {"measured_on", machine.measured_on},
                    {"date", machine.date},
                    {"notes", notes},
                    {"measurements",
                     {{"processes", m.processes},
                      {"hosts", m.hosts},
                      {"inside_node", curve_json(m.inside_node)},
                      {"between_nodes", curve_json(m.between_nodes)},
                      {"collectives", collectives}}}};
  write_whole_file(path, json_text(out, 1) + '\n');
}

}  // namespace p3s::simulate
