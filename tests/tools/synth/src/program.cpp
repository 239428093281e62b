// SPDX-License-Identifier: BSD-3-Clause
// PROGRAM.json -> Program: strict parsing (unknown ops and fields are errors) with one-line messages.
#include "p3s/synth/program.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <set>
#include <sstream>
#include <utility>

#include "p3s/error.hpp"

namespace p3s::synth {
namespace {

using nlohmann::json;

constexpr const char* kReadme = "see tests/tools/synth/README.md";

/// What the parser needs everywhere: the file name for messages and the communicator names.
struct Context {
  std::string source;
  std::vector<std::string> comm_names;  ///< index 0 = "world"
};

[[noreturn]] void fail(const Context& cx, const std::string& where, const std::string& why) {
  throw InputError("program '" + cx.source + "'" + (where.empty() ? "" : ", " + where) + ": " + why);
}

std::string join(std::initializer_list<const char*> names) {
  std::string s;
  for (const char* n : names) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

/// Reads one JSON object's fields and rejects any field it was not asked about (typos fail loudly).
class Fields {
 public:
  /// `path` locates the object ("body[2].body[0]"); `label` says what it is in messages ("halo").
  Fields(const Context& cx, const json& j, std::string path, const std::string& label = "")
      : cx_(cx), j_(j), path_(std::move(path)), where_(label.empty() ? path_ : path_ + " (" + label + ")") {
    if (!j_.is_object()) fail(cx_, where_, "expected an object, found " + std::string(j_.type_name()));
    // Documentation fields are allowed everywhere.
    used_.insert("comment");
    used_.insert("name");
  }

  [[nodiscard]] const std::string& where() const { return where_; }
  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] bool has(const char* key) const { return j_.contains(key); }

  const json& required(const char* key, const char* what) {
    used_.insert(key);
    if (!j_.contains(key)) fail(cx_, where_, std::string("missing field \"") + key + "\" (" + what + "); " + kReadme);
    return j_.at(key);
  }

  const json* optional(const char* key) {
    used_.insert(key);
    return j_.contains(key) ? &j_.at(key) : nullptr;
  }

  double number(const json& v, const char* key, double min) const {
    if (!v.is_number()) fail(cx_, where_, std::string("field \"") + key + "\" must be a number");
    const double d = v.get<double>();
    if (!std::isfinite(d) || d < min) {
      fail(cx_, where_, std::string("field \"") + key + "\" must be a number >= " + format(min) + ", not " + v.dump());
    }
    return d;
  }

  double number_or(const char* key, double fallback, double min) {
    const json* v = optional(key);
    return v == nullptr ? fallback : number(*v, key, min);
  }

  std::int64_t integer(const json& v, const char* key, std::int64_t min, std::int64_t max) const {
    if (!v.is_number_integer() || v.get<std::int64_t>() < min || v.get<std::int64_t>() > max) {
      fail(cx_, where_,
           std::string("field \"") + key + "\" must be an integer in [" + std::to_string(min) + ", " +
               std::to_string(max) + "], not " + v.dump());
    }
    return v.get<std::int64_t>();
  }

  std::int64_t integer_or(const char* key, std::int64_t fallback, std::int64_t min, std::int64_t max) {
    const json* v = optional(key);
    return v == nullptr ? fallback : integer(*v, key, min, max);
  }

  bool boolean_or(const char* key, bool fallback) {
    const json* v = optional(key);
    if (v == nullptr) return fallback;
    if (!v->is_boolean()) fail(cx_, where_, std::string("field \"") + key + "\" must be true or false");
    return v->get<bool>();
  }

  std::string choice_or(const char* key, const char* fallback, std::initializer_list<const char*> allowed) {
    const json* v = optional(key);
    if (v == nullptr) return fallback;
    if (v->is_string()) {
      for (const char* a : allowed) {
        if (v->get<std::string>() == a) return a;
      }
    }
    fail(cx_, where_, std::string("field \"") + key + "\" must be one of " + join(allowed) + ", not " + v->dump());
  }

  /// Rejects the fields nobody asked for.
  void finish() const {
    for (const auto& [key, value] : j_.items()) {
      if (!used_.contains(key)) {
        std::string known;
        for (const std::string& k : used_) known += (known.empty() ? "" : ", ") + k;
        fail(cx_, where_, "unknown field \"" + key + "\" (known here: " + known + ")");
      }
    }
  }

  [[noreturn]] void error(const std::string& why) const { fail(cx_, where_, why); }
  [[nodiscard]] const Context& context() const { return cx_; }

 private:
  static std::string format(double d) {
    std::ostringstream os;
    os << d;
    return os.str();
  }
  const Context& cx_;
  const json& j_;
  std::string path_;
  std::string where_;
  std::set<std::string> used_;
};

Noise parse_noise(Fields& f) {
  const json* v = f.optional("noise");
  if (v == nullptr) return {};
  if (v->is_number()) return Noise{NoiseDist::Uniform, f.number(*v, "noise", 0.0)};
  Fields n(f.context(), *v, f.path() + ".noise");
  const double rel = n.number(n.required("rel", "relative noise, e.g. 0.2 for ±20 %"), "rel", 0.0);
  const std::string dist = n.choice_or("dist", "uniform", {"uniform", "normal"});
  n.finish();
  return Noise{dist == "normal" ? NoiseDist::Normal : NoiseDist::Uniform, rel};
}

RankSelector parse_selector(Fields& f, const json& v) {
  RankSelector s;
  if (v.is_string()) {
    const std::string k = v.get<std::string>();
    if (k == "all") return s;
    if (k == "even") return RankSelector{RankSelector::Kind::Even, {}};
    if (k == "odd") return RankSelector{RankSelector::Kind::Odd, {}};
  } else if (v.is_array()) {
    s.kind = RankSelector::Kind::List;
    for (const json& r : v) s.ranks.push_back(f.integer(r, "ranks", -(1LL << 30), 1LL << 30));
    return s;
  }
  f.error("field \"ranks\" must be \"all\", \"even\", \"odd\" or a list of ranks (negative: from the end), not " +
          v.dump());
}

/// The fields of a compute burst (also the "work" of a pipeline).
Compute parse_compute_fields(Fields& f) {
  Compute c;
  c.ns.value = f.number(f.required("ns", "duration of the burst in ns"), "ns", 0.0);
  c.ns.exponent = f.number_or("ns_exp", 0.0, -8.0);
  c.noise = parse_noise(f);
  c.gradient = f.number_or("gradient", 0.0, -1.0);
  if (const json* imb = f.optional("imbalance")) {
    if (!imb->is_array()) f.error("field \"imbalance\" must be a list of {\"ranks\": ..., \"factor\": ...}");
    for (std::size_t i = 0; i < imb->size(); ++i) {
      Fields g(f.context(), (*imb)[i], f.path() + ".imbalance[" + std::to_string(i) + "]");
      RankFactor rf;
      rf.ranks = parse_selector(g, g.required("ranks", "which ranks"));
      rf.factor = g.number(g.required("factor", "compute multiplier"), "factor", 0.0);
      g.finish();
      c.factors.push_back(std::move(rf));
    }
  }
  return c;
}

Volume parse_volume_value(Fields& f, const json& bytes) {
  Volume v;
  v.bytes.value = f.number(bytes, "bytes", 0.0);
  v.bytes.exponent = f.number_or("bytes_exp", 0.0, -8.0);
  v.jitter = f.number_or("jitter", 0.0, 0.0);
  if (v.jitter >= 1.0) f.error("field \"jitter\" must be below 1 (it is relative: 0.02 means ±2 %)");
  return v;
}

Volume parse_volume(Fields& f, const char* what) { return parse_volume_value(f, f.required("bytes", what)); }

std::size_t parse_comm(Fields& f) {
  const json* v = f.optional("comm");
  if (v == nullptr) return 0;
  const auto& names = f.context().comm_names;
  if (v->is_string()) {
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (names[i] == v->get<std::string>()) return i;
    }
  }
  std::string known;
  for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
  f.error("field \"comm\" names no communicator: " + v->dump() + " (defined: " + known + ")");
}

int parse_tag(Fields& f) { return static_cast<int>(f.integer_or("tag", 0, 0, 32767)); }

Halo parse_halo(Fields& f) {
  Halo h;
  const json& offs = f.required("offsets", "neighbour offsets, e.g. [1, -1] or [[0, 1], [0, -1], [1, 0], [-1, 0]]");
  if (!offs.is_array() || offs.empty()) f.error("field \"offsets\" must be a non-empty list");
  h.two_d = offs[0].is_array();
  for (const json& o : offs) {
    if (h.two_d) {
      if (!o.is_array() || o.size() != 2) f.error("2-D offsets must all be [dx, dy] pairs, not " + o.dump());
      h.offsets.push_back({static_cast<int>(f.integer(o[0], "offsets", -(1 << 20), 1 << 20)),
                           static_cast<int>(f.integer(o[1], "offsets", -(1 << 20), 1 << 20))});
    } else {
      h.offsets.push_back({static_cast<int>(f.integer(o, "offsets", -(1 << 20), 1 << 20)), 0});
    }
  }
  const json& bytes = f.required("bytes", "bytes per message, or one value per offset");
  if (bytes.is_array()) {
    if (bytes.size() != h.offsets.size()) {
      f.error("field \"bytes\" lists " + std::to_string(bytes.size()) + " values for " +
              std::to_string(h.offsets.size()) + " offsets");
    }
    for (const json& b : bytes) h.bytes.push_back(parse_volume_value(f, b));
  } else {
    h.bytes.assign(h.offsets.size(), parse_volume_value(f, bytes));
  }
  h.periodic = f.boolean_or("periodic", true);
  h.tag = parse_tag(f);
  h.distinct_tags = f.boolean_or("distinct_tags", false);
  h.comm = parse_comm(f);
  const std::string complete = f.choice_or("complete", "waitall", {"waitall", "waitsome", "waitany", "testany"});
  h.complete = complete == "waitsome"  ? Completion::Waitsome
               : complete == "waitany" ? Completion::Waitany
               : complete == "testany" ? Completion::Testany
                                       : Completion::Waitall;
  if (h.two_d && h.comm != 0) f.error("2-D offsets address the process grid of MPI_COMM_WORLD; drop \"comm\"");
  return h;
}

SendRecv parse_sendrecv(Fields& f) {
  SendRecv s;
  const json* off = f.optional("offset");
  const json* x = f.optional("xor");
  if ((off == nullptr) == (x == nullptr)) f.error("a sendrecv needs exactly one of \"offset\" and \"xor\"");
  const json& v = off != nullptr ? *off : *x;
  s.rule = off != nullptr ? SendRecv::Rule::Offset : SendRecv::Rule::Xor;
  const char* key = off != nullptr ? "offset" : "xor";
  if (x != nullptr && v.is_string() && v.get<std::string>() == "butterfly") {
    s.butterfly = true;
  } else if (v.is_array()) {
    if (v.empty()) f.error(std::string("field \"") + key + "\" must not be empty");
    for (const json& e : v) s.values.push_back(f.integer(e, key, x != nullptr ? 1 : -(1 << 20), 1 << 20));
  } else {
    s.values.push_back(f.integer(v, key, x != nullptr ? 1 : -(1 << 20), 1 << 20));
  }
  s.bytes = parse_volume(f, "bytes per message");
  s.periodic = f.boolean_or("periodic", true);
  s.tag = parse_tag(f);
  s.comm = parse_comm(f);
  return s;
}

Pipeline parse_pipeline(Fields& f) {
  Pipeline p;
  p.bytes = parse_volume(f, "bytes per message");
  p.reverse = f.choice_or("direction", "up", {"up", "down"}) == "down";
  p.proc_null = f.choice_or("ends", "skip", {"skip", "proc_null"}) == "proc_null";
  p.tag = parse_tag(f);
  p.comm = parse_comm(f);
  if (const json* w = f.optional("work")) {
    Fields wf(f.context(), *w, f.path() + ".work");
    p.work = parse_compute_fields(wf);
    wf.finish();
  }
  return p;
}

Collective parse_collective(Fields& f, CollKind kind) {
  Collective c;
  c.kind = kind;
  if (kind != CollKind::Barrier) c.bytes = parse_volume(f, "bytes of each rank's block: count x type size");
  const bool rooted =
      kind == CollKind::Bcast || kind == CollKind::Reduce || kind == CollKind::Gather || kind == CollKind::Scatter;
  if (rooted) c.root = static_cast<int>(f.integer_or("root", 0, 0, 1 << 30));
  if (kind != CollKind::Barrier) c.in_place = f.boolean_or("in_place", false);
  c.comm = parse_comm(f);
  return c;
}

std::vector<Step> parse_body(const Context& cx, const json& body, const std::string& where);

Loop parse_loop(Fields& f) {
  Loop l;
  const json& count = f.required("count", "iterations, or a list used cyclically by the enclosing loop");
  if (count.is_array()) {
    if (count.empty()) f.error("field \"count\" must not be an empty list");
    for (const json& c : count) l.counts.push_back(static_cast<std::uint64_t>(f.integer(c, "count", 0, 1LL << 50)));
  } else {
    l.counts.push_back(static_cast<std::uint64_t>(f.integer(count, "count", 0, 1LL << 50)));
  }
  l.scale = f.boolean_or("scale", false);
  l.body = parse_body(f.context(), f.required("body", "the steps repeated"), f.path() + ".body");
  return l;
}

Step parse_step(const Context& cx, const json& j, const std::string& where) {
  Fields f(cx, j, where);
  const json& opv = f.required("op", "what the step does");
  if (!opv.is_string()) f.error("field \"op\" must be a string, not " + opv.dump());
  const std::string op = opv.get<std::string>();
  Fields g(cx, j, where, op);
  g.required("op", "");
  Step s;
  s.where = g.where();
  static const std::pair<const char*, CollKind> kColls[] = {
      {"barrier", CollKind::Barrier},     {"bcast", CollKind::Bcast},       {"reduce", CollKind::Reduce},
      {"allreduce", CollKind::Allreduce}, {"gather", CollKind::Gather},     {"scatter", CollKind::Scatter},
      {"allgather", CollKind::Allgather}, {"alltoall", CollKind::Alltoall}, {"scan", CollKind::Scan}};
  if (op == "compute") {
    s.op = parse_compute_fields(g);
  } else if (op == "loop") {
    s.op = parse_loop(g);
  } else if (op == "halo") {
    s.op = parse_halo(g);
  } else if (op == "sendrecv") {
    s.op = parse_sendrecv(g);
  } else if (op == "pipeline") {
    s.op = parse_pipeline(g);
  } else {
    bool found = false;
    for (const auto& [name, kind] : kColls) {
      if (op == name) {
        s.op = parse_collective(g, kind);
        found = true;
      }
    }
    if (!found) {
      f.error("unknown op \"" + op +
              "\" (known: compute, loop, halo, sendrecv, pipeline, barrier, bcast, reduce, allreduce, gather, "
              "scatter, allgather, alltoall, scan)");
    }
  }
  g.finish();
  return s;
}

std::vector<Step> parse_body(const Context& cx, const json& body, const std::string& where) {
  if (!body.is_array()) fail(cx, where, "a body must be a list of steps");
  std::vector<Step> steps;
  for (std::size_t i = 0; i < body.size(); ++i) {
    steps.push_back(parse_step(cx, body[i], where + "[" + std::to_string(i) + "]"));
  }
  return steps;
}

Network parse_network(Fields& f) {
  Network n;
  n.latency_ns = f.number_or("latency_ns", n.latency_ns, 0.0);
  n.bytes_per_ns = f.number_or("bytes_per_ns", n.bytes_per_ns, 1e-6);
  n.call_ns = f.number_or("call_ns", n.call_ns, 1.0);
  n.gap_ns = f.number_or("gap_ns", n.gap_ns, 0.0);
  n.init_ns = f.number_or("init_ns", n.init_ns, 1.0);
  n.finalize_ns = f.number_or("finalize_ns", n.finalize_ns, 1.0);
  n.skew_ns = f.number_or("skew_ns", n.skew_ns, 0.0);
  return n;
}

}  // namespace

bool RankSelector::matches(int rank, int size) const noexcept {
  switch (kind) {
    case Kind::All:
      return true;
    case Kind::Even:
      return rank % 2 == 0;
    case Kind::Odd:
      return rank % 2 == 1;
    case Kind::List:
      for (std::int64_t r : ranks) {
        if (r == rank || (r < 0 && r + size == rank)) return true;
      }
      return false;
  }
  return false;
}

double Scaled::at(int reference_ranks, int ranks) const noexcept {
  if (exponent == 0.0) return value;
  return value * std::pow(static_cast<double>(reference_ranks) / static_cast<double>(ranks), exponent);
}

Program parse_program(std::string_view json_text, const std::string& source) {
  Context cx{source, {"world"}};
  json j;
  try {
    j = json::parse(json_text);
  } catch (const json::parse_error& e) {
    fail(cx, "", std::string("not valid JSON: ") + e.what());
  }
  Fields top(cx, j, "");
  Program p;
  p.source = source;
  if (const json* c = top.optional("comment"); c != nullptr && c->is_string()) p.comment = c->get<std::string>();
  p.ranks = static_cast<int>(top.integer_or("ranks", 8, 1, 1 << 24));
  if (const json* g = top.optional("grid")) {
    if (!g->is_array() || g->size() != 2) top.error("field \"grid\" must be [px, py]");
    p.grid = std::array<int, 2>{static_cast<int>(top.integer((*g)[0], "grid", 1, 1 << 24)),
                                static_cast<int>(top.integer((*g)[1], "grid", 1, 1 << 24))};
  }
  p.ranks_per_node = static_cast<int>(top.integer_or("ranks_per_node", 0, 0, 1 << 24));
  if (const json* n = top.optional("network")) {
    Fields nf(cx, *n, "network");
    p.network = parse_network(nf);
    nf.finish();
  }
  if (const json* comms = top.optional("comms")) {
    if (!comms->is_array()) top.error("field \"comms\" must be a list");
    for (std::size_t i = 0; i < comms->size(); ++i) {
      Fields cf(cx, (*comms)[i], "comms[" + std::to_string(i) + "]");
      CommSpec c;
      const json& name = cf.required("name", "how steps refer to it");
      if (!name.is_string() || name.get<std::string>().empty()) cf.error("field \"name\" must be a non-empty string");
      c.name = name.get<std::string>();
      for (const std::string& known : cx.comm_names) {
        if (known == c.name) cf.error("communicator \"" + c.name + "\" is defined twice (\"world\" is predefined)");
      }
      const json& split = cf.required("split", "\"row\", \"col\", {\"block\": k} or {\"modulo\": k}");
      if (split.is_string() && split.get<std::string>() == "row") {
        c.split = CommSpec::Split::Row;
      } else if (split.is_string() && split.get<std::string>() == "col") {
        c.split = CommSpec::Split::Col;
      } else if (split.is_object() && split.size() == 1 && (split.contains("block") || split.contains("modulo"))) {
        const bool block = split.contains("block");
        c.split = block ? CommSpec::Split::Block : CommSpec::Split::Modulo;
        c.k = static_cast<int>(cf.integer(split.begin().value(), block ? "block" : "modulo", 1, 1 << 24));
      } else {
        cf.error("field \"split\" must be \"row\", \"col\", {\"block\": k} or {\"modulo\": k}, not " + split.dump());
      }
      cf.finish();
      cx.comm_names.push_back(c.name);
      p.comms.push_back(std::move(c));
    }
  }
  p.body = parse_body(cx, top.required("body", "the program's steps"), "body");
  top.finish();
  return p;
}

Program load_program(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("cannot read program '" + path.string() + "': no such file or not readable");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_program(text.str(), path.filename().string());
}

std::array<int, 2> process_grid(const Program& program, int ranks) {
  if (program.grid) {
    const auto [px, py] = *program.grid;
    if (static_cast<std::int64_t>(px) * py != ranks) {
      throw InputError("program '" + program.source + "': grid [" + std::to_string(px) + ", " + std::to_string(py) +
                       "] does not hold " + std::to_string(ranks) +
                       " ranks; drop \"grid\" to let p3s-synth choose one, or pass --ranks " +
                       std::to_string(static_cast<std::int64_t>(px) * py));
    }
    return *program.grid;
  }
  // The most nearly square factorisation, larger dimension first (what MPI_Dims_create returns for 2 dims).
  int py = static_cast<int>(std::sqrt(static_cast<double>(ranks)));
  while (py > 1 && ranks % py != 0) --py;
  py = std::max(py, 1);
  return {ranks / py, py};
}

}  // namespace p3s::synth
