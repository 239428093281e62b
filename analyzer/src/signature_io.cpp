// SPDX-License-Identifier: BSD-3-Clause
// signature.json (share/doc/signature-format.md) and the readable report.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "p3s/analyzer/definitions.hpp"
#include "p3s/analyzer/phase_order.hpp"
#include "p3s/analyzer/signature.hpp"
#include "p3s/error.hpp"
#include "p3s/inputs.hpp"
#include "p3s/json_text.hpp"
#include "p3s/schema_version.hpp"
#include "p3s/stable_name.hpp"
#include "p3s/whole_file.hpp"

namespace p3s::analyzer {
namespace {
using nlohmann::json;

/// `x` to 7 significant digits: times and work are measured far less precisely, and a double's 17 digits would
/// make most of a signature's text.
double significant(double x) {
  if (x == 0 || !std::isfinite(x)) return x;
  const double scale = std::pow(10.0, 6 - static_cast<int>(std::floor(std::log10(std::fabs(x)))));
  return std::round(x * scale) / scale;
}

json to_json(const Stat& s) {
  return json{{"n", s.n},
              {"mean", significant(s.mean)},
              {"stddev", significant(s.stddev)},
              {"min", significant(s.min)},
              {"max", significant(s.max)}};
}

Stat stat_from(const json& j) {
  Stat s;
  s.n = j.at("n").get<std::uint64_t>();
  s.mean = j.at("mean").get<double>();
  s.stddev = j.at("stddev").get<double>();
  s.min = j.at("min").get<double>();
  s.max = j.at("max").get<double>();
  return s;
}

json to_json(const SigAction& a) {
  json j{{"kind", mpi::name(a.kind)}, {"comm", a.comm}, {"comm_size", a.comm_size}, {"bytes", a.bytes}};
  if (a.kind == mpi::ActionKind::Send || a.kind == mpi::ActionKind::Recv ||
      (a.kind == mpi::ActionKind::IrecvPost && a.peer >= 0)) {
    j["peer"] = a.peer;
    j["offset"] = a.offset;
    j["tag"] = a.tag;
  }
  if (a.request) j["request"] = true;
  if (a.started >= 0) j["started"] = a.started;
  if (a.collective != mpi::Collective::None) {
    j["collective"] = mpi::name(a.collective);
    j["root"] = a.root;
    j["bytes_received"] = a.bytes_received;
  }
  if (a.bytes_min != a.bytes_max) {
    j["bytes_min"] = a.bytes_min;
    j["bytes_max"] = a.bytes_max;
  }
  return j;
}

SigAction action_from(const json& j) {
  SigAction a;
  a.kind = parse_stable_name(j.at("kind").get<std::string>(), "action kind", mpi::action_kind_named);
  a.comm = j.at("comm").get<std::uint32_t>();
  a.comm_size = j.at("comm_size").get<std::uint32_t>();
  a.bytes = j.at("bytes").get<double>();
  a.bytes_min = j.value("bytes_min", a.bytes);
  a.bytes_max = j.value("bytes_max", a.bytes);
  a.peer = j.value("peer", -1);
  a.offset = j.value("offset", 0);
  a.tag = j.value("tag", 0u);
  if (j.contains("collective"))
    a.collective = parse_stable_name(j.at("collective").get<std::string>(), "collective", mpi::collective_named);
  a.root = j.value("root", -1);
  a.bytes_received = j.value("bytes_received", 0.0);
  a.request = j.value("request", false);
  a.started = j.value("started", -1);
  return a;
}

json to_json(const SigEvent& e) {
  json actions = json::array();
  for (const SigAction& a : e.actions) actions.push_back(to_json(a));
  json j{{"call", e.call},
         {"actions", std::move(actions)},
         {"burst_work", to_json(e.burst_work)},
         {"burst_ns", to_json(e.burst_ns)},
         {"call_ns", to_json(e.call_ns)}};
  if (!e.callsite.empty()) j["callsite"] = e.callsite;
  if (e.calls.max > 1) j["calls"] = to_json(e.calls);
  return j;
}

SigEvent event_from(const json& j) {
  SigEvent e;
  e.call = j.at("call").get<std::string>();
  e.function = mpi::function_named(e.call);
  e.callsite = j.value("callsite", std::string());
  for (const json& a : j.at("actions")) e.actions.push_back(action_from(a));
  e.burst_work = stat_from(j.at("burst_work"));
  e.burst_ns = stat_from(j.at("burst_ns"));
  e.call_ns = stat_from(j.at("call_ns"));
  if (j.contains("calls")) e.calls = stat_from(j.at("calls"));
  return e;
}

/// Stands for an array written element by element (write_with_array): a signature's events are written one at a
/// time, never as one document in memory, whose nodes take ten times the text.
constexpr const char* kElements = "@p3s:elements@";

/// A phase's fields, its ranks to be written in place of kElements.
json phase_header(const SigPhase& p) {
  json j{{"id", p.id},
         {"weight", p.weight},
         {"ticks", p.ticks},
         {"time_ns", to_json(p.time_ns)},
         {"work", to_json(p.work)},
         {"share", p.share},
         {"relevant", p.relevant},
         {"attribution", p.attribution},
         {"ranks", kElements}};
  if (p.split_from != 0xffffffffu) j["split_from"] = p.split_from;
  if (p.step) j["step"] = true;
  return j;
}

/// A rank's fields, its events to be written in place of kElements.
json rank_header(const SigRank& r) {
  json jr{
      {"rank", r.rank}, {"thread", r.thread}, {"events", kElements}, {"mismatched_instances", r.mismatched_instances}};
  if (r.tail_ns.n != 0) {
    jr["tail_work"] = to_json(r.tail_work);
    jr["tail_ns"] = to_json(r.tail_ns);
  }
  return jr;
}

/// `j` as text indented by one space per level, at `depth` levels (its lines after the first indented).
std::string nested_text(const json& j, int depth) {
  const std::string t = json_text(j, 1);
  std::string out;
  out.reserve(t.size() + t.size() / 8);
  for (const char c : t) {
    out += c;
    if (c == '\n') out.append(static_cast<std::size_t>(depth), ' ');
  }
  return out;
}

/// Writes `count` elements as an array at `depth`, each by `element(i, depth of the elements)`.
template <typename Element>
void write_array(std::ostream& out, std::size_t count, int depth, const Element& element) {
  if (count == 0) {
    out << "[]";
    return;
  }
  out << "[\n";
  for (std::size_t i = 0; i < count; ++i) {
    out << std::string(static_cast<std::size_t>(depth + 1), ' ');
    element(i, depth + 1);
    out << (i + 1 < count ? ",\n" : "\n");
  }
  out << std::string(static_cast<std::size_t>(depth), ' ') << ']';
}

/// Writes `j` (an object) at `depth`, with the array of its member `key` (kElements there) written by
/// `elements(depth of that array)`.
template <typename Elements>
void write_with_array(std::ostream& out, const json& j, const char* key, int depth, const Elements& elements) {
  const std::string text = nested_text(j, depth);
  const std::string marker = "\"" + std::string(key) + "\": \"" + kElements + "\"";
  const std::size_t at = text.find(marker);
  if (at == std::string::npos) throw std::logic_error(std::string("no placeholder for ") + key);
  const std::size_t value = at + marker.size() - std::strlen(kElements) - 2;
  out.write(text.data(), static_cast<std::streamsize>(value));
  elements(depth + 1);
  out << text.substr(at + marker.size());
}

/// A phase with its ranks, each event on a line of its own.
void write_phase(std::ostream& out, const SigPhase& p, int depth) {
  write_with_array(out, phase_header(p), "ranks", depth, [&](int d) {
    write_array(out, p.ranks.size(), d, [&](std::size_t r, int rd) {
      write_with_array(out, rank_header(p.ranks[r]), "events", rd, [&](int ed) {
        write_array(out, p.ranks[r].events.size(), ed,
                    [&](std::size_t e, int) { out << json_text(to_json(p.ranks[r].events[e])); });
      });
    });
  });
}

/// A phase from its fields; its ranks' events were parsed beside the document (`events`, per rank in order).
SigPhase phase_from(const json& j, std::vector<std::vector<SigEvent>>& events) {
  SigPhase p;
  p.id = j.at("id").get<std::uint32_t>();
  p.weight = j.at("weight").get<std::uint64_t>();
  p.ticks = j.at("ticks").get<std::uint64_t>();
  p.time_ns = stat_from(j.at("time_ns"));
  p.work = stat_from(j.at("work"));
  p.share = j.at("share").get<double>();
  p.relevant = j.at("relevant").get<bool>();
  p.attribution = j.at("attribution").get<std::string>();
  p.split_from = j.value("split_from", 0xffffffffu);
  p.step = j.value("step", false);
  const json& ranks = j.at("ranks");
  if (ranks.size() != events.size()) throw InputError("a phase's ranks and their events do not correspond");
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const json& jr = ranks[i];
    SigRank r;
    r.rank = jr.at("rank").get<std::int32_t>();
    r.thread = jr.at("thread").get<std::uint32_t>();
    r.mismatched_instances = jr.at("mismatched_instances").get<std::uint64_t>();
    r.events = std::move(events[i]);
    if (jr.contains("tail_ns")) {
      r.tail_ns = stat_from(jr.at("tail_ns"));
      r.tail_work = stat_from(jr.at("tail_work"));
    }
    p.ranks.push_back(std::move(r));
  }
  return p;
}

/// Parses a signature's text with every event taken out of the document as soon as it is read: the document keeps
/// the rest, `events[phase][rank]` the events, so that memory grows with the signature's events, not ten times
/// their text.
json parse_without_events(std::istream& in, std::vector<std::vector<std::vector<SigEvent>>>& events) {
  // Keys at the levels that lead to an event: the signature's member, a phase's, a rank's.
  std::string at1;
  std::string at3;
  std::string at5;
  return parse_input(in, [&](int depth, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::key:
        if (depth == 1) at1 = parsed.get<std::string>();
        if (depth == 3) at3 = parsed.get<std::string>();
        if (depth == 5) at5 = parsed.get<std::string>();
        return true;
      case json::parse_event_t::object_start:
        // A key seen in another object is no key of this one.
        if (depth == 0) at1.clear();
        if (depth == 2) at3.clear();
        if (depth == 4) at5.clear();
        if (depth == 2 && at1 == "phases") events.emplace_back();
        if (depth == 4 && at3 == "ranks" && !events.empty()) events.back().emplace_back();
        return true;
      case json::parse_event_t::object_end:
        if (depth == 6 && at5 == "events" && at3 == "ranks" && at1 == "phases" && !events.empty() &&
            !events.back().empty()) {
          events.back().back().push_back(event_from(parsed));
          return false;
        }
        return true;
      default:
        return true;
    }
  });
}

/// The time partition check: (phases + outside) / run time, which is 1 when the instance times tile the run.
std::string time_partition_check(const Signature& s) {
  if (s.run_time_ns <= 0) return {};
  char buf[64];
  std::snprintf(buf, sizeof buf, " (ratio %.4f)", (s.accounted_ns + s.outside_ns) / s.run_time_ns);
  return buf;
}

std::string fmt_ns(double ns) {
  char buf[32];
  if (ns >= 1e9)
    std::snprintf(buf, sizeof buf, "%.3f s", ns / 1e9);
  else if (ns >= 1e6)
    std::snprintf(buf, sizeof buf, "%.3f ms", ns / 1e6);
  else if (ns >= 1e3)
    std::snprintf(buf, sizeof buf, "%.2f us", ns / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.0f ns", ns);
  return buf;
}

/// A mean count: whole where it is one, else one decimal.
std::string fmt_count(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, v == std::floor(v) ? "%.0f" : "%.1f", v);
  return buf;
}

}  // namespace

void Stat::add(double x) {
  ++n;
  const double delta = x - mean;
  mean += delta / static_cast<double>(n);
  m2 += delta * (x - mean);
  min = n == 1 ? x : std::min(min, x);
  max = n == 1 ? x : std::max(max, x);
}

void Stat::finish() { stddev = n > 1 ? std::sqrt(m2 / static_cast<double>(n - 1)) : 0; }

Stat pooled(const Stat& a, const Stat& b) {
  if (a.n == 0) return b;
  if (b.n == 0) return a;
  const double na = static_cast<double>(a.n);
  const double nb = static_cast<double>(b.n);
  // A statistic read back from a file keeps only its deviation.
  const auto m2 = [](const Stat& s) { return s.m2 > 0 ? s.m2 : s.stddev * s.stddev * static_cast<double>(s.n - 1); };
  Stat out;
  out.n = a.n + b.n;
  const double delta = b.mean - a.mean;
  out.mean = a.mean + delta * nb / (na + nb);
  out.m2 = m2(a) + m2(b) + delta * delta * na * nb / (na + nb);
  out.min = std::min(a.min, b.min);
  out.max = std::max(a.max, b.max);
  out.finish();
  return out;
}

void write_signature(const Signature& s, const std::filesystem::path& path) {
  json comms = json::array();
  for (const SigComm& c : s.communicators) {
    json jc{{"id", c.id}, {"kind", comm_kind_name(c.kind)}, {"ranks", c.ranks}};
    if (c.created_by != mpi::Function::Other) jc["created_by"] = mpi::name(c.created_by);
    if (c.parent != kNoRef) jc["parent"] = c.parent;
    comms.push_back(std::move(jc));
  }
  const json j{{"schema_version", kSignatureSchemaVersion},
               {"tool", s.tool},
               {"inputs",
                {{"archive", s.archive},
                 {"recorded_by", s.recorded_by},
                 {"command", s.command},
                 {"mpi_library", s.mpi_library},
                 {"options",
                  {{"relevance", s.options.relevance},
                   {"volume_tolerance", s.options.volume_tolerance},
                   {"work_similarity", s.options.work_similarity},
                   {"partial", s.options.partial},
                   {"phase_method", phase_method_name(s.options.phase_method)}}}}},
               {"date", s.date},
               {"processes", s.processes},
               {"locations", s.locations},
               {"work_metric", s.work_metric},
               {"complete", s.complete},
               {"phase_method", phase_method_name(s.phase_method)},
               {"phase_method_note", s.phase_method_note},
               {"phase_level", phase_level_name(s.phase_level)},
               {"without_sizes", s.without_sizes},
               {"run_time_ns", s.run_time_ns},
               {"accounted_ns", s.accounted_ns},
               {"outside_ns", s.outside_ns},
               {"coverage", s.coverage},
               {"operations", s.operations},
               {"events", s.events},
               {"ticks", s.ticks},
               {"messages", s.messages},
               {"unmatched_sends", s.unmatched_sends},
               {"unmatched_receives", s.unmatched_receives},
               {"warnings", s.warnings},
               {"phases", kElements},
               {"order", order_json(s.order)},
               {"communicators", std::move(comms)}};
  StreamedFile file(path);
  std::ostream& out = file.stream();
  write_with_array(out, j, "phases", 0, [&](int d) {
    write_array(out, s.phases.size(), d, [&](std::size_t i, int pd) { write_phase(out, s.phases[i], pd); });
  });
  out << '\n';
  file.commit();
}

namespace {

/// A whole number at `key` of `j`, at least `min`: a count must not be read from 8.5 or wrap around from -1.
std::int64_t whole_at(const json& j, const char* key, std::int64_t min) {
  const json& v = j.at(key);
  const bool fits = v.is_number_integer() && (!v.is_number_unsigned() || v.get<std::uint64_t>() <= (1ULL << 62));
  if (!fits || v.get<std::int64_t>() < min) {
    throw InputError(std::string(key) + " is " + json_excerpt(v) + ", not a whole number of at least " +
                     std::to_string(min));
  }
  return v.get<std::int64_t>();
}

/// What a signature's numbers must be for a model to read them: counts whole and positive, ranks and peers among
/// the run's processes, sizes not negative, the order naming its phases.
void check_signature(const json& j, const Signature& s) {
  (void)whole_at(j, "processes", 1);
  if (s.phases.empty()) throw InputError("it has no phases");
  std::vector<std::uint32_t> ids;
  for (const json& jp : j.at("phases")) {
    const auto id = static_cast<std::uint32_t>(whole_at(jp, "id", 0));
    (void)whole_at(jp, "weight", 1);
    ids.push_back(id);
  }
  for (const SigPhase& p : s.phases) {
    for (const SigRank& r : p.ranks) {
      if (r.rank < 0 || r.rank >= s.processes) {
        throw InputError("phase " + std::to_string(p.id) + " has rank " + std::to_string(r.rank) + " of " +
                         std::to_string(s.processes) + " processes");
      }
      for (const SigEvent& e : r.events) {
        for (const SigAction& a : e.actions) {
          if (a.peer < kUnresolvedRank || a.peer >= s.processes) {
            throw InputError("phase " + std::to_string(p.id) + ", rank " + std::to_string(r.rank) + ": " + e.call +
                             " has peer " + std::to_string(a.peer) + " of " + std::to_string(s.processes) +
                             " processes");
          }
          if (!(a.bytes >= 0) || !std::isfinite(a.bytes)) {
            throw InputError("phase " + std::to_string(p.id) + ", rank " + std::to_string(r.rank) + ": " + e.call +
                             " has " + std::to_string(a.bytes) + " bytes");
          }
        }
      }
    }
  }
  for (const PhaseRunEntry& r : s.order) {
    if (std::find(ids.begin(), ids.end(), r.phase) == ids.end()) {
      throw InputError("its phase order names phase " + std::to_string(r.phase) + ", which it does not have");
    }
  }
}

}  // namespace

Signature read_signature(const std::filesystem::path& path) {
  require_regular_input(path, "signature");
  std::ifstream in(path);
  if (!in) throw InputError("cannot read signature '" + path.string() + "'; run `p3s analyze` on the trace first");
  Signature s;
  try {
    std::vector<std::vector<std::vector<SigEvent>>> events;
    const json j = parse_without_events(in, events);
    s.schema_version = checked_schema_version(
        j, path,
        {"signature", kOldestSignatureSchemaVersion, kSignatureSchemaVersion, "re-run `p3s analyze` on its trace"});
    s.tool = j.at("tool").get<std::string>();
    const json& in_ = j.at("inputs");
    s.archive = in_.at("archive").get<std::string>();
    s.recorded_by = in_.value("recorded_by", std::string());
    s.command = in_.value("command", std::string());
    s.mpi_library = in_.value("mpi_library", std::string());
    const json& o = in_.at("options");
    s.options.relevance = o.at("relevance").get<double>();
    s.options.volume_tolerance = o.at("volume_tolerance").get<double>();
    s.options.work_similarity = o.at("work_similarity").get<double>();
    s.options.partial = o.value("partial", false);
    s.options.phase_method =
        parse_stable_name(o.value("phase_method", std::string("global-ticks")), "phase method", phase_method_named);
    s.date = j.value("date", std::string());
    s.processes = j.at("processes").get<std::int32_t>();
    s.locations = j.at("locations").get<std::uint32_t>();
    s.work_metric = j.at("work_metric").get<std::string>();
    s.complete = j.at("complete").get<bool>();
    s.run_time_ns = j.at("run_time_ns").get<double>();
    s.accounted_ns = j.at("accounted_ns").get<double>();
    s.phase_method =
        parse_stable_name(j.value("phase_method", std::string("global-ticks")), "phase method", phase_method_named);
    s.phase_method_note = j.value("phase_method_note", std::string());
    s.phase_level = parse_stable_name(j.value("phase_level", std::string("units")), "phase level", phase_level_named);
    s.without_sizes = j.value("without_sizes", false);
    s.outside_ns = j.value("outside_ns", 0.0);
    s.coverage = j.at("coverage").get<double>();
    s.operations = j.at("operations").get<std::uint64_t>();
    s.events = j.at("events").get<std::uint64_t>();
    s.ticks = j.at("ticks").get<std::uint64_t>();
    s.messages = j.at("messages").get<std::uint64_t>();
    s.unmatched_sends = j.at("unmatched_sends").get<std::uint64_t>();
    s.unmatched_receives = j.at("unmatched_receives").get<std::uint64_t>();
    s.warnings = j.at("warnings").get<std::vector<std::string>>();
    const json& phases = j.at("phases");
    if (phases.size() != events.size()) throw InputError("its phases and their events do not correspond");
    for (std::size_t i = 0; i < phases.size(); ++i) s.phases.push_back(phase_from(phases[i], events[i]));
    s.order = order_from_json(j.at("order"));
    for (const json& c : j.value("communicators", json::array())) {
      SigComm sc;
      sc.id = c.at("id").get<std::uint32_t>();
      sc.kind = parse_stable_name(c.at("kind").get<std::string>(), "communicator kind", comm_kind_named);
      sc.ranks = c.at("ranks").get<std::vector<std::int32_t>>();
      if (c.contains("created_by")) sc.created_by = mpi::function_named(c.at("created_by").get<std::string>());
      sc.parent = c.value("parent", kNoRef);
      s.communicators.push_back(std::move(sc));
    }
    check_signature(j, s);
  } catch (const json::exception& e) {
    throw InputError("signature '" + path.string() + "' is not a p3s signature (" + e.what() +
                     "); re-run `p3s analyze` on its trace");
  } catch (const InputError& e) {
    const std::string what = e.what();
    if (what.rfind("signature '", 0) == 0) throw;
    throw InputError("signature '" + path.string() + "': " + what + "; re-run `p3s analyze` on its trace");
  }
  return s;
}

std::vector<StepKind> step_kinds(const Signature& s) {
  std::vector<StepKind> kinds;
  for (const SigPhase& p : s.phases) {
    if (p.step) kinds.push_back({p.id, static_cast<std::int64_t>(p.weight)});
  }
  return kinds;
}

std::string time_step_text(std::span<const StepKind> kinds) {
  if (kinds.empty()) return {};
  const StepKind* main = &kinds.front();
  std::int64_t steps = 0;
  for (const StepKind& k : kinds) {
    steps += k.weight;
    if (k.weight > main->weight) main = &k;
  }
  std::string others;
  for (const StepKind& k : kinds) {
    if (&k != main) others += (others.empty() ? "" : ", ") + std::to_string(k.id);
  }
  return "phase " + std::to_string(main->id) + (others.empty() ? "" : " with kinds " + others) + ": " +
         std::to_string(steps) + " steps";
}

std::string signature_report(const Signature& s) {
  std::ostringstream out;
  char buf[512];
  out << "archive      " << s.archive << '\n';
  out << "processes    " << s.processes
      << (s.locations != static_cast<std::uint32_t>(s.processes) ? " (" + std::to_string(s.locations) + " locations)"
                                                                 : std::string())
      << '\n';
  out << "work metric  " << s.work_metric << '\n';
  out << "run time     " << fmt_ns(s.run_time_ns) << " = phases " << fmt_ns(s.accounted_ns) << " + outside phases "
      << fmt_ns(s.outside_ns) << time_partition_check(s) << '\n';
  out << "phases by    " << phase_method_name(s.phase_method)
      << (s.phase_method_note.empty() ? std::string() : " (" + s.phase_method_note + ")") << '\n';
  std::snprintf(buf, sizeof buf, "%llu MPI calls, %llu events on %llu ticks, %llu messages",
                static_cast<unsigned long long>(s.operations), static_cast<unsigned long long>(s.events),
                static_cast<unsigned long long>(s.ticks), static_cast<unsigned long long>(s.messages));
  out << "logical      " << buf << '\n';
  std::size_t relevant = 0;
  for (const SigPhase& p : s.phases) relevant += p.relevant ? 1 : 0;
  std::snprintf(buf, sizeof buf, "%zu phases, %zu relevant (>= %.1f %% of the time), covering %.1f %%", s.phases.size(),
                relevant, 100 * s.options.relevance, 100 * s.coverage);
  out << "phases       " << buf << '\n';
  const std::string step = time_step_text(step_kinds(s));
  if (!step.empty()) out << "time step    " << step << '\n';
  out << '\n';
  out << " phase   weight  ticks   mean time     spread   share  rel  operations (rank 0; peers as offsets)\n";
  for (const SigPhase& p : s.phases) {
    std::string ops;
    if (!p.ranks.empty()) {
      for (const SigEvent& e : p.ranks.front().events) {
        const std::string call(mpi::short_name(e.function, e.call));
        std::string detail;
        for (const SigAction& a : e.actions) {
          if (a.kind == mpi::ActionKind::Send || a.kind == mpi::ActionKind::Recv) {
            detail += (detail.empty() ? "" : ",") + std::string(a.kind == mpi::ActionKind::Send ? ">" : "<") +
                      (a.offset >= 0 ? "+" : "") + std::to_string(a.offset);
          }
        }
        ops += (ops.empty() ? "" : " ") + call + (detail.empty() ? "" : "(" + detail + ")");
        if (ops.size() > 70) {
          ops += " ...";
          break;
        }
      }
    }
    std::snprintf(buf, sizeof buf, "%6u %8llu %6llu %11s %9.1f%% %6.1f%%  %s  ", p.id,
                  static_cast<unsigned long long>(p.weight), static_cast<unsigned long long>(p.ticks),
                  fmt_ns(p.time_ns.mean).c_str(), 100 * p.time_ns.cv(), 100 * p.share, p.relevant ? "*" : " ");
    out << buf << ops << '\n';
  }
  // Call sites of the relevant phases' calls (rank 0), when the run recorded them.
  for (const SigPhase& p : s.phases) {
    if (!p.relevant || p.ranks.empty()) continue;
    std::vector<std::string> sites;
    for (const SigEvent& e : p.ranks.front().events) {
      if (!e.callsite.empty() && std::find(sites.begin(), sites.end(), e.callsite) == sites.end()) {
        sites.push_back(e.callsite);
      }
    }
    if (sites.empty()) continue;
    out << "phase " << p.id << " calls from:";
    for (std::size_t i = 0; i < sites.size() && i < 4; ++i) out << (i == 0 ? " " : ", ") << sites[i];
    if (sites.size() > 4) out << ", ... (" << sites.size() << " sites)";
    out << '\n';
  }
  out << "\norder        ";
  std::size_t shown = 0;
  for (const PhaseRunEntry& r : s.order) {
    if (shown++ == 24) {
      out << " ... (" << s.order.size() << " runs)";
      break;
    }
    out << (shown > 1 ? " " : "") << r.phase << (r.count > 1 ? "x" + std::to_string(r.count) : "");
  }
  out << '\n';
  for (const std::string& w : s.warnings) out << "warning: " << w << '\n';
  return out.str();
}

std::string signature_details(const Signature& s) {
  std::ostringstream out;
  char buf[512];
  for (const SigPhase& p : s.phases) {
    if (!p.relevant) continue;
    std::snprintf(buf, sizeof buf, "\nphase %u: weight %llu, %llu ticks, mean %s, work %.4g per instance (%s bursts)\n",
                  p.id, static_cast<unsigned long long>(p.weight), static_cast<unsigned long long>(p.ticks),
                  fmt_ns(p.time_ns.mean).c_str(), p.work.mean, p.attribution.c_str());
    out << buf;
    for (const SigRank& r : p.ranks) {
      out << "  rank " << r.rank << (r.thread != 0 ? "." + std::to_string(r.thread) : std::string()) << ":";
      if (r.mismatched_instances != 0) out << " (" << r.mismatched_instances << " instances differ)";
      out << '\n';
      for (const SigEvent& e : r.events) {
        std::string acts;
        for (const SigAction& a : e.actions) {
          const std::string kind(mpi::name(a.kind));
          if (a.kind == mpi::ActionKind::Send || a.kind == mpi::ActionKind::Recv) {
            std::snprintf(buf, sizeof buf, " %s %+d tag %u %.0f B", kind.c_str(), a.offset, a.tag, a.bytes);
          } else if (a.collective != mpi::Collective::None) {
            std::snprintf(buf, sizeof buf, " %s %s/%u %.0f B", kind.c_str(),
                          std::string(mpi::name(a.collective)).c_str(), a.comm_size, a.bytes);
          } else {
            std::snprintf(buf, sizeof buf, " %s", kind.c_str());
          }
          acts += buf;
        }
        const std::string calls = e.calls.max > 1 ? " (" + fmt_count(e.calls.mean) + " calls)" : "";
        std::snprintf(buf, sizeof buf, "    %-16s burst %10s (work %.4g)  call %10s%s %s%s\n", e.call.c_str(),
                      fmt_ns(e.burst_ns.mean).c_str(), e.burst_work.mean, fmt_ns(e.call_ns.mean).c_str(), calls.c_str(),
                      acts.c_str(), e.callsite.empty() ? "" : ("  at " + e.callsite).c_str());
        out << buf;
      }
      if (r.tail_ns.n != 0) out << "    (then a burst of " << fmt_ns(r.tail_ns.mean) << ")\n";
    }
  }
  return out.str();
}

}  // namespace p3s::analyzer
