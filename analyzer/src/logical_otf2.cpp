// SPDX-License-Identifier: BSD-3-Clause
// The logical trace as OTF2 for Vampir: time is the Lamport tick (1000 timer ticks per tick, so a viewer's
// "second" is one tick), every MPI call keeps its region and messages, and each phase instance is a region
// "phase N" enclosing its calls.
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <unordered_map>

#include <otf2/otf2.h>

#include "logical_export.hpp"
#include "p3s/error.hpp"
#include "p3s/version.hpp"

namespace p3s::analyzer {
namespace {

constexpr std::uint64_t kPerTick = 1000;

OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }
OTF2_TimeStamp post_flush(void*, OTF2_FileType, OTF2_LocationRef) { return 0; }
constexpr OTF2_FlushCallbacks kFlush = {pre_flush, post_flush};

struct ArchiveClose {
  void operator()(OTF2_Archive* a) const noexcept { OTF2_Archive_Close(a); }
};

void check(OTF2_ErrorCode rc, const char* what, const std::filesystem::path& dir) {
  if (rc != OTF2_SUCCESS) {
    throw Otf2Error("writing the logical trace to '" + dir.string() + "' failed while " + what + ": " +
                    OTF2_Error_GetName(rc));
  }
}

std::uint64_t location_of(const ExtractedLocation& l) {
  return (static_cast<std::uint64_t>(l.thread) << 32) | static_cast<std::uint32_t>(l.rank);
}

/// Collective operation as OTF2 numbers it (mpi::Collective carries OTF2's values).
OTF2_CollectiveOp otf2_op(mpi::Collective op) { return static_cast<OTF2_CollectiveOp>(op); }

}  // namespace

void write_logical_otf2(const std::filesystem::path& dir, const TraceDefinitions& defs, const Extracted& ex,
                        const std::vector<std::filesystem::path>& tick_files, const OccurrenceLabels& labels,
                        const Signature& sig) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InputError("cannot create '" + dir.string() + "' for --otf2-logical: " + ec.message());
  for (const char* entry : {"traces.otf2", "traces.def", "traces"}) std::filesystem::remove_all(dir / entry, ec);
  std::unique_ptr<OTF2_Archive, ArchiveClose> archive(
      OTF2_Archive_Open(dir.c_str(), "traces", OTF2_FILEMODE_WRITE, OTF2_CHUNK_SIZE_EVENTS_DEFAULT,
                        OTF2_CHUNK_SIZE_DEFINITIONS_DEFAULT, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE));
  if (!archive) throw Otf2Error("cannot create an OTF2 archive in '" + dir.string() + "'");
  OTF2_Archive* a = archive.get();
  check(OTF2_Archive_SetFlushCallbacks(a, &kFlush, nullptr), "setting flush callbacks", dir);
  check(OTF2_Archive_SetSerialCollectiveCallbacks(a), "setting collective callbacks", dir);
  check(OTF2_Archive_OpenEvtFiles(a), "opening event files", dir);

  // World rank -> rank in each communicator, for message records.
  std::unordered_map<std::uint32_t, std::unordered_map<std::int32_t, std::uint32_t>> rank_in;
  for (const Communicator& c : defs.comms) {
    if (c.id == kNoRef || c.kind != CommKind::Group) continue;
    auto& m = rank_in[c.id];
    for (std::size_t i = 0; i < c.world_ranks.size(); ++i) m[c.world_ranks[i]] = static_cast<std::uint32_t>(i);
  }
  const auto comm_rank = [&](std::uint32_t comm, std::int32_t world) -> std::uint32_t {
    const Communicator* c = defs.comm(comm);
    if (c != nullptr && c->kind == CommKind::Self) return 0;
    const auto it = rank_in.find(comm);
    if (it == rank_in.end()) return OTF2_UNDEFINED_UINT32;
    const auto r = it->second.find(world);
    return r == it->second.end() ? OTF2_UNDEFINED_UINT32 : r->second;
  };
  const auto phase_region = [&](std::uint32_t phase) {
    return static_cast<OTF2_RegionRef>(defs.regions.size() + phase);
  };

  std::uint64_t last_ts = 0;
  std::map<std::uint64_t, std::uint64_t> events_per_location;
  for (std::size_t l = 0; l < ex.locations.size(); ++l) {
    const ExtractedLocation& loc = ex.locations[l];
    OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(a, location_of(loc));
    if (w == nullptr) throw Otf2Error("cannot open an event writer in '" + dir.string() + "'");
    std::size_t open = static_cast<std::size_t>(-1);
    std::uint64_t ts = 0;
    std::uint64_t n = 0;
    const auto at = [&](std::uint64_t tick) {
      ts = std::max(ts + 1, tick * kPerTick);
      return ts;
    };
    OpSweep sweep(loc, tick_files[l], labels.first_tick);
    while (sweep.next()) {
      const Op& op = sweep.op;
      const std::uint64_t op_tick = sweep.op_tick;
      const std::vector<std::uint64_t>& action_ticks = sweep.action_ticks;
      const std::size_t occ = sweep.occurrence;
      if (occ != open) {
        if (open != static_cast<std::size_t>(-1)) {
          check(OTF2_EvtWriter_Leave(w, nullptr, ++ts, phase_region(labels.phase[open])), "leaving a phase", dir);
          ++n;
        }
        check(OTF2_EvtWriter_Enter(w, nullptr, at(op_tick), phase_region(labels.phase[occ])), "entering a phase", dir);
        ++n;
        open = occ;
      }
      check(OTF2_EvtWriter_Enter(w, nullptr, at(op_tick), op.header.region), "entering a call", dir);
      ++n;
      for (std::size_t i = 0; i < op.actions.size(); ++i) {
        const Action& x = op.actions[i];
        const std::uint64_t t = at(action_ticks[i] != 0 ? action_ticks[i] : op_tick);
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
              rc = OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, at(action_ticks[i]), otf2_op(x.op), x.comm,
                                                   x.root >= 0 ? comm_rank(x.comm, x.root) : OTF2_COLLECTIVE_ROOT_NONE,
                                                   x.bytes, x.bytes_received);
            }
            ++n;
            break;
          default:
            continue;
        }
        check(rc, "writing a message", dir);
        ++n;
      }
      check(OTF2_EvtWriter_Leave(w, nullptr, ++ts, op.header.region), "leaving a call", dir);
      ++n;
    }
    if (open != static_cast<std::size_t>(-1)) {
      check(OTF2_EvtWriter_Leave(w, nullptr, ++ts, phase_region(labels.phase[open])), "leaving a phase", dir);
      ++n;
    }
    check(OTF2_Archive_CloseEvtWriter(a, w), "closing an event writer", dir);
    events_per_location[location_of(loc)] = n;
    last_ts = std::max(last_ts, ts);
  }
  check(OTF2_Archive_CloseEvtFiles(a), "closing event files", dir);
  check(OTF2_Archive_OpenDefFiles(a), "opening definition files", dir);
  for (const auto& [id, n] : events_per_location) {
    OTF2_DefWriter* dw = OTF2_Archive_GetDefWriter(a, id);
    check(OTF2_Archive_CloseDefWriter(a, dw), "writing local definitions", dir);
  }
  check(OTF2_Archive_CloseDefFiles(a), "closing definition files", dir);

  // Global definitions.
  OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(a);
  std::map<std::string, OTF2_StringRef> strings;
  const auto str = [&](const std::string& s) {
    const auto [it, inserted] = strings.emplace(s, static_cast<OTF2_StringRef>(strings.size()));
    if (inserted) check(OTF2_GlobalDefWriter_WriteString(g, it->second, s.c_str()), "writing a string", dir);
    return it->second;
  };
  check(OTF2_GlobalDefWriter_WriteClockProperties(g, kPerTick, 0, last_ts + 1, OTF2_UNDEFINED_TIMESTAMP),
        "writing the clock", dir);
  check(OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_MPI, str("MPI"), OTF2_PARADIGM_CLASS_PROCESS),
        "writing the paradigm", dir);
  check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, str("logical trace"), str("machine"),
                                                 OTF2_UNDEFINED_SYSTEM_TREE_NODE),
        "writing the system tree", dir);
  for (std::int32_t r = 0; r < defs.processes; ++r) {
    check(OTF2_GlobalDefWriter_WriteLocationGroup(g, static_cast<OTF2_LocationGroupRef>(r),
                                                  str("MPI Rank " + std::to_string(r)),
                                                  OTF2_LOCATION_GROUP_TYPE_PROCESS, 0, OTF2_UNDEFINED_LOCATION_GROUP),
          "writing a process", dir);
  }
  std::vector<std::uint64_t> world;
  for (std::int32_t r = 0; r < defs.processes; ++r) {
    const std::uint64_t id = static_cast<std::uint32_t>(r);
    world.push_back(id);
    events_per_location.try_emplace(id, 0);  // every rank resolves as a peer
  }
  for (const auto& [id, n] : events_per_location) {
    const auto thread = static_cast<std::uint32_t>(id >> 32);
    check(OTF2_GlobalDefWriter_WriteLocation(
              g, id, str(thread == 0 ? "Master thread" : "Thread " + std::to_string(thread)),
              OTF2_LOCATION_TYPE_CPU_THREAD, n, static_cast<OTF2_LocationGroupRef>(id & 0xffffffffu)),
          "writing a location", dir);
  }
  for (const Region& r : defs.regions) {
    if (r.id == kNoRef) continue;
    check(OTF2_GlobalDefWriter_WriteRegion(g, r.id, str(r.name), str(r.name), str(""),
                                           r.is_mpi() ? OTF2_REGION_ROLE_FUNCTION : OTF2_REGION_ROLE_CODE,
                                           r.is_mpi() ? OTF2_PARADIGM_MPI : OTF2_PARADIGM_USER, OTF2_REGION_FLAG_NONE,
                                           str(r.is_mpi() ? "MPI" : ""), 0, 0),
          "writing a region", dir);
  }
  for (const SigPhase& p : sig.phases) {
    const std::string name = "phase " + std::to_string(p.id);
    check(OTF2_GlobalDefWriter_WriteRegion(g, phase_region(p.id), str(name), str(name),
                                           str("weight " + std::to_string(p.weight)), OTF2_REGION_ROLE_LOOP,
                                           OTF2_PARADIGM_USER, OTF2_REGION_FLAG_NONE, str(""), 0, 0),
          "writing a phase region", dir);
  }
  check(OTF2_GlobalDefWriter_WriteGroup(g, 0, str(""), OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                        OTF2_GROUP_FLAG_NONE, static_cast<std::uint32_t>(world.size()), world.data()),
        "writing the locations group", dir);
  check(OTF2_GlobalDefWriter_WriteGroup(g, 1, str(""), OTF2_GROUP_TYPE_COMM_SELF, OTF2_PARADIGM_MPI,
                                        OTF2_GROUP_FLAG_NONE, 0, nullptr),
        "writing the self group", dir);
  OTF2_GroupRef next_group = 2;
  for (const Communicator& c : defs.comms) {
    if (c.id == kNoRef || (c.kind != CommKind::Group && c.kind != CommKind::Self)) continue;
    OTF2_GroupRef group = 1;
    if (c.kind == CommKind::Group) {
      std::vector<std::uint64_t> members;
      for (std::int32_t w : c.world_ranks) members.push_back(w >= 0 ? static_cast<std::uint64_t>(w) : world.size());
      group = next_group++;
      check(OTF2_GlobalDefWriter_WriteGroup(g, group, str(""), OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                            OTF2_GROUP_FLAG_NONE, static_cast<std::uint32_t>(members.size()),
                                            members.data()),
            "writing a communicator group", dir);
    }
    check(OTF2_GlobalDefWriter_WriteComm(g, c.id, str(c.name.empty() ? "Comm " + std::to_string(c.id) : c.name), group,
                                         OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE),
          "writing a communicator", dir);
  }
  check(OTF2_Archive_SetCreator(a, (std::string("p3s ") + kVersion + " (logical trace)").c_str()),
        "setting the creator", dir);
  check(OTF2_Archive_SetProperty(a, "P3S::LOGICAL", "true", true), "setting a property", dir);
  check(OTF2_Archive_CloseGlobalDefWriter(a, g), "closing the definitions", dir);
  OTF2_Archive* raw = archive.release();
  check(OTF2_Archive_Close(raw), "closing the archive", dir);
}

}  // namespace p3s::analyzer
