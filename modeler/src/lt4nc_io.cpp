// SPDX-License-Identifier: BSD-3-Clause
// Writing the LT4NC (share/doc/lt4nc-format.md): a header file and the ranks' calls as JSON lines, streamed.
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "p3s/error.hpp"
#include "p3s/modeler/predict.hpp"
#include "p3s/version.hpp"
#include "p3s/whole_file.hpp"

namespace p3s::modeler {
namespace {

using nlohmann::json;

json call_json(const PredictedCall& c) {
  json actions = json::array();
  for (const PredictedAction& a : c.actions) {
    json ja{{"kind", mpi::name(a.kind)}};
    if (a.peer >= 0) {
      ja["peer"] = a.peer;
      ja["tag"] = a.tag;
    }
    if (a.kind != mpi::ActionKind::IsendComplete) ja["bytes"] = a.bytes;
    if (a.collective != mpi::Collective::None) {
      ja["collective"] = mpi::name(a.collective);
      ja["root"] = a.root;
      ja["bytes_received"] = a.bytes_received;
      ja["comm"] = a.comm;
      ja["comm_size"] = a.comm_size;
    }
    if (a.started >= 0) ja["started"] = a.started;
    actions.push_back(std::move(ja));
  }
  return json{{"call", c.call}, {"burst_work", c.burst_work}, {"actions", std::move(actions)}};
}

void replace(const std::filesystem::path& tmp, const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw Error("cannot move '" + tmp.string() + "' to '" + path.string() + "': " + ec.message());
}

}  // namespace

void write_lt4nc(const Model& model, std::int64_t n, const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error("cannot create '" + dir.string() + "': " + ec.message());
  std::vector<PhasePredictor> phases;
  for (const PhaseModel& p : model.phases) phases.emplace_back(p, n);

  // The ranks first, the header last: a directory whose lt4nc.json exists is complete.
  const std::filesystem::path header = dir / "lt4nc.json";
  std::filesystem::remove(header, ec);
  const std::filesystem::path ranks = dir / "ranks.jsonl";
  const std::filesystem::path ranks_tmp = dir / "ranks.jsonl.tmp";
  {
    std::ofstream out(ranks_tmp);
    if (!out) throw Error("cannot create '" + ranks_tmp.string() + "'; check the directory is writable");
    for (std::int64_t r = 0; r < n; ++r) {
      for (std::size_t p = 0; p < phases.size(); ++p) {
        const PredictedRank pr = phases[p].rank(r);
        json calls = json::array();
        for (const PredictedCall& c : pr.calls) calls.push_back(call_json(c));
        json line{{"rank", r}, {"phase", model.phases[p].id}, {"calls", std::move(calls)}};
        if (pr.tail_work > 0) line["tail_work"] = pr.tail_work;
        out << line.dump() << '\n';
      }
      if (!out) throw Error("writing '" + ranks_tmp.string() + "' failed; check free space");
    }
  }
  replace(ranks_tmp, ranks);

  json jphases = json::array();
  for (std::size_t p = 0; p < phases.size(); ++p) {
    const PhaseModel& pm = model.phases[p];
    jphases.push_back(
        json{{"id", pm.id}, {"calls", pm.calls}, {"relevant", pm.relevant}, {"weight", phases[p].weight()}});
  }
  // The phase order of the largest fitted run, with each phase that occurs in one stretch of it taking its
  // weight at n; phases that occur in several stretches keep their counts.
  std::map<std::uint32_t, int> stretches;
  for (const analyzer::PhaseRunEntry& e : model.order) ++stretches[e.phase];
  json order = json::array();
  for (const analyzer::PhaseRunEntry& e : model.order) {
    const std::int64_t count = stretches[e.phase] == 1 ? phases[e.phase].weight() : static_cast<std::int64_t>(e.count);
    order.push_back(json::array({e.phase, count}));
  }
  json inputs = json::array();
  for (const Model::Input& in : model.inputs) inputs.push_back(json{{"path", in.path}, {"n", in.n}});
  const json h{{"schema_version", 1},
               {"tool", std::string("p3s ") + p3s::kVersion},
               {"inputs", {{"application", model.application}, {"model_runs", std::move(inputs)}}},
               {"processes", n},
               {"work_metric", model.work_metric},
               {"phases", std::move(jphases)},
               {"order", std::move(order)},
               {"ranks_file", "ranks.jsonl"}};
  write_whole_file(header, h.dump(1) + '\n');
}

}  // namespace p3s::modeler
