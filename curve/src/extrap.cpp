// SPDX-License-Identifier: BSD-3-Clause
// The points in Extra-P's JSON input format, so that Extra-P can fit its own models on p3s's phases.
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "p3s/curve/curve.hpp"
#include "p3s/json_text.hpp"

namespace p3s::curve {
namespace {

using nlohmann::ordered_json;

/// callpath -> metric -> [{point, values}], in the order first met.
class Measurements {
 public:
  void add(const std::string& callpath, const std::string& metric, std::int64_t n, double value) {
    ordered_json& list = root_[callpath][metric];
    list.push_back(ordered_json{{"point", {n}}, {"values", {value}}});
  }
  void add(const std::string& callpath, const std::string& metric, std::int64_t n, const std::optional<double>& v) {
    if (v) add(callpath, metric, n, *v);
  }
  [[nodiscard]] ordered_json take() { return std::move(root_); }

 private:
  ordered_json root_ = ordered_json::object();
};

}  // namespace

std::string extrap_json(const std::vector<Point>& points) {
  Measurements m;
  for (const Point& p : points) {
    const std::optional<double> predicted = p.predicted_ns ? std::optional(*p.predicted_ns / 1e9) : std::nullopt;
    const std::optional<double> measured = p.measured_ns ? std::optional(*p.measured_ns / 1e9) : std::nullopt;
    m.add("run", "time", p.n, predicted ? predicted : measured);
    m.add("run", "time_predicted", p.n, predicted);
    m.add("run", "time_measured", p.n, measured);
    for (const PhasePoint& ph : p.phases) {
      const std::string path = "run->phase " + std::to_string(ph.id);
      m.add(path, "time", p.n, ph.time_ns / 1e9);
      m.add(path, predicted ? "time_predicted" : "time_measured", p.n, ph.time_ns / 1e9);
      m.add(path, "compute", p.n, ph.compute_ns / 1e9);
      m.add(path, "mpi", p.n, ph.mpi_ns / 1e9);
      m.add(path, "visits", p.n, static_cast<double>(ph.weight));
      m.add(path, "messages", p.n, ph.messages);
      m.add(path, "bytes", p.n, ph.bytes);
    }
  }
  const ordered_json j{{"parameters", {"p"}}, {"measurements", m.take()}};
  return json_text(j, 1) + '\n';
}

}  // namespace p3s::curve
