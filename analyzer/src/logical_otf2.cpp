// SPDX-License-Identifier: BSD-3-Clause
// The logical trace as OTF2 for Vampir: time is the Lamport tick (1000 timer ticks per tick, so a viewer's
// "second" is one tick), every MPI call keeps its region and messages, and each phase instance is a region
// "phase N" enclosing its calls.
#include <algorithm>
#include <map>
#include <memory>
#include <unordered_map>

#include <otf2/otf2.h>

#include "logical_export.hpp"
#include "p3s/error.hpp"
#include "p3s/interpose/archive_writer.hpp"
#include "p3s/version.hpp"

namespace p3s::analyzer {
namespace {

constexpr std::uint64_t kPerTick = 1000;

std::uint64_t location_of(const ExtractedLocation& l) {
  return (static_cast<std::uint64_t>(l.thread) << 32) | static_cast<std::uint32_t>(l.rank);
}

/// Collective operation as OTF2 numbers it (mpi::Collective carries OTF2's values).
OTF2_CollectiveOp otf2_op(mpi::Collective op) { return static_cast<OTF2_CollectiveOp>(op); }

/// The logical trace's parts: every location's calls on ticks inside phase regions, then the definitions.
class LogicalArchive {
 public:
  LogicalArchive(const TraceDefinitions& defs, const Extracted& ex,
                 const std::vector<std::filesystem::path>& tick_files, const OccurrenceLabels& labels,
                 const Signature& sig)
      : defs_(defs), ex_(ex), tick_files_(tick_files), labels_(labels), sig_(sig) {
    for (const Communicator& c : defs.comms) {
      if (c.id == kNoRef || c.kind != CommKind::Group) continue;
      auto& m = rank_in_[c.id];
      for (std::size_t i = 0; i < c.world_ranks.size(); ++i) m[c.world_ranks[i]] = static_cast<std::uint32_t>(i);
    }
  }

  void events(OTF2_Archive* a, std::vector<std::uint64_t>& locations) {
    for (std::size_t l = 0; l < ex_.locations.size(); ++l) {
      const std::uint64_t id = location_of(ex_.locations[l]);
      OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(a, id);
      if (w == nullptr) throw Otf2Error("cannot open the event writer of location " + std::to_string(id));
      events_per_location_[id] = location_events(w, l);
      check(OTF2_Archive_CloseEvtWriter(a, w), "closing an event writer");
      locations.push_back(id);
    }
  }

  void definitions(OTF2_Archive* a) {
    OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(a);
    g_ = g;
    check(OTF2_GlobalDefWriter_WriteClockProperties(g, kPerTick, 0, last_ts_ + 1, OTF2_UNDEFINED_TIMESTAMP),
          "writing the clock");
    check(OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_MPI, str("MPI"), OTF2_PARADIGM_CLASS_PROCESS),
          "writing the paradigm");
    check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, str("logical trace"), str("machine"),
                                                   OTF2_UNDEFINED_SYSTEM_TREE_NODE),
          "writing the system tree");
    const std::vector<std::uint64_t> world = processes_and_locations();
    regions();
    communicators(world);
    check(OTF2_Archive_SetCreator(a, (std::string("p3s ") + kVersion + " (logical trace)").c_str()),
          "setting the creator");
    check(OTF2_Archive_SetProperty(a, "P3S::LOGICAL", "true", true), "setting a property");
    check(OTF2_Archive_CloseGlobalDefWriter(a, g), "closing the definitions");
  }

 private:
  /// Stops the writing on an OTF2 failure; write_logical_otf2 says where.
  static void check(OTF2_ErrorCode rc, const char* what) {
    if (rc != OTF2_SUCCESS) throw Otf2Error(std::string(what) + ": " + OTF2_Error_GetName(rc));
  }

  /// A message peer or root as a rank of the communicator the record names.
  std::uint32_t comm_rank(std::uint32_t comm, std::int32_t world) const {
    const Communicator* c = defs_.comm(comm);
    if (c != nullptr && c->kind == CommKind::Self) return 0;
    const auto it = rank_in_.find(comm);
    if (it == rank_in_.end()) return OTF2_UNDEFINED_UINT32;
    const auto r = it->second.find(world);
    return r == it->second.end() ? OTF2_UNDEFINED_UINT32 : r->second;
  }

  OTF2_RegionRef phase_region(std::uint32_t phase) const {
    return static_cast<OTF2_RegionRef>(defs_.regions.size() + phase);
  }

  /// Writes location l's calls on their ticks, each phase instance a region around its calls; returns the
  /// number of records.
  std::uint64_t location_events(OTF2_EvtWriter* w, std::size_t l) {
    constexpr std::size_t kNone = static_cast<std::size_t>(-1);
    std::size_t open = kNone;
    std::uint64_t ts = 0;
    std::uint64_t n = 0;
    const auto at = [&](std::uint64_t tick) {
      ts = std::max(ts + 1, tick * kPerTick);
      return ts;
    };
    OpSweep sweep(ex_.locations[l], l, tick_files_[l], *labels_.occurrences);
    while (sweep.next()) {
      const std::size_t occ = sweep.occurrence;
      if (occ != open) {
        if (open != kNone) {
          check(OTF2_EvtWriter_Leave(w, nullptr, ++ts, phase_region(labels_.phase[open])), "leaving a phase");
          ++n;
        }
        check(OTF2_EvtWriter_Enter(w, nullptr, at(sweep.op_tick), phase_region(labels_.phase[occ])),
              "entering a phase");
        ++n;
        open = occ;
      }
      check(OTF2_EvtWriter_Enter(w, nullptr, at(sweep.op_tick), sweep.op.header.region), "entering a call");
      ++n;
      n += call_records(w, sweep, at);
      check(OTF2_EvtWriter_Leave(w, nullptr, ++ts, sweep.op.header.region), "leaving a call");
      ++n;
    }
    if (open != kNone) {
      check(OTF2_EvtWriter_Leave(w, nullptr, ++ts, phase_region(labels_.phase[open])), "leaving a phase");
      ++n;
    }
    last_ts_ = std::max(last_ts_, ts);
    return n;
  }

  /// The message and collective records of one call; returns how many.
  template <typename At>
  std::uint64_t call_records(OTF2_EvtWriter* w, const OpSweep& sweep, At& at) {
    std::uint64_t n = 0;
    const Op& op = sweep.op;
    for (std::size_t i = 0; i < op.actions.size(); ++i) {
      const Action& x = op.actions[i];
      const std::uint64_t t = at(sweep.action_ticks[i] != 0 ? sweep.action_ticks[i] : sweep.op_tick);
      OTF2_ErrorCode rc = OTF2_SUCCESS;
      switch (x.kind) {
        case mpi::ActionKind::Send:
          rc = OTF2_EvtWriter_MpiSend(w, nullptr, t, comm_rank(x.comm, x.peer), x.comm, x.tag, x.bytes);
          break;
        case mpi::ActionKind::Recv:
          rc = OTF2_EvtWriter_MpiRecv(w, nullptr, t, comm_rank(x.comm, x.peer), x.comm, x.tag, x.bytes);
          break;
        case mpi::ActionKind::Collective:
        case mpi::ActionKind::NbCollComplete:
          rc = OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, t);
          if (rc == OTF2_SUCCESS) {
            rc = OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, at(sweep.action_ticks[i]), otf2_op(x.op), x.comm,
                                                 x.root >= 0 ? comm_rank(x.comm, x.root) : OTF2_COLLECTIVE_ROOT_NONE,
                                                 x.bytes, x.bytes_received);
          }
          ++n;
          break;
        default:
          continue;
      }
      check(rc, "writing a message");
      ++n;
    }
    return n;
  }

  OTF2_StringRef str(const std::string& s) {
    const auto [it, inserted] = strings_.emplace(s, static_cast<OTF2_StringRef>(strings_.size()));
    if (inserted) check(OTF2_GlobalDefWriter_WriteString(g_, it->second, s.c_str()), "writing a string");
    return it->second;
  }

  /// One process per rank and its locations (every rank resolves as a peer, with events or not); returns the
  /// world ranks' locations.
  std::vector<std::uint64_t> processes_and_locations() {
    std::vector<std::uint64_t> world;
    for (std::int32_t r = 0; r < defs_.processes; ++r) {
      check(OTF2_GlobalDefWriter_WriteLocationGroup(g_, static_cast<OTF2_LocationGroupRef>(r),
                                                    str("MPI Rank " + std::to_string(r)),
                                                    OTF2_LOCATION_GROUP_TYPE_PROCESS, 0, OTF2_UNDEFINED_LOCATION_GROUP),
            "writing a process");
      const std::uint64_t id = static_cast<std::uint32_t>(r);
      world.push_back(id);
      events_per_location_.try_emplace(id, 0);
    }
    for (const auto& [id, n] : events_per_location_) {
      const auto thread = static_cast<std::uint32_t>(id >> 32);
      check(OTF2_GlobalDefWriter_WriteLocation(
                g_, id, str(thread == 0 ? "Master thread" : "Thread " + std::to_string(thread)),
                OTF2_LOCATION_TYPE_CPU_THREAD, n, static_cast<OTF2_LocationGroupRef>(id & 0xffffffffu)),
            "writing a location");
    }
    return world;
  }

  /// The trace's regions, then one per phase.
  void regions() {
    for (const Region& r : defs_.regions) {
      if (r.id == kNoRef) continue;
      check(OTF2_GlobalDefWriter_WriteRegion(g_, r.id, str(r.name), str(r.name), str(""),
                                             r.is_mpi() ? OTF2_REGION_ROLE_FUNCTION : OTF2_REGION_ROLE_CODE,
                                             r.is_mpi() ? OTF2_PARADIGM_MPI : OTF2_PARADIGM_USER, OTF2_REGION_FLAG_NONE,
                                             str(r.is_mpi() ? "MPI" : ""), 0, 0),
            "writing a region");
    }
    for (const SigPhase& p : sig_.phases) {
      const std::string name = "phase " + std::to_string(p.id);
      check(OTF2_GlobalDefWriter_WriteRegion(g_, phase_region(p.id), str(name), str(name),
                                             str("weight " + std::to_string(p.weight)), OTF2_REGION_ROLE_LOOP,
                                             OTF2_PARADIGM_USER, OTF2_REGION_FLAG_NONE, str(""), 0, 0),
            "writing a phase region");
    }
  }

  /// The communicators, as Score-P writes them: the world's locations, then each communicator's group.
  void communicators(const std::vector<std::uint64_t>& world) {
    check(OTF2_GlobalDefWriter_WriteGroup(g_, 0, str(""), OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                          OTF2_GROUP_FLAG_NONE, static_cast<std::uint32_t>(world.size()), world.data()),
          "writing the locations group");
    check(OTF2_GlobalDefWriter_WriteGroup(g_, 1, str(""), OTF2_GROUP_TYPE_COMM_SELF, OTF2_PARADIGM_MPI,
                                          OTF2_GROUP_FLAG_NONE, 0, nullptr),
          "writing the self group");
    OTF2_GroupRef next_group = 2;
    for (const Communicator& c : defs_.comms) {
      if (c.id == kNoRef || (c.kind != CommKind::Group && c.kind != CommKind::Self)) continue;
      OTF2_GroupRef group = 1;
      if (c.kind == CommKind::Group) {
        std::vector<std::uint64_t> members;
        for (std::int32_t w : c.world_ranks) members.push_back(w >= 0 ? static_cast<std::uint64_t>(w) : world.size());
        group = next_group++;
        check(OTF2_GlobalDefWriter_WriteGroup(g_, group, str(""), OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                              OTF2_GROUP_FLAG_NONE, static_cast<std::uint32_t>(members.size()),
                                              members.data()),
              "writing a communicator group");
      }
      check(OTF2_GlobalDefWriter_WriteComm(g_, c.id, str(c.name.empty() ? "Comm " + std::to_string(c.id) : c.name),
                                           group, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE),
            "writing a communicator");
    }
  }

  const TraceDefinitions& defs_;
  const Extracted& ex_;
  const std::vector<std::filesystem::path>& tick_files_;
  const OccurrenceLabels& labels_;
  const Signature& sig_;
  /// World rank -> rank in each communicator, for message records.
  std::unordered_map<std::uint32_t, std::unordered_map<std::int32_t, std::uint32_t>> rank_in_;
  std::map<std::uint64_t, std::uint64_t> events_per_location_;
  std::uint64_t last_ts_ = 0;
  OTF2_GlobalDefWriter* g_ = nullptr;
  std::map<std::string, OTF2_StringRef> strings_;
};

}  // namespace

void write_logical_otf2(const std::filesystem::path& dir, const TraceDefinitions& defs, const Extracted& ex,
                        const std::vector<std::filesystem::path>& tick_files, const OccurrenceLabels& labels,
                        const Signature& sig) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InputError("cannot create '" + dir.string() + "' for --otf2-logical: " + ec.message());
  for (const char* entry : {"traces.otf2", "traces.def", "traces"}) std::filesystem::remove_all(dir / entry, ec);
  std::string error;
  interpose::ArchivePtr archive = interpose::create_archive(dir.string(), error);
  if (!archive ||
      !interpose::try_otf2(OTF2_Archive_SetSerialCollectiveCallbacks(archive.get()), "setting callbacks", error)) {
    throw Otf2Error("cannot create the logical trace in '" + dir.string() + "': " + error);
  }
  LogicalArchive logical(defs, ex, tick_files, labels, sig);
  interpose::ArchiveParts parts;
  parts.events = [&](OTF2_Archive* a, std::vector<std::uint64_t>& locations, std::string&) {
    logical.events(a, locations);
    return true;
  };
  parts.global_definitions = [&](OTF2_Archive* a, std::string&) {
    logical.definitions(a);
    return true;
  };
  if (!interpose::write_archive(std::move(archive), parts, error)) {
    throw Otf2Error("writing the logical trace to '" + dir.string() + "' failed (" + error +
                    "); check that the directory is writable and has space");
  }
}

}  // namespace p3s::analyzer
