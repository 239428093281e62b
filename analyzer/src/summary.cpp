// SPDX-License-Identifier: BSD-3-Clause
// One streaming pass over an archive that counts, per rank, what the recorder wrote.
#include "p3s/analyzer/summary.hpp"
#include "p3s/json_text.hpp"

#include "p3s/analyzer/trace_reader.hpp"
#include "p3s/error.hpp"
#include "p3s/trace/schema.hpp"
#include "p3s/version.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <string_view>
#include <tuple>
#include <unordered_map>

namespace p3s::analyzer {
namespace {

using MessageKey = std::tuple<std::string, std::int32_t, std::uint32_t, std::uint64_t>;  // op, peer, tag, bytes

/// Per-rank tallies, and the per-location state needed to attribute events to MPI calls.
class SummaryBuilder final : public EventVisitor {
 public:
  explicit SummaryBuilder(const TraceDefinitions& defs)
      : defs_(defs),
        ranks_(static_cast<std::size_t>(std::max(defs.processes, 0))),
        messages_(ranks_.size()),
        left_finalize_(ranks_.size(), false) {
    for (std::size_t r = 0; r < ranks_.size(); ++r) ranks_[r].rank = static_cast<std::int32_t>(r);
  }

  void on_location_begin(const Location& l) override {
    stack_.clear();
    collective_begins_.clear();
    nb_requests_.clear();
    mpi_depth_ = 0;
    rank_ = l.rank >= 0 && static_cast<std::size_t>(l.rank) < ranks_.size() ? &ranks_[static_cast<std::size_t>(l.rank)]
                                                                            : nullptr;
    if (rank_ != nullptr) ++rank_->locations;
  }

  void on_location_end(const Location& /*l*/, std::uint64_t records) override {
    if (rank_ != nullptr) rank_->events += records;
  }

  void on_event(const Location& /*l*/, const Event& e) override {
    if (rank_ == nullptr) return;  // a location outside the MPI processes (none in p3s or Score-P archives)
    if (is_mpi_record(e.kind)) ++mpi_events_;
    switch (e.kind) {
      case EventKind::Enter:
        enter(e);
        break;
      case EventKind::Leave:
        leave(e);
        break;
      case EventKind::MpiSend:
      case EventKind::MpiIsend:
        message("send", e);
        break;
      case EventKind::MpiRecv:
      case EventKind::MpiIrecv:
        message("recv", e);
        break;
      case EventKind::CollectiveBegin:
        collective_begins_.emplace_back(current_mpi_call());
        break;
      case EventKind::CollectiveEnd: {
        std::string name;
        if (!collective_begins_.empty()) {
          name = std::move(collective_begins_.back());
          collective_begins_.pop_back();
        } else {
          name = current_mpi_call();
        }
        count_collective(name, e);
        break;
      }
      case EventKind::NbCollectiveRequest:
        nb_requests_[e.request] = current_mpi_call();
        break;
      case EventKind::NbCollectiveComplete: {
        // A non-blocking collective counts under the call that started it (MPI_Iallreduce), not the one that
        // completed it (MPI_Wait).
        const auto it = nb_requests_.find(e.request);
        std::string name;
        if (it != nb_requests_.end()) {
          name = std::move(it->second);
          nb_requests_.erase(it);
        }
        count_collective(name, e);
        break;
      }
      default:
        break;
    }
  }

  Summary finish() {
    Summary s;
    s.tool = std::string("p3s ") + kVersion;
    s.archive = defs_.anchor.string();
    s.recorded_by = defs_.property(trace::property::kTool).value_or(defs_.creator.empty() ? "unknown" : defs_.creator);
    s.processes = defs_.processes;
    s.work_metric = defs_.work_metric();
    s.mpi_library = defs_.property(trace::property::kMpiLibrary).value_or("");
    s.complete = run_complete(defs_, left_finalize_);
    s.duration_ns = defs_.clock.length_ns();
    for (std::size_t r = 0; r < ranks_.size(); ++r) {
      for (const auto& [key, count] : messages_[r]) {
        ranks_[r].messages.push_back(MessageCount{.op = std::get<0>(key),
                                                  .peer = std::get<1>(key),
                                                  .tag = std::get<2>(key),
                                                  .bytes = std::get<3>(key),
                                                  .count = count});
      }
    }
    s.ranks = std::move(ranks_);
    if (mpi_events_ == 0) {
      throw InputError("trace '" + s.archive + "' holds no MPI events (" + std::to_string(records(s)) +
                       " event records, none of them an MPI call); was MPI tracing on? Record the MPI application "
                       "with `p3s record`");
    }
    return s;
  }

 private:
  static std::uint64_t records(const Summary& s) {
    std::uint64_t n = 0;
    for (const RankSummary& r : s.ranks) n += r.events;
    return n;
  }

  /// Name of the innermost MPI region being executed, "" outside MPI.
  [[nodiscard]] std::string current_mpi_call() const {
    for (auto it = stack_.rbegin(); it != stack_.rend(); ++it) {
      const Region* reg = defs_.region(*it);
      if (reg != nullptr && reg->is_mpi()) return reg->name;
    }
    return {};
  }

  void enter(const Event& e) {
    stack_.push_back(e.region);
    const Region* reg = defs_.region(e.region);
    if (reg == nullptr || !reg->is_mpi()) return;
    ++mpi_events_;
    ++rank_->calls[reg->name];
    // Time in MPI counts outermost MPI regions only (MPI_Finalize may call MPI functions itself).
    if (mpi_depth_++ == 0) mpi_enter_ns_ = e.time_ns;
  }

  void leave(const Event& e) {
    if (!stack_.empty()) stack_.pop_back();
    const Region* reg = defs_.region(e.region);
    if (reg == nullptr || !reg->is_mpi() || mpi_depth_ == 0) return;
    if (--mpi_depth_ == 0) rank_->time_in_mpi_ns += e.time_ns >= mpi_enter_ns_ ? e.time_ns - mpi_enter_ns_ : 0;
    if (reg->function == mpi::Function::MPI_Finalize) left_finalize_[static_cast<std::size_t>(rank_->rank)] = true;
  }

  void message(const char* op, const Event& e) {
    if (e.peer < 0) {
      ++rank_->unresolved_peers;
      return;
    }
    ++messages_[static_cast<std::size_t>(rank_->rank)][MessageKey{op, e.peer, e.tag, e.bytes}];
  }

  void count_collective(const std::string& name, const Event& e) {
    ++rank_->collectives[name.empty() ? std::string(mpi::name(e.op)) : name];
  }

  const TraceDefinitions& defs_;
  std::vector<RankSummary> ranks_;
  std::vector<std::map<MessageKey, std::uint64_t>> messages_;
  std::vector<bool> left_finalize_;
  std::uint64_t mpi_events_ = 0;

  // State of the location being read.
  RankSummary* rank_ = nullptr;
  std::vector<std::uint32_t> stack_;
  std::vector<std::string> collective_begins_;
  std::unordered_map<std::uint64_t, std::string> nb_requests_;
  int mpi_depth_ = 0;
  std::uint64_t mpi_enter_ns_ = 0;
};

std::string human_time(std::uint64_t ns) {
  char buf[32];
  if (ns < 1000)
    std::snprintf(buf, sizeof buf, "%llu ns", static_cast<unsigned long long>(ns));
  else if (ns < 1000000)
    std::snprintf(buf, sizeof buf, "%.2f us", static_cast<double>(ns) / 1e3);
  else if (ns < 1000000000)
    std::snprintf(buf, sizeof buf, "%.2f ms", static_cast<double>(ns) / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.3f s", static_cast<double>(ns) / 1e9);
  return buf;
}

/// Messages (or their bytes) of one direction.
std::uint64_t message_total(const std::vector<MessageCount>& messages, std::string_view op, bool bytes) {
  std::uint64_t n = 0;
  for (const MessageCount& m : messages) n += m.op == op ? (bytes ? m.count * m.bytes : m.count) : 0;
  return n;
}

}  // namespace

std::uint64_t RankSummary::mpi_calls() const {
  std::uint64_t n = 0;
  for (const auto& [name, count] : calls) n += count;
  return n;
}

std::uint64_t RankSummary::messages_sent() const { return message_total(messages, "send", false); }
std::uint64_t RankSummary::bytes_sent() const { return message_total(messages, "send", true); }
std::uint64_t RankSummary::messages_received() const { return message_total(messages, "recv", false); }
std::uint64_t RankSummary::bytes_received() const { return message_total(messages, "recv", true); }

std::uint64_t RankSummary::collective_count() const {
  std::uint64_t n = 0;
  for (const auto& [name, count] : collectives) n += count;
  return n;
}

Summary summarize(const std::filesystem::path& path) {
  TraceReader reader(path);
  SummaryBuilder builder(reader.definitions());
  reader.read_all(builder);
  return builder.finish();
}

std::string summary_json(const Summary& s) {
  // ordered_json keeps the keys in the documented order, which is easier to read and diff.
  using Json = nlohmann::ordered_json;
  Json ranks = Json::array();
  for (const RankSummary& r : s.ranks) {
    Json messages = Json::array();
    for (const MessageCount& m : r.messages) {
      messages.push_back({{"op", m.op}, {"peer", m.peer}, {"tag", m.tag}, {"bytes", m.bytes}, {"count", m.count}});
    }
    Json calls = Json::object();
    for (const auto& [name, count] : r.calls) calls[name] = count;
    Json collectives = Json::object();
    for (const auto& [name, count] : r.collectives) collectives[name] = count;
    ranks.push_back({{"rank", r.rank},
                     {"locations", r.locations},
                     {"events", r.events},
                     {"time_in_mpi_ns", r.time_in_mpi_ns},
                     {"calls", std::move(calls)},
                     {"messages", std::move(messages)},
                     {"collectives", std::move(collectives)},
                     {"unresolved_peers", r.unresolved_peers}});
  }
  const Json doc = {{"schema_version", 1},          {"tool", s.tool},
                    {"archive", s.archive},         {"processes", s.processes},
                    {"work_metric", s.work_metric}, {"mpi_library", s.mpi_library},
                    {"complete", s.complete},       {"ranks", std::move(ranks)}};
  return json_text(doc, 2) + "\n";
}

std::string summary_text(const Summary& s) {
  std::string out;
  char line[512];
  const auto add = [&](const char* label, const std::string& value) {
    std::snprintf(line, sizeof line, "%-13s %s\n", label, value.c_str());
    out += line;
  };
  add("archive", s.archive);
  add("recorded by", s.recorded_by);
  add("processes", std::to_string(s.processes));
  add("work metric", s.work_metric);
  if (!s.mpi_library.empty()) add("mpi library", s.mpi_library);
  add("complete", s.complete ? "yes" : "no (the run ended before MPI_Finalize)");
  add("duration", human_time(s.duration_ns));
  out += "\n";
  std::snprintf(line, sizeof line, "%5s %5s %10s %9s %9s %12s %9s %12s %11s %12s %10s\n", "rank", "locs", "events",
                "MPI calls", "msgs sent", "bytes sent", "msgs recv", "bytes recv", "collectives", "time in MPI",
                "unresolved");
  out += line;
  for (const RankSummary& r : s.ranks) {
    std::snprintf(
        line, sizeof line, "%5d %5u %10llu %9llu %9llu %12llu %9llu %12llu %11llu %12s %10llu\n", r.rank, r.locations,
        static_cast<unsigned long long>(r.events), static_cast<unsigned long long>(r.mpi_calls()),
        static_cast<unsigned long long>(r.messages_sent()), static_cast<unsigned long long>(r.bytes_sent()),
        static_cast<unsigned long long>(r.messages_received()), static_cast<unsigned long long>(r.bytes_received()),
        static_cast<unsigned long long>(r.collective_count()), human_time(r.time_in_mpi_ns).c_str(),
        static_cast<unsigned long long>(r.unresolved_peers));
    out += line;
  }
  return out;
}

}  // namespace p3s::analyzer
