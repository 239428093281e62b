// SPDX-License-Identifier: BSD-3-Clause
// Signatures of a ring application built in code (no MPI), for the modeler's tests: an init phase, then iterations
// of Irecv from the left, Isends to the right (1 MiB / n each), a Waitall and an Allreduce of 8 bytes.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "p3s/analyzer/signature.hpp"

namespace p3s::modeler {

using analyzer::SigAction;
using analyzer::SigEvent;
using analyzer::Signature;

/// A directory of the running test's own (ctest runs the tests of a file in parallel processes).
inline std::filesystem::path dir() {
  const std::filesystem::path d =
      std::filesystem::path(P3S_TEST_TMP) / "model" / ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::filesystem::create_directories(d);
  return d;
}

inline analyzer::Stat stat(double v) {
  analyzer::Stat s;
  s.add(v);
  s.finish();
  return s;
}

inline SigEvent event(mpi::Function function, std::vector<SigAction> actions, double work) {
  SigEvent e;
  e.function = function;
  e.call = std::string(mpi::name(function));
  e.actions = std::move(actions);
  e.burst_work = stat(work);
  e.burst_ns = stat(work);
  e.call_ns = stat(100);
  return e;
}

inline SigAction message(mpi::ActionKind kind, std::int32_t rank, std::int32_t peer, double bytes) {
  SigAction a;
  a.kind = kind;
  a.peer = peer;
  a.offset = peer - rank;
  a.tag = 7;
  a.comm = 0;
  a.bytes = bytes;
  a.bytes_min = a.bytes_max = bytes;
  return a;
}

/// The peers rank r sends to in one iteration at n (one Isend each).
using SendPeers = std::function<std::vector<std::int32_t>(std::int32_t r, std::int32_t n)>;

/// How many MPI_Iprobe calls rank r makes at the end of an iteration at n.
using Probes = std::function<std::int32_t(std::int32_t r, std::int32_t n)>;

/// The ring's right neighbour: one Isend to (r + 1) mod n.
inline std::vector<std::int32_t> right_neighbour(std::int32_t r, std::int32_t n) { return {(r + 1) % n}; }

/// The init phase of every run: MPI_Init.
inline analyzer::SigPhase init_phase(std::int32_t n) {
  analyzer::SigPhase init;
  init.id = 0;
  init.weight = 1;
  init.relevant = true;
  for (std::int32_t r = 0; r < n; ++r) {
    analyzer::SigRank a;
    a.rank = r;
    SigAction create;
    create.kind = mpi::ActionKind::Collective;
    create.collective = mpi::Collective::CreateHandle;
    create.comm_size = static_cast<std::uint32_t>(n);
    a.events.push_back(event(mpi::Function::MPI_Init, {create}, 0));
    init.ranks.push_back(a);
  }
  return init;
}

/// An MPI_Allreduce of one double per rank on n ranks, as Score-P counts its bytes.
inline SigAction allreduce(std::int32_t n) {
  SigAction reduce;
  reduce.kind = mpi::ActionKind::Collective;
  reduce.collective = mpi::Collective::Allreduce;
  reduce.comm_size = static_cast<std::uint32_t>(n);
  reduce.bytes = 8.0 * n;
  reduce.bytes_received = 8.0 * n;
  return reduce;
}

/// One rank's iteration: Irecv from the left, an Isend per peer (the work 1e8 / n before the first), a Waitall
/// completing all of them, an Allreduce, then `probes` MPI_Iprobe calls.
inline analyzer::SigRank loop_rank(std::int32_t r, std::int32_t n, const std::vector<std::int32_t>& peers, double extra,
                                   std::int32_t probes) {
  const double bytes = 1048576.0 / n;
  const std::int32_t left = (r + n - 1) % n;
  analyzer::SigRank b;
  b.rank = r;
  SigAction post = message(mpi::ActionKind::IrecvPost, r, left, bytes);
  post.request = true;
  b.events.push_back(event(mpi::Function::MPI_Irecv, {post}, 1000 + extra));
  std::vector<SigAction> done;
  for (std::size_t k = 0; k < peers.size(); ++k) {
    SigAction send = message(mpi::ActionKind::Send, r, peers[k], bytes);
    send.request = true;
    b.events.push_back(event(mpi::Function::MPI_Isend, {send}, k == 0 ? 1e8 / n : 0));
    SigAction done_send;
    done_send.kind = mpi::ActionKind::IsendComplete;
    done_send.request = true;
    done_send.started = static_cast<std::int32_t>(k + 1);
    done.push_back(done_send);
  }
  SigAction done_recv = message(mpi::ActionKind::Recv, r, left, bytes);
  done_recv.request = true;
  done_recv.started = 0;
  done.push_back(done_recv);
  b.events.push_back(event(mpi::Function::MPI_Waitall, done, 500));
  b.events.push_back(event(mpi::Function::MPI_Allreduce, {allreduce(n)}, 300));
  for (std::int32_t k = 0; k < probes; ++k) b.events.push_back(event(mpi::Function::MPI_Iprobe, {}, 50));
  return b;
}

/// A run of the "ring" application at n: an init phase, then `iters` iterations (loop_rank); rank 0 does
/// `rank0_extra` more work before its Irecv; `sends` gives each rank's Isend peers, `probes` its Iprobe calls.
inline Signature ring(std::int32_t n, std::uint64_t iters, const std::string& metric = "PAPI_TOT_INS",
                      const std::string& command = "", double rank0_extra = 0, const SendPeers& sends = right_neighbour,
                      const Probes& probes = nullptr) {
  Signature s;
  s.tool = "p3s test";
  s.processes = n;
  s.locations = static_cast<std::uint32_t>(n);
  s.work_metric = metric;
  s.command = command.empty() ? "mpirun -np " + std::to_string(n) + " ./ring 100" : command;
  analyzer::SigComm world;
  world.kind = analyzer::CommKind::Group;
  for (std::int32_t r = 0; r < n; ++r) world.ranks.push_back(r);
  s.communicators.push_back(world);
  analyzer::SigPhase loop;
  loop.id = 1;
  loop.weight = iters;
  loop.relevant = true;
  for (std::int32_t r = 0; r < n; ++r) {
    loop.ranks.push_back(loop_rank(r, n, sends(r, n), r == 0 ? rank0_extra : 0, probes ? probes(r, n) : 0));
  }
  loop.work = stat(n * (1800 + 1e8 / n));
  s.phases = {init_phase(n), loop};
  s.order = {{0, 1}, {1, iters}};
  return s;
}

inline std::filesystem::path save(const Signature& s, const std::string& name) {
  const std::filesystem::path p = dir() / (name + ".json");
  analyzer::write_signature(s, p);
  return p;
}

/// The ring at each n, saved; `sends` gives each rank's Isend peers, `probes` its Iprobe calls.
inline std::vector<std::filesystem::path> ring_series(std::initializer_list<std::int32_t> ns, std::uint64_t iters = 100,
                                                      const SendPeers& sends = right_neighbour,
                                                      const Probes& probes = nullptr) {
  std::vector<std::filesystem::path> out;
  for (const std::int32_t n : ns) {
    out.push_back(save(ring(n, iters, "PAPI_TOT_INS", "", 0, sends, probes), "ring" + std::to_string(n)));
  }
  return out;
}

}  // namespace p3s::modeler
