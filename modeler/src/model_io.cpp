// SPDX-License-Identifier: BSD-3-Clause
// The model file (share/doc/model-format.md): what prediction reads, as JSON written whole under a temporary name
// and renamed.
#include <charconv>
#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "p3s/error.hpp"
#include "p3s/inputs.hpp"
#include "p3s/json_text.hpp"
#include "p3s/modeler/model.hpp"
#include "p3s/schema_version.hpp"
#include "p3s/stable_name.hpp"
#include "p3s/whole_file.hpp"

namespace p3s::modeler {
namespace {

/// The whole number `text` spells, all of it; nullopt otherwise.
std::optional<std::int64_t> whole_number(const std::string& text) {
  std::int64_t v = 0;
  const char* end = text.data() + text.size();
  const auto [at, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || at != end || text.empty()) return std::nullopt;
  return v;
}

using nlohmann::json;

json comm_json(const CommModel& c) {
  json j{{"kind", comm_kind_name(c.kind)},
         {"equation", c.to_string()},
         {"color", c.color_rule()},
         {"key", c.key_rule()},
         {"size", c.size_rule()}};
  if (c.kind == CommModel::Kind::Block || c.kind == CommModel::Kind::Strided) j["param"] = to_json(c.param);
  if (c.created_by != mpi::Function::Other) j["created_by"] = mpi::name(c.created_by);
  return j;
}

CommModel comm_from(const json& j) {
  CommModel c;
  c.kind = parse_stable_name(j.at("kind").get<std::string>(), "communicator kind", comm_kind_named);
  if (j.contains("param")) c.param = exact_law_from_json(j.at("param"));
  if (j.contains("created_by")) c.created_by = mpi::function_named(j.at("created_by").get<std::string>());
  return c;
}

/// A measured group's runs: per run its n and per rank the calls' peers (point-to-point), or their number.
json measured_json(const MeasuredCalls& m, bool peers) {
  json runs = json::array();
  for (const MeasuredCalls::Run& run : m.runs) {
    json ranks = json::array();
    for (const MeasuredCalls::Calls& calls : run.ranks) ranks.push_back(peers ? json(calls) : json(calls.size()));
    runs.push_back(json{{"n", run.n}, {"ranks", std::move(ranks)}});
  }
  return runs;
}

MeasuredCalls measured_from(const json& j, bool peers) {
  MeasuredCalls m;
  for (const json& jr : j) {
    MeasuredCalls::Run run{jr.at("n").get<std::int64_t>(), {}};
    for (const json& calls : jr.at("ranks")) {
      run.ranks.push_back(peers ? calls.get<MeasuredCalls::Calls>()
                                : MeasuredCalls::Calls(calls.get<std::size_t>(), std::array<std::int64_t, 2>{-1, -1}));
    }
    m.runs.push_back(std::move(run));
  }
  return m;
}

json group_json(const GroupModel& g) {
  json j{{"call", g.call}, {"role", role_name(g.role)}};
  if (!g.measured.empty()) j["measured_calls"] = measured_json(g.measured, g.role == Role::PointToPoint);
  if (g.iterations) j["iterations"] = to_json(*g.iterations);
  if (g.role == Role::PointToPoint) {
    j["slots"] = g.slots;
    const auto slot = [](const std::optional<mpi::ActionKind>& k) { return k ? std::string(mpi::name(*k)) : ""; };
    j["slot_kinds"] = json::array({slot(g.slot_kinds[0]), slot(g.slot_kinds[1])});
    j["starts_requests"] = g.starts_requests;
    json pattern;
    to_json(pattern, g.pattern);
    j["pattern"] = std::move(pattern);
    j["comm"] = comm_json(g.comm);
    json traits = json::array();
    for (const auto& per_case : g.traits) {
      json terms = json::array();
      for (const TermTraits& t : per_case) {
        json slots = json::array();
        for (std::size_t s = 0; s < static_cast<std::size_t>(g.slots); ++s) {
          json js{{"bytes", to_json(t.bytes[s])},
                  {"bytes_step_factor", t.bytes_step_factor[s]},
                  {"tag", t.tag[s]},
                  {"tag_varies", t.tag_varies[s]}};
          if (t.face_axis[s] >= 0) js["face_axis"] = t.face_axis[s];
          if (t.face_margins[s] != std::array<int, 2>{0, 0}) js["face_margins"] = t.face_margins[s];
          if (t.rank_spread[s] > 0) js["rank_spread"] = t.rank_spread[s];
          if (t.block[s]) to_json(js["block"], *t.block[s]);
          slots.push_back(std::move(js));
        }
        terms.push_back(std::move(slots));
      }
      traits.push_back(std::move(terms));
    }
    j["traits"] = std::move(traits);
    return j;
  }
  j["count"] = to_json(g.count);
  if (g.per_request) j["per_request"] = true;
  if (g.per_batch) j["per_batch"] = true;
  if (g.role == Role::Completion) {
    json calls = json::array();
    for (const auto& refs : g.completes) {
      json jr = json::array();
      for (const RequestRef& r : refs) {
        jr.push_back(json{{"group", r.group}, {"case", r.pattern_case}, {"term", r.term}, {"index", r.index}});
      }
      calls.push_back(std::move(jr));
    }
    j["completes"] = std::move(calls);
  }
  if (g.role == Role::Collective) {
    json calls = json::array();
    for (const CollectiveEntry& c : g.collectives) {
      json jc{{"op", mpi::name(c.op)},
              {"comm", comm_json(c.comm)},
              {"bytes_root", to_json(c.bytes_root)},
              {"bytes_other", to_json(c.bytes_other)},
              {"received_root", to_json(c.received_root)},
              {"received_other", to_json(c.received_other)}};
      if (c.root) jc["root"] = to_json(*c.root);
      jc["per_member"] = c.per_member;
      if (c.exclusive) jc["exclusive"] = true;
      calls.push_back(std::move(jc));
    }
    j["collectives"] = std::move(calls);
  }
  return j;
}

GroupModel group_from(const json& j) {
  GroupModel g;
  g.call = j.at("call").get<std::string>();
  g.function = mpi::function_named(g.call);
  g.role = parse_stable_name(j.at("role").get<std::string>(), "role", role_named);
  if (j.contains("measured_calls")) g.measured = measured_from(j.at("measured_calls"), g.role == Role::PointToPoint);
  if (j.contains("iterations")) g.iterations = exact_law_from_json(j.at("iterations"));
  if (g.role == Role::PointToPoint) {
    g.slots = j.at("slots").get<int>();
    if (g.slots < 1 || g.slots > 2) throw InputError("a point-to-point group with other than 1 or 2 slots");
    for (std::size_t s = 0; s < 2; ++s) {
      const std::string text = j.at("slot_kinds").at(s).get<std::string>();
      if (!text.empty()) g.slot_kinds[s] = parse_stable_name(text, "slot kind", mpi::action_kind_named);
    }
    g.starts_requests = j.at("starts_requests").get<bool>();
    g.pattern = pattern_from_json(j.at("pattern"));
    if (j.contains("comm")) g.comm = comm_from(j.at("comm"));
    for (const json& per_case : j.at("traits")) {
      std::vector<TermTraits> terms;
      for (const json& slots : per_case) {
        TermTraits t;
        for (std::size_t s = 0; s < slots.size() && s < 2; ++s) {
          t.bytes[s] = regression_law_from_json(slots[s].at("bytes"));
          t.bytes_step_factor[s] = slots[s].at("bytes_step_factor").get<double>();
          t.tag[s] = slots[s].at("tag").get<std::int64_t>();
          t.tag_varies[s] = slots[s].at("tag_varies").get<bool>();
          t.face_axis[s] = slots[s].value("face_axis", -1);
          t.face_margins[s] = slots[s].value("face_margins", std::array<int, 2>{0, 0});
          if (t.face_margins[s][0] < 0 || t.face_margins[s][1] < 0) {
            throw InputError("a negative ghost margin of a face in a model");
          }
          t.rank_spread[s] = slots[s].value("rank_spread", 0.0);
          if (slots[s].contains("block")) t.block[s] = block_law_from_json(slots[s].at("block"));
          // Sizes per point of a face need the grid of the pattern case they belong to.
          const std::size_t c = g.traits.size();
          if (t.face_axis[s] != -1 && (t.face_axis[s] < 0 || !g.measured.empty() || c >= g.pattern.cases.size() ||
                                       t.face_axis[s] >= frame_dims(g.pattern.cases[c].program.frame))) {
            throw InputError("a face axis that is no dimension of its pattern's grid in a model");
          }
        }
        terms.push_back(t);
      }
      g.traits.push_back(std::move(terms));
    }
    return g;
  }
  g.count = exact_law_from_json(j.at("count"));
  g.per_request = j.value("per_request", false);
  g.per_batch = j.value("per_batch", false);
  for (const json& refs : j.value("completes", json::array())) {
    std::vector<RequestRef> out;
    for (const json& r : refs) {
      out.push_back({r.at("group").get<std::uint32_t>(), r.at("case").get<std::uint32_t>(),
                     r.at("term").get<std::uint32_t>(), r.at("index").get<std::int64_t>()});
    }
    g.completes.push_back(std::move(out));
  }
  for (const json& jc : j.value("collectives", json::array())) {
    CollectiveEntry c;
    c.op = parse_stable_name(jc.at("op").get<std::string>(), "collective", mpi::collective_named);
    c.comm = comm_from(jc.at("comm"));
    if (jc.contains("root")) c.root = exact_law_from_json(jc.at("root"));
    c.bytes_root = regression_law_from_json(jc.at("bytes_root"));
    c.bytes_other = regression_law_from_json(jc.at("bytes_other"));
    c.received_root = regression_law_from_json(jc.at("received_root"));
    c.received_other = regression_law_from_json(jc.at("received_other"));
    c.per_member = jc.at("per_member").get<std::array<bool, 4>>();
    // Models written before the key existed held no in-place scans, and an MPI_Exscan is always exclusive.
    c.exclusive = jc.value("exclusive", c.op == mpi::Collective::Exscan);
    g.collectives.push_back(std::move(c));
  }
  return g;
}

json burst_law_json(const BurstLaw& b) {
  return json{{"scaling", b.scaling}, {"shared_by_all", b.shared_by_all}, {"law", to_json(b.law)}};
}

BurstLaw burst_law_from(const json& j) {
  return {j.at("scaling").get<bool>(), j.value("shared_by_all", false), regression_law_from_json(j.at("law"))};
}

json far_point_json(const FarPoint& f) {
  return json{{"signature", f.signature},
              {"run_n", f.run_n},
              {"run_phase", f.run_phase},
              {"work_per_rank", f.work_per_rank},
              {"n", f.n},
              {"predicted_work", f.predicted_work},
              {"time_ns", f.time_ns},
              {"fitted_ns", f.fitted_ns},
              {"from_n", f.from_n},
              {"exponent", f.exponent}};
}

FarPoint far_point_from(const json& j) {
  FarPoint f;
  f.signature = j.at("signature").get<std::string>();
  f.run_n = j.at("run_n").get<std::int64_t>();
  f.run_phase = j.at("run_phase").get<std::uint32_t>();
  f.work_per_rank = j.at("work_per_rank").get<double>();
  f.n = j.at("n").get<std::int64_t>();
  f.predicted_work = j.at("predicted_work").get<double>();
  f.time_ns = j.at("time_ns").get<double>();
  f.fitted_ns = j.at("fitted_ns").get<double>();
  f.from_n = j.at("from_n").get<std::int64_t>();
  f.exponent = j.at("exponent").get<double>();
  return f;
}

json work_json(const WorkClass& w) {
  json bursts = json::array();
  for (const BurstModel& b : w.bursts) {
    json jb = burst_law_json(b.work);  // the work law's fields at the top level, as schema 2 wrote them
    jb["group"] = b.group;
    jb["case"] = b.pattern_case;
    jb["term"] = b.term;
    if (b.time) jb["time"] = burst_law_json(*b.time);
    bursts.push_back(std::move(jb));
  }
  json j{{"cases", w.cases},
         {"when", rank_predicate_json(w.when)},
         {"bursts", std::move(bursts)},
         {"largest_run_ranks", w.largest_run_ranks}};
  if (w.time_fit) j["time_fit"] = to_json(*w.time_fit);
  if (w.time_shared_by_all) j["time_shared_by_all"] = true;
  if (w.far_point) j["far_point"] = far_point_json(*w.far_point);
  return j;
}

WorkClass work_from(const json& j) {
  WorkClass w;
  w.cases = j.at("cases").get<std::vector<std::uint32_t>>();
  if (j.contains("when")) w.when = rank_predicate_from_json(j.at("when"));
  for (const json& jb : j.at("bursts")) {
    BurstModel& b = w.bursts.emplace_back();
    b.group = jb.at("group").get<std::int32_t>();
    b.pattern_case = jb.at("case").get<std::uint32_t>();
    b.term = jb.at("term").get<std::uint32_t>();
    b.work = burst_law_from(jb);
    if (jb.contains("time")) b.time = burst_law_from(jb.at("time"));
  }
  w.largest_run_ranks = j.at("largest_run_ranks").get<std::int64_t>();
  if (j.contains("time_fit")) w.time_fit = regression_law_from_json(j.at("time_fit"));
  w.time_shared_by_all = j.value("time_shared_by_all", false);
  if (j.contains("far_point")) w.far_point = far_point_from(j.at("far_point"));
  return w;
}

json phase_json(const PhaseModel& p) {
  json groups = json::array();
  for (const GroupModel& g : p.groups) groups.push_back(group_json(g));
  json work = json::array();
  for (const WorkClass& w : p.work) work.push_back(work_json(w));
  json j{{"id", p.id},
         {"calls", p.calls},
         {"relevant", p.relevant},
         {"weight_exact", p.weight_exact},
         {"groups", std::move(groups)},
         {"work", std::move(work)}};
  j["weight"] = p.weight_exact ? to_json(p.weight) : to_json(p.weight_fit);
  if (!p.weight_measured.empty()) {
    json measured = json::object();
    for (const auto& [n, w] : p.weight_measured) measured[std::to_string(n)] = w;
    j["weight_measured"] = std::move(measured);
  }
  if (p.grid_seen) {
    const GridSeen& s = *p.grid_seen;
    j["grid_seen"] = {
        {"frame", frame_name(s.frame)}, {"longest", s.longest}, {"longer_adds_calls", s.longer_adds_calls}};
    if (s.box[0] > 0) j["grid_seen"]["box"] = s.box;
    if (s.follows != std::array<int, 3>{-1, -1, -1}) j["grid_seen"]["follows"] = s.follows;
  }
  if (p.calls_left_out != 0) j["calls_left_out"] = p.calls_left_out;
  if (p.step) j["step"] = true;
  if (p.step_total) j["step_total"] = to_json(*p.step_total);
  if (!p.loops.empty()) {
    json loops = json::array();
    for (const PhaseLoop& l : p.loops) loops.push_back({{"first", l.first}, {"groups", l.groups}});
    j["loops"] = std::move(loops);
  }
  return j;
}

PhaseModel phase_from(const json& j) {
  PhaseModel p;
  p.id = j.at("id").get<std::uint32_t>();
  p.calls = j.at("calls").get<std::string>();
  p.relevant = j.at("relevant").get<bool>();
  p.weight_exact = j.at("weight_exact").get<bool>();
  if (p.weight_exact) {
    p.weight = exact_law_from_json(j.at("weight"));
  } else {
    p.weight_fit = regression_law_from_json(j.at("weight"));
  }
  if (j.contains("weight_measured")) {
    const json& measured = j.at("weight_measured");
    if (p.weight_exact || !measured.is_object() || measured.empty()) {
      throw InputError("phase " + std::to_string(p.id) + ": weight_measured is not an object of weights by n beside " +
                       "a regression");
    }
    for (const auto& [key, w] : measured.items()) {
      const std::optional<std::int64_t> n = whole_number(key);
      if (!n || *n < 1 || std::to_string(*n) != key || !w.is_number_integer() || w.get<std::int64_t>() < 0) {
        throw InputError("phase " + std::to_string(p.id) + ": a measured weight that is not a count at a process " +
                         "count (\"" + key + "\": " + w.dump() + ")");
      }
      p.weight_measured[*n] = w.get<std::int64_t>();
    }
  }
  if (j.contains("step")) {
    if (!j.at("step").is_boolean()) throw InputError("phase " + std::to_string(p.id) + ": step is not true or false");
    p.step = j.at("step").get<bool>();
  }
  if (j.contains("step_total")) p.step_total = exact_law_from_json(j.at("step_total"));
  for (const json& g : j.at("groups")) p.groups.push_back(group_from(g));
  for (const json& w : j.at("work")) p.work.push_back(work_from(w));
  p.calls_left_out = j.value("calls_left_out", std::uint64_t{0});
  if (p.calls_left_out != 0 && !p.groups.empty()) {
    throw InputError("phase " + std::to_string(p.id) + " leaves its calls out but has groups");
  }
  if (j.contains("grid_seen")) {
    const json& s = j.at("grid_seen");
    GridSeen seen;
    const std::string frame = s.at("frame").get<std::string>();
    const std::optional<Frame> f = frame_from_name(frame);
    if (!f || frame_dims(*f) < 2) {
      throw InputError("phase " + std::to_string(p.id) + ": grid_seen in a frame '" + frame + "' that is no grid");
    }
    seen.frame = *f;
    seen.longest = s.at("longest").get<std::array<std::int64_t, 3>>();
    seen.longer_adds_calls = s.at("longer_adds_calls").get<std::array<bool, 3>>();
    seen.box = s.value("box", std::array<std::int64_t, 3>{0, 0, 0});
    seen.follows = s.value("follows", std::array<int, 3>{-1, -1, -1});
    for (const int d : seen.follows) {
      if (d < -1 || d >= frame_dims(*f)) {
        throw InputError("phase " + std::to_string(p.id) + ": grid_seen follows a dimension " + std::to_string(d) +
                         " that its " + frame + " grid does not have");
      }
    }
    p.grid_seen = seen;
  }
  std::uint32_t next = 0;  // loops in group order, disjoint, inside the phase
  for (const json& l : j.value("loops", json::array())) {
    const PhaseLoop loop{l.at("first").get<std::uint32_t>(), l.at("groups").get<std::uint32_t>()};
    if (loop.first < next || loop.first >= p.groups.size() || loop.groups < 2 ||
        loop.groups > p.groups.size() - loop.first) {
      throw InputError("phase " + std::to_string(p.id) + " has a loop over groups that do not exist or overlap");
    }
    next = loop.first + loop.groups;
    p.loops.push_back(loop);
  }
  return p;
}

ModelLimits limits_from(const json& j) {
  ModelLimits l;
  l.threads_per_process = j.at("threads_per_process").get<int>();
  l.other_threads_share = j.value("other_threads_share", 0.0);
  if (!(l.other_threads_share >= 0 && l.other_threads_share <= 1)) {
    throw InputError("limits: 'other_threads_share' must be a share between 0 and 1");
  }
  l.order_from_n = j.at("order_from_n").get<std::int64_t>();
  l.fixed_count_phases = j.at("fixed_count_phases").get<std::vector<std::uint32_t>>();
  return l;
}

json fit_options_json(const FitOptions& o) {
  return json{{"expression_search",
               {{"max_size", o.search.max_size},
                {"constants", o.search.constants},
                {"n_terms", o.search.n_terms},
                {"max_stored", o.search.max_stored},
                {"max_candidates", o.search.max_candidates}}},
              {"evaluate_at", o.evaluate_at}};
}

FitOptions fit_options_from(const json& j) {
  FitOptions o;
  o.evaluate_at = j.value("evaluate_at", std::vector<std::int64_t>{});
  if (!j.contains("expression_search")) return o;
  const json& s = j.at("expression_search");
  o.search.max_size = s.at("max_size").get<int>();
  o.search.constants = s.at("constants").get<std::vector<std::int64_t>>();
  o.search.n_terms = s.at("n_terms").get<bool>();
  o.search.max_stored = s.at("max_stored").get<std::size_t>();
  o.search.max_candidates = s.at("max_candidates").get<std::size_t>();
  return o;
}

}  // namespace

constexpr NameTable<Role, 4> kRoleNames{{{{Role::PointToPoint, "p2p"},
                                          {Role::Completion, "completion"},
                                          {Role::Collective, "collective"},
                                          {Role::Local, "local"}}}};

std::string_view role_name(Role role) noexcept { return kRoleNames.name(role, "?"); }

std::optional<Role> role_named(std::string_view name) noexcept { return kRoleNames.value(name); }

json limits_json(const ModelLimits& l) {
  json j{{"threads_per_process", l.threads_per_process},
         {"order_from_n", l.order_from_n},
         {"fixed_count_phases", l.fixed_count_phases}};
  if (l.other_threads_share > 0) j["other_threads_share"] = l.other_threads_share;
  return j;
}

std::optional<std::string> threads_note(const ModelLimits& l) {
  if (!(l.other_threads_share > 0)) return std::nullopt;
  char share[32];
  std::snprintf(share, sizeof share, "%.1f %%", 100 * l.other_threads_share);
  return std::string("threads other than each process's first made ") + share +
         " of the fitted runs' MPI calls (MPI_THREAD_MULTIPLE); the model holds the first thread's only, so "
         "predictions and replays leave those calls and their time out";
}

void write_model(const Model& m, const std::filesystem::path& path) {
  json inputs = json::array();
  for (const Model::Input& in : m.inputs) {
    inputs.push_back(json{{"path", in.path}, {"n", in.n}, {"command", in.command}, {"date", in.date}});
  }
  json phases = json::array();
  for (const PhaseModel& p : m.phases) phases.push_back(phase_json(p));
  json order = json::array();
  for (const PhaseRun& e : m.order) order.push_back(json::array({e.phase, e.count}));
  json j{
      {"schema_version", m.schema_version},
      {"tool", m.tool},
      {"date", m.date},
      {"inputs",
       {{"signatures", std::move(inputs)}, {"application", m.application}, {"options", fit_options_json(m.options)}}},
      {"work_metric", m.work_metric},
      {"mpi_library", m.mpi_library},
      {"dims_rule", dims_rule_name(m.dims_rule)},
      {"phases", std::move(phases)},
      {"order", std::move(order)},
      {"limits", limits_json(m.limits)}};
  write_whole_file(path, json_text(j, 1) + '\n');
}

Model read_model(const std::filesystem::path& path) {
  require_regular_input(path, "model");
  std::ifstream in(path);
  if (!in) throw InputError("cannot read model '" + path.string() + "'; create it with `p3s model`");
  Model m;
  try {
    const json j = parse_input(in);
    m.schema_version = checked_schema_version(
        j, path, {"model", kOldestModelSchemaVersion, kModelSchemaVersion, "re-run `p3s model` on its signatures"});
    m.tool = j.at("tool").get<std::string>();
    m.date = j.value("date", std::string());
    m.work_metric = j.at("work_metric").get<std::string>();
    m.application = j.at("inputs").value("application", std::string());
    m.mpi_library = j.value("mpi_library", std::string());
    m.dims_rule = parse_stable_name(j.value("dims_rule", std::string("openmpi")), "dims rule", dims_rule_named);
    for (const json& i : j.at("inputs").at("signatures")) {
      m.inputs.push_back({i.at("path").get<std::string>(), i.at("n").get<std::int64_t>(),
                          i.value("command", std::string()), i.value("date", std::string())});
    }
    m.options = fit_options_from(j.at("inputs").value("options", json::object()));
    for (const json& p : j.at("phases")) m.phases.push_back(phase_from(p));
    link_time_step(m.phases);
    for (const json& e : j.at("order")) m.order.push_back({e.at(0).get<std::uint32_t>(), e.at(1).get<std::uint64_t>()});
    m.limits = limits_from(j.at("limits"));
  } catch (const nlohmann::json::exception& e) {
    throw InputError("model '" + path.string() + "' is not a p3s model (" + e.what() + "); re-run `p3s model`");
  } catch (const InputError& e) {
    const std::string what = e.what();
    throw InputError(what.rfind("model '", 0) == 0 ? what : "model '" + path.string() + "': " + what);
  }
  return m;
}

}  // namespace p3s::modeler
