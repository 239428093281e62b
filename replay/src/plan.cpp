// SPDX-License-Identifier: BSD-3-Clause
// What a rank replays, from a model (evaluated by the rank itself) or from an ST4NP directory (the rank's own
// lines, found through the rank index: no rank reads the whole trace).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "made_once.hpp"
#include "p3s/error.hpp"
#include "p3s/inputs.hpp"
#include "p3s/json_text.hpp"
#include "p3s/modeler/lt4nc.hpp"
#include "p3s/modeler/phase_check.hpp"
#include "p3s/modeler/predict.hpp"
#include "p3s/replay/replay.hpp"
#include "p3s/schema_version.hpp"

namespace p3s::replay {
namespace {

using nlohmann::json;

/// Whether a phase's calls ("MPI_Init MPI_Bcast") hold neither MPI_Init nor MPI_Finalize.
bool main_loop(const std::string& calls) {
  std::istringstream words(calls);
  for (std::string w; words >> w;) {
    if (detail::made_once(mpi::function_named(w))) return false;
  }
  return true;
}

/// Checks that the model predicts time (a model without compute-time laws would replay communication only), and
/// says which phases have no model of their bursts, which then take no time.
std::vector<std::string> require_time(const modeler::Model& model) {
  if (!modeler::has_time_laws(model)) {
    throw InputError(
        "the model has no compute-time laws (it was written by an earlier p3s); re-run `p3s model` on "
        "its signatures");
  }
  std::vector<std::string> notes;
  for (const modeler::PhaseModel& p : model.phases) {
    if (p.work.empty()) {
      notes.push_back("phase " + std::to_string(p.id) +
                      " has no model of its bursts (no law reproduces its calls): they take no time in the replay");
    }
  }
  return notes;
}

/// The weight at n of each phase: its instances over the order's stretches.
void weigh(ReplayPlan& plan) {
  for (const modeler::PhaseRun& e : plan.order) {
    plan.phases.at(e.phase).weight += static_cast<std::int64_t>(e.count);
  }
}

}  // namespace

namespace {

/// Refuses sizes no replay can send: not a number, below zero, or more than one MPI call carries in bytes (a count
/// is an int), which the replay would otherwise allocate, and zero-fill, on every rank. Likewise bursts: below zero,
/// not a number, or longer than any emulation (kMostBurstNs, past which a duration no longer fits a clock's count).
void check_sizes(const ReplayPlan& plan, std::int64_t rank) {
  constexpr double kMost = 2147483647.0;
  constexpr double kMostBurstNs = 1e16;  // 116 days
  const auto where = [&](const PlannedPhase& p, std::size_t c) {
    return "phase " + std::to_string(p.id) + ", rank " + std::to_string(rank) + ", call " + std::to_string(c) + " (" +
           (c < p.rank.calls.size() ? p.rank.calls[c].call : std::string("tail")) + ")";
  };
  const auto check_burst = [&](const PlannedPhase& p, std::size_t c, const std::optional<double>& ns) {
    if (!ns || (*ns >= 0 && *ns <= kMostBurstNs)) return;
    char text[96];
    std::snprintf(text, sizeof text, "%g ns", *ns);
    throw InputError(where(p, c) + " computes for " + text + " before it: no duration a replay can emulate");
  };
  for (const PlannedPhase& p : plan.phases) {
    for (std::size_t c = 0; c < p.rank.calls.size(); ++c) {
      check_burst(p, c, p.rank.calls[c].burst_ns);
      for (const modeler::PredictedAction& a : p.rank.calls[c].actions) {
        for (const double v : {a.bytes, a.block, a.bytes_received}) {
          if (v >= 0 && v <= kMost) continue;
          char text[96];
          std::snprintf(text, sizeof text, "%g bytes", v);
          throw InputError(where(p, c) + " moves " + text +
                           ", more than one MPI call carries (2^31 - 1 bytes) or no size at all");
        }
      }
    }
    check_burst(p, p.rank.calls.size(), p.rank.tail_ns);
  }
}

/// Refuses a phase order that replays nothing: no stretch, or no instance in any.
void check_order(const ReplayPlan& plan) {
  for (const modeler::PhaseRun& e : plan.order) {
    if (e.count > 0) return;
  }
  throw InputError("its phase order has no instance of any phase: there is nothing to replay");
}

}  // namespace

ReplayPlan plan_from_model(const modeler::Model& model, const std::string& path, std::int64_t n, std::int64_t rank,
                           modeler::OnInconsistency policy) {
  const modeler::ScopedDimsRule rule(model.dims_rule);
  ReplayPlan plan;
  plan.processes = n;
  plan.source = path;
  plan.application = model.application;
  plan.work_metric = model.work_metric;
  plan.dims_rule = model.dims_rule;
  plan.notes = require_time(model);
  if (const std::optional<std::string> threads = modeler::threads_note(model.limits)) plan.notes.push_back(*threads);
  std::vector<modeler::PhasePredictor> predictors;
  for (const modeler::PhaseModel& p : model.phases) predictors.emplace_back(p, n);
  // Every rank checks every phase (as `p3s predict` does), so that all refuse or repair alike without a word.
  const modeler::PredictionCheck check = modeler::check_prediction(model, predictors, n, policy);
  for (const std::string& note : check.notes()) plan.notes.push_back(note);
  for (std::size_t k = 0; k < model.phases.size(); ++k) {
    const modeler::PhaseModel& p = model.phases[k];
    modeler::PredictedRank own = predictors[k].rank(rank);
    check.phases[k].repair(own);
    plan.phases.push_back({p.id, p.calls, main_loop(p.calls), 0, std::move(own)});
    for (const modeler::GroupModel& g : p.groups) {
      if (g.role == modeler::Role::PointToPoint) plan.comms.push_back(&g.comm);
      for (const modeler::CollectiveEntry& c : g.collectives) plan.comms.push_back(&c.comm);
    }
  }
  plan.order = modeler::order_at(model, n);
  check_order(plan);
  weigh(plan);
  check_sizes(plan, rank);
  return plan;
}

namespace {

/// Rank r's bytes of ranks.jsonl, through the index.
std::string rank_text(const std::filesystem::path& dir, const json& header, std::int64_t n, std::int64_t r) {
  const std::filesystem::path index = dir / header.value("index_file", std::string("ranks.index"));
  require_regular_input(index, "rank index");
  std::ifstream in(index, std::ios::binary);
  std::error_code index_ec;
  const std::uintmax_t index_size = std::filesystem::file_size(index, index_ec);
  if (index_ec || index_size != static_cast<std::uintmax_t>(n + 1) * 8) {
    throw InputError("ST4NP '" + dir.string() + "': its rank index '" + index.string() + "' is " +
                     (index_ec ? "missing" : std::to_string(index_size) + " bytes") + ", not the " +
                     std::to_string((n + 1) * 8) + " of " + std::to_string(n) +
                     " ranks; write it again with `p3s predict -o`");
  }
  std::uint64_t offsets[2] = {0, 0};
  in.seekg(static_cast<std::streamoff>(r * 8));
  unsigned char bytes[16];
  if (!in.read(reinterpret_cast<char*>(bytes), sizeof bytes)) {
    throw InputError("ST4NP '" + dir.string() + "': its rank index '" + index.string() + "' has no entry for rank " +
                     std::to_string(r) + " of " + std::to_string(n) + "; write it again with `p3s predict -o`");
  }
  for (int k = 0; k < 2; ++k) {
    for (int b = 7; b >= 0; --b) offsets[k] = (offsets[k] << 8) | bytes[8 * k + b];
  }
  const std::filesystem::path lines = dir / header.at("ranks_file").get<std::string>();
  require_regular_input(lines, "rank file");
  std::ifstream text(lines, std::ios::binary);
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(lines, ec);
  // Every rank has a line per phase: an empty range (an index zeroed by damage) would replay nothing.
  if (!text || ec || offsets[1] <= offsets[0] || offsets[1] > size) {
    throw InputError("ST4NP '" + dir.string() + "': '" + lines.string() + "' does not hold rank " + std::to_string(r) +
                     "'s lines where its index says; write it again with `p3s predict -o`");
  }
  std::string out(offsets[1] - offsets[0], '\0');
  text.seekg(static_cast<std::streamoff>(offsets[0]));
  text.read(out.data(), static_cast<std::streamsize>(out.size()));
  return out;
}

/// The note of a phase that `p3s predict --repair` repaired, from the trace's record of it.
std::string repair_note(std::uint32_t id, const json& repair) {
  std::string flaws;
  for (const auto& [name, count] : repair.at("flaws").items()) {
    flaws += (flaws.empty() ? "" : ", ") + std::to_string(count.get<std::uint64_t>()) + " " + name;
  }
  return "phase " + std::to_string(id) + " was repaired when the trace was written (" + flaws +
         "): " + std::to_string(repair.value("dropped_actions", std::uint64_t{0})) + " actions dropped, " +
         std::to_string(repair.value("enlarged_receives", std::uint64_t{0})) + " receives enlarged, " +
         std::to_string(repair.value("completed_at_end", std::uint64_t{0})) + " requests completed at the end";
}

modeler::PredictedAction action_from(const json& j, const ReplayPlan& plan) {
  modeler::PredictedAction a;
  const auto kind = mpi::action_kind_named(j.at("kind").get<std::string>());
  if (!kind) throw InputError("unknown action kind '" + j.at("kind").get<std::string>() + "'");
  a.kind = *kind;
  // A wildcard receive names "any" source or tag (MPI_ANY_SOURCE, MPI_ANY_TAG).
  const auto wildcard = [&j](const char* field) {
    return j.contains(field) && j.at(field).is_string() && j.at(field).get<std::string>() == "any";
  };
  a.peer = wildcard("peer") ? modeler::kAnySource : j.value("peer", modeler::kProcNull);
  // A peer outside the job would become whatever MPI makes of that number (MPI_ANY_SOURCE in some libraries).
  if (a.peer != modeler::kAnySource && (a.peer < modeler::kProcNull || a.peer >= plan.processes)) {
    throw InputError("an action names peer " + std::to_string(a.peer) + ", outside the job's " +
                     std::to_string(plan.processes) + " ranks");
  }
  a.tag = wildcard("tag") ? modeler::kAnyTag : j.value("tag", std::uint32_t{0});
  a.bytes = j.value("bytes", 0.0);
  if (j.contains("collective")) {
    a.collective = mpi::collective_named(j.at("collective").get<std::string>()).value_or(mpi::Collective::Unknown);
    a.root = j.value("root", std::int64_t{-1});
    if (a.root < -1 || a.root >= plan.processes) {
      throw InputError("a collective names root " + std::to_string(a.root) + ", outside the job's " +
                       std::to_string(plan.processes) + " ranks");
    }
    a.bytes_received = j.value("bytes_received", 0.0);
    a.block = j.value("block", 0.0);
  }
  if (j.contains("comm")) {
    const auto id = j.at("comm").get<std::size_t>();
    if (id >= plan.comms.size()) throw InputError("an action names communicator " + std::to_string(id));
    a.comm = plan.comms[id];
    a.comm_size = j.value("comm_size", std::int64_t{0});
  }
  a.started = j.value("started", std::int32_t{-1});
  return a;
}

modeler::PredictedRank rank_from(const json& line, const ReplayPlan& plan) {
  modeler::PredictedRank r;
  r.rank = line.at("rank").get<std::int64_t>();
  for (const json& c : line.at("calls")) {
    modeler::PredictedCall call;
    call.call = c.at("call").get<std::string>();
    call.function = mpi::function_named(call.call);
    call.burst_work = c.value("burst_work", 0.0);
    if (!c.at("burst_ns").is_number()) throw InputError("a call has no burst_ns: the trace is not executable");
    call.burst_ns = c.at("burst_ns").get<double>();
    for (const json& a : c.at("actions")) call.actions.push_back(action_from(a, plan));
    // A call p3s does not know is made as nothing; one that moves data cannot be made as nothing.
    if (call.function == mpi::Function::Other && !call.actions.empty()) {
      throw InputError("call '" + call.call.substr(0, 60) + "' is no MPI function p3s knows, and it moves data");
    }
    r.calls.push_back(std::move(call));
  }
  r.tail_work = line.value("tail_work", 0.0);
  if (line.contains("tail_ns") && line.at("tail_ns").is_number()) r.tail_ns = line.at("tail_ns").get<double>();
  return r;
}

/// Refuses a header that is not an executable trace this p3s can replay: a logical trace, or one written without the
/// check that its calls match.
void check_st4np_header(const json& h, const std::filesystem::path& header_path) {
  const int version = checked_schema_version(
      h, header_path, {"header", 1, modeler::kLt4ncSchemaVersion, "replay it with the p3s that wrote it"});
  if (version < modeler::kFirstSt4npSchemaVersion || h.value("kind", std::string()) != "st4np") {
    throw InputError(
        "it is a logical trace without burst times (written with --logical, or by an earlier p3s); "
        "write the ST4NP with `p3s predict app.model --np N -o DIR`");
  }
  // `p3s predict` checks a trace before writing it; one that was not checked could hang the replay.
  if (version < modeler::kFirstCheckedLt4ncSchemaVersion || !h.contains("consistency")) {
    throw InputError(
        "it was written by an earlier p3s, which did not check that its messages, collectives and requests "
        "match; write it again with `p3s predict app.model --np N -o DIR`");
  }
}

/// The header's facts about the run: its ranks (those of the job, `n`), application, limits, work metric and the
/// rule of its MPI's dims.
void read_run_facts(const json& h, std::int64_t n, ReplayPlan& plan) {
  plan.processes = h.at("processes").get<std::int64_t>();
  if (plan.processes != n) {
    throw InputError("it is a trace of " + std::to_string(plan.processes) + " ranks, and the job has " +
                     std::to_string(n) + "; run p3s-replay with " + std::to_string(plan.processes) + " ranks");
  }
  plan.application = h.at("inputs").value("application", std::string());
  if (h.contains("limits") && h.at("limits").is_object()) {
    modeler::ModelLimits limits;
    limits.other_threads_share = h.at("limits").value("other_threads_share", 0.0);
    if (const std::optional<std::string> threads = modeler::threads_note(limits)) plan.notes.push_back(*threads);
  }
  plan.work_metric = h.value("work_metric", std::string());
  plan.dims_rule = modeler::dims_rule_named(h.value("dims_rule", std::string("openmpi"))).value_or(plan.dims_rule);
}

/// The header's communicators, owned by the plan.
void read_communicators(const json& h, ReplayPlan& plan) {
  for (const json& c : h.at("communicators")) {
    auto m = std::make_unique<modeler::CommModel>();
    m->kind = modeler::comm_kind_named(c.at("kind").get<std::string>()).value_or(modeler::CommModel::Kind::World);
    if (c.contains("param") && c.at("param").is_number()) {
      m->param = modeler::ExactLaw::constant(modeler::Rational::make(c.at("param").get<std::int64_t>()));
    }
    if (c.contains("created_by") && c.at("created_by").is_string()) {
      m->created_by = mpi::function_named(c.at("created_by").get<std::string>());
    }
    plan.comms.push_back(m.get());
    plan.owned.push_back(std::move(m));
  }
}

/// The header's phases, with a note for each repaired one. Returns their ids, in the plan's order.
std::vector<std::uint32_t> read_phases(const json& h, ReplayPlan& plan) {
  std::vector<std::uint32_t> ids;
  for (const json& p : h.at("phases")) {
    const auto id = p.at("id").get<std::uint32_t>();
    ids.push_back(id);
    const std::string calls = p.at("calls").get<std::string>();
    plan.phases.push_back({id, calls, main_loop(calls), 0, {}});
    if (p.contains("repair") && p.at("repair").is_object()) plan.notes.push_back(repair_note(id, p.at("repair")));
  }
  return ids;
}

/// The plan's index of the phase with id `id`.
std::uint32_t phase_index(const std::vector<std::uint32_t>& ids, std::uint32_t id) {
  const auto it = std::find(ids.begin(), ids.end(), id);
  if (it == ids.end()) throw InputError("the order names phase " + std::to_string(id) + ", which it lacks");
  return static_cast<std::uint32_t>(it - ids.begin());
}

/// The header's order of phases: each phase with its count of instances.
void read_order(const json& h, const std::vector<std::uint32_t>& ids, ReplayPlan& plan) {
  for (const json& e : h.at("order")) {
    // A count below zero would be read as 2^64 less it.
    if (!e.is_array() || e.size() != 2 || !e.at(0).is_number_unsigned() || !e.at(1).is_number_unsigned()) {
      throw InputError("its phase order holds " + json_excerpt(e) +
                       " where a phase and its count of instances (whole numbers >= 0) belong");
    }
    plan.order.push_back({phase_index(ids, e.at(0).get<std::uint32_t>()), e.at(1).get<std::uint64_t>()});
  }
}

/// The rank's own lines (`text`, one per phase): what it replays of each phase. Refuses a line of another rank and
/// a phase without its line.
void read_rank_lines(const std::string& text, const std::vector<std::uint32_t>& ids, std::int64_t rank,
                     ReplayPlan& plan) {
  std::istringstream lines(text);
  std::vector<bool> seen(plan.phases.size(), false);
  for (std::string line; std::getline(lines, line);) {
    const json j = parse_input(line);
    if (j.at("rank").get<std::int64_t>() != rank)
      throw InputError("its index points rank " + std::to_string(rank) + " at another's lines");
    const std::size_t phase = phase_index(ids, j.at("phase").get<std::uint32_t>());
    plan.phases.at(phase).rank = rank_from(j, plan);
    seen.at(phase) = true;
  }
  for (std::size_t p = 0; p < seen.size(); ++p) {
    if (!seen[p]) {
      throw InputError("its index leaves rank " + std::to_string(rank) + " without its line of phase " +
                       std::to_string(plan.phases[p].id) + "; write it again with `p3s predict -o`");
    }
  }
}

}  // namespace

ReplayPlan plan_from_st4np(const std::filesystem::path& dir, std::int64_t n, std::int64_t rank) {
  const std::filesystem::path header_path = dir / "lt4nc.json";
  require_regular_input(header_path, "ST4NP header");
  std::ifstream in(header_path);
  if (!in) {
    throw InputError("'" + dir.string() +
                     "' holds no ST4NP (no lt4nc.json): write one with `p3s predict app.model "
                     "--np N -o DIR`");
  }
  ReplayPlan plan;
  plan.source = dir.string();
  try {
    const json h = parse_input(in);
    check_st4np_header(h, header_path);
    read_run_facts(h, n, plan);
    read_communicators(h, plan);
    const std::vector<std::uint32_t> ids = read_phases(h, plan);
    read_order(h, ids, plan);
    check_order(plan);
    weigh(plan);
    read_rank_lines(rank_text(dir, h, n, rank), ids, rank, plan);
    check_sizes(plan, rank);
  } catch (const nlohmann::json::exception& e) {
    throw InputError("ST4NP '" + dir.string() + "' cannot be read (" + e.what() +
                     "); write it again with `p3s "
                     "predict -o`");
  } catch (const InputError& e) {
    const std::string what = e.what();
    throw InputError(what.rfind("ST4NP '", 0) == 0 ? what : "ST4NP '" + dir.string() + "': " + what);
  }
  return plan;
}

}  // namespace p3s::replay
