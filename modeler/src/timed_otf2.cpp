// SPDX-License-Identifier: BSD-3-Clause
// The predicted run as an OTF2 archive with a replay's times: every rank's calls in the predicted phase order, each
// instance as long as the replay measured it (timed_layout.cpp places bursts and calls inside), messages,
// collectives and requests as a recorder writes them, each phase instance a region "phase N".
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <unordered_map>

#include <otf2/otf2.h>

#include "p3s/error.hpp"
#include "p3s/interpose/archive_writer.hpp"
#include "p3s/modeler/dims.hpp"
#include "p3s/modeler/timed_trace.hpp"
#include "p3s/version.hpp"

namespace p3s::modeler {
namespace {

namespace fs = std::filesystem;

/// Stops the writing on an OTF2 failure; write_timed_otf2 says where.
void check(OTF2_ErrorCode rc, const char* what) {
  if (rc != OTF2_SUCCESS) throw Otf2Error(std::string(what) + ": " + OTF2_Error_GetName(rc));
}

/// The prediction's communicators as OTF2 numbers them: world 0, self 1, then each group of a communicator model
/// (rank r's colour at n) as the ranks' calls first name it.
class CommIds {
 public:
  static constexpr std::uint32_t kWorld = 0;
  static constexpr std::uint32_t kSelf = 1;

  explicit CommIds(std::int64_t n) : n_(n) {}

  std::uint32_t id(const CommModel* c, std::int64_t r) {
    if (c == nullptr || c->kind == CommModel::Kind::World) return kWorld;
    if (c->kind == CommModel::Kind::Self) return kSelf;
    std::size_t model = 0;
    while (model < models_.size() && !(models_[model]->same_at(*c, n_) && models_[model]->created_by == c->created_by))
      ++model;
    if (model == models_.size()) models_.push_back(c);
    const auto [it, inserted] = ids_.try_emplace({model, c->color(r, n_)}, 0);
    if (inserted) {
      it->second = static_cast<std::uint32_t>(groups_.size() + 2);
      Group g;
      g.members = c->members(r, n_);
      for (std::size_t i = 0; i < g.members.size(); ++i) g.index[g.members[i]] = static_cast<std::uint32_t>(i);
      groups_.push_back(std::move(g));
    }
    return it->second;
  }

  /// A world rank's rank in communicator `id`; OTF2_UNDEFINED_UINT32 when it is no member.
  [[nodiscard]] std::uint32_t rank_in(std::uint32_t id, std::int64_t world) const {
    if (id == kWorld) return world >= 0 && world < n_ ? static_cast<std::uint32_t>(world) : OTF2_UNDEFINED_UINT32;
    if (id == kSelf) return 0;
    const auto& index = groups_[id - 2].index;
    const auto it = index.find(world);
    return it == index.end() ? OTF2_UNDEFINED_UINT32 : it->second;
  }

  /// The members of every group after world and self, in id order.
  [[nodiscard]] std::vector<std::vector<std::int64_t>> groups() const {
    std::vector<std::vector<std::int64_t>> out;
    for (const Group& g : groups_) out.push_back(g.members);
    return out;
  }

 private:
  struct Group {
    std::vector<std::int64_t> members;
    std::unordered_map<std::int64_t, std::uint32_t> index;
  };
  std::int64_t n_;
  std::vector<const CommModel*> models_;
  std::map<std::pair<std::size_t, std::int64_t>, std::uint32_t> ids_;
  std::vector<Group> groups_;
};

/// One rank's instance of a phase, ready to be written any number of times.
struct Prepared {
  PredictedRank rank;
  InstanceLayout layout;
};

/// The archive's parts: every rank's events, then the definitions they name.
class TimedArchive {
 public:
  TimedArchive(const Model& model, std::int64_t n, const std::vector<PhasePredictor>& phases,
               const PredictionCheck& check, const std::vector<std::optional<double>>& instance_ns)
      : model_(model),
        n_(n),
        phases_(phases),
        check_(check),
        instance_ns_(instance_ns),
        comms_(n),
        order_(order_at(model, n)) {}

  void events(OTF2_Archive* a, std::vector<std::uint64_t>& locations) {
    for (std::int64_t r = 0; r < n_; ++r) {
      const auto id = static_cast<std::uint64_t>(r);
      OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(a, id);
      if (w == nullptr) throw Otf2Error("cannot open the event writer of rank " + std::to_string(r));
      events_per_rank_.push_back(rank_events(w, r));
      check(OTF2_Archive_CloseEvtWriter(a, w), "closing an event writer");
      locations.push_back(id);
    }
  }

  void definitions(OTF2_Archive* a, const std::string& model_path, const std::string& times_source) {
    g_ = OTF2_Archive_GetGlobalDefWriter(a);
    check(OTF2_GlobalDefWriter_WriteClockProperties(g_, 1000000000, 0, last_ts_ + 1, OTF2_UNDEFINED_TIMESTAMP),
          "writing the clock");
    check(OTF2_GlobalDefWriter_WriteParadigm(g_, OTF2_PARADIGM_MPI, str("MPI"), OTF2_PARADIGM_CLASS_PROCESS),
          "writing the paradigm");
    check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g_, 0, str("predicted run"), str("machine"),
                                                   OTF2_UNDEFINED_SYSTEM_TREE_NODE),
          "writing the system tree");
    for (std::int64_t r = 0; r < n_; ++r) {
      const auto id = static_cast<std::uint32_t>(r);
      check(OTF2_GlobalDefWriter_WriteLocationGroup(g_, id, str("MPI Rank " + std::to_string(r)),
                                                    OTF2_LOCATION_GROUP_TYPE_PROCESS, 0, OTF2_UNDEFINED_LOCATION_GROUP),
            "writing a process");
      check(OTF2_GlobalDefWriter_WriteLocation(g_, id, str("Master thread"), OTF2_LOCATION_TYPE_CPU_THREAD,
                                               events_per_rank_[static_cast<std::size_t>(r)], id),
            "writing a location");
    }
    regions();
    communicators();
    check(OTF2_Archive_SetCreator(a, (std::string("p3s ") + kVersion + " (predicted run)").c_str()),
          "setting the creator");
    check(OTF2_Archive_SetProperty(a, "P3S::PREDICTED", "true", true), "setting a property");
    check(OTF2_Archive_SetProperty(a, "P3S::MODEL", model_path.c_str(), true), "setting a property");
    check(OTF2_Archive_SetProperty(a, "P3S::TIMES", times_source.c_str(), true), "setting a property");
    check(OTF2_Archive_CloseGlobalDefWriter(a, g_), "closing the definitions");
  }

  [[nodiscard]] std::uint64_t events() const {
    std::uint64_t total = 0;
    for (const std::uint64_t e : events_per_rank_) total += e;
    return total;
  }
  [[nodiscard]] double run_ns() const { return run_ns_; }
  [[nodiscard]] std::uint64_t squeezed() const { return squeezed_; }

 private:
  /// A recorded region: its id, and whether it is a phase's.
  struct RegionDef {
    OTF2_RegionRef id = 0;
    bool phase = false;
  };

  OTF2_RegionRef region(const std::string& name, bool phase) {
    const auto [it, inserted] =
        regions_.try_emplace(name, RegionDef{static_cast<OTF2_RegionRef>(regions_.size()), phase});
    return it->second.id;
  }

  /// Rank r's whole run; returns its number of records.
  std::uint64_t rank_events(OTF2_EvtWriter* w, std::int64_t r) {
    std::vector<std::optional<Prepared>> prepared(phases_.size());
    Writer out{w, 0, 0};
    double start = 0;
    for (const PhaseRun& e : order_) {
      const std::optional<double>& t = instance_ns_[e.phase];
      if (!t) continue;
      if (!prepared[e.phase]) {
        PredictedRank pr = phases_[e.phase].rank(r);
        check_.phases[e.phase].repair(pr);
        InstanceLayout layout = lay_out(pr, *t);
        squeezed_ += layout.squeezed ? e.count : 0;
        prepared[e.phase] = Prepared{std::move(pr), std::move(layout)};
      }
      const OTF2_RegionRef phase = region("phase " + std::to_string(model_.phases[e.phase].id), true);
      for (std::uint64_t k = 0; k < e.count; ++k) {
        check(OTF2_EvtWriter_Enter(w, nullptr, out.at(start), phase), "entering a phase");
        ++out.records;
        instance(out, *prepared[e.phase], start, r);
        start += *t;
        check(OTF2_EvtWriter_Leave(w, nullptr, out.at(start), phase), "leaving a phase");
        ++out.records;
      }
    }
    run_ns_ = std::max(run_ns_, start);
    last_ts_ = std::max(last_ts_, out.last);
    return out.records;
  }

  /// An event writer with its location's last timestamp (records never go back in time) and record count.
  struct Writer {
    OTF2_EvtWriter* w;
    std::uint64_t last;
    std::uint64_t records;
    OTF2_TimeStamp at(double ns) {
      last = std::max(last, static_cast<std::uint64_t>(std::llround(std::max(ns, 0.0))));
      return last;
    }
  };

  /// The requests a call started in the current instance: (kind of the start, request id), in order.
  using Started = std::vector<std::vector<std::pair<mpi::ActionKind, std::uint64_t>>>;

  void instance(Writer& out, const Prepared& p, double start, std::int64_t r) {
    Started started(p.rank.calls.size());
    for (std::size_t i = 0; i < p.rank.calls.size(); ++i) {
      const PredictedCall& c = p.rank.calls[i];
      const CallTiming& t = p.layout.calls[i];
      const OTF2_RegionRef call = region(c.call, false);
      const OTF2_TimeStamp enter = out.at(start + t.start_ns);
      check(OTF2_EvtWriter_Enter(out.w, nullptr, enter, call), "entering a call");
      ++out.records;
      for (const PredictedAction& x : c.actions) out.records += begin_record(out.w, enter, c, x, r, started[i]);
      const OTF2_TimeStamp leave = out.at(start + t.start_ns + t.duration_ns);
      for (const PredictedAction& x : c.actions) out.records += end_record(out.w, leave, x, r, started);
      check(OTF2_EvtWriter_Leave(out.w, nullptr, leave, call), "leaving a call");
      ++out.records;
    }
  }

  /// The record an action writes as its call begins (a send, a posted receive, a collective's begin); 0 or 1.
  std::uint64_t begin_record(OTF2_EvtWriter* w, OTF2_TimeStamp t, const PredictedCall& c, const PredictedAction& x,
                             std::int64_t r, std::vector<std::pair<mpi::ActionKind, std::uint64_t>>& started) {
    const std::uint32_t comm = comms_.id(x.comm, r);
    switch (x.kind) {
      case mpi::ActionKind::Send: {
        const std::uint32_t peer = comms_.rank_in(comm, x.peer);
        if (peer == OTF2_UNDEFINED_UINT32) return 0;  // MPI_PROC_NULL: nothing moves
        const auto bytes = static_cast<std::uint64_t>(message_count(x.bytes));
        if (!starts_requests(c.function)) {
          check(OTF2_EvtWriter_MpiSend(w, nullptr, t, peer, comm, x.tag, bytes), "writing a send");
          return 1;
        }
        started.emplace_back(x.kind, next_request_);
        check(OTF2_EvtWriter_MpiIsend(w, nullptr, t, peer, comm, x.tag, bytes, next_request_++), "writing a send");
        return 1;
      }
      case mpi::ActionKind::IrecvPost:
      case mpi::ActionKind::NbCollRequest:
        started.emplace_back(x.kind, next_request_);
        check(x.kind == mpi::ActionKind::IrecvPost
                  ? OTF2_EvtWriter_MpiIrecvRequest(w, nullptr, t, next_request_++)
                  : OTF2_EvtWriter_NonBlockingCollectiveRequest(w, nullptr, t, next_request_++),
              "writing a request");
        return 1;
      case mpi::ActionKind::Collective:
        check(OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, t), "writing a collective");
        return 1;
      default:
        return 0;
    }
  }

  /// The request a completion finishes: the first of its kind the starting call started and no completion took.
  static std::optional<std::uint64_t> take(Started& started, std::int32_t call, mpi::ActionKind kind) {
    if (call < 0 || static_cast<std::size_t>(call) >= started.size()) return std::nullopt;
    auto& list = started[static_cast<std::size_t>(call)];
    const auto it = std::find_if(list.begin(), list.end(), [kind](const auto& s) { return s.first == kind; });
    if (it == list.end()) return std::nullopt;
    const std::uint64_t id = it->second;
    list.erase(it);
    return id;
  }

  /// The record an action writes as its call ends (a receive, a completion, a collective's end); 0 or 1.
  std::uint64_t end_record(OTF2_EvtWriter* w, OTF2_TimeStamp t, const PredictedAction& x, std::int64_t r,
                           Started& started) {
    const std::uint32_t comm = comms_.id(x.comm, r);
    const auto bytes = static_cast<std::uint64_t>(message_count(x.bytes));
    switch (x.kind) {
      case mpi::ActionKind::Recv: {
        const std::uint32_t peer = comms_.rank_in(comm, x.peer);
        if (x.started < 0) {
          if (peer == OTF2_UNDEFINED_UINT32) return 0;
          check(OTF2_EvtWriter_MpiRecv(w, nullptr, t, peer, comm, x.tag, bytes), "writing a receive");
          return 1;
        }
        const std::optional<std::uint64_t> req = take(started, x.started, mpi::ActionKind::IrecvPost);
        if (!req || peer == OTF2_UNDEFINED_UINT32) return 0;
        check(OTF2_EvtWriter_MpiIrecv(w, nullptr, t, peer, comm, x.tag, bytes, *req), "writing a receive");
        return 1;
      }
      case mpi::ActionKind::IsendComplete: {
        const std::optional<std::uint64_t> req = take(started, x.started, mpi::ActionKind::Send);
        if (!req) return 0;
        check(OTF2_EvtWriter_MpiIsendComplete(w, nullptr, t, *req), "writing a completion");
        return 1;
      }
      case mpi::ActionKind::Collective:
      case mpi::ActionKind::NbCollComplete: {
        const std::uint32_t root =
            x.root >= 0 ? comms_.rank_in(comm, x.root) : static_cast<std::uint32_t>(OTF2_COLLECTIVE_ROOT_NONE);
        const auto op = static_cast<OTF2_CollectiveOp>(x.collective);
        const auto received = static_cast<std::uint64_t>(message_count(x.bytes_received));
        if (x.kind == mpi::ActionKind::Collective) {
          check(OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, t, op, comm, root, bytes, received),
                "writing a collective");
          return 1;
        }
        const std::optional<std::uint64_t> req = take(started, x.started, mpi::ActionKind::NbCollRequest);
        if (!req) return 0;
        check(OTF2_EvtWriter_NonBlockingCollectiveComplete(w, nullptr, t, op, comm, root, bytes, received, *req),
              "writing a collective");
        return 1;
      }
      default:
        return 0;
    }
  }

  OTF2_StringRef str(const std::string& s) {
    const auto [it, inserted] = strings_.emplace(s, static_cast<OTF2_StringRef>(strings_.size()));
    if (inserted) check(OTF2_GlobalDefWriter_WriteString(g_, it->second, s.c_str()), "writing a string");
    return it->second;
  }

  /// In id order, as readers expect them.
  void regions() {
    std::vector<std::pair<std::string, RegionDef>> by_id(regions_.begin(), regions_.end());
    std::sort(by_id.begin(), by_id.end(), [](const auto& x, const auto& y) { return x.second.id < y.second.id; });
    for (const auto& [name, def] : by_id) {
      check(OTF2_GlobalDefWriter_WriteRegion(g_, def.id, str(name), str(name), str(""),
                                             def.phase ? OTF2_REGION_ROLE_LOOP : OTF2_REGION_ROLE_FUNCTION,
                                             def.phase ? OTF2_PARADIGM_USER : OTF2_PARADIGM_MPI, OTF2_REGION_FLAG_NONE,
                                             str(def.phase ? "" : "MPI"), 0, 0),
            "writing a region");
    }
  }

  /// As Score-P writes them: the locations, the self group, the world's ranks, then each communicator's group.
  void communicators() {
    std::vector<std::uint64_t> world;
    for (std::int64_t r = 0; r < n_; ++r) world.push_back(static_cast<std::uint64_t>(r));
    const auto size = static_cast<std::uint32_t>(world.size());
    check(OTF2_GlobalDefWriter_WriteGroup(g_, 0, str(""), OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                          OTF2_GROUP_FLAG_NONE, size, world.data()),
          "writing the locations group");
    check(OTF2_GlobalDefWriter_WriteGroup(g_, 1, str(""), OTF2_GROUP_TYPE_COMM_SELF, OTF2_PARADIGM_MPI,
                                          OTF2_GROUP_FLAG_NONE, 0, nullptr),
          "writing the self group");
    check(OTF2_GlobalDefWriter_WriteGroup(g_, 2, str(""), OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                          OTF2_GROUP_FLAG_NONE, size, world.data()),
          "writing the world group");
    check(OTF2_GlobalDefWriter_WriteComm(g_, CommIds::kWorld, str("MPI_COMM_WORLD"), 2, OTF2_UNDEFINED_COMM,
                                         OTF2_COMM_FLAG_NONE),
          "writing a communicator");
    check(OTF2_GlobalDefWriter_WriteComm(g_, CommIds::kSelf, str("MPI_COMM_SELF"), 1, OTF2_UNDEFINED_COMM,
                                         OTF2_COMM_FLAG_NONE),
          "writing a communicator");
    const std::vector<std::vector<std::int64_t>> groups = comms_.groups();
    for (std::size_t i = 0; i < groups.size(); ++i) {
      std::vector<std::uint64_t> members(groups[i].begin(), groups[i].end());
      const auto group = static_cast<OTF2_GroupRef>(i + 3);
      check(OTF2_GlobalDefWriter_WriteGroup(g_, group, str(""), OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                            OTF2_GROUP_FLAG_NONE, static_cast<std::uint32_t>(members.size()),
                                            members.data()),
            "writing a communicator group");
      const auto id = static_cast<OTF2_CommRef>(i + 2);
      check(OTF2_GlobalDefWriter_WriteComm(g_, id, str("Comm " + std::to_string(id)), group, CommIds::kWorld,
                                           OTF2_COMM_FLAG_NONE),
            "writing a communicator");
    }
  }

  const Model& model_;
  std::int64_t n_;
  const std::vector<PhasePredictor>& phases_;
  const PredictionCheck& check_;
  const std::vector<std::optional<double>>& instance_ns_;  ///< per phase index
  CommIds comms_;
  std::vector<PhaseRun> order_;
  std::map<std::string, RegionDef> regions_;
  std::vector<std::uint64_t> events_per_rank_;
  std::uint64_t next_request_ = 0;
  std::uint64_t last_ts_ = 0;
  double run_ns_ = 0;
  std::uint64_t squeezed_ = 0;
  OTF2_GlobalDefWriter* g_ = nullptr;
  std::map<std::string, OTF2_StringRef> strings_;
};

/// Each phase's time per instance (by index in the model), and the phases at n that have none.
std::vector<std::optional<double>> instance_times(const Model& model, std::int64_t n, const PhaseTimes& times,
                                                  std::vector<std::uint32_t>& untimed) {
  std::vector<std::optional<double>> out(model.phases.size());
  bool any = false;
  for (std::size_t p = 0; p < model.phases.size(); ++p) {
    const auto it = times.instance_ns.find(model.phases[p].id);
    if (it != times.instance_ns.end()) {
      out[p] = it->second;
      any = true;
    } else if (model.phases[p].weight_at(n) > 0) {
      untimed.push_back(model.phases[p].id);
    }
  }
  if (!any) {
    throw InputError("'" + times.source +
                     "' has no time for any phase of the model: give the result of a replay of "
                     "this model at n = " +
                     std::to_string(n));
  }
  return out;
}

/// Moves the archive written in `from` into `dir`, the anchor file last (an archive is there whole or not at all).
void move_archive(const fs::path& from, const fs::path& dir) {
  std::error_code ec;
  for (const char* entry : {"traces.otf2", "traces.def", "traces"}) fs::remove_all(dir / entry, ec);
  for (const char* entry : {"traces", "traces.def", "traces.otf2"}) {
    fs::rename(from / entry, dir / entry, ec);
    if (ec)
      throw Error("cannot move the archive's " + std::string(entry) + " into '" + dir.string() + "': " + ec.message());
  }
  fs::remove_all(from, ec);
}

}  // namespace

TimedTrace write_timed_otf2(const Model& model, std::int64_t n, const PhaseTimes& times, const fs::path& dir,
                            OnInconsistency policy, const std::string& model_path) {
  const ScopedDimsRule rule(model.dims_rule);
  TimedTrace out;
  const std::vector<std::optional<double>> instance_ns = instance_times(model, n, times, out.untimed);
  CheckedPrediction checked = checked_timed_prediction(model, n, policy);
  const std::vector<PhasePredictor>& phases = checked.phases;
  out.check = std::move(checked.check);

  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error("cannot create '" + dir.string() + "': " + ec.message());
  const fs::path partial = dir / ".p3s-partial-otf2";
  fs::remove_all(partial, ec);
  std::string error;
  interpose::ArchivePtr archive = interpose::create_archive(partial.string(), error);
  if (!archive ||
      !interpose::try_otf2(OTF2_Archive_SetSerialCollectiveCallbacks(archive.get()), "setting callbacks", error)) {
    throw Otf2Error("cannot create the predicted run's archive in '" + partial.string() + "': " + error);
  }
  TimedArchive timed(model, n, phases, out.check, instance_ns);
  interpose::ArchiveParts parts;
  parts.events = [&](OTF2_Archive* a, std::vector<std::uint64_t>& locations, std::string&) {
    timed.events(a, locations);
    return true;
  };
  parts.global_definitions = [&](OTF2_Archive* a, std::string&) {
    timed.definitions(a, model_path, times.source);
    return true;
  };
  if (!interpose::write_archive(std::move(archive), parts, error)) {
    fs::remove_all(partial, ec);
    throw Otf2Error("writing the predicted run to '" + dir.string() + "' failed (" + error +
                    "); check that the directory is writable and has space");
  }
  move_archive(partial, dir);
  out.events = timed.events();
  out.run_ns = timed.run_ns();
  out.squeezed_instances = timed.squeezed();
  return out;
}

}  // namespace p3s::modeler
