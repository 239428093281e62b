// SPDX-License-Identifier: BSD-3-Clause
// Lookups on resolved definitions: ticks -> ns and communicator rank -> world rank.
#include "p3s/analyzer/definitions.hpp"

#include "p3s/stable_name.hpp"
#include "p3s/trace/schema.hpp"

#include <algorithm>
#include <array>
#include <functional>

namespace p3s::analyzer {

std::uint64_t ClockProperties::to_ns(std::uint64_t ticks) const noexcept {
  if (ticks <= global_offset) return 0;
  const std::uint64_t delta = ticks - global_offset;
  if (timer_resolution == 1000000000 || timer_resolution == 0) return delta;
  // 128-bit intermediate: TSC ticks (GHz rates) times 10^9 overflow 64 bits after a few seconds.
  __extension__ using u128 = unsigned __int128;
  return static_cast<std::uint64_t>(static_cast<u128>(delta) * 1000000000u / timer_resolution);
}

std::uint64_t ClockProperties::length_ns() const noexcept {
  return ClockProperties{timer_resolution, 0, 0}.to_ns(trace_length);
}

const Region* TraceDefinitions::region(std::uint32_t id) const noexcept {
  return id < regions.size() && regions[id].id == id ? &regions[id] : nullptr;
}

const Communicator* TraceDefinitions::comm(std::uint32_t id) const noexcept {
  return id < comms.size() && comms[id].id == id ? &comms[id] : nullptr;
}

const Location* TraceDefinitions::location(std::uint64_t id) const noexcept {
  const auto it = location_index.find(id);
  return it == location_index.end() ? nullptr : &locations[it->second];
}

std::string_view TraceDefinitions::string(std::uint32_t id) const noexcept {
  return id < strings.size() ? std::string_view(strings[id]) : std::string_view();
}

std::optional<std::string> TraceDefinitions::property(std::string_view name) const {
  const auto it = properties.find(name);
  if (it == properties.end()) return std::nullopt;
  return it->second;
}

std::int32_t TraceDefinitions::world_rank(std::uint32_t comm_id, std::uint32_t rank_in_comm,
                                          std::int32_t caller) const noexcept {
  const Communicator* c = comm(comm_id);
  if (c == nullptr) return kUnresolvedRank;
  auto pick = [&](const std::vector<std::int32_t>& ranks) {
    return rank_in_comm < ranks.size() ? ranks[rank_in_comm] : kUnresolvedRank;
  };
  switch (c->kind) {
    case CommKind::Group:
      return pick(c->world_ranks);
    case CommKind::Self:
      // MPI_COMM_SELF has one rank, 0, and it is whoever calls.
      return rank_in_comm == 0 && caller >= 0 ? caller : kUnresolvedRank;
    case CommKind::Inter: {
      // Point-to-point ranks on an inter-communicator name a process of the *remote* group.
      for (std::int32_t r : c->world_ranks) {
        if (r == caller) return pick(c->remote_world_ranks);
      }
      for (std::int32_t r : c->remote_world_ranks) {
        if (r == caller) return pick(c->world_ranks);
      }
      return kUnresolvedRank;
    }
    case CommKind::Unresolved:
      break;
  }
  return kUnresolvedRank;
}

bool TraceDefinitions::written_by_p3s() const { return properties.contains(trace::property::kTool); }

std::string TraceDefinitions::work_metric() const { return property(trace::property::kWorkMetric).value_or("unknown"); }

constexpr NameTable<Paradigm, 8> kParadigmNames{{{{Paradigm::Unknown, "unknown"},
                                                  {Paradigm::User, "user"},
                                                  {Paradigm::Compiler, "compiler"},
                                                  {Paradigm::OpenMp, "OpenMP"},
                                                  {Paradigm::Mpi, "MPI"},
                                                  {Paradigm::MeasurementSystem, "measurement system"},
                                                  {Paradigm::Pthread, "pthread"},
                                                  {Paradigm::Other, "other"}}}};

std::string_view paradigm_name(Paradigm p) noexcept { return kParadigmNames.name(p, "unknown"); }

bool run_complete(const TraceDefinitions& defs, const std::vector<bool>& left_finalize) {
  if (const std::optional<std::string> said = defs.property(trace::property::kComplete)) return *said == "true";
  return !left_finalize.empty() && std::all_of(left_finalize.begin(), left_finalize.end(), std::identity());
}

constexpr NameTable<CommKind, 4> kCommKindNames{{{{CommKind::Group, "group"},
                                                  {CommKind::Self, "self"},
                                                  {CommKind::Inter, "inter"},
                                                  {CommKind::Unresolved, "unresolved"}}}};

std::string_view comm_kind_name(CommKind k) noexcept { return kCommKindNames.name(k, "unresolved"); }

std::optional<CommKind> comm_kind_named(std::string_view name) noexcept { return kCommKindNames.value(name); }

}  // namespace p3s::analyzer
