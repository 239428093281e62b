// SPDX-License-Identifier: BSD-3-Clause
// The machine file and the SimGrid cluster written from it.
#include <cmath>
#include <sstream>

#include <nlohmann/json.hpp>

#include "json_file.hpp"
#include "p3s/error.hpp"
#include "p3s/simulate/simulate.hpp"
#include "p3s/table_text.hpp"
#include "p3s/whole_file.hpp"

namespace p3s::simulate {
namespace {

using nlohmann::json;

/// A positive finite number under `key`, or `fallback` when the file does not give it.
double positive(const json& j, const char* key, double fallback, const std::filesystem::path& path) {
  if (!j.contains(key)) return fallback;
  const json& v = j.at(key);
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0) {
    throw InputError("'" + path.string() + "': " + key + " must be a positive number, not " + v.dump());
  }
  return v.get<double>();
}

/// A number as SimGrid's platform files take it (no locale, full precision).
std::string xml_number(double v) {
  std::ostringstream s;
  s.imbue(std::locale::classic());
  s.precision(17);
  s << v;
  return s.str();
}

/// The factors under "factors": by ascending size from 0, each factor positive. @throws p3s::InputError.
std::vector<Factor> factors_of(const json& j, const std::filesystem::path& path) {
  std::vector<Factor> out;
  if (!j.contains("factors")) return out;
  const std::string where = "'" + path.string() + "': factors";
  if (!j.at("factors").is_array()) throw InputError(where + " must be a list of {bytes, latency, bandwidth}");
  for (const json& f : j.at("factors")) {
    if (!f.is_object() || !f.contains("bytes") || !f.at("bytes").is_number_integer()) {
      throw InputError(where + " must be a list of {bytes, latency, bandwidth}, not " + f.dump());
    }
    Factor x;
    x.bytes = f.at("bytes").get<std::int64_t>();
    x.latency = positive(f, "latency", 1, path);
    x.bandwidth = positive(f, "bandwidth", 1, path);
    if ((out.empty() && x.bytes != 0) || (!out.empty() && x.bytes <= out.back().bytes)) {
      throw InputError(where + " must start at 0 bytes and go up in size (" + f.dump() + ")");
    }
    out.push_back(x);
  }
  return out;
}

/// SMPI's piecewise factor ("0:1.2;1024:0.9"): the latency's or the bandwidth's.
std::string smpi_factors(const std::vector<Factor>& factors, double Factor::*which) {
  if (factors.empty()) return "0:1";
  std::string out;
  for (const Factor& f : factors) {
    out += (out.empty() ? "" : ";") + std::to_string(f.bytes) + ':' + xml_number(f.*which);
  }
  return out;
}

}  // namespace

Machine read_machine(const std::filesystem::path& path) {
  const json j = detail::json_file(path, "machine file", "give a machine file (p3s calibrate -o) or a platform .xml");
  if (!j.is_object() || j.value("schema_version", 0) != 1) {
    throw InputError("'" + path.string() + "' is no machine file of schema version 1");
  }
  Machine m;
  m.latency_s = positive(j, "latency_s", m.latency_s, path);
  m.bandwidth_Bps = positive(j, "bandwidth_Bps", m.bandwidth_Bps, path);
  m.loopback_latency_s = positive(j, "loopback_latency_s", m.loopback_latency_s, path);
  m.loopback_bandwidth_Bps = positive(j, "loopback_bandwidth_Bps", m.loopback_bandwidth_Bps, path);
  m.flops = positive(j, "flops", m.flops, path);
  const double cores = positive(j, "cores_per_node", 1, path);
  if (cores != std::floor(cores) || cores > 1e6) {
    throw InputError("'" + path.string() + "': cores_per_node must be a whole number of cores");
  }
  m.cores_per_node = static_cast<std::int64_t>(cores);
  m.factors = factors_of(j, path);
  m.measured_on = j.value("measured_on", "");
  m.date = j.value("date", "");
  return m;
}

Platform write_cluster(const Machine& m, std::int64_t n, const std::filesystem::path& dir) {
  const std::int64_t cores = std::max<std::int64_t>(m.cores_per_node, 1);
  const std::int64_t nodes = (n + cores - 1) / cores;
  Platform p;
  p.xml = dir / "platform.xml";
  p.hostfile = dir / "hosts";
  p.flops = m.flops;
  p.latency_factors = smpi_factors(m.factors, &Factor::latency);
  p.bandwidth_factors = smpi_factors(m.factors, &Factor::bandwidth);
  // A message between two nodes crosses their two private links: each has half the latency.
  std::string xml = "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n";
  xml += "<platform version=\"4.1\">\n  <cluster id=\"p3s\" prefix=\"node-\" suffix=\"\" radical=\"0-" +
         std::to_string(nodes - 1) + "\" speed=\"" + xml_number(m.flops) + "f\" core=\"" + std::to_string(cores) +
         "\" bw=\"" + xml_number(m.bandwidth_Bps) + "Bps\" lat=\"" + xml_number(m.latency_s / 2) +
         "s\" loopback_bw=\"" + xml_number(m.loopback_bandwidth_Bps) + "Bps\" loopback_lat=\"" +
         xml_number(m.loopback_latency_s) + "s\"/>\n</platform>\n";
  write_whole_file(p.xml, xml);
  std::string hosts;
  for (std::int64_t k = 0; k < nodes; ++k) {
    hosts += "node-" + std::to_string(k) + ':' + std::to_string(std::min(cores, n - k * cores)) + '\n';
  }
  write_whole_file(p.hostfile, hosts);
  p.description = "cluster of " + std::to_string(nodes) + " nodes x " + std::to_string(cores) + " cores, latency " +
                  time_text(m.latency_s * 1e9) + ", " + fmt("%.3g", m.bandwidth_Bps / 1e9) + " GB/s, " +
                  fmt("%.3g", m.flops / 1e9) + " Gflop/s per core" +
                  (m.factors.empty() ? "" : ", " + std::to_string(m.factors.size()) + " size ranges calibrated");
  return p;
}

}  // namespace p3s::simulate
