// SPDX-License-Identifier: BSD-3-Clause
// p3s-calibrate: the MPI job `p3s calibrate` launches. It measures what a simulation of this machine needs and
// writes it as JSON (share/doc/simulate-format.md): ping-pong times over message sizes between the first rank and
// another on its node and the first rank on another node, the collectives on all ranks at two sizes, and a core's
// speed on a multiply-add loop. The other ranks wait meanwhile, so each measure sees a quiet machine.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "p3s/error.hpp"
#include "p3s/json_text.hpp"
#include "p3s/mpi/vocabulary.hpp"
#include "p3s/utc_date.hpp"
#include "p3s/whole_file.hpp"

namespace {

using nlohmann::json;
namespace mpi = p3s::mpi;

constexpr int kBatches = 5;  // medians over batches: one slow batch (a daemon waking) does not move them

struct Settings {
  std::string out;
  bool quick = false;  // fewer repetitions: a test's calibration, not a machine's
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Round trips per batch for a message of `bytes`: many for small ones (timer resolution), a few for large ones.
int repetitions(std::size_t bytes, bool quick) {
  const int most = quick ? 50 : 400;
  const double budget = quick ? 2e6 : 2e7;  // bytes per batch
  return std::clamp(static_cast<int>(budget / static_cast<double>(bytes + 4096)), 3, most);
}

/// One-way times (half a round trip, median of the batches) between rank 0 and `peer`, for each size; the other
/// ranks only take part in the barriers.
json ping_pong(int rank, int peer, const Settings& s) {
  static const std::vector<std::size_t> sizes = {1, 8, 64, 512, 4096, 32768, 262144, 1 << 20, 4 << 20};
  json out = json::array();
  std::vector<char> buf(sizes.back());
  for (const std::size_t bytes : sizes) {
    const int reps = repetitions(bytes, s.quick);
    const int count = static_cast<int>(bytes);
    std::vector<double> batches;
    for (int b = -1; b < kBatches; ++b) {  // batch -1 warms the path up
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      for (int i = 0; i < reps; ++i) {
        if (rank == 0) {
          MPI_Send(buf.data(), count, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
          MPI_Recv(buf.data(), count, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == peer) {
          MPI_Recv(buf.data(), count, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Send(buf.data(), count, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
        }
      }
      if (b >= 0) batches.push_back((MPI_Wtime() - t0) / (2.0 * reps));
    }
    out.push_back({{"bytes", bytes}, {"seconds", median(batches)}});
  }
  return out;
}

using mpi::Function;

/// One call of collective `op` with `bytes` per rank.
void collective(Function op, std::vector<char>& a, std::vector<char>& b, int bytes) {
  const int doubles = std::max(bytes / 8, 1);
  switch (op) {
    case Function::MPI_Barrier:
      MPI_Barrier(MPI_COMM_WORLD);
      break;
    case Function::MPI_Bcast:
      MPI_Bcast(a.data(), bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
      break;
    case Function::MPI_Reduce:
      MPI_Reduce(a.data(), b.data(), doubles, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
      break;
    case Function::MPI_Allreduce:
      MPI_Allreduce(a.data(), b.data(), doubles, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      break;
    case Function::MPI_Allgather:
      MPI_Allgather(a.data(), bytes, MPI_BYTE, b.data(), bytes, MPI_BYTE, MPI_COMM_WORLD);
      break;
    case Function::MPI_Alltoall:
      MPI_Alltoall(a.data(), bytes, MPI_BYTE, b.data(), bytes, MPI_BYTE, MPI_COMM_WORLD);
      break;
    case Function::MPI_Gather:
      MPI_Gather(a.data(), bytes, MPI_BYTE, b.data(), bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
      break;
    default:
      MPI_Scatter(b.data(), bytes, MPI_BYTE, a.data(), bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
      break;
  }
}

/// Each collective at 8 bytes and 64 KiB per rank: the slowest rank's time per call, median of the batches.
json collectives(int size, const Settings& s) {
  static const std::vector<Function> ops = {Function::MPI_Barrier,   Function::MPI_Bcast,     Function::MPI_Reduce,
                                            Function::MPI_Allreduce, Function::MPI_Allgather, Function::MPI_Alltoall,
                                            Function::MPI_Gather,    Function::MPI_Scatter};
  json out = json::array();
  for (const int bytes : {8, 65536}) {
    std::vector<char> a(static_cast<std::size_t>(bytes) * static_cast<std::size_t>(size));
    std::vector<char> b(a.size());
    const int reps = s.quick ? 5 : (bytes > 8 ? 20 : 200);
    for (const Function op : ops) {
      const bool barrier = op == Function::MPI_Barrier;
      if (barrier && bytes > 8) continue;
      std::vector<double> batches;
      for (int k = -1; k < kBatches; ++k) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        for (int i = 0; i < reps; ++i) collective(op, a, b, bytes);
        double mine = (MPI_Wtime() - t0) / reps;
        double slowest = 0;
        MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (k >= 0) batches.push_back(slowest);
      }
      out.push_back(
          {{"operation", std::string(mpi::name(op))}, {"bytes", barrier ? 0 : bytes}, {"seconds", median(batches)}});
    }
  }
  return out;
}

/// A core's multiply-add speed (flop/s): four independent chains, so the loop is not bound by one's latency.
double core_speed(bool quick) {
  const long iterations = quick ? 2000000 : 50000000;
  volatile double seed = 1.0000001;
  double x[4] = {seed, seed * 2, seed * 3, seed * 4};
  const double a = seed * 0.999999, c = seed * 1e-9;
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < iterations; ++i) {
    for (double& v : x) v = v * a + c;
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  volatile double sink = x[0] + x[1] + x[2] + x[3];
  (void)sink;
  return 8.0 * static_cast<double>(iterations) / s;
}

/// Every rank's host name, at rank 0.
std::vector<std::string> hosts(int size) {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  std::vector<char> all(static_cast<std::size_t>(size) * MPI_MAX_PROCESSOR_NAME);
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, MPI_COMM_WORLD);
  std::vector<std::string> out;
  for (int r = 0; r < size; ++r) out.emplace_back(all.data() + static_cast<std::ptrdiff_t>(r) * MPI_MAX_PROCESSOR_NAME);
  return out;
}

std::string library() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(version, &len);
  std::string v(version);
  const std::size_t end = v.find_first_of(",\n");
  return v.substr(0, end);
}

int measure(const Settings& s) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::vector<std::string> names = hosts(size);
  int inside = -1, between = -1;  // the partners of rank 0: on its node, on another
  for (int r = 1; r < size; ++r) {
    if (names[static_cast<std::size_t>(r)] == names[0] && inside < 0) inside = r;
    if (names[static_cast<std::size_t>(r)] != names[0] && between < 0) between = r;
  }
  json out = {{"processes", size},
              {"hosts", names},
              {"mpi_library", library()},
              {"date", p3s::utc_now()},
              {"cores", ::sysconf(_SC_NPROCESSORS_ONLN)}};
  out["inside_node"] = inside > 0 ? ping_pong(rank, inside, s) : json::array();
  out["between_nodes"] = between > 0 ? ping_pong(rank, between, s) : json::array();
  out["collectives"] = collectives(size, s);
  MPI_Barrier(MPI_COMM_WORLD);
  out["flops"] = rank == 0 ? core_speed(s.quick) : 0.0;
  if (rank != 0) return 0;
  try {
    p3s::write_whole_file(s.out, p3s::json_text(out, 1) + '\n');
  } catch (const p3s::Error& e) {
    std::fprintf(stderr, "p3s-calibrate: %s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  Settings s;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "-o") == 0 && i + 1 < argc) s.out = argv[++i];
    if (std::strcmp(argv[i], "--quick") == 0) s.quick = true;
  }
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (s.out.empty() || size < 2) {
    if (rank == 0) {
      std::fprintf(stderr, "%s\n",
                   s.out.empty() ? "usage: p3s-calibrate -o measurements.json [--quick] (an MPI job; see p3s calibrate)"
                                 : "p3s-calibrate needs two ranks or more (mpirun -np 2 ...)");
    }
    MPI_Finalize();
    return 2;
  }
  const int rc = measure(s);
  MPI_Finalize();
  return rc;
}
