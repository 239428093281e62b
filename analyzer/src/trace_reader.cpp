// SPDX-License-Identifier: BSD-3-Clause
// OTF2 -> definitions and event streams. Follows the conventions Score-P uses and `p3s record` copies:
// ranks come from the MPI COMM_LOCATIONS group, communicator ranks from COMM_GROUP / COMM_SELF groups,
// metric records precede the Enter/Leave they belong to.
#include "p3s/analyzer/trace_reader.hpp"

#include "otf2_support.hpp"
#include "p3s/error.hpp"
#include "p3s/trace/schema.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <set>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace p3s::analyzer {
namespace fs = std::filesystem;
using detail::otf2_error_text;

namespace {

/// Definition ids are small dense integers in every writer we know (Score-P, p3s); tables are vectors
/// indexed by id. An id beyond this is taken as corruption rather than allocated for.
constexpr std::uint32_t kMaxDenseId = 1u << 24;

/// Records per batch behind the pull interface (LocationStream::next).
constexpr std::uint64_t kPullBatch = 1024;

/// The end of every message about a damaged archive.
std::string damaged_fix(bool p3s_archive) {
  return p3s_archive ? "the archive is truncated or corrupt; record the run again (or, if it died before "
                       "MPI_Finalize, rebuild the archive from its raw logs with `p3s recover DIR`)"
                     : "the archive is truncated or corrupt; record the run again";
}

/// Whether OTF2 reads the anchor file without crashing, tried in a child process first: OTF2 3.0 frees a buffer twice
/// loading some damaged anchor files (a malformed string), which aborts the process instead of returning an error.
/// True where no child can be made: the read is then tried in this process, as without the check.
bool anchor_loads(const fs::path& anchor) {
  const pid_t child = fork();
  if (child < 0) return true;
  if (child == 0) {
    // The child's complaints (OTF2's, the C library's abort message) are not the user's: this process says it.
    const int quiet = open("/dev/null", O_WRONLY);
    if (quiet >= 0) dup2(quiet, STDERR_FILENO);
    OTF2_Reader* r = OTF2_Reader_Open(anchor.c_str());
    if (r != nullptr) OTF2_Reader_Close(r);
    _exit(0);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) return true;
  }
  return !WIFSIGNALED(status);
}

Paradigm to_paradigm(OTF2_Paradigm p) {
  switch (p) {
    case OTF2_PARADIGM_UNKNOWN:
      return Paradigm::Unknown;
    case OTF2_PARADIGM_USER:
      return Paradigm::User;
    case OTF2_PARADIGM_COMPILER:
      return Paradigm::Compiler;
    case OTF2_PARADIGM_OPENMP:
      return Paradigm::OpenMp;
    case OTF2_PARADIGM_MPI:
      return Paradigm::Mpi;
    case OTF2_PARADIGM_MEASUREMENT_SYSTEM:
      return Paradigm::MeasurementSystem;
    case OTF2_PARADIGM_PTHREAD:
      return Paradigm::Pthread;
    default:
      return Paradigm::Other;
  }
}

RegionRole to_role(OTF2_RegionRole r) {
  switch (r) {
    case OTF2_REGION_ROLE_UNKNOWN:
      return RegionRole::Unknown;
    case OTF2_REGION_ROLE_FUNCTION:
    case OTF2_REGION_ROLE_WRAPPER:
      return RegionRole::Function;
    case OTF2_REGION_ROLE_POINT2POINT:
      return RegionRole::PointToPoint;
    case OTF2_REGION_ROLE_COLL_ONE2ALL:
      return RegionRole::CollectiveOneToAll;
    case OTF2_REGION_ROLE_COLL_ALL2ONE:
      return RegionRole::CollectiveAllToOne;
    case OTF2_REGION_ROLE_COLL_ALL2ALL:
      return RegionRole::CollectiveAllToAll;
    case OTF2_REGION_ROLE_COLL_OTHER:
      return RegionRole::CollectiveOther;
    case OTF2_REGION_ROLE_BARRIER:
    case OTF2_REGION_ROLE_IMPLICIT_BARRIER:
      return RegionRole::Barrier;
    case OTF2_REGION_ROLE_FILE_IO:
    case OTF2_REGION_ROLE_FILE_IO_METADATA:
      return RegionRole::FileIo;
    case OTF2_REGION_ROLE_RMA:
      return RegionRole::Rma;
    case OTF2_REGION_ROLE_ARTIFICIAL:
      return RegionRole::Artificial;
    default:
      return RegionRole::Other;
  }
}

// The vocabulary's collectives carry OTF2's numbers, so archives map onto them by value.
static_assert(static_cast<int>(mpi::Collective::Allreduce) == OTF2_COLLECTIVE_OP_ALLREDUCE);
static_assert(static_cast<int>(mpi::Collective::ReduceScatterBlock) == OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK);
static_assert(static_cast<int>(mpi::Collective::DestroyHandleAndDeallocate) ==
              OTF2_COLLECTIVE_OP_DESTROY_HANDLE_AND_DEALLOCATE);

mpi::Collective to_op(OTF2_CollectiveOp op) {
  return op <= OTF2_COLLECTIVE_OP_DESTROY_HANDLE_AND_DEALLOCATE ? static_cast<mpi::Collective>(op)
                                                                : mpi::Collective::Unknown;
}

/// The entry `id` of an id-indexed table, growing it as needed.
template <class T>
T& slot(std::vector<T>& table, std::uint32_t id) {
  if (id >= kMaxDenseId) throw TraceError("definition id " + std::to_string(id) + " is implausibly large");
  if (id >= table.size()) table.resize(static_cast<std::size_t>(id) + 1);
  return table[id];
}

/// A Group definition as written; resolved into communicators once all definitions are read.
struct RawGroup {
  bool defined = false;
  OTF2_GroupType type = OTF2_GROUP_TYPE_UNKNOWN;
  OTF2_Paradigm paradigm = OTF2_PARADIGM_UNKNOWN;
  OTF2_GroupFlag flags = OTF2_GROUP_FLAG_NONE;
  std::vector<std::uint64_t> members;
};

struct RawComm {
  bool defined = false;
  OTF2_StringRef name = OTF2_UNDEFINED_STRING;
  OTF2_GroupRef group = OTF2_UNDEFINED_GROUP;
  OTF2_GroupRef remote_group = OTF2_UNDEFINED_GROUP;  ///< inter-communicators only
  bool inter = false;
  OTF2_CommRef parent = OTF2_UNDEFINED_COMM;
};

/// String references of the definitions that name things; strings may be defined after their users.
struct NameRefs {
  std::vector<std::array<OTF2_StringRef, 3>> regions;  // name, canonical name, source file
  std::vector<OTF2_StringRef> location_groups;
  std::vector<std::pair<std::uint64_t, OTF2_StringRef>> locations;
  std::vector<std::array<OTF2_StringRef, 3>> metric_members;  // name, description, unit
  std::vector<std::pair<OTF2_AttributeRef, std::pair<OTF2_StringRef, OTF2_Type>>> attributes;
};

/// Frees what OTF2 allocated with malloc.
struct FreeDeleter {
  void operator()(void* p) const noexcept { std::free(p); }
};

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// Reader state

struct detail::ReaderImpl {
  detail::ReaderPtr reader;
  TraceDefinitions defs;
  std::string label;   ///< "trace '<anchor>'", the start of every message
  std::string fix;     ///< what to do about a damaged archive, the end of such messages
  fs::path event_dir;  ///< where POSIX archives keep <location>.evt
  std::set<StreamState*> open_streams;

  // Scratch of the global definition pass.
  std::vector<RawGroup> groups;
  std::vector<RawComm> comms;
  NameRefs names;
  std::string callback_error;

  ~ReaderImpl();
  void read_global_definitions();
  void read_local_definitions();
  /// Once every definition is read: names, ranks, communicators as world ranks, and the work metric.
  void resolve();
  void resolve_names();
  void resolve_ranks();
  void resolve_communicators();
  void resolve_work_metric();
  /// The world ranks of a group's members, and what kind of communicator it makes.
  [[nodiscard]] std::vector<std::int32_t> group_ranks(OTF2_GroupRef ref, CommKind& kind) const;
  [[nodiscard]] std::string location_label(const Location& l) const {
    return label + ", location " + std::to_string(l.id) + " (rank " + std::to_string(l.rank) + ")";
  }
};

// ---------------------------------------------------------------------------------------------------------------
// Global definition callbacks

namespace {

using Impl = detail::ReaderImpl;

template <class F>
OTF2_CallbackCode def_guarded(void* user, F&& f) {
  auto* impl = static_cast<Impl*>(user);
  try {
    f(*impl);
    return OTF2_CALLBACK_SUCCESS;
  } catch (const std::exception& e) {
    impl->callback_error = e.what();
    return OTF2_CALLBACK_INTERRUPT;
  }
}

OTF2_CallbackCode on_clock(void* user, uint64_t resolution, uint64_t offset, uint64_t length, uint64_t /*realtime*/) {
  return def_guarded(user, [&](Impl& d) {
    if (resolution == 0) throw TraceError("the clock properties give a timer resolution of 0");
    d.defs.clock = ClockProperties{resolution, offset, length};
  });
}

OTF2_CallbackCode on_string(void* user, OTF2_StringRef self, const char* text) {
  return def_guarded(user, [&](Impl& d) { slot(d.defs.strings, self) = text; });
}

OTF2_CallbackCode on_attribute(void* user, OTF2_AttributeRef self, OTF2_StringRef name, OTF2_StringRef /*descr*/,
                               OTF2_Type type) {
  return def_guarded(user, [&](Impl& d) { d.names.attributes.push_back({self, {name, type}}); });
}

OTF2_CallbackCode on_location_group(void* user, OTF2_LocationGroupRef self, OTF2_StringRef name,
                                    OTF2_LocationGroupType type, OTF2_SystemTreeNodeRef /*parent*/,
                                    OTF2_LocationGroupRef /*creator*/) {
  return def_guarded(user, [&](Impl& d) {
    LocationGroup& g = slot(d.defs.location_groups, self);
    g.id = self;
    g.is_process = type == OTF2_LOCATION_GROUP_TYPE_PROCESS;
    slot(d.names.location_groups, self) = name;
  });
}

OTF2_CallbackCode on_location(void* user, OTF2_LocationRef self, OTF2_StringRef name, OTF2_LocationType type,
                              uint64_t events, OTF2_LocationGroupRef group) {
  return def_guarded(user, [&](Impl& d) {
    if (d.defs.location_index.contains(self)) return;
    d.defs.location_index.emplace(self, d.defs.locations.size());
    Location& l = d.defs.locations.emplace_back();
    l.id = self;
    l.group = group;
    l.declared_events = events;
    l.is_cpu_thread = type == OTF2_LOCATION_TYPE_CPU_THREAD;
    d.names.locations.emplace_back(self, name);
  });
}

OTF2_CallbackCode on_region(void* user, OTF2_RegionRef self, OTF2_StringRef name, OTF2_StringRef canonical,
                            OTF2_StringRef /*descr*/, OTF2_RegionRole role, OTF2_Paradigm paradigm,
                            OTF2_RegionFlag /*flags*/, OTF2_StringRef file, uint32_t /*begin*/, uint32_t /*end*/) {
  return def_guarded(user, [&](Impl& d) {
    Region& r = slot(d.defs.regions, self);
    r.id = self;
    r.role = to_role(role);
    r.paradigm = to_paradigm(paradigm);
    slot(d.names.regions, self) = {name, canonical, file};
  });
}

OTF2_CallbackCode on_group(void* user, OTF2_GroupRef self, OTF2_StringRef /*name*/, OTF2_GroupType type,
                           OTF2_Paradigm paradigm, OTF2_GroupFlag flags, uint32_t count, const uint64_t* members) {
  return def_guarded(user, [&](Impl& d) {
    RawGroup& g = slot(d.groups, self);
    g.defined = true;
    g.type = type;
    g.paradigm = paradigm;
    g.flags = flags;
    g.members.assign(members, members + count);
  });
}

OTF2_CallbackCode on_comm(void* user, OTF2_CommRef self, OTF2_StringRef name, OTF2_GroupRef group, OTF2_CommRef parent,
                          OTF2_CommFlag /*flags*/) {
  return def_guarded(user, [&](Impl& d) {
    slot(d.comms, self) = RawComm{.defined = true, .name = name, .group = group, .parent = parent};
  });
}

OTF2_CallbackCode on_inter_comm(void* user, OTF2_CommRef self, OTF2_StringRef name, OTF2_GroupRef group_a,
                                OTF2_GroupRef group_b, OTF2_CommRef common, OTF2_CommFlag /*flags*/) {
  return def_guarded(user, [&](Impl& d) {
    slot(d.comms, self) = RawComm{
        .defined = true, .name = name, .group = group_a, .remote_group = group_b, .inter = true, .parent = common};
  });
}

OTF2_CallbackCode on_metric_member(void* user, OTF2_MetricMemberRef self, OTF2_StringRef name, OTF2_StringRef descr,
                                   OTF2_MetricType /*type*/, OTF2_MetricMode mode, OTF2_Type value_type,
                                   OTF2_Base /*base*/, int64_t /*exponent*/, OTF2_StringRef unit) {
  return def_guarded(user, [&](Impl& d) {
    MetricMember& m = slot(d.defs.metric_members, self);
    m.id = self;
    m.value_type = value_type == OTF2_TYPE_DOUBLE  ? MetricValueType::Double
                   : value_type == OTF2_TYPE_INT64 ? MetricValueType::Int64
                                                   : MetricValueType::Uint64;
    m.accumulated = (mode & OTF2_METRIC_VALUE_MASK) == OTF2_METRIC_VALUE_ACCUMULATED;
    slot(d.names.metric_members, self) = {name, descr, unit};
  });
}

OTF2_CallbackCode on_metric_class(void* user, OTF2_MetricRef self, uint8_t count, const OTF2_MetricMemberRef* members,
                                  OTF2_MetricOccurrence /*occurrence*/, OTF2_RecorderKind /*kind*/) {
  return def_guarded(user, [&](Impl& d) {
    MetricClass& c = slot(d.defs.metric_classes, self);
    c.id = self;
    c.members.assign(members, members + count);
  });
}

}  // namespace

void detail::ReaderImpl::read_global_definitions() {
  OTF2_Reader* r = reader.get();
  detail::forget_otf2_errors();
  OTF2_GlobalDefReader* gdr = OTF2_Reader_GetGlobalDefReader(r);
  if (gdr == nullptr) {
    const fs::path file = fs::path(defs.anchor).replace_extension(".def");
    std::error_code ec;
    const std::string why = fs::exists(file, ec) ? detail::otf2_failure_text() : file.string() + " is missing";
    throw TraceError(label + ": cannot open the global definitions (" + why + "); " + fix);
  }
  OTF2_GlobalDefReaderCallbacks* cb = OTF2_GlobalDefReaderCallbacks_New();
  OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(cb, &on_clock);
  OTF2_GlobalDefReaderCallbacks_SetStringCallback(cb, &on_string);
  OTF2_GlobalDefReaderCallbacks_SetAttributeCallback(cb, &on_attribute);
  OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(cb, &on_location_group);
  OTF2_GlobalDefReaderCallbacks_SetLocationCallback(cb, &on_location);
  OTF2_GlobalDefReaderCallbacks_SetRegionCallback(cb, &on_region);
  OTF2_GlobalDefReaderCallbacks_SetGroupCallback(cb, &on_group);
  OTF2_GlobalDefReaderCallbacks_SetCommCallback(cb, &on_comm);
  OTF2_GlobalDefReaderCallbacks_SetInterCommCallback(cb, &on_inter_comm);
  OTF2_GlobalDefReaderCallbacks_SetMetricMemberCallback(cb, &on_metric_member);
  OTF2_GlobalDefReaderCallbacks_SetMetricClassCallback(cb, &on_metric_class);
  const OTF2_ErrorCode reg = OTF2_Reader_RegisterGlobalDefCallbacks(r, gdr, cb, this);
  OTF2_GlobalDefReaderCallbacks_Delete(cb);
  uint64_t count = 0;
  const OTF2_ErrorCode rc = reg != OTF2_SUCCESS ? reg : OTF2_Reader_ReadAllGlobalDefinitions(r, gdr, &count);
  OTF2_Reader_CloseGlobalDefReader(r, gdr);
  if (!callback_error.empty()) {
    throw TraceError(label + ": bad global definitions: " + callback_error + "; " + fix);
  }
  if (rc != OTF2_SUCCESS) {
    throw TraceError(label + ": cannot read the global definitions (" + otf2_error_text(rc) + "); " + fix);
  }
  if (count == 0 || defs.locations.empty()) {
    throw TraceError(label + ": the global definitions define no locations; " + fix);
  }
}

void detail::ReaderImpl::read_local_definitions() {
  OTF2_Reader* r = reader.get();
  // OTF2 silently reads a missing local definition file as empty, and the events of that location would then
  // be read without their mapping tables (wrong regions and communicators). Where the other locations have one,
  // a location with events but without its file is damage.
  std::error_code ec;
  const auto def_file = [&](const Location& l) { return event_dir / (std::to_string(l.id) + ".def"); };
  const bool any_def_file = std::any_of(defs.locations.begin(), defs.locations.end(),
                                        [&](const Location& l) { return fs::exists(def_file(l), ec); });
  for (const Location& l : defs.locations) {
    if (any_def_file && l.declared_events > 0 && !fs::exists(def_file(l), ec)) {
      throw TraceError(location_label(l) + ": its local definitions " + def_file(l).string() + " are missing; " + fix);
    }
  }
  for (const Location& l : defs.locations) OTF2_Reader_SelectLocation(r, l.id);
  // Local definitions are optional in OTF2; where present they hold the mapping tables (local -> global ids)
  // and clock offsets that the event readers apply.
  detail::forget_otf2_errors();
  const bool have_def_files = OTF2_Reader_OpenDefFiles(r) == OTF2_SUCCESS;
  detail::forget_otf2_errors();
  if (have_def_files) {
    for (const Location& l : defs.locations) {
      // An empty local definition file (a chunk header and the end marks, as p3s writes them where a location's ids
      // and clock are the archive's) holds no mapping table; opening it would still cost OTF2 a definition-chunk
      // buffer (4 MiB) per location. One record more (a mapping table takes 13 bytes and up) must be read.
      constexpr std::uintmax_t kEmptyDefFile = 20;
      const std::uintmax_t size = fs::file_size(def_file(l), ec);
      if (!ec && size <= kEmptyDefFile) continue;
      OTF2_DefReader* dr = OTF2_Reader_GetDefReader(r, l.id);
      if (dr == nullptr) {
        detail::forget_otf2_errors();
        continue;
      }
      uint64_t count = 0;
      const OTF2_ErrorCode rc = OTF2_Reader_ReadAllLocalDefinitions(r, dr, &count);
      OTF2_Reader_CloseDefReader(r, dr);
      if (rc != OTF2_SUCCESS) {
        throw TraceError(location_label(l) + ": cannot read its local definitions (" + otf2_error_text(rc) + "); " +
                         fix);
      }
    }
    OTF2_Reader_CloseDefFiles(r);
  }
  detail::forget_otf2_errors();
  const OTF2_ErrorCode rc = OTF2_Reader_OpenEvtFiles(r);
  if (rc != OTF2_SUCCESS) {
    throw TraceError(label + ": cannot open the event files (" + otf2_error_text(rc) + "); " + fix);
  }
}

void detail::ReaderImpl::resolve() {
  resolve_names();
  resolve_ranks();
  resolve_communicators();
  resolve_work_metric();
}

void detail::ReaderImpl::resolve_names() {
  const auto text = [&](OTF2_StringRef ref) { return std::string(defs.string(ref)); };
  for (std::size_t i = 0; i < names.regions.size(); ++i) {
    Region& reg = defs.regions[i];
    if (reg.id == kNoRef) continue;
    reg.name = text(names.regions[i][0]);
    reg.canonical_name = text(names.regions[i][1]);
    reg.source_file = text(names.regions[i][2]);
    if (reg.is_mpi()) {
      defs.has_mpi = true;
      reg.function = mpi::function_named(reg.name);
    }
  }
  for (std::size_t i = 0; i < names.location_groups.size(); ++i) {
    defs.location_groups[i].name = text(names.location_groups[i]);
  }
  for (const auto& [id, name] : names.locations) defs.locations[defs.location_index.at(id)].name = text(name);
  for (std::size_t i = 0; i < names.metric_members.size(); ++i) {
    MetricMember& m = defs.metric_members[i];
    m.name = text(names.metric_members[i][0]);
    m.description = text(names.metric_members[i][1]);
    m.unit = text(names.metric_members[i][2]);
  }
  for (const auto& [id, what] : names.attributes) {
    if (what.second == OTF2_TYPE_STRING && defs.string(what.first) == trace::kCallsiteAttribute) {
      defs.callsite_attribute = id;
    }
  }
}

void detail::ReaderImpl::resolve_ranks() {
  // The COMM_LOCATIONS group of paradigm MPI lists the locations by MPI_COMM_WORLD rank; other threads of a
  // process inherit the rank of their location group.
  const RawGroup* world = nullptr;
  for (const RawGroup& g : groups) {
    if (g.defined && g.type == OTF2_GROUP_TYPE_COMM_LOCATIONS && g.paradigm == OTF2_PARADIGM_MPI) {
      world = &g;
      break;
    }
  }
  if (world != nullptr) {
    defs.has_mpi = true;
    defs.processes = static_cast<std::int32_t>(world->members.size());
    for (std::size_t r = 0; r < world->members.size(); ++r) {
      const auto it = defs.location_index.find(world->members[r]);
      if (it == defs.location_index.end()) continue;
      Location& l = defs.locations[it->second];
      l.rank = static_cast<std::int32_t>(r);
      if (l.group < defs.location_groups.size() && defs.location_groups[l.group].rank == kUnresolvedRank) {
        defs.location_groups[l.group].rank = l.rank;
      }
    }
  } else {
    // No MPI group (not written by an MPI tracer): number the processes in id order.
    for (LocationGroup& g : defs.location_groups) {
      if (g.id != kNoRef && g.is_process) g.rank = defs.processes++;
    }
  }
  for (Location& l : defs.locations) {
    if (l.rank == kUnresolvedRank && l.group < defs.location_groups.size()) l.rank = defs.location_groups[l.group].rank;
  }
  std::stable_sort(defs.locations.begin(), defs.locations.end(), [](const Location& a, const Location& b) {
    const auto key = [](const Location& l) { return std::pair(l.rank < 0 ? INT32_MAX : l.rank, l.id); };
    return key(a) < key(b);
  });
  defs.location_index.clear();
  for (std::size_t i = 0; i < defs.locations.size(); ++i) defs.location_index.emplace(defs.locations[i].id, i);
}

std::vector<std::int32_t> detail::ReaderImpl::group_ranks(OTF2_GroupRef ref, CommKind& kind) const {
  const auto rank_of_location = [&](std::uint64_t id) {
    const Location* l = defs.location(id);
    return l == nullptr ? kUnresolvedRank : l->rank;
  };
  const auto locations_of = [&](OTF2_Paradigm p) -> const RawGroup* {
    for (const RawGroup& g : groups) {
      if (g.defined && g.type == OTF2_GROUP_TYPE_COMM_LOCATIONS && g.paradigm == p) return &g;
    }
    return nullptr;
  };
  std::vector<std::int32_t> ranks;
  kind = CommKind::Unresolved;
  if (ref >= groups.size() || !groups[ref].defined) return ranks;
  const RawGroup& g = groups[ref];
  if (g.type == OTF2_GROUP_TYPE_COMM_SELF) {
    kind = CommKind::Self;
  } else if (g.type == OTF2_GROUP_TYPE_COMM_LOCATIONS) {
    kind = CommKind::Group;
    for (std::uint64_t loc : g.members) ranks.push_back(rank_of_location(loc));
  } else if (g.type == OTF2_GROUP_TYPE_COMM_GROUP) {
    const RawGroup* locs = locations_of(g.paradigm);
    if (locs == nullptr) return ranks;
    kind = CommKind::Group;
    if ((g.flags & OTF2_GROUP_FLAG_GLOBAL_MEMBERS) != 0) {
      // Ranks in events already index COMM_LOCATIONS.
      for (std::uint64_t loc : locs->members) ranks.push_back(rank_of_location(loc));
    } else {
      for (std::uint64_t m : g.members) {
        // p3s writes an index past the end for a member no log told about (a rank killed early).
        ranks.push_back(m < locs->members.size() ? rank_of_location(locs->members[m]) : kUnresolvedRank);
      }
    }
  }
  return ranks;
}

void detail::ReaderImpl::resolve_communicators() {
  // COMM_GROUP members index the COMM_LOCATIONS group of the same paradigm; each maps through its location to
  // a world rank. COMM_SELF is resolved per call (the caller itself).
  for (std::size_t i = 0; i < comms.size(); ++i) {
    if (!comms[i].defined) continue;
    const RawComm& raw = comms[i];
    Communicator& c = slot(defs.comms, static_cast<std::uint32_t>(i));
    c.id = static_cast<std::uint32_t>(i);
    c.name = std::string(defs.string(raw.name));
    c.parent = raw.parent;
    c.world_ranks = group_ranks(raw.group, c.kind);
    if (raw.group < groups.size()) c.paradigm = to_paradigm(groups[raw.group].paradigm);
    if (raw.inter) {
      CommKind remote = CommKind::Unresolved;
      c.remote_world_ranks = group_ranks(raw.remote_group, remote);
      c.kind = c.kind == CommKind::Group && remote == CommKind::Group ? CommKind::Inter : CommKind::Unresolved;
    }
  }
}

void detail::ReaderImpl::resolve_work_metric() {
  // What p3s says it recorded; for other archives instructions if they were measured.
  std::string work = defs.property(trace::property::kWorkMetric).value_or("");
  if (work == trace::metric::kNone) work.clear();
  if (work.empty()) {
    for (const MetricMember& m : defs.metric_members) {
      if (m.id != kNoRef && m.name == trace::metric::kInstructions) work = m.name;
    }
  }
  defs.work_metric_member = work;
  for (MetricClass& c : defs.metric_classes) {
    for (std::size_t i = 0; i < c.members.size() && !work.empty(); ++i) {
      const std::uint32_t m = c.members[i];
      if (m < defs.metric_members.size() && defs.metric_members[m].name == work) {
        c.work_index = static_cast<std::int32_t>(i);
        break;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Event streams

struct detail::StreamState {
  ReaderImpl* impl;  // cleared by ~ReaderImpl when the reader goes away first
  const Location* location;
  OTF2_EvtReader* evt = nullptr;
  EventVisitor* visitor = nullptr;
  std::uint64_t records = 0;
  std::uint64_t events = 0;  ///< events begun on the location, counted one by one (records grows by batches)
  bool end = false;
  bool failed = false;
  std::exception_ptr error;

  // Metric values wait here for the Enter/Leave at the same time that follows them.
  bool metric_pending = false;
  std::uint64_t metric_time = 0;
  Event metrics;

  // Pull interface buffer.
  std::vector<Event> buffer;
  std::size_t next_index = 0;

  StreamState(ReaderImpl* i, const Location* l) : impl(i), location(l) {}
  ~StreamState() {
    if (impl == nullptr) return;
    if (evt != nullptr) OTF2_Reader_CloseEvtReader(impl->reader.get(), evt);
    impl->open_streams.erase(this);
  }
  StreamState(const StreamState&) = delete;
  StreamState& operator=(const StreamState&) = delete;

  [[nodiscard]] const TraceDefinitions& defs() const { return impl->defs; }
  [[nodiscard]] std::int32_t rank_of(std::uint32_t comm, std::uint32_t rank) const {
    return defs().world_rank(comm, rank, location->rank);
  }
  [[nodiscard]] std::int32_t root_of(std::uint32_t comm, std::uint32_t root) const {
    if (root == OTF2_COLLECTIVE_ROOT_NONE) return kNoRank;
    if (root == OTF2_COLLECTIVE_ROOT_SELF) return location->rank;  // inter-communicator: the caller is the root
    if (root == OTF2_COLLECTIVE_ROOT_THIS_GROUP) return kUnresolvedRank;
    return rank_of(comm, root);
  }
  Event start(EventKind kind, OTF2_TimeStamp t) {
    ++events;
    Event e;
    e.kind = kind;
    e.time_ns = defs().clock.to_ns(t);
    // Time never goes back on a location (OTF2 requires it); a difference that did would wrap around.
    if (e.time_ns < last_time_ns) {
      throw InputError(impl->label + ": time goes back on location " + std::to_string(location->id) + " (rank " +
                       std::to_string(location->rank) + ") at its event " + std::to_string(events) + ", from " +
                       std::to_string(last_time_ns) + " to " + std::to_string(e.time_ns) +
                       " ns: the event file is damaged");
    }
    last_time_ns = e.time_ns;
    return e;
  }
  std::uint64_t last_time_ns = 0;
  void deliver(const Event& e) {
    metric_pending = false;
    visitor->on_event(*location, e);
  }
};

detail::ReaderImpl::~ReaderImpl() {
  // Streams that outlive their reader must not touch the closed OTF2 reader.
  for (StreamState* s : open_streams) s->impl = nullptr;
}

namespace {

using State = detail::StreamState;

template <class F>
OTF2_CallbackCode evt_guarded(void* user, F&& f) {
  auto* s = static_cast<State*>(user);
  try {
    f(*s);
    return OTF2_CALLBACK_SUCCESS;
  } catch (...) {
    // Never unwind through OTF2's C frames: park the exception and stop the read.
    s->error = std::current_exception();
    return OTF2_CALLBACK_INTERRUPT;
  }
}

std::uint64_t as_work(OTF2_Type type, OTF2_MetricValue v) {
  switch (type) {
    case OTF2_TYPE_INT64:
      return v.signed_int < 0 ? 0 : static_cast<std::uint64_t>(v.signed_int);
    case OTF2_TYPE_DOUBLE:
      return v.floating_point <= 0 ? 0 : static_cast<std::uint64_t>(std::llround(v.floating_point));
    default:
      return v.unsigned_int;
  }
}

OTF2_CallbackCode on_metric(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* user, OTF2_AttributeList*,
                            OTF2_MetricRef metric, uint8_t count, const OTF2_Type* types,
                            const OTF2_MetricValue* values) {
  return evt_guarded(user, [&](State& s) {
    // Score-P and p3s write strictly synchronous metrics as Metric records right before the Enter/Leave of the
    // same time; several classes may precede one event.
    if (!s.metric_pending || s.metric_time != t) {
      s.metric_pending = true;
      s.metric_time = t;
      s.metrics.metric_class = metric;
      s.metrics.metric_count = 0;
      s.metrics.work.reset();
    }
    const TraceDefinitions& d = s.defs();
    const MetricClass* cls =
        metric < d.metric_classes.size() && d.metric_classes[metric].id == metric ? &d.metric_classes[metric] : nullptr;
    for (std::uint8_t i = 0; i < count; ++i) {
      if (cls != nullptr && cls->work_index == i) s.metrics.work = as_work(types[i], values[i]);
      if (s.metrics.metric_count < kMaxEventMetrics) {
        s.metrics.metric_values[s.metrics.metric_count++] = values[i].unsigned_int;
      }
    }
  });
}

OTF2_CallbackCode on_enter_leave(State& s, EventKind kind, OTF2_TimeStamp t, OTF2_AttributeList* attrs,
                                 OTF2_RegionRef region) {
  Event e = s.start(kind, t);
  e.region = region;
  if (s.metric_pending && s.metric_time == t) {
    e.metric_class = s.metrics.metric_class;
    e.metric_count = s.metrics.metric_count;
    std::copy_n(s.metrics.metric_values.begin(), e.metric_count, e.metric_values.begin());
    e.work = s.metrics.work;
  }
  const std::uint32_t callsite_attr = s.defs().callsite_attribute;
  if (kind == EventKind::Enter && attrs != nullptr && callsite_attr != kNoRef) {
    OTF2_StringRef text = OTF2_UNDEFINED_STRING;
    if (OTF2_AttributeList_GetStringRef(attrs, callsite_attr, &text) == OTF2_SUCCESS) e.callsite = text;
  }
  s.deliver(e);
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode on_enter(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* user, OTF2_AttributeList* attrs,
                           OTF2_RegionRef region) {
  return evt_guarded(user, [&](State& s) { on_enter_leave(s, EventKind::Enter, t, attrs, region); });
}

OTF2_CallbackCode on_leave(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* user, OTF2_AttributeList* attrs,
                           OTF2_RegionRef region) {
  return evt_guarded(user, [&](State& s) { on_enter_leave(s, EventKind::Leave, t, attrs, region); });
}

void message(State& s, EventKind kind, OTF2_TimeStamp t, uint32_t peer, OTF2_CommRef comm, uint32_t tag, uint64_t bytes,
             uint64_t request) {
  Event e = s.start(kind, t);
  e.comm = comm;
  e.rank_in_comm = peer;
  e.peer = s.rank_of(comm, peer);
  e.tag = tag;
  e.bytes = bytes;
  e.request = request;
  s.deliver(e);
}

OTF2_CallbackCode on_send(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* user, OTF2_AttributeList*,
                          uint32_t receiver, OTF2_CommRef comm, uint32_t tag, uint64_t bytes) {
  return evt_guarded(user, [&](State& s) { message(s, EventKind::MpiSend, t, receiver, comm, tag, bytes, 0); });
}

OTF2_CallbackCode on_isend(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* user, OTF2_AttributeList*,
                           uint32_t receiver, OTF2_CommRef comm, uint32_t tag, uint64_t bytes, uint64_t request) {
  return evt_guarded(user, [&](State& s) { message(s, EventKind::MpiIsend, t, receiver, comm, tag, bytes, request); });
}

OTF2_CallbackCode on_recv(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* user, OTF2_AttributeList*,
                          uint32_t sender, OTF2_CommRef comm, uint32_t tag, uint64_t bytes) {
  return evt_guarded(user, [&](State& s) { message(s, EventKind::MpiRecv, t, sender, comm, tag, bytes, 0); });
}

OTF2_CallbackCode on_irecv(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* user, OTF2_AttributeList*,
                           uint32_t sender, OTF2_CommRef comm, uint32_t tag, uint64_t bytes, uint64_t request) {
  return evt_guarded(user, [&](State& s) { message(s, EventKind::MpiIrecv, t, sender, comm, tag, bytes, request); });
}

void request_event(State& s, EventKind kind, OTF2_TimeStamp t, uint64_t request) {
  Event e = s.start(kind, t);
  e.request = request;
  s.deliver(e);
}

OTF2_CallbackCode on_isend_complete(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* user, OTF2_AttributeList*,
                                    uint64_t request) {
  return evt_guarded(user, [&](State& s) { request_event(s, EventKind::MpiIsendComplete, t, request); });
}

OTF2_CallbackCode on_irecv_request(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* user, OTF2_AttributeList*,
                                   uint64_t request) {
  return evt_guarded(user, [&](State& s) { request_event(s, EventKind::MpiIrecvRequest, t, request); });
}

OTF2_CallbackCode on_request_cancelled(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* user, OTF2_AttributeList*,
                                       uint64_t request) {
  return evt_guarded(user, [&](State& s) { request_event(s, EventKind::MpiRequestCancelled, t, request); });
}

OTF2_CallbackCode on_nb_coll_request(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* user, OTF2_AttributeList*,
                                     uint64_t request) {
  return evt_guarded(user, [&](State& s) { request_event(s, EventKind::NbCollectiveRequest, t, request); });
}

OTF2_CallbackCode on_coll_begin(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* user, OTF2_AttributeList*) {
  return evt_guarded(user, [&](State& s) { s.deliver(s.start(EventKind::CollectiveBegin, t)); });
}

void collective(State& s, EventKind kind, OTF2_TimeStamp t, OTF2_CollectiveOp op, OTF2_CommRef comm, uint32_t root,
                uint64_t sent, uint64_t received, uint64_t request) {
  Event e = s.start(kind, t);
  e.op = to_op(op);
  e.comm = comm;
  e.rank_in_comm = root;
  e.root = s.root_of(comm, root);
  e.bytes = sent;
  e.bytes_received = received;
  e.request = request;
  s.deliver(e);
}

OTF2_CallbackCode on_coll_end(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* user, OTF2_AttributeList*,
                              OTF2_CollectiveOp op, OTF2_CommRef comm, uint32_t root, uint64_t sent,
                              uint64_t received) {
  return evt_guarded(user,
                     [&](State& s) { collective(s, EventKind::CollectiveEnd, t, op, comm, root, sent, received, 0); });
}

OTF2_CallbackCode on_nb_coll_complete(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* user, OTF2_AttributeList*,
                                      OTF2_CollectiveOp op, OTF2_CommRef comm, uint32_t root, uint64_t sent,
                                      uint64_t received, uint64_t request) {
  return evt_guarded(user, [&](State& s) {
    collective(s, EventKind::NbCollectiveComplete, t, op, comm, root, sent, received, request);
  });
}

OTF2_CallbackCode on_comm_create(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* user, OTF2_AttributeList*,
                                 OTF2_CommRef comm) {
  return evt_guarded(user, [&](State& s) {
    Event e = s.start(EventKind::CommCreate, t);
    e.comm = comm;
    s.deliver(e);
  });
}

OTF2_CallbackCode on_comm_destroy(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* user, OTF2_AttributeList*,
                                  OTF2_CommRef comm) {
  return evt_guarded(user, [&](State& s) {
    Event e = s.start(EventKind::CommDestroy, t);
    e.comm = comm;
    s.deliver(e);
  });
}

/// Records OTF2 itself does not know (from a newer writer) are skipped, never fatal; so are the known records
/// the analyzer registers no callback for (PROGRAM_BEGIN, RMA, threads, ...).
OTF2_CallbackCode on_other(OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void* user, OTF2_AttributeList*) {
  static_cast<State*>(user)->metric_pending = false;
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_EvtReaderCallbacks* make_callbacks() {
  OTF2_EvtReaderCallbacks* cb = OTF2_EvtReaderCallbacks_New();
  OTF2_EvtReaderCallbacks_SetUnknownCallback(cb, &on_other);
  OTF2_EvtReaderCallbacks_SetMetricCallback(cb, &on_metric);
  OTF2_EvtReaderCallbacks_SetEnterCallback(cb, &on_enter);
  OTF2_EvtReaderCallbacks_SetLeaveCallback(cb, &on_leave);
  OTF2_EvtReaderCallbacks_SetMpiSendCallback(cb, &on_send);
  OTF2_EvtReaderCallbacks_SetMpiIsendCallback(cb, &on_isend);
  OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback(cb, &on_isend_complete);
  OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback(cb, &on_irecv_request);
  OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(cb, &on_irecv);
  OTF2_EvtReaderCallbacks_SetMpiRecvCallback(cb, &on_recv);
  OTF2_EvtReaderCallbacks_SetMpiRequestCancelledCallback(cb, &on_request_cancelled);
  OTF2_EvtReaderCallbacks_SetMpiCollectiveBeginCallback(cb, &on_coll_begin);
  OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(cb, &on_coll_end);
  OTF2_EvtReaderCallbacks_SetNonBlockingCollectiveRequestCallback(cb, &on_nb_coll_request);
  OTF2_EvtReaderCallbacks_SetNonBlockingCollectiveCompleteCallback(cb, &on_nb_coll_complete);
  OTF2_EvtReaderCallbacks_SetCommCreateCallback(cb, &on_comm_create);
  OTF2_EvtReaderCallbacks_SetCommDestroyCallback(cb, &on_comm_destroy);
  return cb;
}

/// Collects events for the pull interface.
class Collector final : public EventVisitor {
 public:
  explicit Collector(std::vector<Event>& out) : out_(out) {}
  void on_event(const Location&, const Event& e) override { out_.push_back(e); }

 private:
  std::vector<Event>& out_;
};

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// LocationStream

LocationStream::LocationStream(std::unique_ptr<detail::StreamState> state) : state_(std::move(state)) {}
LocationStream::LocationStream(LocationStream&&) noexcept = default;
LocationStream& LocationStream::operator=(LocationStream&&) noexcept = default;
LocationStream::~LocationStream() = default;

std::uint64_t LocationStream::read(EventVisitor& visitor, std::uint64_t max_records) {
  State& s = *state_;
  if (s.end || max_records == 0) return 0;
  if (s.impl == nullptr) throw std::logic_error("LocationStream::read after its TraceReader was destroyed");
  const std::string where = s.impl->location_label(*s.location);
  if (s.failed) throw TraceError(where + ": reading stopped at an earlier error");
  s.visitor = &visitor;
  uint64_t got = 0;
  detail::forget_otf2_errors();
  const OTF2_ErrorCode rc = OTF2_Reader_ReadLocalEvents(s.impl->reader.get(), s.evt, max_records, &got);
  s.records += got;
  if (s.error) {
    s.failed = true;
    std::rethrow_exception(std::exchange(s.error, nullptr));
  }
  if (rc != OTF2_SUCCESS) {
    s.failed = true;
    throw TraceError(where + ": cannot read past event record " + std::to_string(s.records) + " (" +
                     otf2_error_text(rc) + "); " + s.impl->fix);
  }
  if (got < max_records) {
    s.end = true;
    const std::uint64_t declared = s.location->declared_events;
    if (declared != 0 && s.records != declared) {
      s.failed = true;
      throw TraceError(where + ": " + std::to_string(s.records) + " event records, but the definitions announce " +
                       std::to_string(declared) + "; " + s.impl->fix);
    }
  }
  return got;
}

bool LocationStream::next(Event& event) {
  State& s = *state_;
  while (s.next_index == s.buffer.size()) {
    s.buffer.clear();
    s.next_index = 0;
    if (s.end) return false;
    Collector collect(s.buffer);
    read(collect, kPullBatch);
  }
  event = s.buffer[s.next_index++];
  return true;
}

bool LocationStream::at_end() const noexcept { return state_->end && state_->next_index == state_->buffer.size(); }
std::uint64_t LocationStream::records() const noexcept { return state_->records; }
const Location& LocationStream::location() const noexcept { return *state_->location; }

// ---------------------------------------------------------------------------------------------------------------
// TraceReader

namespace {

/// An archive written by a later p3s whose conventions this reader does not know would be misread: refused.
void refuse_unknown_schema(const std::string& label, const TraceDefinitions& defs) {
  const std::optional<std::string> said = defs.property(trace::property::kSchemaVersion);
  if (!said) return;
  int version = 0;
  const auto [end, ec] = std::from_chars(said->data(), said->data() + said->size(), version);
  if (ec != std::errc{} || end != said->data() + said->size() || version < 1) {
    throw InputError(label + " has an unrecognised P3S::SCHEMA_VERSION '" + *said + "': the archive is damaged");
  }
  if (version > trace::kSchemaVersionNumber) {
    throw InputError(label + " was written in p3s trace schema " + *said + "; this p3s reads schemas 1 to " +
                     std::to_string(trace::kSchemaVersionNumber) +
                     ": analyze it with the p3s that recorded it, or a later one");
  }
}

}  // namespace

TraceReader::TraceReader(const fs::path& path) : impl_(std::make_unique<detail::ReaderImpl>()) {
  detail::ReaderImpl& d = *impl_;
  d.defs.anchor = find_anchor(path);
  d.label = "trace '" + d.defs.anchor.string() + "'";
  d.event_dir = d.defs.anchor.parent_path() / d.defs.anchor.stem();
  if (!anchor_loads(d.defs.anchor)) {
    throw TraceError(d.label + ": OTF2 crashes reading its anchor file; " + damaged_fix(false));
  }
  detail::capture_otf2_errors();
  detail::forget_otf2_errors();
  d.reader.reset(OTF2_Reader_Open(d.defs.anchor.c_str()));
  if (!d.reader) {
    throw TraceError(d.label + ": OTF2 cannot open the archive (" + detail::otf2_failure_text() + "); " +
                     damaged_fix(false));
  }
  OTF2_Reader* r = d.reader.get();
  OTF2_Reader_SetSerialCollectiveCallbacks(r);

  uint32_t nprops = 0;
  char** names = nullptr;
  if (OTF2_Reader_GetPropertyNames(r, &nprops, &names) == OTF2_SUCCESS && names != nullptr) {
    const std::unique_ptr<char*, FreeDeleter> own(names);
    for (uint32_t i = 0; i < nprops; ++i) {
      char* value = nullptr;
      if (OTF2_Reader_GetProperty(r, names[i], &value) == OTF2_SUCCESS && value != nullptr) {
        const std::unique_ptr<char, FreeDeleter> own_value(value);
        d.defs.properties.emplace(names[i], value);
      }
    }
  }
  char* creator = nullptr;
  if (OTF2_Reader_GetCreator(r, &creator) == OTF2_SUCCESS && creator != nullptr) {
    const std::unique_ptr<char, FreeDeleter> own(creator);
    d.defs.creator = creator;
  }
  detail::forget_otf2_errors();
  d.fix = damaged_fix(d.defs.written_by_p3s());
  refuse_unknown_schema(d.label, d.defs);

  d.read_global_definitions();
  d.resolve();
  if (!d.defs.has_mpi) {
    throw InputError(d.label +
                     " holds no MPI definitions (no MPI regions or communicators): it was not recorded "
                     "from an MPI program; trace the MPI application with `p3s record`");
  }
  d.read_local_definitions();
  // The scratch tables are not needed any more.
  d.groups = {};
  d.comms = {};
  d.names = {};
}

TraceReader::TraceReader(TraceReader&&) noexcept = default;
TraceReader& TraceReader::operator=(TraceReader&&) noexcept = default;
TraceReader::~TraceReader() = default;

const TraceDefinitions& TraceReader::definitions() const noexcept { return impl_->defs; }

LocationStream TraceReader::open(std::uint64_t location_id) {
  detail::ReaderImpl& d = *impl_;
  const Location* l = d.defs.location(location_id);
  if (l == nullptr) {
    throw InputError(d.label + ": no location " + std::to_string(location_id) + " in the definitions");
  }
  auto state = std::make_unique<detail::StreamState>(&d, l);
  // A location with no events may have no event file at all (p3s defines every rank, even one whose log was
  // lost); treat it as empty instead of failing on the missing file.
  std::error_code ec;
  if (l->declared_events == 0 && !fs::exists(d.event_dir / (std::to_string(l->id) + ".evt"), ec)) {
    state->end = true;
    return LocationStream(std::move(state));
  }
  detail::forget_otf2_errors();
  state->evt = OTF2_Reader_GetEvtReader(d.reader.get(), l->id);
  if (state->evt == nullptr) {
    const fs::path file = d.event_dir / (std::to_string(l->id) + ".evt");
    const std::string why = fs::exists(file, ec) ? detail::otf2_failure_text() : file.string() + " is missing";
    throw TraceError(d.location_label(*l) + ": cannot open its events (" + why + "); " + d.fix);
  }
  d.open_streams.insert(state.get());
  OTF2_EvtReaderCallbacks* cb = make_callbacks();
  const OTF2_ErrorCode rc = OTF2_Reader_RegisterEvtCallbacks(d.reader.get(), state->evt, cb, state.get());
  OTF2_EvtReaderCallbacks_Delete(cb);
  if (rc != OTF2_SUCCESS) {
    throw TraceError(d.location_label(*l) + ": cannot read its events (" + otf2_error_text(rc) + ")");
  }
  return LocationStream(std::move(state));
}

void TraceReader::read_all(EventVisitor& visitor) {
  for (const Location& l : impl_->defs.locations) {
    LocationStream stream = open(l.id);
    visitor.on_location_begin(l);
    while (stream.read(visitor) > 0) {
    }
    visitor.on_location_end(l, stream.records());
  }
}

}  // namespace p3s::analyzer
