// SPDX-License-Identifier: BSD-3-Clause
// Communicator registry: every communicator gets a local index and a definition from which readers resolve
// peers to MPI_COMM_WORLD ranks (OTF2 stores a peer as its rank in the call's communicator).
#include <numeric>
#include <vector>

#include "recorder.hpp"
#include "state.hpp"

namespace p3s::interpose {
namespace {

/// Key of communicators discovered in use: they are identified by their member list instead.
constexpr std::uint64_t kLazyKey = 0xfffffffe00000000ULL;

/// Appends a definition to the rank's log and its in-memory copy. Called with the tables locked.
std::uint32_t define(State& s, ThreadLog* log, MPI_Comm comm, raw::CommDefinition def,
                     std::vector<std::int32_t> members) noexcept {
  def.local = static_cast<std::uint32_t>(s.defs.comms.size());
  if (!members.empty()) def.flags |= raw::kCommHasMembers;
  try {
    s.defs.comms.push_back(CommDef{def, members});
  } catch (...) {
    ++s.failures;
  }
  if (!s.comms.put(handle_key(comm), def.local)) ++s.failures;
  if (log != nullptr) {
    log->append(raw::Kind::CommDef, 0, 0, 0, &def, sizeof def, members.data(), members.size() * sizeof(std::int32_t));
  }
  return def.local;
}

/// World ranks of a group's members, in group order.
std::vector<std::int32_t> world_ranks(State& s, MPI_Group group) {
  int n = 0;
  PMPI_Group_size(group, &n);
  std::vector<int> in(static_cast<std::size_t>(n));
  std::iota(in.begin(), in.end(), 0);
  std::vector<int> out(static_cast<std::size_t>(n), MPI_UNDEFINED);
  PMPI_Group_translate_ranks(group, n, in.data(), s.world_group, out.data());
  return {out.begin(), out.end()};
}

}  // namespace

std::uint32_t comm_index(State& s, MPI_Comm comm) noexcept {
  // MPI_COMM_WORLD and MPI_COMM_SELF are registered first, at MPI_Init.
  if (comm == MPI_COMM_WORLD) return 0;
  if (comm == MPI_COMM_SELF) return 1;
  TablesGuard g(s);
  if (const std::uint32_t* found = s.comms.find(handle_key(comm))) return *found;
  // A communicator created by a call p3s does not wrap (MPI_Comm_idup, MPI_Intercomm_create, a Fortran
  // binding without a translator): no key can be agreed any more, so it is identified by its members.
  try {
    raw::CommDefinition def{};
    def.parent_local = raw::kNoParent;
    def.key = kLazyKey;
    def.flags = raw::kCommLazy;
    int inter = 0;
    PMPI_Comm_test_inter(comm, &inter);
    MPI_Group group = MPI_GROUP_NULL;
    // On an inter-communicator, point-to-point peers are ranks of the remote group.
    if (inter != 0) {
      def.flags |= raw::kCommInter;
      PMPI_Comm_remote_group(comm, &group);
    } else {
      PMPI_Comm_group(comm, &group);
    }
    std::vector<std::int32_t> members = world_ranks(s, group);
    PMPI_Group_free(&group);
    int me = 0;
    PMPI_Comm_rank(comm, &me);
    def.size = static_cast<std::uint32_t>(members.size());
    def.my_rank = me;
    return define(s, current_thread_log(), comm, def, std::move(members));
  } catch (...) {
    ++s.failures;
    return raw::kNoParent;
  }
}

/// Registers MPI_COMM_WORLD (index 0) and MPI_COMM_SELF (index 1) in the main thread's log.
void register_predefined_comms(State& s, ThreadLog& log) noexcept {
  raw::CommDefinition world{
      0, raw::kNoParent, raw::kWorldKey, static_cast<std::uint32_t>(s.size), raw::kCommWorld, s.rank, 0};
  raw::CommDefinition self{1, raw::kNoParent, raw::kSelfKey, 1, raw::kCommSelf, 0, 0};
  TablesGuard g(s);
  define(s, &log, MPI_COMM_WORLD, world, {});
  define(s, &log, MPI_COMM_SELF, self, {});
}

void on_comm_new(Scope& sc, int rc, MPI_Comm parent, const MPI_Comm* newcomm, bool sync_on_new) noexcept {
  if (rc != MPI_SUCCESS) return;
  State& s = *g_state;
  ThreadLog& log = *sc.data().log;
  const MPI_Comm nc = *newcomm;
  const std::uint32_t parent_local = comm_index(s, parent);
  std::uint32_t local = raw::kNoParent;
  if (nc != MPI_COMM_NULL) {
    int inter = 0;
    PMPI_Comm_test_inter(nc, &inter);
    if (inter != 0) {
      local = comm_index(s, nc);  // inter-communicators list their remote group
    } else {
      int me = 0;
      int size = 0;
      PMPI_Comm_rank(nc, &me);
      PMPI_Comm_size(nc, &size);
      // All members agree on the key chosen by the member with rank 0: its world rank and its counter.
      // The broadcast runs on the new communicator before the application can use it, so it cannot
      // interleave with the application's own collectives.
      std::uint64_t key = 0;
      if (me == 0) {
        TablesGuard g(s);
        key = (static_cast<std::uint64_t>(s.rank) << 32) | ++s.comm_counter;
      }
      PMPI_Bcast(&key, 1, MPI_UINT64_T, 0, nc);
      raw::CommDefinition def{0, parent_local, key, static_cast<std::uint32_t>(size), 0, me, 0};
      TablesGuard g(s);
      local = define(s, &log, nc, def, {});
    }
  }
  // A creation is a collective on the parent (on the new communicator for MPI_Comm_create_group, which
  // only its members call), recorded as Score-P does: CREATE_HANDLE around the CommCreate event.
  const std::uint32_t sync = sync_on_new ? local : parent_local;
  if (sync == raw::kNoParent) return;
  otf2::EventChunks& events = events_of(sc.data());
  events.collective_begin(sc.enter_ns());
  if (local != raw::kNoParent) events.comm(otf2::Id::CommCreate, sc.leave_ns(), local);
  write_collective_end(events, sc.leave_ns(), raw::Coll{sync, OTF2_COLLECTIVE_OP_CREATE_HANDLE, -1, 0, 0, 0, 0}, false);
}

std::uint32_t comm_forget(MPI_Comm comm) noexcept {
  if (comm == MPI_COMM_NULL) return raw::kNoParent;
  State& s = *g_state;
  TablesGuard g(s);
  const std::uint32_t* found = s.comms.find(handle_key(comm));
  if (found == nullptr) return raw::kNoParent;
  const std::uint32_t local = *found;
  // Forgotten before MPI frees it: once freed, MPI may hand the same handle value to a communicator another thread
  // creates at once, whose entry an erase made after the free would remove.
  s.comms.erase(handle_key(comm));
  return local;
}

void on_comm_free(Scope& sc, int rc, MPI_Comm before, std::uint32_t local) noexcept {
  if (local == raw::kNoParent) return;
  State& s = *g_state;
  if (rc != MPI_SUCCESS) {  // not freed: the communicator lives on under its handle
    TablesGuard g(s);
    if (!s.comms.put(handle_key(before), local)) ++s.failures;
    return;
  }
  otf2::EventChunks& events = events_of(sc.data());
  events.collective_begin(sc.enter_ns());
  events.comm(otf2::Id::CommDestroy, sc.leave_ns(), local);
  write_collective_end(events, sc.leave_ns(), raw::Coll{local, OTF2_COLLECTIVE_OP_DESTROY_HANDLE, -1, 0, 0, 0, 0},
                       false);
}

}  // namespace p3s::interpose
