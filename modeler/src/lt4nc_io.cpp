// SPDX-License-Identifier: BSD-3-Clause
// Writing the LT4NC (share/doc/lt4nc-format.md): a header file and the ranks' calls as JSON lines, streamed.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "p3s/error.hpp"
#include "p3s/json_text.hpp"
#include "p3s/modeler/lt4nc.hpp"
#include "p3s/modeler/predict.hpp"
#include "p3s/outputs.hpp"
#include "p3s/version.hpp"
#include "p3s/whole_file.hpp"

namespace p3s::modeler {
namespace {

using nlohmann::json;

/// The communicators the trace uses at n, numbered as they are met: two models that give the same members at n
/// and were created by the same call are one communicator.
class CommTable {
 public:
  explicit CommTable(std::int64_t n) : n_(n) {}

  std::size_t id_of(const CommModel& c) {
    for (std::size_t i = 0; i < comms_.size(); ++i) {
      if (comms_[i]->same_at(c, n_) && comms_[i]->created_by == c.created_by) return i;
    }
    comms_.push_back(&c);
    return comms_.size() - 1;
  }

  /// How a replay builds each one: MPI_Comm_split(MPI_COMM_WORLD, color, key) with the rules evaluated at n.
  [[nodiscard]] json to_json() const {
    json out = json::array();
    for (std::size_t i = 0; i < comms_.size(); ++i) {
      const CommModel& c = *comms_[i];
      json j{{"id", i},
             {"kind", comm_kind_name(c.kind)},
             {"color", c.color_rule(n_)},
             {"key", c.key_rule()},
             {"size", c.size_of(0, n_)},
             {"param", c.kind == CommModel::Kind::Block || c.kind == CommModel::Kind::Strided
                           ? json(count_value(c.param, n_))
                           : json()}};
      j["created_by"] = c.created_by == mpi::Function::Other ? json() : json(mpi::name(c.created_by));
      out.push_back(std::move(j));
    }
    return out;
  }

 private:
  std::int64_t n_;
  std::vector<const CommModel*> comms_;
};

json action_json(const PredictedAction& a, CommTable& comms) {
  json j{{"kind", mpi::name(a.kind)}};
  if (a.peer >= 0 || a.peer == kAnySource) {
    j["peer"] = a.peer == kAnySource ? json("any") : json(a.peer);
    j["tag"] = a.tag == kAnyTag ? json("any") : json(a.tag);
  }
  if (a.kind != mpi::ActionKind::IsendComplete) j["bytes"] = a.bytes;
  if (a.collective != mpi::Collective::None) {
    j["collective"] = mpi::name(a.collective);
    j["root"] = a.root;
    j["bytes_received"] = a.bytes_received;
    j["block"] = a.block;
  }
  if (a.comm != nullptr) {
    j["comm"] = comms.id_of(*a.comm);
    j["comm_size"] = a.comm_size;
  }
  if (a.started >= 0) j["started"] = a.started;
  return j;
}

json call_json(const PredictedCall& c, CommTable& comms) {
  json actions = json::array();
  for (const PredictedAction& a : c.actions) actions.push_back(action_json(a, comms));
  return json{{"call", c.call},
              {"burst_work", c.burst_work},
              {"burst_ns", c.burst_ns ? json(*c.burst_ns) : json()},
              {"actions", std::move(actions)}};
}

/// Rank r's lines, one per phase, as the check repaired them.
std::string rank_lines(const Model& model, const std::vector<PhasePredictor>& phases, const PredictionCheck& check,
                       std::int64_t r, CommTable& comms) {
  std::string text;
  for (std::size_t p = 0; p < phases.size(); ++p) {
    PredictedRank pr = phases[p].rank(r);
    check.phases[p].repair(pr);
    json calls = json::array();
    for (const PredictedCall& c : pr.calls) calls.push_back(call_json(c, comms));
    json line{{"rank", r}, {"phase", model.phases[p].id}, {"calls", std::move(calls)}};
    if (pr.tail_work > 0 || pr.tail_ns.value_or(0) > 0) {
      line["tail_work"] = pr.tail_work;
      line["tail_ns"] = pr.tail_ns ? json(*pr.tail_ns) : json();
    }
    text += json_text(line) + '\n';
  }
  return text;
}

/// Refuses to start an LT4NC that cannot fit in `dir`: its size estimated from the first, middle and last ranks.
/// Returns the estimate.
double check_room(const Model& model, const std::vector<PhasePredictor>& phases, const PredictionCheck& check,
                  std::int64_t n, const std::filesystem::path& dir, const char* kind) {
  CommTable scratch(n);
  double bytes = 0;
  const std::int64_t sample[] = {0, n / 2, n - 1};
  for (const std::int64_t r : sample) bytes += static_cast<double>(rank_lines(model, phases, check, r, scratch).size());
  const double need = bytes / 3 * static_cast<double>(n);
  std::error_code ec;
  const std::filesystem::space_info room = std::filesystem::space(dir, ec);
  if (ec || need * 1.05 < static_cast<double>(room.available)) return need;
  char need_gb[32];
  char free_gb[32];
  std::snprintf(need_gb, sizeof need_gb, "%.3g", need / 1e9);
  std::snprintf(free_gb, sizeof free_gb, "%.3g", static_cast<double>(room.available) / 1e9);
  throw Error(std::string("the ") + kind + " at n = " + std::to_string(n) + " needs about " + need_gb + " GB, and '" +
              dir.string() + "' has " + free_gb + " GB free; predict at a smaller --np or write it elsewhere");
}

/// Streams one line per rank and phase into `path` (through a temporary name); returns where each rank's lines
/// begin, and the end of the file last.
std::vector<std::uint64_t> write_ranks(const Model& model, const std::vector<PhasePredictor>& phases,
                                       const PredictionCheck& check, std::int64_t n, const std::filesystem::path& path,
                                       CommTable& comms) {
  StreamedFile file(path);
  std::vector<std::uint64_t> offsets;
  std::uint64_t at = 0;
  for (std::int64_t r = 0; r < n; ++r) {
    offsets.push_back(at);
    const std::string lines = rank_lines(model, phases, check, r, comms);
    file.stream() << lines;
    at += lines.size();
    file.check();
  }
  offsets.push_back(at);
  file.commit();
  return offsets;
}

/// The offsets as 64-bit little-endian integers: rank r reads bytes [offset r, offset r+1) of ranks.jsonl.
std::string index_bytes(const std::vector<std::uint64_t>& offsets) {
  std::string out;
  out.reserve(offsets.size() * 8);
  for (const std::uint64_t v : offsets) {
    for (int b = 0; b < 8; ++b) out.push_back(static_cast<char>((v >> (8 * b)) & 0xff));
  }
  return out;
}

/// The phase order of the largest fitted run at n: a phase that occurs in one stretch takes its weight at n,
/// the stretches of the others keep their counts (the model's limits say which).
json order_json(const Model& model, std::int64_t n) {
  json order = json::array();
  for (const PhaseRun& e : order_at(model, n)) order.push_back(json::array({e.phase, e.count}));
  return order;
}

/// What the check found in a phase and what its repair changed; null for a consistent phase.
json repair_json(const PhaseConsistency& check) {
  if (check.consistent()) return nullptr;
  json flaws = json::object();
  for (std::size_t f = 0; f < kFlawKinds; ++f) {
    if (check.flaws[f] != 0) flaws[std::string(flaw_name(static_cast<Flaw>(f)))] = check.flaws[f];
  }
  json first = json::array();
  for (const Finding& f : check.first) first.push_back(f.what);
  const std::array<std::uint64_t, 3> c = check.changes();
  return json{{"flaws", std::move(flaws)},
              {"first", std::move(first)},
              {"dropped_actions", c[0]},
              {"enlarged_receives", c[1]},
              {"completed_at_end", c[2]}};
}

/// The groups of a phase that are approximate at n: which group, its call, and the fitted run standing in.
json approximate_json(const PhaseModel& pm, std::int64_t n) {
  json out = json::array();
  for (const std::uint32_t g : pm.approximate_groups(n)) {
    const GroupModel& gm = pm.groups[g];
    out.push_back(json{{"group", g}, {"call", gm.call}, {"from_n", gm.measured.source(n).n}});
  }
  return out;
}

}  // namespace

std::vector<PhaseRun> order_at(const Model& model, std::int64_t n) {
  std::vector<PhaseRun> order;
  const std::vector<std::uint32_t>& fixed = model.limits.fixed_count_phases;
  for (const PhaseRun& e : model.order) {
    const bool keeps = std::find(fixed.begin(), fixed.end(), e.phase) != fixed.end();
    const PhaseModel& pm = model.phases.at(e.phase);
    order.push_back({e.phase, keeps ? e.count : static_cast<std::uint64_t>(pm.weight_at(n))});
  }
  return order;
}

PredictionCheck write_lt4nc(const Model& model, std::int64_t n, const std::filesystem::path& dir, bool executable,
                            OnInconsistency policy, const std::function<void(double)>& announce) {
  const ScopedDimsRule rule(model.dims_rule);
  if (executable && !has_time_laws(model)) {
    throw InputError(
        "the model has no compute-time laws (it was written by an earlier p3s); re-run `p3s model` on "
        "its signatures, or write the logical trace with --logical");
  }
  std::vector<PhasePredictor> phases;
  for (const PhaseModel& p : model.phases) phases.emplace_back(p, n);
  // Before anything is written: an inconsistent prediction leaves nothing behind.
  PredictionCheck check = check_prediction(model, phases, n, policy);

  // A directory made here goes again when the LT4NC cannot be written whole (a full disk).
  OutputDirectory made(dir);
  std::error_code ec;

  // The ranks first, the header last: a directory whose lt4nc.json exists is complete.
  const std::filesystem::path header = dir / "lt4nc.json";
  std::filesystem::remove(header, ec);
  const double estimate = check_room(model, phases, check, n, dir, executable ? "ST4NP" : "LT4NC");
  if (announce) announce(estimate);
  CommTable comms(n);
  const std::vector<std::uint64_t> offsets = write_ranks(model, phases, check, n, dir / "ranks.jsonl", comms);
  write_whole_file(dir / "ranks.index", index_bytes(offsets));

  const std::vector<std::int64_t> fitted_n = model.fitted_counts();
  json jphases = json::array();
  for (std::size_t p = 0; p < phases.size(); ++p) {
    const PhaseModel& pm = model.phases[p];
    jphases.push_back(json{{"id", pm.id},
                           {"calls", pm.calls},
                           {"relevant", pm.relevant},
                           {"weight", phases[p].weight()},
                           {"approximate_groups", approximate_json(pm, n)},
                           {"caveats", pm.caveats(n, fitted_n)},
                           {"repair", repair_json(check.phases[p])}});
  }
  json inputs = json::array();
  for (const Model::Input& in : model.inputs) inputs.push_back(json{{"path", in.path}, {"n", in.n}});
  const json h{{"schema_version", kLt4ncSchemaVersion},
               {"kind", executable ? "st4np" : "lt4nc"},
               {"tool", std::string("p3s ") + p3s::kVersion},
               {"inputs", {{"application", model.application}, {"model_runs", std::move(inputs)}}},
               {"processes", n},
               {"work_metric", model.work_metric},
               {"consistency", check.repaired() ? "repaired" : "checked"},
               {"phases", std::move(jphases)},
               {"order", order_json(model, n)},
               {"communicators", comms.to_json()},
               {"limits", limits_json(model.limits)},
               {"dims_rule", dims_rule_name(model.dims_rule)},
               {"ranks_file", "ranks.jsonl"},
               {"index_file", "ranks.index"}};
  write_whole_file(header, json_text(h, 1) + '\n');
  made.keep();
  return check;
}

}  // namespace p3s::modeler
