// SPDX-License-Identifier: BSD-3-Clause
// Simulation of a PROGRAM.json on N ranks. Every step runs on all ranks before the next one starts; the
// messages a step sends are all received within it, so matching needs only per-step inboxes, and memory stays
// bounded by the ranks and the step, never by the length of the run.
#include "simulator.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>
#include <string>

#include "coll_bytes.hpp"
#include "p3s/error.hpp"

namespace p3s::synth::detail {
namespace {

using interpose::Region;

constexpr OTF2_MetricRef kMetricClass = 0;  // the recorder's only metric class
constexpr OTF2_Type kMetricType = OTF2_TYPE_UINT64;
/// Where every rank's clock starts (the recorder's clock is CLOCK_MONOTONIC: any origin will do).
constexpr std::uint64_t kStartNs = 1000000000ULL;
/// CPU time a process has used before MPI_Init (loader, static initialisers): 1-1.5 ms.
constexpr double kCpuBeforeInitNs = 1.0e6;

/// ceil(log2(n)): the rounds of a tree or recursive-doubling collective.
double rounds(std::size_t n) { return n <= 1 ? 0.0 : static_cast<double>(std::bit_width(n - 1)); }

OTF2_CollectiveOp otf2_op(CollKind k) {
  switch (k) {
    case CollKind::Barrier:
      return OTF2_COLLECTIVE_OP_BARRIER;
    case CollKind::Bcast:
      return OTF2_COLLECTIVE_OP_BCAST;
    case CollKind::Reduce:
      return OTF2_COLLECTIVE_OP_REDUCE;
    case CollKind::Allreduce:
      return OTF2_COLLECTIVE_OP_ALLREDUCE;
    case CollKind::Gather:
      return OTF2_COLLECTIVE_OP_GATHER;
    case CollKind::Scatter:
      return OTF2_COLLECTIVE_OP_SCATTER;
    case CollKind::Allgather:
      return OTF2_COLLECTIVE_OP_ALLGATHER;
    case CollKind::Alltoall:
      return OTF2_COLLECTIVE_OP_ALLTOALL;
    case CollKind::Scan:
      return OTF2_COLLECTIVE_OP_SCAN;
  }
  return OTF2_COLLECTIVE_OP_BARRIER;
}

Region region_of(CollKind k) {
  switch (k) {
    case CollKind::Barrier:
      return Region::MPI_Barrier;
    case CollKind::Bcast:
      return Region::MPI_Bcast;
    case CollKind::Reduce:
      return Region::MPI_Reduce;
    case CollKind::Allreduce:
      return Region::MPI_Allreduce;
    case CollKind::Gather:
      return Region::MPI_Gather;
    case CollKind::Scatter:
      return Region::MPI_Scatter;
    case CollKind::Allgather:
      return Region::MPI_Allgather;
    case CollKind::Alltoall:
      return Region::MPI_Alltoall;
    case CollKind::Scan:
      return Region::MPI_Scan;
  }
  return Region::MPI_Barrier;
}

bool rooted(CollKind k) {
  return k == CollKind::Bcast || k == CollKind::Reduce || k == CollKind::Gather || k == CollKind::Scatter;
}

std::uint64_t ns(double d) { return d <= 0.0 ? 0 : static_cast<std::uint64_t>(std::llround(d)); }

}  // namespace

Layout make_layout(const Program& program, int ranks) {
  Layout l;
  l.ranks = ranks;
  l.grid = process_grid(program, ranks);
  const int py = l.grid[1];
  const auto n = static_cast<std::size_t>(ranks);

  // Each rank's definitions as the recorder logs them: WORLD, SELF, then one CommDef per MPI_Comm_split, keyed
  // by (world rank of the new group's rank 0) << 32 | that rank's creation counter.
  std::vector<interpose::RankDefs> defs(n);
  for (int r = 0; r < ranks; ++r) {
    auto& d = defs[static_cast<std::size_t>(r)];
    d.rank = r;
    interpose::CommDef world;
    world.def = {0,
                 interpose::raw::kNoParent,
                 interpose::raw::kWorldKey,
                 static_cast<std::uint32_t>(ranks),
                 interpose::raw::kCommWorld,
                 r,
                 0};
    interpose::CommDef self;
    self.def = {1, interpose::raw::kNoParent, interpose::raw::kSelfKey, 1, interpose::raw::kCommSelf, 0, 0};
    d.comms = {world, self};
  }
  CommLayout world;
  world.color.assign(n, 0);
  world.rank_in.resize(n);
  world.members.resize(1);
  for (int r = 0; r < ranks; ++r) {
    world.rank_in[static_cast<std::size_t>(r)] = r;
    world.members[0].push_back(r);
  }
  world.global_id = {0};
  l.comms.push_back(std::move(world));

  std::vector<std::uint32_t> created(n, 0);
  for (std::size_t c = 0; c < program.comms.size(); ++c) {
    const CommSpec& spec = program.comms[c];
    CommLayout cl;
    cl.color.resize(n);
    cl.rank_in.resize(n);
    for (int r = 0; r < ranks; ++r) {
      int color = 0;
      switch (spec.split) {
        case CommSpec::Split::Row:
          color = r / py;
          break;
        case CommSpec::Split::Col:
          color = r % py;
          break;
        case CommSpec::Split::Block:
          color = r / spec.k;
          break;
        case CommSpec::Split::Modulo:
          color = r % spec.k;
          break;
      }
      // Colors are renumbered densely in order of first appearance.
      auto it = std::find_if(cl.members.begin(), cl.members.end(), [&](const std::vector<int>& m) {
        return cl.color[static_cast<std::size_t>(m.front())] == color;
      });
      cl.color[static_cast<std::size_t>(r)] = color;
      if (it == cl.members.end()) {
        cl.members.push_back({r});
      } else {
        it->push_back(r);  // key = world rank: members stay in world-rank order
      }
    }
    // Replace the raw colors by group indices.
    for (std::size_t g = 0; g < cl.members.size(); ++g) {
      for (std::size_t i = 0; i < cl.members[g].size(); ++i) {
        const auto w = static_cast<std::size_t>(cl.members[g][i]);
        cl.color[w] = static_cast<int>(g);
        cl.rank_in[w] = static_cast<int>(i);
      }
    }
    for (const std::vector<int>& m : cl.members) {
      const auto leader = static_cast<std::size_t>(m.front());
      const std::uint64_t key = (static_cast<std::uint64_t>(m.front()) << 32) | ++created[leader];
      for (std::size_t i = 0; i < m.size(); ++i) {
        interpose::CommDef d;
        d.def = {static_cast<std::uint32_t>(2 + c), 0, key, static_cast<std::uint32_t>(m.size()), 0,
                 static_cast<std::int32_t>(i),      0};
        defs[static_cast<std::size_t>(m[i])].comms.push_back(d);
      }
    }
    l.comms.push_back(std::move(cl));
  }

  l.unified = interpose::unify(defs, ranks);
  for (std::size_t c = 1; c < l.comms.size(); ++c) {
    CommLayout& cl = l.comms[c];
    cl.global_id.resize(cl.members.size());
    for (std::size_t g = 0; g < cl.members.size(); ++g) {
      const auto leader = static_cast<std::size_t>(cl.members[g].front());
      cl.global_id[g] = interpose::map_rank(defs[leader], l.unified).comm[1 + c];
    }
  }
  return l;
}

Simulator::Simulator(const Program& program, const Layout& layout, std::uint64_t seed,
                     std::span<OTF2_EvtWriter* const> writers)
    : program_(program),
      layout_(layout),
      net_(program.network),
      ranks_(static_cast<std::size_t>(layout.ranks)),
      shared_rng_(seed, 0xffffffffULL),
      inbox_(ranks_.size()),
      recvs_(ranks_.size()),
      sends_(ranks_.size()) {
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    ranks_[r].rng = Rng(seed, r);
    if (!writers.empty()) ranks_[r].writer = writers[r];
  }
}

// ---- time and records -------------------------------------------------------------------------------------

void Simulator::work(Rank& r, double d) {
  r.t += ns(d);
  r.cpu += d;
}

void Simulator::in_mpi_until(Rank& r, std::uint64_t t) {
  if (t <= r.t) return;
  r.t = t;
}

void Simulator::in_mpi(Rank& r, double d) { in_mpi_until(r, r.t + ns(d)); }

void Simulator::check(OTF2_ErrorCode rc, const char* what) const {
  if (rc != OTF2_SUCCESS) {
    throw Otf2Error(std::string("writing ") + what + " failed: " + OTF2_Error_GetName(rc) + " (" +
                    OTF2_Error_GetDescription(rc) + "); check the free space of the output directory");
  }
}

void Simulator::touch(Rank& r) {
  ++r.events;
  ++total_events_;
  if (r.first == UINT64_MAX) r.first = r.t;
  r.last = r.t;
}

void Simulator::metric(Rank& r) {
  touch(r);
  if (r.writer == nullptr) return;
  OTF2_MetricValue v;
  v.unsigned_int = static_cast<std::uint64_t>(std::llround(r.cpu));
  check(OTF2_EvtWriter_Metric(r.writer, nullptr, r.t, kMetricClass, 1, &kMetricType, &v), "a Metric record");
}

void Simulator::enter(Rank& r, Region region) {
  // As the recorder (trace schema 2): the counter outside MPI calls in a Metric record at the same time, then the
  // Enter; the Leave has none.
  metric(r);
  touch(r);
  if (r.writer != nullptr)
    check(OTF2_EvtWriter_Enter(r.writer, nullptr, r.t, static_cast<OTF2_RegionRef>(region)), "an Enter");
}

void Simulator::leave(Rank& r, Region region) {
  touch(r);
  if (r.writer != nullptr)
    check(OTF2_EvtWriter_Leave(r.writer, nullptr, r.t, static_cast<OTF2_RegionRef>(region)), "a Leave");
}

// ---- peers and costs --------------------------------------------------------------------------------------

std::uint32_t Simulator::comm_id(std::size_t comm, int world) const {
  const CommLayout& c = layout_.comms[comm];
  return c.global_id[static_cast<std::size_t>(c.color[static_cast<std::size_t>(world)])];
}

Simulator::Peer Simulator::peer_1d(std::size_t comm, int world, std::int64_t offset, bool periodic) const {
  const CommLayout& c = layout_.comms[comm];
  const auto& members = c.members[static_cast<std::size_t>(c.color[static_cast<std::size_t>(world)])];
  const auto size = static_cast<std::int64_t>(members.size());
  std::int64_t p = c.rank_in[static_cast<std::size_t>(world)] + offset;
  if (periodic) {
    p = ((p % size) + size) % size;
  } else if (p < 0 || p >= size) {
    return {};  // MPI_PROC_NULL beyond a non-periodic edge
  }
  return {members[static_cast<std::size_t>(p)], static_cast<int>(p)};
}

Simulator::Peer Simulator::peer_2d(int world, int dx, int dy, bool periodic) const {
  const auto [px, py] = layout_.grid;
  // Row-major like MPI_Cart_create: rank = x · py + y.
  std::int64_t x = world / py + dx;
  std::int64_t y = world % py + dy;
  if (periodic) {
    x = ((x % px) + px) % px;
    y = ((y % py) + py) % py;
  } else if (x < 0 || x >= px || y < 0 || y >= py) {
    return {};
  }
  const auto p = static_cast<int>(x * py + y);
  return {p, p};
}

Simulator::Peer Simulator::peer_xor(std::size_t comm, int world, std::int64_t mask) const {
  const CommLayout& c = layout_.comms[comm];
  const auto& members = c.members[static_cast<std::size_t>(c.color[static_cast<std::size_t>(world)])];
  const std::int64_t p = c.rank_in[static_cast<std::size_t>(world)] ^ mask;
  // A partner beyond the communicator (sizes that are not powers of two): the application passes MPI_PROC_NULL.
  if (p >= static_cast<std::int64_t>(members.size())) return {};
  return {members[static_cast<std::size_t>(p)], static_cast<int>(p)};
}

std::uint64_t Simulator::draw_bytes(Rng& rng, const Volume& v) const {
  double b = v.bytes.at(program_.ranks, layout_.ranks);
  if (v.jitter > 0.0) b *= 1.0 + v.jitter * rng.symmetric();
  return ns(b);  // bytes round like durations: to the nearest integer, never below 0
}

double Simulator::message_ns(std::uint64_t bytes) const {
  return net_.latency_ns + static_cast<double>(bytes) / net_.bytes_per_ns;
}

Simulator::InFlight& Simulator::match(int dest, int source, int tag) {
  for (InFlight& m : inbox_[static_cast<std::size_t>(dest)]) {
    if (!m.received && m.source == source && m.tag == tag) {
      m.received = true;
      return m;
    }
  }
  throw std::logic_error("rank " + std::to_string(dest) + " receives from rank " + std::to_string(source) + " (tag " +
                         std::to_string(tag) + ") but nothing was sent");
}

void Simulator::clear_inboxes() {
  for (std::size_t d = 0; d < inbox_.size(); ++d) {
    for (const InFlight& m : inbox_[d]) {
      if (!m.received) {
        throw std::logic_error("a message from rank " + std::to_string(m.source) + " to rank " + std::to_string(d) +
                               " was never received");
      }
    }
    inbox_[d].clear();
  }
}

// ---- program ----------------------------------------------------------------------------------------------

void Simulator::prologue() {
  // MPI_Init as the recorder writes it: a CREATE_HANDLE collective on WORLD creating WORLD and SELF. Ranks are
  // started up to skew_ns apart; the Enter carries the CPU time used before MPI_Init.
  std::uint64_t last = 0;
  for (Rank& r : ranks_) {
    r.t = kStartNs + ns(net_.skew_ns * r.rng.uniform());
    r.cpu = kCpuBeforeInitNs * (1.0 + 0.5 * r.rng.uniform());
    enter(r, Region::MPI_Init);
    touch(r);
    if (r.writer != nullptr) check(OTF2_EvtWriter_MpiCollectiveBegin(r.writer, nullptr, r.t), "an MpiCollectiveBegin");
    last = std::max(last, r.t);
  }
  const std::uint64_t end = last + ns(net_.init_ns);
  for (Rank& r : ranks_) {
    in_mpi_until(r, end);
    for (OTF2_CommRef c : {OTF2_CommRef{0}, OTF2_CommRef{1}}) {
      touch(r);
      if (r.writer != nullptr) check(OTF2_EvtWriter_CommCreate(r.writer, nullptr, r.t, c), "a CommCreate");
    }
    touch(r);
    if (r.writer != nullptr) {
      check(OTF2_EvtWriter_MpiCollectiveEnd(r.writer, nullptr, r.t, OTF2_COLLECTIVE_OP_CREATE_HANDLE, 0,
                                            OTF2_COLLECTIVE_ROOT_NONE, 0, 0),
            "an MpiCollectiveEnd");
    }
    leave(r, Region::MPI_Init);
  }

  // MPI_Comm_split: a CREATE_HANDLE collective on the parent (WORLD) enclosing the new communicator's creation.
  std::vector<int> all(ranks_.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  const double split_ns = 2.0 * rounds(ranks_.size()) * net_.latency_ns + net_.call_ns;
  for (std::size_t c = 1; c < layout_.comms.size(); ++c) {
    collective_sync(all, Region::MPI_Comm_split, ns(split_ns));
    for (int w = 0; w < layout_.ranks; ++w) {
      Rank& r = ranks_[static_cast<std::size_t>(w)];
      touch(r);
      if (r.writer != nullptr) check(OTF2_EvtWriter_CommCreate(r.writer, nullptr, r.t, comm_id(c, w)), "a CommCreate");
      touch(r);
      if (r.writer != nullptr) {
        check(OTF2_EvtWriter_MpiCollectiveEnd(r.writer, nullptr, r.t, OTF2_COLLECTIVE_OP_CREATE_HANDLE, 0,
                                              OTF2_COLLECTIVE_ROOT_NONE, 0, 0),
              "an MpiCollectiveEnd");
      }
      leave(r, Region::MPI_Comm_split);
    }
  }
}

void Simulator::epilogue() {
  // MPI_Comm_free of each program communicator (a DESTROY_HANDLE collective on it), last created first.
  for (std::size_t c = layout_.comms.size(); c-- > 1;) {
    for (const std::vector<int>& members : layout_.comms[c].members) {
      collective_sync(members, Region::MPI_Comm_free, ns(rounds(members.size()) * net_.latency_ns + net_.call_ns));
      for (int w : members) {
        Rank& r = ranks_[static_cast<std::size_t>(w)];
        const std::uint32_t id = comm_id(c, w);
        touch(r);
        if (r.writer != nullptr) check(OTF2_EvtWriter_CommDestroy(r.writer, nullptr, r.t, id), "a CommDestroy");
        touch(r);
        if (r.writer != nullptr) {
          check(OTF2_EvtWriter_MpiCollectiveEnd(r.writer, nullptr, r.t, OTF2_COLLECTIVE_OP_DESTROY_HANDLE, id,
                                                OTF2_COLLECTIVE_ROOT_NONE, 0, 0),
                "an MpiCollectiveEnd");
        }
        leave(r, Region::MPI_Comm_free);
      }
    }
  }
  // MPI_Finalize: a DESTROY_HANDLE collective on WORLD destroying SELF and WORLD, ending when the last rank came.
  std::vector<int> all(ranks_.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  collective_sync(all, Region::MPI_Finalize, ns(net_.finalize_ns));
  for (Rank& r : ranks_) {
    for (OTF2_CommRef c : {OTF2_CommRef{1}, OTF2_CommRef{0}}) {
      touch(r);
      if (r.writer != nullptr) check(OTF2_EvtWriter_CommDestroy(r.writer, nullptr, r.t, c), "a CommDestroy");
    }
    touch(r);
    if (r.writer != nullptr) {
      check(OTF2_EvtWriter_MpiCollectiveEnd(r.writer, nullptr, r.t, OTF2_COLLECTIVE_OP_DESTROY_HANDLE, 0,
                                            OTF2_COLLECTIVE_ROOT_NONE, 0, 0),
            "an MpiCollectiveEnd");
    }
    leave(r, Region::MPI_Finalize);
  }
}

void Simulator::collective_sync(std::span<const int> members, Region region, std::uint64_t cost_ns) {
  // Every member enters (Enter, CollectiveBegin); all leave together once the last one arrived plus the cost:
  // the members' calls overlap, as a real collective's do. The caller writes what comes before the Leave.
  std::uint64_t last = 0;
  for (int w : members) {
    Rank& r = ranks_[static_cast<std::size_t>(w)];
    gap(r);
    enter(r, region);
    touch(r);
    if (r.writer != nullptr) check(OTF2_EvtWriter_MpiCollectiveBegin(r.writer, nullptr, r.t), "an MpiCollectiveBegin");
    last = std::max(last, r.t);
  }
  for (int w : members) in_mpi_until(ranks_[static_cast<std::size_t>(w)], last + cost_ns);
}

void Simulator::run(const Step& step, std::uint64_t parent_iteration, const std::uint64_t* count_override) {
  std::visit(
      [&](const auto& op) {
        using T = std::decay_t<decltype(op)>;
        if constexpr (std::is_same_v<T, Loop>) {
          loop(op, count_override != nullptr ? *count_override : op.counts[parent_iteration % op.counts.size()]);
        } else if constexpr (std::is_same_v<T, Compute>) {
          compute(op);
        } else if constexpr (std::is_same_v<T, Halo>) {
          halo(op, step.where);
        } else if constexpr (std::is_same_v<T, SendRecv>) {
          sendrecv(op, step.where);
        } else if constexpr (std::is_same_v<T, Pipeline>) {
          pipeline(op);
        } else {
          collective(op, step.where);
        }
      },
      step.op);
}

void Simulator::loop(const Loop& l, std::uint64_t count) {
  for (std::uint64_t i = 0; i < count; ++i) {
    for (const Step& s : l.body) run(s, i);
  }
}

void Simulator::compute_on(Rank& r, int world, const Compute& c) {
  double d = c.ns.at(program_.ranks, layout_.ranks);
  for (const RankFactor& f : c.factors) {
    if (f.ranks.matches(world, layout_.ranks)) d *= f.factor;
  }
  if (c.gradient != 0.0 && layout_.ranks > 1) d *= 1.0 + c.gradient * world / (layout_.ranks - 1);
  // The stream of a rank advances only where noise is asked for, so adding noise to one burst leaves the others'
  // draws unchanged.
  if (c.noise.dist == NoiseDist::Uniform) d *= 1.0 + c.noise.rel * r.rng.symmetric();
  if (c.noise.dist == NoiseDist::Normal) d *= std::max(0.0, 1.0 + c.noise.rel * r.rng.normal());
  work(r, d);
}

void Simulator::compute(const Compute& c) {
  for (std::size_t w = 0; w < ranks_.size(); ++w) compute_on(ranks_[w], static_cast<int>(w), c);
}

void Simulator::halo(const Halo& h, const std::string& /*where*/) {
  // Irecv from r - o for every offset o, Isend to r + o, then one Waitall over [receives..., sends...]: every
  // message sent with offset o is received by a receive posted for the same offset, for any set of offsets.
  const std::size_t k = h.offsets.size();
  auto peer = [&](int w, std::size_t i, int sign) {
    const auto& o = h.offsets[i];
    return h.two_d ? peer_2d(w, sign * o[0], sign * o[1], h.periodic) : peer_1d(h.comm, w, sign * o[0], h.periodic);
  };
  auto tag = [&](std::size_t i) { return h.tag + (h.distinct_tags ? static_cast<int>(i) : 0); };
  for (int w = 0; w < layout_.ranks; ++w) {
    Rank& r = ranks_[static_cast<std::size_t>(w)];
    const std::uint32_t comm = comm_id(h.comm, w);
    auto& recvs = recvs_[static_cast<std::size_t>(w)];
    auto& sends = sends_[static_cast<std::size_t>(w)];
    recvs.clear();
    sends.clear();
    for (std::size_t i = 0; i < k; ++i) {
      gap(r);
      enter(r, Region::MPI_Irecv);
      // A receive from MPI_PROC_NULL is recorded as a call without a request: it completes at once, unseen.
      if (const Peer p = peer(w, i, -1); !p.null()) {
        const std::uint64_t id = r.next_request++;
        touch(r);
        if (r.writer != nullptr)
          check(OTF2_EvtWriter_MpiIrecvRequest(r.writer, nullptr, r.t, id), "an MpiIrecvRequest");
        recvs.push_back({p.world, tag(i), id, 0});
      }
      in_mpi(r, net_.call_ns);
      leave(r, Region::MPI_Irecv);
    }
    for (std::size_t i = 0; i < k; ++i) {
      gap(r);
      enter(r, Region::MPI_Isend);
      if (const Peer p = peer(w, i, +1); !p.null()) {
        const std::uint64_t id = r.next_request++;
        const std::uint64_t bytes = draw_bytes(r.rng, h.bytes[i]);
        touch(r);
        if (r.writer != nullptr) {
          check(OTF2_EvtWriter_MpiIsend(r.writer, nullptr, r.t, static_cast<std::uint32_t>(p.in_comm), comm,
                                        static_cast<std::uint32_t>(tag(i)), bytes, id),
                "an MpiIsend");
        }
        inbox_[static_cast<std::size_t>(p.world)].push_back({w, tag(i), r.t, bytes, false});
        sends.push_back({p.world, tag(i), id, bytes});
      }
      in_mpi(r, net_.call_ns);
      leave(r, Region::MPI_Isend);
    }
  }
  for (int w = 0; w < layout_.ranks; ++w) complete_halo(w, comm_id(h.comm, w), h.comm, h.complete);
  clear_inboxes();
}

void Simulator::record_completion(Rank& r, std::uint32_t comm, std::size_t comm_index, const Posted& p, bool receive) {
  touch(r);
  if (r.writer == nullptr) return;
  if (!receive) {
    check(OTF2_EvtWriter_MpiIsendComplete(r.writer, nullptr, r.t, p.request), "an MpiIsendComplete");
    return;
  }
  const CommLayout& cl = layout_.comms[comm_index];
  check(OTF2_EvtWriter_MpiIrecv(r.writer, nullptr, r.t,
                                static_cast<std::uint32_t>(cl.rank_in[static_cast<std::size_t>(p.peer)]), comm,
                                static_cast<std::uint32_t>(p.tag), p.bytes, p.request),
        "an MpiIrecv");
}

void Simulator::complete_halo(int w, std::uint32_t comm, std::size_t comm_index, Completion complete) {
  Rank& r = ranks_[static_cast<std::size_t>(w)];
  // A receive completes no earlier than its message can have arrived.
  std::uint64_t done = r.t + ns(net_.call_ns);
  for (Posted& p : recvs_[static_cast<std::size_t>(w)]) {
    const InFlight& m = match(w, p.peer, p.tag);
    p.bytes = m.bytes;
    done = std::max(done, m.sent_ns + ns(message_ns(m.bytes)));
  }
  // Every request, receives first, each marked with whether it is a receive.
  std::vector<std::pair<Posted, bool>> open;
  for (const Posted& p : recvs_[static_cast<std::size_t>(w)]) open.emplace_back(p, true);
  for (const Posted& p : sends_[static_cast<std::size_t>(w)]) open.emplace_back(p, false);
  if (complete == Completion::Waitall) {
    gap(r);
    enter(r, Region::MPI_Waitall);
    in_mpi_until(r, done);
    for (const auto& [p, receive] : open) record_completion(r, comm, comm_index, p, receive);
    leave(r, Region::MPI_Waitall);
    return;
  }
  // The run decides the order the requests complete in and which call completes which: drawn from the rank and its
  // count of halos, not the seed. How many calls that takes differs from rank to rank (a leaf step writes the same
  // records in every iteration, so that they can be counted beforehand): MPI_Waitsome takes 1 + w mod k calls for
  // k requests, MPI_Waitany one per request, and MPI_Testany w mod 4 tests that complete nothing besides.
  Rng order(++r.completions, static_cast<std::uint64_t>(w));
  for (std::size_t i = open.size(); i > 1; --i) {
    std::swap(open[i - 1], open[static_cast<std::size_t>(order.uniform() * static_cast<double>(i))]);
  }
  const std::size_t k = open.size();
  const auto draw = [&order](std::size_t below) {
    return static_cast<std::size_t>(order.uniform() * static_cast<double>(below));
  };
  // Where each call ends in `open` (a call completes open[previous end, end)); failed tests end where they begin.
  std::vector<std::size_t> ends;
  if (complete == Completion::Waitsome) {
    const std::size_t calls = k == 0 ? 1 : 1 + static_cast<std::size_t>(w) % k;
    std::vector<std::size_t> cuts;  // calls - 1 distinct cut points in 1..k-1
    for (std::size_t c = 1; c < k; ++c) cuts.push_back(c);
    for (std::size_t i = cuts.size(); i > 1; --i) std::swap(cuts[i - 1], cuts[draw(i)]);
    cuts.resize(calls - 1);
    std::sort(cuts.begin(), cuts.end());
    ends = cuts;
    ends.push_back(k);
  } else {
    for (std::size_t i = 1; i <= k; ++i) ends.push_back(i);
    if (complete == Completion::Testany) {
      for (int failed = w % 4; failed > 0; --failed) {
        const std::size_t at = draw(ends.size());
        ends.insert(ends.begin() + static_cast<std::ptrdiff_t>(at), at == 0 ? 0 : ends[at - 1]);
      }
    }
  }
  const Region region = complete == Completion::Waitsome  ? Region::MPI_Waitsome
                        : complete == Completion::Waitany ? Region::MPI_Waitany
                                                          : Region::MPI_Testany;
  std::size_t begin = 0;
  for (std::size_t c = 0; c < ends.size(); ++c) {
    gap(r);
    enter(r, region);
    in_mpi_until(r, c + 1 == ends.size() ? done : r.t + ns(net_.call_ns));
    for (std::size_t i = begin; i < ends[c]; ++i) record_completion(r, comm, comm_index, open[i].first, open[i].second);
    leave(r, region);
    begin = ends[c];
  }
}

void Simulator::sendrecv(const SendRecv& s, const std::string& /*where*/) {
  // One MPI_Sendrecv per value, all ranks one stage at a time: send to r + d and receive from r - d (offsets), or
  // exchange with r XOR m. Recorded as the recorder does: MpiSend at enter, MpiRecv at leave, one region.
  std::size_t stages = s.values.size();
  if (s.butterfly) {
    std::size_t largest = 0;
    for (const auto& m : layout_.comms[s.comm].members) largest = std::max(largest, m.size());
    stages = static_cast<std::size_t>(rounds(largest));
  }
  const CommLayout& cl = layout_.comms[s.comm];
  for (std::size_t stage = 0; stage < stages; ++stage) {
    const std::int64_t value = s.butterfly ? (std::int64_t{1} << stage) : s.values[stage];
    // In a butterfly, a group smaller than the largest one has fewer stages.
    auto takes_part = [&](int w) {
      if (!s.butterfly) return true;
      const auto size = cl.members[static_cast<std::size_t>(cl.color[static_cast<std::size_t>(w)])].size();
      return stage < static_cast<std::size_t>(rounds(size));
    };
    auto to = [&](int w) {
      return s.rule == SendRecv::Rule::Xor ? peer_xor(s.comm, w, value) : peer_1d(s.comm, w, value, s.periodic);
    };
    auto from = [&](int w) {
      return s.rule == SendRecv::Rule::Xor ? peer_xor(s.comm, w, value) : peer_1d(s.comm, w, -value, s.periodic);
    };
    for (int w = 0; w < layout_.ranks; ++w) {
      if (!takes_part(w)) continue;
      Rank& r = ranks_[static_cast<std::size_t>(w)];
      gap(r);
      enter(r, Region::MPI_Sendrecv);
      if (const Peer p = to(w); !p.null()) {
        const std::uint64_t bytes = draw_bytes(r.rng, s.bytes);
        touch(r);
        if (r.writer != nullptr) {
          check(OTF2_EvtWriter_MpiSend(r.writer, nullptr, r.t, static_cast<std::uint32_t>(p.in_comm),
                                       comm_id(s.comm, w), static_cast<std::uint32_t>(s.tag), bytes),
                "an MpiSend");
        }
        inbox_[static_cast<std::size_t>(p.world)].push_back({w, s.tag, r.t, bytes, false});
      }
    }
    for (int w = 0; w < layout_.ranks; ++w) {
      if (!takes_part(w)) continue;
      Rank& r = ranks_[static_cast<std::size_t>(w)];
      std::uint64_t done = r.t + ns(net_.call_ns);
      const Peer p = from(w);
      std::uint64_t bytes = 0;
      if (!p.null()) {
        const InFlight& m = match(w, p.world, s.tag);
        bytes = m.bytes;
        done = std::max(done, m.sent_ns + ns(message_ns(m.bytes)));
      }
      in_mpi_until(r, done);
      if (!p.null()) {
        touch(r);
        if (r.writer != nullptr) {
          check(OTF2_EvtWriter_MpiRecv(r.writer, nullptr, r.t, static_cast<std::uint32_t>(p.in_comm),
                                       comm_id(s.comm, w), static_cast<std::uint32_t>(s.tag), bytes),
                "an MpiRecv");
        }
      }
      leave(r, Region::MPI_Sendrecv);
    }
    clear_inboxes();
  }
}

void Simulator::pipeline(const Pipeline& p) {
  // A wavefront: in each group, rank i receives from i - 1 (MPI_Recv), works, and sends to i + 1 (MPI_Send), in
  // chain order, so each receive sees its message already sent.
  const CommLayout& cl = layout_.comms[p.comm];
  for (std::size_t g = 0; g < cl.members.size(); ++g) {
    const std::vector<int>& m = cl.members[g];
    const auto n = static_cast<std::int64_t>(m.size());
    const std::uint32_t comm = cl.global_id[g];
    for (std::int64_t step = 0; step < n; ++step) {
      const std::int64_t i = p.reverse ? n - 1 - step : step;
      const std::int64_t prev = p.reverse ? i + 1 : i - 1;
      const std::int64_t next = p.reverse ? i - 1 : i + 1;
      const bool has_prev = prev >= 0 && prev < n;
      const bool has_next = next >= 0 && next < n;
      const int w = m[static_cast<std::size_t>(i)];
      Rank& r = ranks_[static_cast<std::size_t>(w)];
      // The end ranks either skip the call or make it with MPI_PROC_NULL (recorded, no message).
      if (has_prev || p.proc_null) {
        gap(r);
        enter(r, Region::MPI_Recv);
        std::uint64_t done = r.t + ns(net_.call_ns);
        std::uint64_t bytes = 0;
        if (has_prev) {
          const InFlight& msg = match(w, m[static_cast<std::size_t>(prev)], p.tag);
          bytes = msg.bytes;
          done = std::max(done, msg.sent_ns + ns(message_ns(msg.bytes)));
        }
        in_mpi_until(r, done);
        if (has_prev) {
          touch(r);
          if (r.writer != nullptr) {
            check(OTF2_EvtWriter_MpiRecv(r.writer, nullptr, r.t, static_cast<std::uint32_t>(prev), comm,
                                         static_cast<std::uint32_t>(p.tag), bytes),
                  "an MpiRecv");
          }
        }
        leave(r, Region::MPI_Recv);
      }
      if (p.work) compute_on(r, w, *p.work);
      if (has_next || p.proc_null) {
        gap(r);
        enter(r, Region::MPI_Send);
        std::uint64_t bytes = 0;
        if (has_next) {
          bytes = draw_bytes(r.rng, p.bytes);
          touch(r);
          if (r.writer != nullptr) {
            check(OTF2_EvtWriter_MpiSend(r.writer, nullptr, r.t, static_cast<std::uint32_t>(next), comm,
                                         static_cast<std::uint32_t>(p.tag), bytes),
                  "an MpiSend");
          }
          inbox_[static_cast<std::size_t>(m[static_cast<std::size_t>(next)])].push_back({w, p.tag, r.t, bytes, false});
        }
        // A blocking send returns once its buffer is copied out.
        in_mpi(r, net_.call_ns + static_cast<double>(bytes) / net_.bytes_per_ns);
        leave(r, Region::MPI_Send);
      }
    }
  }
  clear_inboxes();
}

void Simulator::collective(const Collective& c, const std::string& where) {
  const CommLayout& cl = layout_.comms[c.comm];
  const OTF2_CollectiveOp op = otf2_op(c.kind);
  for (std::size_t g = 0; g < cl.members.size(); ++g) {
    const std::vector<int>& m = cl.members[g];
    if (rooted(c.kind) && static_cast<std::size_t>(c.root) >= m.size()) {
      throw InputError("program '" + program_.source + "', " + where + ": root " + std::to_string(c.root) +
                       " is outside a communicator of " + std::to_string(m.size()) + " ranks at " +
                       std::to_string(layout_.ranks) + " ranks; use a smaller root");
    }
    // Every member passes the same count, so the jitter is drawn once per call.
    const std::uint64_t block = c.kind == CollKind::Barrier ? 0 : draw_bytes(shared_rng_, c.bytes);
    // Costs of tree / recursive-doubling algorithms: rounds × (latency + block transfer); gathers and all-to-all
    // move (n - 1) blocks through each rank.
    const double n = static_cast<double>(m.size());
    const double lat = rounds(m.size()) * net_.latency_ns;
    const double xfer = static_cast<double>(block) / net_.bytes_per_ns;
    double cost = net_.call_ns;
    switch (c.kind) {
      case CollKind::Barrier:
        cost += lat;
        break;
      case CollKind::Bcast:
      case CollKind::Reduce:
      case CollKind::Scan:
        cost += lat + rounds(m.size()) * xfer;
        break;
      case CollKind::Allreduce:
        cost += 2.0 * (lat + rounds(m.size()) * xfer);
        break;
      case CollKind::Gather:
      case CollKind::Scatter:
      case CollKind::Allgather:
      case CollKind::Alltoall:
        cost += lat + (n - 1.0) * xfer;
        break;
    }
    collective_sync(m, region_of(c.kind), ns(cost));
    for (std::size_t i = 0; i < m.size(); ++i) {
      Rank& r = ranks_[static_cast<std::size_t>(m[i])];
      // Bytes by the recorder's own rules (Score-P's conventions), from the same function.
      interpose::CollShape shape;
      shape.me = static_cast<int>(i);
      shape.size = static_cast<int>(m.size());
      shape.root = rooted(c.kind) ? c.root : -1;
      shape.in_place = c.in_place;
      shape.sblock = shape.rblock = block;
      shape.stype = shape.rtype = 1;
      const interpose::CollBytes b = interpose::collective_bytes(op, shape);
      touch(r);
      if (r.writer != nullptr) {
        check(OTF2_EvtWriter_MpiCollectiveEnd(
                  r.writer, nullptr, r.t, op, cl.global_id[g],
                  rooted(c.kind) ? static_cast<std::uint32_t>(c.root) : OTF2_COLLECTIVE_ROOT_NONE, b.sent, b.received),
              "an MpiCollectiveEnd");
      }
      leave(r, region_of(c.kind));
    }
  }
}

}  // namespace p3s::synth::detail
