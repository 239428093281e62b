// SPDX-License-Identifier: BSD-3-Clause
// Per-rank definitions (communicators, call sites) and their unification into run-wide ids.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "raw_format.hpp"

namespace p3s::interpose {

/// One communicator as one rank knows it.
struct CommDef {
  raw::CommDefinition def{};
  std::vector<std::int32_t> members;  ///< world ranks; only for kCommHasMembers
};

/// What one rank defined locally; local ids are dense indices into these vectors.
struct RankDefs {
  std::int32_t rank = -1;
  std::vector<CommDef> comms;
  std::vector<std::string> callsites;
};

/// A communicator of the whole run. `members[i]` is the world rank of communicator rank i, -1 where no log
/// told (a rank killed before it logged the definition).
struct GlobalComm {
  std::uint64_t key = 0;
  std::uint32_t flags = 0;
  std::vector<std::int32_t> members;
  std::uint32_t parent = 0xffffffffu;  ///< global id of the parent, or none
};

/// Run-wide definitions; a communicator's global id is its index (0 = MPI_COMM_WORLD, 1 = MPI_COMM_SELF).
struct Unified {
  std::vector<GlobalComm> comms;
  std::vector<std::string> callsites;
};

/// Local id -> global id tables of one rank.
struct LocalMaps {
  std::vector<std::uint32_t> comm;
  std::vector<std::uint32_t> callsite;
};

/// The index a definition record defines: a CommDef's local communicator index, a CallsiteDef's id (0 if the
/// payload is too short to hold it, which add_definition then skips).
[[nodiscard]] std::uint64_t definition_index(raw::Kind kind, const std::byte* payload, std::size_t bytes) noexcept;

/// Adds a definition record read from a raw log to `defs` (CommDef or CallsiteDef payloads).
void add_definition(RankDefs& defs, raw::Kind kind, const std::byte* payload, std::size_t bytes);

/// Merges every rank's definitions. Deterministic: the same inputs give the same ids.
/// `world_size` gives MPI_COMM_WORLD's members.
[[nodiscard]] Unified unify(std::span<const RankDefs> ranks, std::int32_t world_size);

/// The tables that translate `rank`'s local ids into `unified`'s.
[[nodiscard]] LocalMaps map_rank(const RankDefs& rank, const Unified& unified);

/// Flat byte encodings, for gathering definitions and scattering maps over MPI.
[[nodiscard]] std::vector<std::byte> serialize(const RankDefs& defs);
[[nodiscard]] RankDefs deserialize_rank_defs(std::span<const std::byte> bytes);
[[nodiscard]] std::vector<std::byte> serialize(const LocalMaps& maps);
[[nodiscard]] LocalMaps deserialize_local_maps(std::span<const std::byte> bytes);

}  // namespace p3s::interpose
