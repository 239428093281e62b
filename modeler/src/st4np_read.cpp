// SPDX-License-Identifier: BSD-3-Clause
// The ST4NP read back: the header once, a rank's lines through the rank index (share/doc/lt4nc-format.md).
#include <algorithm>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "p3s/error.hpp"
#include "p3s/inputs.hpp"
#include "p3s/json_text.hpp"
#include "p3s/modeler/lt4nc.hpp"
#include "p3s/modeler/st4np.hpp"
#include "p3s/schema_version.hpp"

namespace p3s::modeler {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const char* const kWriteAgain = "; write it again with `p3s predict -o`";

/// Runs `read`, turning what goes wrong into one InputError that names the trace.
template <typename F>
auto naming(const fs::path& dir, F&& read) {
  try {
    return read();
  } catch (const nlohmann::json::exception& e) {
    throw InputError("ST4NP '" + dir.string() + "' cannot be read (" + e.what() + ")" + kWriteAgain);
  } catch (const InputError& e) {
    const std::string what = e.what();
    throw InputError(what.rfind("ST4NP '", 0) == 0 ? what : "ST4NP '" + dir.string() + "': " + what);
  }
}

/// Bytes [index[r], index[r + 1]) of the rank file: rank r's lines.
std::string rank_text(const St4np& t, std::int64_t r) {
  require_regular_input(t.index_file, "rank index");
  std::ifstream in(t.index_file, std::ios::binary);
  std::error_code index_ec;
  const std::int64_t n = t.processes;
  const std::uintmax_t index_size = fs::file_size(t.index_file, index_ec);
  if (index_ec || index_size != static_cast<std::uintmax_t>(n + 1) * 8) {
    throw InputError("its rank index '" + t.index_file.string() + "' is " +
                     (index_ec ? "missing" : std::to_string(index_size) + " bytes") + ", not the " +
                     std::to_string((n + 1) * 8) + " of " + std::to_string(n) + " ranks" + kWriteAgain);
  }
  std::uint64_t offsets[2] = {0, 0};
  in.seekg(static_cast<std::streamoff>(r * 8));
  unsigned char bytes[16];
  if (!in.read(reinterpret_cast<char*>(bytes), sizeof bytes)) {
    throw InputError("its rank index '" + t.index_file.string() + "' has no entry for rank " + std::to_string(r) +
                     " of " + std::to_string(n) + kWriteAgain);
  }
  for (int k = 0; k < 2; ++k) {
    for (int b = 7; b >= 0; --b) offsets[k] = (offsets[k] << 8) | bytes[8 * k + b];
  }
  require_regular_input(t.ranks_file, "rank file");
  std::ifstream text(t.ranks_file, std::ios::binary);
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(t.ranks_file, ec);
  // Every rank has a line per phase: an empty range (an index zeroed by damage) would hold nothing.
  if (!text || ec || offsets[1] <= offsets[0] || offsets[1] > size) {
    throw InputError("'" + t.ranks_file.string() + "' does not hold rank " + std::to_string(r) +
                     "'s lines where its index says" + kWriteAgain);
  }
  std::string out(offsets[1] - offsets[0], '\0');
  text.seekg(static_cast<std::streamoff>(offsets[0]));
  text.read(out.data(), static_cast<std::streamsize>(out.size()));
  return out;
}

/// The note of a phase that `p3s predict` wrote repaired, from the trace's record of it.
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

PredictedAction action_from(const json& j, const St4np& t) {
  PredictedAction a;
  const auto kind = mpi::action_kind_named(j.at("kind").get<std::string>());
  if (!kind) throw InputError("unknown action kind '" + j.at("kind").get<std::string>() + "'");
  a.kind = *kind;
  // A wildcard receive names "any" source or tag (MPI_ANY_SOURCE, MPI_ANY_TAG).
  const auto wildcard = [&j](const char* field) {
    return j.contains(field) && j.at(field).is_string() && j.at(field).get<std::string>() == "any";
  };
  a.peer = wildcard("peer") ? kAnySource : j.value("peer", kProcNull);
  // A peer outside the job would become whatever MPI makes of that number (MPI_ANY_SOURCE in some libraries).
  if (a.peer == kAnySource && (a.kind == mpi::ActionKind::Send || a.kind == mpi::ActionKind::IsendComplete)) {
    throw InputError("a send names peer \"any\": only a receive can take any source");
  }
  if (a.peer != kAnySource && (a.peer < kProcNull || a.peer >= t.processes)) {
    throw InputError("an action names peer " + std::to_string(a.peer) + ", outside the job's " +
                     std::to_string(t.processes) + " ranks");
  }
  a.tag = wildcard("tag") ? kAnyTag : j.value("tag", std::uint32_t{0});
  a.bytes = j.value("bytes", 0.0);
  if (j.contains("collective")) {
    a.collective = mpi::collective_named(j.at("collective").get<std::string>()).value_or(mpi::Collective::Unknown);
    a.root = j.value("root", std::int64_t{-1});
    if (a.root < -1 || a.root >= t.processes) {
      throw InputError("a collective names root " + std::to_string(a.root) + ", outside the job's " +
                       std::to_string(t.processes) + " ranks");
    }
    a.bytes_received = j.value("bytes_received", 0.0);
    a.block = j.value("block", 0.0);
  }
  if (j.contains("comm")) {
    const auto id = j.at("comm").get<std::size_t>();
    if (id >= t.comms.size()) throw InputError("an action names communicator " + std::to_string(id));
    a.comm = t.comms[id].get();
    a.comm_size = j.value("comm_size", std::int64_t{0});
  }
  a.started = j.value("started", std::int32_t{-1});
  return a;
}

PredictedRank rank_from(const json& line, const St4np& t) {
  PredictedRank r;
  r.rank = line.at("rank").get<std::int64_t>();
  for (const json& c : line.at("calls")) {
    PredictedCall call;
    call.call = c.at("call").get<std::string>();
    call.function = mpi::function_named(call.call);
    call.burst_work = c.value("burst_work", 0.0);
    if (!c.at("burst_ns").is_number()) throw InputError("a call has no burst_ns: the trace is not executable");
    call.burst_ns = c.at("burst_ns").get<double>();
    for (const json& a : c.at("actions")) call.actions.push_back(action_from(a, t));
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

/// Refuses a header that is not an executable trace this p3s reads: a logical trace, or one written without the
/// check that its calls match.
void check_header(const json& h, const fs::path& header_path) {
  const int version =
      checked_schema_version(h, header_path, {"header", 1, kLt4ncSchemaVersion, "read it with the p3s that wrote it"});
  if (version < kFirstSt4npSchemaVersion || h.value("kind", std::string()) != "st4np") {
    throw InputError(
        "it is a logical trace without burst times (written with --logical, or by an earlier p3s); "
        "write the ST4NP with `p3s predict app.model --np N -o DIR`");
  }
  // `p3s predict` checks a trace before writing it; one that was not checked could hang a replay.
  if (version < kFirstCheckedLt4ncSchemaVersion || !h.contains("consistency")) {
    throw InputError(
        "it was written by an earlier p3s, which did not check that its messages, collectives and requests "
        "match; write it again with `p3s predict app.model --np N -o DIR`");
  }
}

/// The header's facts about the run: its ranks, application, limits, work metric and its MPI's dims rule.
void read_run_facts(const json& h, St4np& t) {
  t.processes = h.at("processes").get<std::int64_t>();
  constexpr std::int64_t kMostRanks = std::int64_t{1} << 24;  // as `p3s predict --np` allows
  if (t.processes < 1 || t.processes > kMostRanks) {
    throw InputError("it is a trace of " + std::to_string(t.processes) + " ranks (1 to " + std::to_string(kMostRanks) +
                     " can be read)");
  }
  t.application = h.at("inputs").value("application", std::string());
  if (h.contains("limits") && h.at("limits").is_object()) {
    ModelLimits limits;
    limits.other_threads_share = h.at("limits").value("other_threads_share", 0.0);
    if (const std::optional<std::string> threads = threads_note(limits)) t.notes.push_back(*threads);
  }
  t.work_metric = h.value("work_metric", std::string());
  t.dims_rule = dims_rule_named(h.value("dims_rule", std::string("openmpi"))).value_or(t.dims_rule);
  t.ranks_file = t.dir / h.at("ranks_file").get<std::string>();
  t.index_file = t.dir / h.value("index_file", std::string("ranks.index"));
}

void read_communicators(const json& h, St4np& t) {
  for (const json& c : h.at("communicators")) {
    auto m = std::make_unique<CommModel>();
    m->kind = comm_kind_named(c.at("kind").get<std::string>()).value_or(CommModel::Kind::World);
    if (c.contains("param") && c.at("param").is_number()) {
      m->param = ExactLaw::constant(Rational::make(c.at("param").get<std::int64_t>()));
    }
    if (c.contains("created_by") && c.at("created_by").is_string()) {
      m->created_by = mpi::function_named(c.at("created_by").get<std::string>());
    }
    t.comms.push_back(std::move(m));
  }
}

/// The index in `t.phases` of the phase with id `id`.
std::uint32_t phase_index(const St4np& t, std::uint32_t id) {
  const auto it = std::find_if(t.phases.begin(), t.phases.end(), [id](const St4npPhase& p) { return p.id == id; });
  if (it == t.phases.end()) throw InputError("it names phase " + std::to_string(id) + ", which it lacks");
  return static_cast<std::uint32_t>(it - t.phases.begin());
}

/// The phases, with a note for each repaired one, and the order of their instances (weights summed over it).
void read_phases(const json& h, St4np& t) {
  for (const json& p : h.at("phases")) {
    const auto id = p.at("id").get<std::uint32_t>();
    const bool repaired = p.contains("repair") && p.at("repair").is_object();
    t.phases.push_back({id, p.at("calls").get<std::string>(), 0, repaired});
    if (repaired) t.notes.push_back(repair_note(id, p.at("repair")));
  }
  for (const json& e : h.at("order")) {
    // A count below zero would be read as 2^64 less it.
    if (!e.is_array() || e.size() != 2 || !e.at(0).is_number_unsigned() || !e.at(1).is_number_unsigned()) {
      throw InputError("its phase order holds " + json_excerpt(e) +
                       " where a phase and its count of instances (whole numbers >= 0) belong");
    }
    const std::uint32_t phase = phase_index(t, e.at(0).get<std::uint32_t>());
    t.order.push_back({phase, e.at(1).get<std::uint64_t>()});
    t.phases[phase].weight += static_cast<std::int64_t>(t.order.back().count);
  }
}

}  // namespace

St4np read_st4np(const fs::path& dir) {
  const fs::path header_path = dir / "lt4nc.json";
  std::error_code ec;
  if (!fs::exists(header_path, ec)) {
    throw InputError("'" + dir.string() + "' holds no ST4NP (no lt4nc.json): write one with `p3s predict app.model " +
                     "--np N -o DIR`");
  }
  return naming(dir, [&] {
    require_regular_input(header_path, "ST4NP header");
    std::ifstream in(header_path);
    if (!in) throw InputError("its header '" + header_path.string() + "' cannot be read");
    St4np t;
    t.dir = dir;
    const json h = parse_input(in);
    check_header(h, header_path);
    read_run_facts(h, t);
    read_communicators(h, t);
    read_phases(h, t);
    return t;
  });
}

std::vector<PredictedRank> st4np_rank(const St4np& t, std::int64_t r) {
  return naming(t.dir, [&] {
    if (r < 0 || r >= t.processes) {
      throw InputError("it has no rank " + std::to_string(r) + " (" + std::to_string(t.processes) + " ranks)");
    }
    std::vector<PredictedRank> out(t.phases.size());
    std::vector<bool> seen(t.phases.size(), false);
    std::istringstream lines(rank_text(t, r));
    for (std::string line; std::getline(lines, line);) {
      const json j = parse_input(line);
      if (j.at("rank").get<std::int64_t>() != r) {
        throw InputError("its index points rank " + std::to_string(r) + " at another's lines");
      }
      const std::size_t phase = phase_index(t, j.at("phase").get<std::uint32_t>());
      out[phase] = rank_from(j, t);
      seen[phase] = true;
    }
    for (std::size_t p = 0; p < seen.size(); ++p) {
      if (!seen[p]) {
        throw InputError("its index leaves rank " + std::to_string(r) + " without its line of phase " +
                         std::to_string(t.phases[p].id) + kWriteAgain);
      }
    }
    return out;
  });
}

}  // namespace p3s::modeler
