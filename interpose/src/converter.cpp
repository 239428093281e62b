// SPDX-License-Identifier: BSD-3-Clause
// Raw records -> OTF2 events and definitions, following Score-P's conventions so that any OTF2 reader
// (otf2-print, Vampir, the p3s analyzer) resolves every message peer to a location.
#include "converter.hpp"

#include "p3s/interpose/archive_writer.hpp"

#include <algorithm>
#include <cstring>
#include <ctime>
#include <map>

#include "p3s/trace/schema.hpp"
#include "p3s/version.hpp"
#include "regions.hpp"

namespace p3s::interpose {
namespace {

constexpr OTF2_MetricRef kMetricClass = 0;
constexpr OTF2_AttributeRef kCallsiteAttr = 0;
constexpr OTF2_GroupRef kLocationsGroup = 0;
constexpr OTF2_GroupRef kSelfGroup = 1;
constexpr OTF2_SystemTreeNodeRef kMachineNode = 0;

template <class T>
T payload_as(const RawRecord& r) {
  T v{};
  std::memcpy(&v, r.payload, std::min(sizeof v, r.payload_bytes));
  return v;
}

/// A raw communicator index translated to a global one; unknown ones become OTF2_UNDEFINED_COMM.
OTF2_CommRef comm_ref(const LocalMaps& maps, std::uint32_t local) {
  return local < maps.comm.size() ? maps.comm[local] : OTF2_UNDEFINED_COMM;
}

std::uint32_t root_ref(std::int32_t root) {
  return root < 0 ? OTF2_COLLECTIVE_ROOT_NONE : static_cast<std::uint32_t>(root);
}

/// String definitions in order of first use; ids are dense from `first`.
class Strings {
 public:
  explicit Strings(OTF2_GlobalDefWriter* w, std::uint32_t first) : w_(w), next_(first) {}
  OTF2_StringRef operator()(const std::string& s, std::string& error) {
    const auto it = ids_.find(s);
    if (it != ids_.end()) return it->second;
    const OTF2_StringRef id = next_++;
    ids_.emplace(s, id);
    ok_ = try_otf2(OTF2_GlobalDefWriter_WriteString(w_, id, s.c_str()), "writing a string definition", error) && ok_;
    return id;
  }
  [[nodiscard]] bool ok() const { return ok_; }

 private:
  OTF2_GlobalDefWriter* w_;
  std::uint32_t next_;
  std::map<std::string, OTF2_StringRef> ids_;
  bool ok_ = true;
};

const char* metric_unit(const std::string& name) {
  if (name == trace::metric::kCpuTime) return "ns";
  if (name == trace::metric::kInstructions) return "instructions";
  if (name == trace::metric::kCycles) return "cycles";
  return "events";
}

const char* metric_description(const std::string& name) {
  if (name == trace::metric::kCpuTime) return "CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID)";
  if (name == trace::metric::kInstructions) return "Instructions completed";
  if (name == trace::metric::kCycles) return "Total cycles";
  return "Level 3 cache misses";
}

}  // namespace

std::uint64_t ClockModel::global(std::uint64_t local) const noexcept {
  std::int64_t offset = init_offset_ns;
  if (has_end && end_local_ns > init_local_ns && local > init_local_ns) {
    const double f = static_cast<double>(local - init_local_ns) / static_cast<double>(end_local_ns - init_local_ns);
    offset += static_cast<std::int64_t>(f * static_cast<double>(end_offset_ns - init_offset_ns));
  }
  return static_cast<std::uint64_t>(static_cast<std::int64_t>(local) + offset);
}

bool convert_location(RawReader& reader, OTF2_EvtWriter* w, const LocalMaps& maps, const ClockModel& clock,
                      LocationStats& stats, std::string& error) {
  const raw::FileHeader& h = reader.header();
  const std::uint32_t nmetrics = std::min<std::uint32_t>(h.metric_count, kMaxMetrics);
  OTF2_Type metric_types[kMaxMetrics];
  std::fill(std::begin(metric_types), std::end(metric_types), OTF2_TYPE_UINT64);
  OTF2_AttributeList* attrs = OTF2_AttributeList_New();
  if (attrs == nullptr) {
    error = "cannot allocate an OTF2 attribute list";
    return false;
  }
  stats.rank = h.rank;
  stats.thread = h.thread_index;
  stats.location = location_id(h.rank, h.thread_index);
  bool ok = true;
  std::uint64_t last = 0;
  RawRecord r{};
  while (ok && reader.next(r)) {
    // Clock interpolation is monotonic, but guard the per-location order OTF2 requires anyway.
    const std::uint64_t t = std::max(clock.global(r.header.time_ns), last);
    const raw::Kind kind = r.header.kind;
    if (kind == raw::Kind::CommDef || kind == raw::Kind::CallsiteDef || kind == raw::Kind::Meta) continue;
    if (kind == raw::Kind::Finalized) {
      stats.complete = 1;
      continue;
    }
    last = t;
    stats.first_ns = std::min(stats.first_ns, t);
    stats.last_ns = t;
    switch (kind) {
      case raw::Kind::Enter:
      case raw::Kind::Leave: {
        const std::byte* p = r.payload;
        OTF2_AttributeList* list = nullptr;
        const bool has_site = kind == raw::Kind::Enter && (r.header.flags & raw::kFlagCallsite) != 0;
        if (r.payload_bytes < (has_site ? 8u : 0u) + 8u * nmetrics) continue;  // malformed: skip, never over-read
        if (has_site) {
          std::uint64_t site = 0;
          std::memcpy(&site, p, sizeof site);
          p += sizeof site;
          const OTF2_StringRef ref = site < maps.callsite.size() ? maps.callsite[site] : 0;
          ok = try_otf2(OTF2_AttributeList_AddStringRef(attrs, kCallsiteAttr, ref), "adding a call site", error);
          list = attrs;
        }
        if (nmetrics != 0) {
          OTF2_MetricValue values[kMaxMetrics];
          for (std::uint32_t i = 0; i < nmetrics; ++i) std::memcpy(&values[i].unsigned_int, p + 8 * i, 8);
          ok = ok && try_otf2(OTF2_EvtWriter_Metric(w, nullptr, t, kMetricClass, static_cast<std::uint8_t>(nmetrics),
                                                    metric_types, values),
                              "writing a metric event", error);
          ++stats.events;
        }
        const OTF2_RegionRef region = r.header.region;
        ok = ok && (kind == raw::Kind::Enter
                        ? try_otf2(OTF2_EvtWriter_Enter(w, list, t, region), "writing an Enter event", error)
                        : try_otf2(OTF2_EvtWriter_Leave(w, nullptr, t, region), "writing a Leave event", error));
        break;
      }
      case raw::Kind::Send:
      case raw::Kind::Isend:
      case raw::Kind::Recv:
      case raw::Kind::Irecv: {
        const auto m = payload_as<raw::Msg>(r);
        const OTF2_CommRef comm = comm_ref(maps, m.comm);
        const auto peer = static_cast<std::uint32_t>(m.peer);
        const auto tag = static_cast<std::uint32_t>(m.tag);
        OTF2_ErrorCode rc = OTF2_SUCCESS;
        if (kind == raw::Kind::Send)
          rc = OTF2_EvtWriter_MpiSend(w, nullptr, t, peer, comm, tag, m.bytes);
        else if (kind == raw::Kind::Isend)
          rc = OTF2_EvtWriter_MpiIsend(w, nullptr, t, peer, comm, tag, m.bytes, m.request);
        else if (kind == raw::Kind::Recv)
          rc = OTF2_EvtWriter_MpiRecv(w, nullptr, t, peer, comm, tag, m.bytes);
        else
          rc = OTF2_EvtWriter_MpiIrecv(w, nullptr, t, peer, comm, tag, m.bytes, m.request);
        ok = try_otf2(rc, "writing a message event", error);
        break;
      }
      case raw::Kind::IsendComplete:
        ok = try_otf2(OTF2_EvtWriter_MpiIsendComplete(w, nullptr, t, payload_as<raw::Request>(r).request),
                      "writing an MpiIsendComplete event", error);
        break;
      case raw::Kind::IrecvRequest:
        ok = try_otf2(OTF2_EvtWriter_MpiIrecvRequest(w, nullptr, t, payload_as<raw::Request>(r).request),
                      "writing an MpiIrecvRequest event", error);
        break;
      case raw::Kind::RequestCancelled:
        ok = try_otf2(OTF2_EvtWriter_MpiRequestCancelled(w, nullptr, t, payload_as<raw::Request>(r).request),
                      "writing an MpiRequestCancelled event", error);
        break;
      case raw::Kind::NbCollRequest:
        ok = try_otf2(OTF2_EvtWriter_NonBlockingCollectiveRequest(w, nullptr, t, payload_as<raw::Request>(r).request),
                      "writing a NonBlockingCollectiveRequest event", error);
        break;
      case raw::Kind::CollBegin:
        ok = try_otf2(OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, t), "writing an MpiCollectiveBegin event", error);
        break;
      case raw::Kind::CollEnd:
      case raw::Kind::NbCollComplete: {
        const auto c = payload_as<raw::Coll>(r);
        const auto op = static_cast<OTF2_CollectiveOp>(c.op);
        ok = kind == raw::Kind::CollEnd
                 ? try_otf2(OTF2_EvtWriter_MpiCollectiveEnd(w, nullptr, t, op, comm_ref(maps, c.comm), root_ref(c.root),
                                                            c.sent, c.received),
                            "writing an MpiCollectiveEnd event", error)
                 : try_otf2(
                       OTF2_EvtWriter_NonBlockingCollectiveComplete(w, nullptr, t, op, comm_ref(maps, c.comm),
                                                                    root_ref(c.root), c.sent, c.received, c.request),
                       "writing a NonBlockingCollectiveComplete event", error);
        break;
      }
      case raw::Kind::CommCreate:
      case raw::Kind::CommDestroy: {
        const OTF2_CommRef comm = comm_ref(maps, payload_as<raw::CommRef>(r).comm);
        ok = kind == raw::Kind::CommCreate
                 ? try_otf2(OTF2_EvtWriter_CommCreate(w, nullptr, t, comm), "writing a CommCreate event", error)
                 : try_otf2(OTF2_EvtWriter_CommDestroy(w, nullptr, t, comm), "writing a CommDestroy event", error);
        break;
      }
      default:
        continue;  // kinds from a newer recorder are skipped, not fatal
    }
    ++stats.events;
  }
  stats.torn = reader.torn() ? 1 : 0;
  OTF2_AttributeList_Delete(attrs);
  // The definitions must announce exactly what the file holds: ask OTF2, which knows its own records.
  uint64_t written = 0;
  if (ok && OTF2_EvtWriter_GetNumberOfEvents(w, &written) == OTF2_SUCCESS) stats.events = written;
  return ok;
}

bool write_global_definitions(OTF2_Archive* archive, const RunInfo& run, const Unified& unified,
                              std::span<const LocationStats> locations, std::string& error) {
  OTF2_GlobalDefWriter* w = OTF2_Archive_GetGlobalDefWriter(archive);
  if (w == nullptr) {
    error = "cannot open the global definition writer";
    return false;
  }
  bool ok = true;
  // Call-site texts take string ids 0..C-1: every rank's converter refers to them by unified index.
  for (std::size_t i = 0; i < unified.callsites.size(); ++i) {
    ok = ok &&
         try_otf2(OTF2_GlobalDefWriter_WriteString(w, static_cast<OTF2_StringRef>(i), unified.callsites[i].c_str()),
                  "writing a call-site string", error);
  }
  Strings str(w, static_cast<std::uint32_t>(unified.callsites.size()));

  std::uint64_t first = UINT64_MAX;
  std::uint64_t last = 0;
  for (const LocationStats& l : locations) {
    if (l.events == 0) continue;
    first = std::min(first, l.first_ns);
    last = std::max(last, l.last_ns);
  }
  if (first == UINT64_MAX) first = last = 0;
  ok = ok && try_otf2(OTF2_GlobalDefWriter_WriteClockProperties(w, 1000000000ULL, first, last - first + 1,
                                                                OTF2_UNDEFINED_TIMESTAMP),
                      "writing the clock properties", error);
  ok = ok && try_otf2(OTF2_GlobalDefWriter_WriteParadigm(w, OTF2_PARADIGM_MPI, str("MPI", error),
                                                         OTF2_PARADIGM_CLASS_PROCESS),
                      "writing the MPI paradigm", error);

  // System tree: one machine, one node per host, one process (location group) per rank.
  ok = ok && try_otf2(OTF2_GlobalDefWriter_WriteSystemTreeNode(w, kMachineNode, str("cluster", error),
                                                               str("machine", error), OTF2_UNDEFINED_SYSTEM_TREE_NODE),
                      "writing the machine node", error);
  std::map<std::string, OTF2_SystemTreeNodeRef> nodes;
  for (std::int32_t r = 0; r < run.world_size; ++r) {
    const std::string host =
        static_cast<std::size_t>(r) < run.hosts.size() && !run.hosts[static_cast<std::size_t>(r)].empty()
            ? run.hosts[static_cast<std::size_t>(r)]
            : "unknown";
    auto [it, inserted] = nodes.emplace(host, static_cast<OTF2_SystemTreeNodeRef>(nodes.size() + 1));
    if (inserted) {
      ok = ok && try_otf2(OTF2_GlobalDefWriter_WriteSystemTreeNode(w, it->second, str(host, error), str("node", error),
                                                                   kMachineNode),
                          "writing a node", error);
    }
    ok = ok && try_otf2(OTF2_GlobalDefWriter_WriteLocationGroup(
                            w, static_cast<OTF2_LocationGroupRef>(r), str("MPI Rank " + std::to_string(r), error),
                            OTF2_LOCATION_GROUP_TYPE_PROCESS, it->second, OTF2_UNDEFINED_LOCATION_GROUP),
                        "writing a location group", error);
  }
  // Every rank gets its master location, even one whose log was lost, so peers always resolve.
  std::map<std::uint64_t, const LocationStats*> by_id;
  for (const LocationStats& l : locations) by_id[l.location] = &l;
  for (std::int32_t r = 0; r < run.world_size; ++r) by_id.try_emplace(location_id(r, 0), nullptr);
  for (const auto& [id, l] : by_id) {
    const auto thread = static_cast<std::uint32_t>(id >> 32);
    const auto rank = static_cast<OTF2_LocationGroupRef>(id & 0xffffffffu);
    const std::string name = thread == 0 ? "Master thread" : "Thread " + std::to_string(thread);
    ok = ok && try_otf2(OTF2_GlobalDefWriter_WriteLocation(w, id, str(name, error), OTF2_LOCATION_TYPE_CPU_THREAD,
                                                           l != nullptr ? l->events : 0, rank),
                        "writing a location", error);
  }

  for (std::uint16_t i = 0; i < kRegionCount; ++i) {
    const OTF2_StringRef name = str(std::string(mpi::name(static_cast<Region>(i))), error);
    ok = ok &&
         try_otf2(OTF2_GlobalDefWriter_WriteRegion(w, i, name, name, str("", error), kRegionRoles[i], OTF2_PARADIGM_MPI,
                                                   OTF2_REGION_FLAG_NONE, str("MPI", error), 0, 0),
                  "writing a region", error);
  }

  // Groups, as Score-P writes them: the locations of the world ranks, then each communicator's members as
  // indices into that group (= world ranks).
  std::vector<std::uint64_t> world(static_cast<std::size_t>(run.world_size));
  for (std::int32_t r = 0; r < run.world_size; ++r) world[static_cast<std::size_t>(r)] = location_id(r, 0);
  ok = ok && try_otf2(OTF2_GlobalDefWriter_WriteGroup(
                          w, kLocationsGroup, str("", error), OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                          OTF2_GROUP_FLAG_NONE, static_cast<std::uint32_t>(world.size()), world.data()),
                      "writing the COMM_LOCATIONS group", error);
  ok = ok && try_otf2(OTF2_GlobalDefWriter_WriteGroup(w, kSelfGroup, str("", error), OTF2_GROUP_TYPE_COMM_SELF,
                                                      OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, 0, nullptr),
                      "writing the COMM_SELF group", error);
  std::map<std::vector<std::int32_t>, OTF2_GroupRef> groups;
  std::vector<OTF2_GroupRef> comm_group(unified.comms.size(), kSelfGroup);
  for (std::size_t g = 0; g < unified.comms.size(); ++g) {
    if ((unified.comms[g].flags & raw::kCommSelf) != 0) continue;
    const auto& members = unified.comms[g].members;
    auto [it, inserted] = groups.emplace(members, static_cast<OTF2_GroupRef>(groups.size() + 2));
    if (inserted) {
      std::vector<std::uint64_t> m(members.size());
      // A member no log told about (killed rank) is written as an unresolvable rank: its index is the size.
      for (std::size_t i = 0; i < members.size(); ++i) {
        m[i] = members[i] >= 0 ? static_cast<std::uint64_t>(members[i]) : world.size();
      }
      ok = ok && try_otf2(OTF2_GlobalDefWriter_WriteGroup(w, it->second, str("", error), OTF2_GROUP_TYPE_COMM_GROUP,
                                                          OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                                          static_cast<std::uint32_t>(m.size()), m.data()),
                          "writing a communicator group", error);
    }
    comm_group[g] = it->second;
  }
  for (std::size_t g = 0; g < unified.comms.size(); ++g) {
    const GlobalComm& c = unified.comms[g];
    const std::string name = g == 0 ? "MPI_COMM_WORLD" : g == 1 ? "MPI_COMM_SELF" : "Comm " + std::to_string(g);
    ok = ok && try_otf2(OTF2_GlobalDefWriter_WriteComm(w, static_cast<OTF2_CommRef>(g), str(name, error), comm_group[g],
                                                       c.parent, OTF2_COMM_FLAG_CREATE_DESTROY_EVENTS),
                        "writing a communicator", error);
  }

  if (run.counters.count > 0) {
    OTF2_MetricMemberRef members[kMaxMetrics];
    for (int i = 0; i < run.counters.count; ++i) {
      const std::string& name = run.counters.names[static_cast<std::size_t>(i)];
      members[i] = static_cast<OTF2_MetricMemberRef>(i);
      const OTF2_MetricType type =
          run.counters.mode == CounterMode::Papi ? OTF2_METRIC_TYPE_PAPI : OTF2_METRIC_TYPE_OTHER;
      ok = ok && try_otf2(OTF2_GlobalDefWriter_WriteMetricMember(w, members[i], str(name, error),
                                                                 str(metric_description(name), error), type,
                                                                 OTF2_METRIC_ACCUMULATED_START, OTF2_TYPE_UINT64,
                                                                 OTF2_BASE_DECIMAL, 0, str(metric_unit(name), error)),
                          "writing a metric member", error);
    }
    ok = ok && try_otf2(OTF2_GlobalDefWriter_WriteMetricClass(w, kMetricClass,
                                                              static_cast<std::uint8_t>(run.counters.count), members,
                                                              OTF2_METRIC_SYNCHRONOUS_STRICT, OTF2_RECORDER_KIND_CPU),
                        "writing the metric class", error);
  }
  if (run.callsites) {
    ok = ok &&
         try_otf2(OTF2_GlobalDefWriter_WriteAttribute(w, kCallsiteAttr, str(trace::kCallsiteAttribute, error),
                                                      str("calling location of the MPI call", error), OTF2_TYPE_STRING),
                  "writing the call-site attribute", error);
  }
  ok = ok && str.ok();

  // Archive properties: what the archive holds and where it came from.
  auto prop = [&](const char* name, const std::string& value) {
    if (value.empty()) return;
    ok = ok && try_otf2(OTF2_Archive_SetProperty(archive, name, value.c_str(), true), name, error);
  };
  prop(trace::property::kTool, std::string("p3s ") + kVersion);
  prop(trace::property::kSchemaVersion, std::string(trace::kSchemaVersion));
  prop(trace::property::kWorkMetric, work_metric_name(run.counters));
  prop(trace::property::kCountersRequested, run.counters_requested);
  prop(trace::property::kCountersNote, run.counters.note);
  prop(trace::property::kProcesses, std::to_string(run.world_size));
  prop(trace::property::kCommand, run.command);
  prop(trace::property::kDate, run.date);
  prop(trace::property::kThreadLevel, run.thread_level);
  prop(trace::property::kComplete, run.complete ? "true" : "false");
  std::string missing;
  for (std::int32_t r : run.incomplete_ranks) missing += (missing.empty() ? "" : ",") + std::to_string(r);
  prop(trace::property::kIncompleteRanks, missing);
  ok = ok && try_otf2(OTF2_Archive_SetCreator(archive, (std::string("p3s ") + kVersion).c_str()), "setting the creator",
                      error);
  return try_otf2(OTF2_Archive_CloseGlobalDefWriter(archive, w), "closing the global definitions", error) && ok;
}

std::string thread_level_name(int level) {
  switch (level) {
    case 0:
      return "single";
    case 1:
      return "funneled";
    case 2:
      return "serialized";
    case 3:
      return "multiple";
    default:
      return "unknown";
  }
}

}  // namespace p3s::interpose
