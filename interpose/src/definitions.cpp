// SPDX-License-Identifier: BSD-3-Clause
// Unification of communicators and call sites: every rank logs only what it saw; this gives them global ids.
#include "definitions.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <stdexcept>
#include <tuple>

namespace p3s::interpose {
namespace {

/// Identity of a communicator across ranks: its agreed key, or, for communicators discovered in use
/// (no key could be agreed), the key plus the member list itself.
using Identity = std::tuple<std::uint64_t, std::vector<std::int32_t>>;

Identity identity(const CommDef& c) {
  if ((c.def.flags & raw::kCommLazy) != 0) return {c.def.key, c.members};
  return {c.def.key, {}};
}

class Writer {
 public:
  template <class T>
  void put(const T& v) {
    const auto* p = reinterpret_cast<const std::byte*>(&v);
    out_.insert(out_.end(), p, p + sizeof v);
  }
  void put_bytes(const void* data, std::size_t n) {
    const auto* p = static_cast<const std::byte*>(data);
    out_.insert(out_.end(), p, p + n);
  }
  std::vector<std::byte> take() { return std::move(out_); }

 private:
  std::vector<std::byte> out_;
};

class Reader {
 public:
  explicit Reader(std::span<const std::byte> in) : in_(in) {}
  template <class T>
  T get() {
    T v{};
    need(sizeof v);
    std::memcpy(&v, in_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  void get_bytes(void* out, std::size_t n) {
    need(n);
    std::memcpy(out, in_.data() + pos_, n);
    pos_ += n;
  }

 private:
  void need(std::size_t n) const {
    if (pos_ + n > in_.size()) throw std::runtime_error("truncated definition block");
  }
  std::span<const std::byte> in_;
  std::size_t pos_ = 0;
};

/// The recorder numbers communicators and call sites in order, so a definition's index is at most the count so far
/// (a lost record leaves a gap of one). An index far beyond it is a damaged record of a killed run.
constexpr std::size_t kMaxDefinitionGap = 1 << 16;

}  // namespace

std::uint64_t definition_index(raw::Kind kind, const std::byte* payload, std::size_t bytes) noexcept {
  if (kind == raw::Kind::CommDef && bytes >= sizeof(raw::CommDefinition)) {
    raw::CommDefinition d{};
    std::memcpy(&d, payload, sizeof d);
    return d.local;
  }
  if (kind == raw::Kind::CallsiteDef && bytes >= sizeof(raw::CallsiteDefinition)) {
    raw::CallsiteDefinition d{};
    std::memcpy(&d, payload, sizeof d);
    return d.id;
  }
  return 0;
}

void add_definition(RankDefs& defs, raw::Kind kind, const std::byte* payload, std::size_t bytes) {
  if (kind == raw::Kind::CommDef && bytes >= sizeof(raw::CommDefinition)) {
    CommDef c;
    std::memcpy(&c.def, payload, sizeof c.def);
    if (c.def.local > defs.comms.size() + kMaxDefinitionGap) return;  // damage: never allocated
    if ((c.def.flags & raw::kCommHasMembers) != 0) {
      const std::size_t avail = (bytes - sizeof c.def) / sizeof(std::int32_t);
      c.members.resize(std::min<std::size_t>(c.def.size, avail));
      std::memcpy(c.members.data(), payload + sizeof c.def, c.members.size() * sizeof(std::int32_t));
    }
    if (defs.comms.size() <= c.def.local) defs.comms.resize(c.def.local + 1);
    defs.comms[c.def.local] = std::move(c);
  } else if (kind == raw::Kind::CallsiteDef && bytes > sizeof(raw::CallsiteDefinition)) {
    raw::CallsiteDefinition d{};
    std::memcpy(&d, payload, sizeof d);
    const char* text = reinterpret_cast<const char*>(payload + sizeof d);
    const std::size_t max = bytes - sizeof d;
    if (d.id > defs.callsites.size() + kMaxDefinitionGap) return;
    if (defs.callsites.size() <= d.id) defs.callsites.resize(d.id + 1);
    defs.callsites[d.id] = std::string(text, strnlen(text, max));
  }
}

namespace {

/// Whether a communicator's definition can be used: a gap left by a lost record has no size, and no communicator
/// has more members than the world (a larger size is damage, which must not be allocated).
bool usable(const CommDef& c, std::int32_t world_size) {
  return c.def.size != 0 && c.def.size <= static_cast<std::uint32_t>(std::max(world_size, 1));
}

}  // namespace

Unified unify(std::span<const RankDefs> ranks, std::int32_t world_size) {
  Unified u;
  // Global ids: world and self first, then every other communicator ordered by identity.
  std::map<Identity, std::uint32_t> ids;
  ids[{raw::kWorldKey, {}}] = 0;
  ids[{raw::kSelfKey, {}}] = 1;
  std::map<Identity, const CommDef*> others;
  for (const RankDefs& r : ranks) {
    for (const CommDef& c : r.comms) {
      if (!usable(c, world_size)) continue;
      const Identity id = identity(c);
      if (!ids.contains(id)) others.emplace(id, &c);
    }
  }
  u.comms.resize(2 + others.size());
  u.comms[0].key = raw::kWorldKey;
  u.comms[0].flags = raw::kCommWorld;
  u.comms[0].members.resize(static_cast<std::size_t>(world_size));
  for (std::int32_t i = 0; i < world_size; ++i) u.comms[0].members[static_cast<std::size_t>(i)] = i;
  u.comms[1].key = raw::kSelfKey;
  u.comms[1].flags = raw::kCommSelf;
  std::uint32_t next = 2;
  for (const auto& [id, c] : others) {
    ids[id] = next;
    GlobalComm& g = u.comms[next++];
    g.key = c->def.key;
    g.flags = c->def.flags & ~raw::kCommHasMembers;
    g.members.assign(c->def.size, -1);
  }
  // Members: listed ones are copied; otherwise each member's log places its own world rank.
  for (const RankDefs& r : ranks) {
    for (const CommDef& c : r.comms) {
      if (!usable(c, world_size)) continue;
      const std::uint32_t gid = ids.at(identity(c));
      if (gid < 2) continue;
      GlobalComm& g = u.comms[gid];
      if ((c.def.flags & raw::kCommHasMembers) != 0) {
        for (std::size_t i = 0; i < c.members.size() && i < g.members.size(); ++i) g.members[i] = c.members[i];
      } else if (c.def.my_rank >= 0 && static_cast<std::size_t>(c.def.my_rank) < g.members.size()) {
        g.members[static_cast<std::size_t>(c.def.my_rank)] = r.rank;
      }
      if (c.def.parent_local != raw::kNoParent && c.def.parent_local < r.comms.size() && g.parent == 0xffffffffu) {
        const auto pit = ids.find(identity(r.comms[c.def.parent_local]));
        if (pit != ids.end()) g.parent = pit->second;
      }
    }
  }
  // Call sites: the union of all texts, sorted.
  std::vector<std::string> sites;
  for (const RankDefs& r : ranks) sites.insert(sites.end(), r.callsites.begin(), r.callsites.end());
  std::sort(sites.begin(), sites.end());
  sites.erase(std::unique(sites.begin(), sites.end()), sites.end());
  u.callsites = std::move(sites);
  return u;
}

LocalMaps map_rank(const RankDefs& rank, const Unified& unified) {
  LocalMaps m;
  std::map<Identity, std::uint32_t> ids;
  for (std::uint32_t g = 0; g < unified.comms.size(); ++g) {
    const GlobalComm& c = unified.comms[g];
    if ((c.flags & raw::kCommLazy) != 0)
      ids[{c.key, c.members}] = g;
    else
      ids[{c.key, {}}] = g;
  }
  m.comm.resize(rank.comms.size(), 0xffffffffu);
  for (std::size_t i = 0; i < rank.comms.size(); ++i) {
    const CommDef& c = rank.comms[i];
    if (c.def.size == 0) continue;
    const auto it = ids.find(identity(c));
    if (it != ids.end()) m.comm[i] = it->second;
  }
  m.callsite.resize(rank.callsites.size(), 0);
  for (std::size_t i = 0; i < rank.callsites.size(); ++i) {
    const auto it = std::lower_bound(unified.callsites.begin(), unified.callsites.end(), rank.callsites[i]);
    m.callsite[i] = static_cast<std::uint32_t>(it - unified.callsites.begin());
  }
  return m;
}

std::vector<std::byte> serialize(const RankDefs& defs) {
  Writer w;
  w.put(defs.rank);
  w.put(static_cast<std::uint64_t>(defs.comms.size()));
  for (const CommDef& c : defs.comms) {
    w.put(c.def);
    w.put(static_cast<std::uint64_t>(c.members.size()));
    w.put_bytes(c.members.data(), c.members.size() * sizeof(std::int32_t));
  }
  w.put(static_cast<std::uint64_t>(defs.callsites.size()));
  for (const std::string& s : defs.callsites) {
    w.put(static_cast<std::uint64_t>(s.size()));
    w.put_bytes(s.data(), s.size());
  }
  return w.take();
}

RankDefs deserialize_rank_defs(std::span<const std::byte> bytes) {
  Reader r(bytes);
  RankDefs d;
  d.rank = r.get<std::int32_t>();
  d.comms.resize(r.get<std::uint64_t>());
  for (CommDef& c : d.comms) {
    c.def = r.get<raw::CommDefinition>();
    c.members.resize(r.get<std::uint64_t>());
    r.get_bytes(c.members.data(), c.members.size() * sizeof(std::int32_t));
  }
  d.callsites.resize(r.get<std::uint64_t>());
  for (std::string& s : d.callsites) {
    s.resize(r.get<std::uint64_t>());
    r.get_bytes(s.data(), s.size());
  }
  return d;
}

std::vector<std::byte> serialize(const LocalMaps& maps) {
  Writer w;
  w.put(static_cast<std::uint64_t>(maps.comm.size()));
  w.put_bytes(maps.comm.data(), maps.comm.size() * sizeof(std::uint32_t));
  w.put(static_cast<std::uint64_t>(maps.callsite.size()));
  w.put_bytes(maps.callsite.data(), maps.callsite.size() * sizeof(std::uint32_t));
  return w.take();
}

LocalMaps deserialize_local_maps(std::span<const std::byte> bytes) {
  Reader r(bytes);
  LocalMaps m;
  m.comm.resize(r.get<std::uint64_t>());
  r.get_bytes(m.comm.data(), m.comm.size() * sizeof(std::uint32_t));
  m.callsite.resize(r.get<std::uint64_t>());
  r.get_bytes(m.callsite.data(), m.callsite.size() * sizeof(std::uint32_t));
  return m;
}

}  // namespace p3s::interpose
