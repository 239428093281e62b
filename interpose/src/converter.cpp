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

}  // namespace

double ClockModel::drift() const noexcept {
  if (!has_end || end_local_ns <= init_local_ns) return 0.0;
  return static_cast<double>(end_offset_ns - init_offset_ns) / static_cast<double>(end_local_ns - init_local_ns);
}

std::uint64_t ClockModel::global(std::uint64_t local, double drift) const noexcept {
  std::int64_t offset = init_offset_ns;
  if (local > init_local_ns) offset += static_cast<std::int64_t>(static_cast<double>(local - init_local_ns) * drift);
  return static_cast<std::uint64_t>(static_cast<std::int64_t>(local) + offset);
}

namespace {

/// Writes one location's raw records as OTF2 events; the first failure is kept in `error_`.
class LocationConverter {
 public:
  LocationConverter(OTF2_EvtWriter* w, const LocalMaps& maps, std::uint32_t metrics, OTF2_AttributeList* attrs,
                    std::string& error)
      : w_(w), maps_(maps), nmetrics_(std::min<std::uint32_t>(metrics, kMaxMetrics)), attrs_(attrs), error_(error) {
    std::fill(std::begin(metric_types_), std::end(metric_types_), OTF2_TYPE_UINT64);
  }

  /// Writes record r at global time t; returns whether it was one event (false for a skipped record) and sets
  /// `ok` to false on failure.
  bool record(const RawRecord& r, std::uint64_t t, std::uint64_t& events, bool& ok) {
    const raw::Kind kind = r.header.kind;
    switch (kind) {
      case raw::Kind::Enter:
      case raw::Kind::Leave:
        return region(r, t, events, ok);
      case raw::Kind::Send:
      case raw::Kind::Isend:
      case raw::Kind::Recv:
      case raw::Kind::Irecv:
        ok = message(r, t);
        return true;
      case raw::Kind::IsendComplete:
      case raw::Kind::IrecvRequest:
      case raw::Kind::RequestCancelled:
      case raw::Kind::NbCollRequest:
        ok = request(r, t);
        return true;
      case raw::Kind::CollBegin:
        ok = try_otf2(OTF2_EvtWriter_MpiCollectiveBegin(w_, nullptr, t), "writing an MpiCollectiveBegin event", error_);
        return true;
      case raw::Kind::CollEnd:
      case raw::Kind::NbCollComplete:
        ok = collective_end(r, t);
        return true;
      case raw::Kind::CommCreate:
      case raw::Kind::CommDestroy: {
        const OTF2_CommRef comm = comm_ref(maps_, payload_as<raw::CommRef>(r).comm);
        ok = kind == raw::Kind::CommCreate
                 ? try_otf2(OTF2_EvtWriter_CommCreate(w_, nullptr, t, comm), "writing a CommCreate event", error_)
                 : try_otf2(OTF2_EvtWriter_CommDestroy(w_, nullptr, t, comm), "writing a CommDestroy event", error_);
        return true;
      }
      default:
        return false;  // kinds from a newer recorder are skipped, not fatal
    }
  }

 private:
  /// Enter or Leave. Before an Enter, the work counters as a Metric event, less what the thread counted inside its
  /// earlier MPI calls (the raw Leave records hold the counters at each call's end): each counter's value at an Enter
  /// minus its value at the previous Enter is the burst between the two calls, one event per call instead of two.
  /// The call site is an attribute of the Enter.
  bool region(const RawRecord& r, std::uint64_t t, std::uint64_t& events, bool& ok) {
    const raw::Kind kind = r.header.kind;
    const std::byte* p = r.payload;
    OTF2_AttributeList* list = nullptr;
    const bool has_site = kind == raw::Kind::Enter && (r.header.flags & raw::kFlagCallsite) != 0;
    if (r.payload_bytes < (has_site ? 8u : 0u) + 8u * nmetrics_) return false;  // malformed: skip, never over-read
    if (has_site) {
      std::uint64_t site = 0;
      std::memcpy(&site, p, sizeof site);
      p += sizeof site;
      const OTF2_StringRef ref = site < maps_.callsite.size() ? maps_.callsite[site] : 0;
      ok = try_otf2(OTF2_AttributeList_AddStringRef(attrs_, kCallsiteAttr, ref), "adding a call site", error_);
      list = attrs_;
    }
    if (nmetrics_ != 0) {
      std::uint64_t counters[kMaxMetrics];
      std::memcpy(counters, p, 8 * nmetrics_);
      if (kind == raw::Kind::Leave) {
        for (std::uint32_t i = 0; i < nmetrics_ && in_call_; ++i) {
          inside_[i] += counters[i] > entered_[i] ? counters[i] - entered_[i] : 0;
        }
        in_call_ = false;
      } else {
        OTF2_MetricValue values[kMaxMetrics];
        for (std::uint32_t i = 0; i < nmetrics_; ++i) {
          entered_[i] = counters[i];
          values[i].unsigned_int = counters[i] > inside_[i] ? counters[i] - inside_[i] : 0;
        }
        in_call_ = true;
        ok = ok && try_otf2(OTF2_EvtWriter_Metric(w_, nullptr, t, kMetricClass, static_cast<std::uint8_t>(nmetrics_),
                                                  metric_types_, values),
                            "writing a metric event", error_);
        ++events;
      }
    }
    const OTF2_RegionRef region = r.header.region;
    ok = ok && (kind == raw::Kind::Enter
                    ? try_otf2(OTF2_EvtWriter_Enter(w_, list, t, region), "writing an Enter event", error_)
                    : try_otf2(OTF2_EvtWriter_Leave(w_, nullptr, t, region), "writing a Leave event", error_));
    return true;
  }

  bool message(const RawRecord& r, std::uint64_t t) {
    const auto m = payload_as<raw::Msg>(r);
    const OTF2_CommRef comm = comm_ref(maps_, m.comm);
    const auto peer = static_cast<std::uint32_t>(m.peer);
    const auto tag = static_cast<std::uint32_t>(m.tag);
    OTF2_ErrorCode rc = OTF2_SUCCESS;
    switch (r.header.kind) {
      case raw::Kind::Send:
        rc = OTF2_EvtWriter_MpiSend(w_, nullptr, t, peer, comm, tag, m.bytes);
        break;
      case raw::Kind::Isend:
        rc = OTF2_EvtWriter_MpiIsend(w_, nullptr, t, peer, comm, tag, m.bytes, m.request);
        break;
      case raw::Kind::Recv:
        rc = OTF2_EvtWriter_MpiRecv(w_, nullptr, t, peer, comm, tag, m.bytes);
        break;
      default:
        rc = OTF2_EvtWriter_MpiIrecv(w_, nullptr, t, peer, comm, tag, m.bytes, m.request);
        break;
    }
    return try_otf2(rc, "writing a message event", error_);
  }

  /// The records that name only a request.
  bool request(const RawRecord& r, std::uint64_t t) {
    const std::uint64_t id = payload_as<raw::Request>(r).request;
    switch (r.header.kind) {
      case raw::Kind::IsendComplete:
        return try_otf2(OTF2_EvtWriter_MpiIsendComplete(w_, nullptr, t, id), "writing an MpiIsendComplete event",
                        error_);
      case raw::Kind::IrecvRequest:
        return try_otf2(OTF2_EvtWriter_MpiIrecvRequest(w_, nullptr, t, id), "writing an MpiIrecvRequest event", error_);
      case raw::Kind::RequestCancelled:
        return try_otf2(OTF2_EvtWriter_MpiRequestCancelled(w_, nullptr, t, id), "writing an MpiRequestCancelled event",
                        error_);
      default:
        return try_otf2(OTF2_EvtWriter_NonBlockingCollectiveRequest(w_, nullptr, t, id),
                        "writing a NonBlockingCollectiveRequest event", error_);
    }
  }

  bool collective_end(const RawRecord& r, std::uint64_t t) {
    const auto c = payload_as<raw::Coll>(r);
    const auto op = static_cast<OTF2_CollectiveOp>(c.op);
    if (r.header.kind == raw::Kind::CollEnd) {
      return try_otf2(OTF2_EvtWriter_MpiCollectiveEnd(w_, nullptr, t, op, comm_ref(maps_, c.comm), root_ref(c.root),
                                                      c.sent, c.received),
                      "writing an MpiCollectiveEnd event", error_);
    }
    return try_otf2(OTF2_EvtWriter_NonBlockingCollectiveComplete(w_, nullptr, t, op, comm_ref(maps_, c.comm),
                                                                 root_ref(c.root), c.sent, c.received, c.request),
                    "writing a NonBlockingCollectiveComplete event", error_);
  }

  OTF2_EvtWriter* w_;
  const LocalMaps& maps_;
  std::uint32_t nmetrics_;
  OTF2_Type metric_types_[kMaxMetrics];
  std::uint64_t inside_[kMaxMetrics] = {};   ///< per counter: what the thread's MPI calls so far counted
  std::uint64_t entered_[kMaxMetrics] = {};  ///< per counter: its value at the open call's Enter
  bool in_call_ = false;
  OTF2_AttributeList* attrs_;
  std::string& error_;
};

}  // namespace

bool convert_location(RawReader& reader, OTF2_EvtWriter* w, const LocalMaps& maps, const ClockModel& clock,
                      LocationStats& stats, std::string& error) {
  const raw::FileHeader& h = reader.header();
  OTF2_AttributeList* attrs = OTF2_AttributeList_New();
  if (attrs == nullptr) {
    if (error.empty()) error = "cannot allocate an OTF2 attribute list";
    return false;
  }
  LocationConverter convert(w, maps, h.metric_count, attrs, error);
  stats.rank = h.rank;
  stats.thread = h.thread_index;
  stats.location = location_id(h.rank, h.thread_index);
  bool ok = true;
  std::uint64_t last = 0;
  const double drift = clock.drift();
  RawRecord r{};
  while (ok && reader.next(r)) {
    // Clock interpolation is monotonic, but guard the per-location order OTF2 requires anyway.
    const std::uint64_t t = std::max(clock.global(r.header.time_ns, drift), last);
    const raw::Kind kind = r.header.kind;
    if (kind == raw::Kind::CommDef || kind == raw::Kind::CallsiteDef || kind == raw::Kind::Meta) continue;
    if (kind == raw::Kind::Finalized) {
      stats.complete = 1;
      continue;
    }
    last = t;
    stats.first_ns = std::min(stats.first_ns, t);
    stats.last_ns = t;
    if (convert.record(r, t, stats.events, ok)) ++stats.events;
  }
  stats.torn = reader.torn() ? 1 : 0;
  OTF2_AttributeList_Delete(attrs);
  // The definitions must announce exactly what the file holds: ask OTF2, which knows its own records.
  uint64_t written = 0;
  if (ok && OTF2_EvtWriter_GetNumberOfEvents(w, &written) == OTF2_SUCCESS) stats.events = written;
  return ok;
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
