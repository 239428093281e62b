// SPDX-License-Identifier: BSD-3-Clause
// Raw records -> OTF2 events and definitions, following Score-P's conventions so that any OTF2 reader
// (otf2-print, Vampir, the p3s analyzer) resolves every message peer to a location.
#include "converter.hpp"

#include <algorithm>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>

#include "event_chunks.hpp"
#include "p3s/interpose/archive_writer.hpp"
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

/// Writes one location's raw records as OTF2 events.
class LocationConverter {
 public:
  LocationConverter(otf2::EventChunks& w, const LocalMaps& maps, std::uint32_t metrics)
      : w_(w), maps_(maps), nmetrics_(std::min<std::uint32_t>(metrics, kMaxMetrics)) {}

  /// Writes record r at global time t (records of kinds from a newer recorder are skipped, not fatal); sets `ok` to
  /// false on failure.
  void record(const RawRecord& r, std::uint64_t t, bool& ok) {
    const raw::Kind kind = r.header.kind;
    switch (kind) {
      case raw::Kind::Enter:
      case raw::Kind::Leave:
        region(r, t, ok);
        return;
      case raw::Kind::Send:
      case raw::Kind::Isend:
      case raw::Kind::Recv:
      case raw::Kind::Irecv:
        ok = message(r, t);
        return;
      case raw::Kind::IsendComplete:
      case raw::Kind::IrecvRequest:
      case raw::Kind::RequestCancelled:
      case raw::Kind::NbCollRequest:
        ok = w_.request(request_id(kind), t, payload_as<raw::Request>(r).request);
        return;
      case raw::Kind::CollBegin:
        ok = w_.collective_begin(t);
        return;
      case raw::Kind::CollEnd:
      case raw::Kind::NbCollComplete: {
        const auto c = payload_as<raw::Coll>(r);
        ok = w_.collective_end(t, static_cast<std::uint8_t>(c.op), comm_ref(maps_, c.comm), root_ref(c.root), c.sent,
                               c.received, kind == raw::Kind::NbCollComplete, c.request);
        return;
      }
      case raw::Kind::CommCreate:
      case raw::Kind::CommDestroy:
        ok = w_.comm(kind == raw::Kind::CommCreate ? otf2::Id::CommCreate : otf2::Id::CommDestroy, t,
                     comm_ref(maps_, payload_as<raw::CommRef>(r).comm));
        return;
      default:
        return;
    }
  }

 private:
  static otf2::Id request_id(raw::Kind kind) {
    switch (kind) {
      case raw::Kind::IsendComplete:
        return otf2::Id::MpiIsendComplete;
      case raw::Kind::IrecvRequest:
        return otf2::Id::MpiIrecvRequest;
      case raw::Kind::RequestCancelled:
        return otf2::Id::MpiRequestCancelled;
      default:
        return otf2::Id::NonBlockingCollectiveRequest;
    }
  }

  /// Enter or Leave. Before an Enter, the work counters as a Metric event, less what the thread counted inside its
  /// earlier MPI calls (the raw Leave records hold the counters at each call's end): each counter's value at an Enter
  /// minus its value at the previous Enter is the burst between the two calls, one event per call instead of two.
  /// The call site is an attribute of the Enter.
  void region(const RawRecord& r, std::uint64_t t, bool& ok) {
    const raw::Kind kind = r.header.kind;
    const std::byte* p = r.payload;
    const bool has_site = kind == raw::Kind::Enter && (r.header.flags & raw::kFlagCallsite) != 0;
    if (r.payload_bytes < (has_site ? 8u : 0u) + 8u * nmetrics_) return;  // malformed: skip, never over-read
    OTF2_StringRef site_ref = 0;
    if (has_site) {
      std::uint64_t site = 0;
      std::memcpy(&site, p, sizeof site);
      p += sizeof site;
      site_ref = site < maps_.callsite.size() ? maps_.callsite[site] : 0;
    }
    if (nmetrics_ != 0) {
      std::uint64_t counters[kMaxMetrics];
      std::memcpy(counters, p, 8 * nmetrics_);
      const auto n = static_cast<int>(nmetrics_);
      if (kind == raw::Kind::Leave) {
        if (in_call_) outside_.leave(counters, n);
        in_call_ = false;
      } else {
        std::uint64_t values[kMaxMetrics];
        outside_.enter(counters, n, values);
        in_call_ = true;
        ok = ok && w_.metric(t, kMetricClass, static_cast<std::uint8_t>(nmetrics_), values);
      }
    }
    const OTF2_RegionRef region = r.header.region;
    if (kind == raw::Kind::Leave) {
      ok = ok && w_.leave(t, region);
    } else {
      ok = ok && (has_site ? w_.enter(t, region, kCallsiteAttr, site_ref) : w_.enter(t, region));
    }
  }

  bool message(const RawRecord& r, std::uint64_t t) {
    const auto m = payload_as<raw::Msg>(r);
    const OTF2_CommRef comm = comm_ref(maps_, m.comm);
    const auto peer = static_cast<std::uint32_t>(m.peer);
    const auto tag = static_cast<std::uint32_t>(m.tag);
    switch (r.header.kind) {
      case raw::Kind::Send:
        return w_.message(otf2::Id::MpiSend, t, peer, comm, tag, m.bytes);
      case raw::Kind::Recv:
        return w_.message(otf2::Id::MpiRecv, t, peer, comm, tag, m.bytes);
      case raw::Kind::Isend:
        return w_.message(otf2::Id::MpiIsend, t, peer, comm, tag, m.bytes, m.request);
      default:
        return w_.message(otf2::Id::MpiIrecv, t, peer, comm, tag, m.bytes, m.request);
    }
  }

  otf2::EventChunks& w_;
  const LocalMaps& maps_;
  std::uint32_t nmetrics_;
  CountsOutsideCalls outside_;
  bool in_call_ = false;  ///< a Leave without its Enter (a log's first records lost) counts nothing
};

bool convert_records(RawReader& reader, otf2::EventChunks& w, const LocalMaps& maps, const ClockModel& clock,
                     LocationStats& stats) {
  const raw::FileHeader& h = reader.header();
  LocationConverter convert(w, maps, h.metric_count);
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
    convert.record(r, t, ok);
  }
  stats.torn = reader.torn() ? 1 : 0;
  return ok;
}

}  // namespace

std::string archive_event_file(const std::string& archive_dir, std::uint64_t location) {
  const std::filesystem::path traces = std::filesystem::path(archive_dir) / std::string(trace::kArchiveName);
  std::error_code ec;
  std::filesystem::create_directories(traces, ec);  // OTF2 makes it only for a writer of its own
  return (traces / (std::to_string(location) + ".evt")).string();
}

LocationStats event_file_stats(std::int32_t rank, std::uint32_t thread, std::uint64_t events,
                               std::uint64_t first_local_ns, std::uint64_t last_local_ns, const ClockModel& clock) {
  LocationStats st;
  st.rank = rank;
  st.thread = thread;
  st.location = location_id(rank, thread);
  st.events = events;
  if (events != 0) {
    st.first_ns = clock.global(first_local_ns);
    st.last_ns = clock.global(last_local_ns);
  }
  return st;
}

bool convert_location(RawReader& reader, const std::string& archive_dir, const LocalMaps& maps, const ClockModel& clock,
                      LocationStats& stats, std::string& error) {
  const raw::FileHeader& h = reader.header();
  const std::string path = archive_event_file(archive_dir, location_id(h.rank, h.thread_index));
  auto sink = otf2::FileSink::create(path, error);
  if (!sink) return false;
  auto w = otf2::EventChunks::create(otf2::kEventChunkBytes, kEventChunks, *sink);
  if (!w) {
    if (error.empty()) error = "out of memory for the event chunks of " + path;
    return false;
  }
  const bool converted = convert_records(reader, *w, maps, clock, stats);
  const bool closed = w->close();
  const bool ok = converted && closed && sink->close();
  if (!ok && error.empty()) error = sink->error().empty() ? "cannot write " + path : sink->error();
  // The definitions must announce exactly what the file holds.
  stats.events = w->events();
  return ok;
}

namespace {

/// A mapping table of `local` ids (index: local id, value: the archive's id); none where every id is the archive's.
bool write_mapping(OTF2_DefWriter* w, OTF2_MappingType type, const std::vector<std::uint32_t>& local,
                   std::string& error) {
  bool identity = true;
  for (std::size_t i = 0; i < local.size() && identity; ++i) identity = local[i] == i;
  if (identity) return true;
  const std::vector<std::uint64_t> wide(local.begin(), local.end());
  OTF2_IdMap* map = OTF2_IdMap_CreateFromUint64Array(wide.size(), wide.data(), false);
  if (map == nullptr) {
    if (error.empty()) error = "cannot allocate a mapping table";
    return false;
  }
  const bool ok = try_otf2(OTF2_DefWriter_WriteMappingTable(w, type, map), "writing a mapping table", error);
  OTF2_IdMap_Free(map);
  return ok;
}

}  // namespace

bool write_local_mappings(OTF2_DefWriter* w, const LocalMaps& maps, const ClockModel& clock,
                          std::uint64_t last_local_ns, std::string& error) {
  bool ok = write_mapping(w, OTF2_MAPPING_COMM, maps.comm, error) &&
            write_mapping(w, OTF2_MAPPING_STRING, maps.callsite, error);
  // OTF2 interpolates between offsets measured at two times; one alone would be ignored.
  const std::uint64_t end = clock.has_end ? clock.end_local_ns : last_local_ns;
  const std::int64_t end_offset = clock.has_end ? clock.end_offset_ns : clock.init_offset_ns;
  if (clock.init_offset_ns == 0 && end_offset == 0) return ok;
  ok = ok && try_otf2(OTF2_DefWriter_WriteClockOffset(w, clock.init_local_ns, clock.init_offset_ns, 0.0),
                      "writing a clock offset", error);
  return ok && try_otf2(OTF2_DefWriter_WriteClockOffset(w, std::max(end, clock.init_local_ns + 1), end_offset, 0.0),
                        "writing a clock offset", error);
}

bool place_event_file(const std::string& event_file, const std::string& archive_dir, std::uint64_t location,
                      std::string& error) {
  const std::string target = archive_event_file(archive_dir, location);
  std::error_code ec;
  std::filesystem::remove(target, ec);
  std::filesystem::create_hard_link(event_file, target, ec);
  if (!ec) return true;
  std::filesystem::copy_file(event_file, target, ec);
  if (!ec) return true;
  if (error.empty()) error = "cannot put " + event_file + " into the archive: " + ec.message();
  return false;
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
