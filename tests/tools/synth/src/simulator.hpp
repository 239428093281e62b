// SPDX-License-Identifier: BSD-3-Clause
// The SPMD simulation behind p3s-synth: per-rank clocks and CPU-time counters, exact message matching within
// each step, and the OTF2 records `p3s record` writes for every MPI call (or only their count).
#pragma once

#include <otf2/otf2.h>

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "definitions.hpp"
#include "p3s/synth/program.hpp"
#include "random.hpp"
#include "regions.hpp"

namespace p3s::synth::detail {

/// One communicator of the program split into its groups (MPI_COMM_WORLD has one group).
struct CommLayout {
  std::vector<int> color;                 ///< group of each world rank
  std::vector<int> rank_in;               ///< rank in its group, per world rank
  std::vector<std::vector<int>> members;  ///< world ranks of each group, by rank in the group
  std::vector<std::uint32_t> global_id;   ///< OTF2 communicator of each group
};

/// Everything about the processes that does not change while the program runs.
struct Layout {
  int ranks = 0;
  std::array<int, 2> grid{};
  std::vector<CommLayout> comms;  ///< index 0: MPI_COMM_WORLD, then Program::comms
  interpose::Unified unified;     ///< the definitions write_global_definitions needs
};

/// Splits the communicators and gives them the ids `p3s record` would have: each rank's definitions as the
/// recorder logs them, unified by interpose's own unify().
/// @throws InputError when the program's grid does not hold `ranks` processes.
[[nodiscard]] Layout make_layout(const Program& program, int ranks);

/// Simulates the program on all ranks at once, one step at a time. It writes the records of the ranks that have a
/// writer and only counts the others', so event counts come from the very code that writes. The simulation does
/// not depend on which ranks write: runs with the same seed give the same records.
class Simulator {
 public:
  /// `writers` holds one event writer per rank (nullptr: count only), or is empty to count every rank's records.
  Simulator(const Program& program, const Layout& layout, std::uint64_t seed, std::span<OTF2_EvtWriter* const> writers);

  /// MPI_Init on every rank, then one MPI_Comm_split per program communicator.
  void prologue();
  /// One step: a leaf on every rank, or a loop (`parent_iteration` picks the count from a count list).
  /// `count_override` replaces the count of this step when it is a loop.
  void run(const Step& step, std::uint64_t parent_iteration, const std::uint64_t* count_override = nullptr);
  /// MPI_Comm_free of the program communicators, then MPI_Finalize.
  void epilogue();

  /// Records written (or counted) so far, over all ranks and per rank.
  [[nodiscard]] std::uint64_t events() const noexcept { return total_events_; }
  [[nodiscard]] std::uint64_t events(int rank) const noexcept { return ranks_[static_cast<std::size_t>(rank)].events; }
  [[nodiscard]] std::uint64_t first_ns(int rank) const noexcept { return ranks_[static_cast<std::size_t>(rank)].first; }
  [[nodiscard]] std::uint64_t last_ns(int rank) const noexcept { return ranks_[static_cast<std::size_t>(rank)].last; }

 private:
  struct Rank {
    OTF2_EvtWriter* writer = nullptr;
    std::uint64_t t = 0;             ///< clock, ns
    double cpu = 0.0;                ///< cputime_ns outside MPI calls (fractional part kept: rounding does not drift)
    std::uint64_t next_request = 1;  ///< request ids start at 1 on every rank, as in the recorder
    Rng rng;
    std::uint64_t events = 0;
    std::uint64_t first = UINT64_MAX;
    std::uint64_t last = 0;
    std::uint64_t completions = 0;  ///< halos completed, numbering the order draws (the same whatever the seed)
  };
  /// A message sent and not yet received (every message is received within the step that sent it).
  struct InFlight {
    int source = 0;  ///< world rank
    int tag = 0;
    std::uint64_t sent_ns = 0;
    std::uint64_t bytes = 0;
    bool received = false;
  };
  /// A posted Irecv or Isend waiting for the Waitall.
  struct Posted {
    int peer = 0;  ///< world rank
    int tag = 0;
    std::uint64_t request = 0;
    std::uint64_t bytes = 0;
  };
  /// A peer: world rank and rank in the communicator, or MPI_PROC_NULL.
  struct Peer {
    int world = -1;
    int in_comm = -1;
    [[nodiscard]] bool null() const noexcept { return world < 0; }
  };

  void loop(const Loop& l, std::uint64_t count);
  void compute(const Compute& c);
  void compute_on(Rank& r, int world, const Compute& c);
  void halo(const Halo& h, const std::string& where);
  /// Completes rank w's posted requests of a halo as `complete` says, no earlier than its messages arrive.
  void complete_halo(int w, std::uint32_t comm, std::size_t comm_index, Completion complete);
  /// Records the completion of one posted request inside the current call.
  void record_completion(Rank& r, std::uint32_t comm, std::size_t comm_index, const Posted& p, bool receive);
  void sendrecv(const SendRecv& s, const std::string& where);
  void pipeline(const Pipeline& p);
  void collective(const Collective& c, const std::string& where);

  [[nodiscard]] Peer peer_1d(std::size_t comm, int world, std::int64_t offset, bool periodic) const;
  [[nodiscard]] Peer peer_2d(int world, int dx, int dy, bool periodic) const;
  [[nodiscard]] Peer peer_xor(std::size_t comm, int world, std::int64_t mask) const;
  [[nodiscard]] std::uint32_t comm_id(std::size_t comm, int world) const;
  [[nodiscard]] std::uint64_t draw_bytes(Rng& rng, const Volume& v) const;
  [[nodiscard]] double message_ns(std::uint64_t bytes) const;
  /// The oldest unreceived message from `source` with `tag` in `dest`'s inbox (MPI's non-overtaking order).
  InFlight& match(int dest, int source, int tag);
  void clear_inboxes();

  // Time: work outside MPI counts fully as CPU time; time inside MPI is left out of the counter (trace schema 2).
  void work(Rank& r, double ns);
  void gap(Rank& r) { work(r, net_.gap_ns); }
  void in_mpi_until(Rank& r, std::uint64_t t);
  void in_mpi(Rank& r, double ns);

  // Records, at the rank's current time.
  void metric(Rank& r);
  void enter(Rank& r, interpose::Region region);
  void leave(Rank& r, interpose::Region region);
  void touch(Rank& r);
  void check(OTF2_ErrorCode rc, const char* what) const;
  void collective_sync(std::span<const int> members, interpose::Region region, std::uint64_t cost_ns);

  const Program& program_;
  const Layout& layout_;
  const Network net_;
  std::vector<Rank> ranks_;
  Rng shared_rng_;  ///< draws every member of a call agrees on (collective counts)
  std::uint64_t total_events_ = 0;
  std::vector<std::vector<InFlight>> inbox_;  ///< per destination world rank
  std::vector<std::vector<Posted>> recvs_;    ///< per rank, in posting order
  std::vector<std::vector<Posted>> sends_;
};

}  // namespace p3s::synth::detail
