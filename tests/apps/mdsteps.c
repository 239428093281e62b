// SPDX-License-Identifier: BSD-3-Clause
// Phase-structure app: the time loop of a molecular-dynamics code with three kinds of step.
//
// Usage: mdsteps [steps=200] [reneighbour=20] [output=50] [atoms=40000]
// Periodic 3-D process grid (MPI_Dims_create(n, 3)); every rank owns atoms / n particles. Every step, as an MD
// code's velocity-Verlet step does:
//   integrate (a short burst, 1/20 of the force computation)
//   every `reneighbour` steps: for each dimension with more than one rank, the particle exchange (MPI_Sendrecv
//     of the counts to the lower and from the upper neighbour, then MPI_Irecv + MPI_Send + MPI_Wait of the
//     particles, whose number depends on the step and the rank: the particles that cross), then the ghost
//     borders the same way, then the neighbour lists are rebuilt (a long burst);
//   else the forward communication of ghost positions: per dimension with more than one rank, two swaps
//     (MPI_Irecv + MPI_Send + MPI_Wait to the lower, then to the upper neighbour);
//   the force computation (the long burst: work proportional to the atoms owned);
//   the reverse communication of ghost forces: the swaps in reverse order;
//   integrate again (short);
//   every `output` steps: thermodynamic output, three MPI_Allreduce (temperature, energy, pressure).
// Expected phases (by rank): a plain step, a step that re-neighbours and a step that writes output, with weights
// that follow the step counts at every n.
#include "expect.h"

enum { kTagCount = 1, kTagData = 2 };

static volatile double sink;

/// Work proportional to `units` (a stand-in for the force loop).
static void compute(long units) {
  double acc = 0.0;
  for (long i = 0; i < units; ++i) acc += (double)(i % 7) * 1e-9;
  sink += acc;
}

/// `count` doubles to `to`, `incoming` from `from` (MPI_Irecv + MPI_Send + MPI_Wait).
static void swap(MPI_Comm cart, int to, int from, double* out, double* in, int count, int incoming) {
  MPI_Request req;
  MPI_Irecv(in, incoming, MPI_DOUBLE, from, kTagData, cart, &req);
  MPI_Send(out, count, MPI_DOUBLE, to, kTagData, cart);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  expect_send(cart, to, kTagData, count, MPI_DOUBLE);
  expect_recv(cart, from, kTagData, incoming, MPI_DOUBLE);
}

/// A count, then that many doubles, to `to`; the count from `from` decides how many arrive.
static void exchange(MPI_Comm cart, int to, int from, double* out, double* in, int count) {
  int incoming = 0;
  MPI_Sendrecv(&count, 1, MPI_INT, to, kTagCount, &incoming, 1, MPI_INT, from, kTagCount, cart, MPI_STATUS_IGNORE);
  expect_send(cart, to, kTagCount, 1, MPI_INT);
  expect_recv(cart, from, kTagCount, 1, MPI_INT);
  swap(cart, to, from, out, in, count, incoming);
}

int main(int argc, char** argv) {
  int world_rank = 0, size = 1;
  expect_start(&argc, &argv, &world_rank, &size);
  const int steps = expect_arg_int(argc, argv, 1, 200);
  const int reneighbour = expect_arg_int(argc, argv, 2, 20);
  const int output = expect_arg_int(argc, argv, 3, 50);
  const int atoms = expect_arg_int(argc, argv, 4, 40000);
  if (steps < 1 || reneighbour < 1 || output < 1 || atoms < size) {
    fprintf(stderr, "mdsteps: need steps, reneighbour, output >= 1 and atoms >= ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int dims[3] = {0, 0, 0};
  const int periods[3] = {1, 1, 1};
  MPI_Dims_create(size, 3, dims);
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart);
  expect_coll("MPI_Cart_create", 1);
  int rank = 0;
  MPI_Comm_rank(cart, &rank);
  int lower[3], upper[3];
  for (int d = 0; d < 3; ++d) MPI_Cart_shift(cart, d, 1, &lower[d], &upper[d]);

  const int local = atoms / size;
  const int ghosts = local / 10 + 1;  // a face's worth of ghost atoms
  double* out = calloc((size_t)ghosts * 3, sizeof(double));
  double* in = calloc((size_t)ghosts * 3, sizeof(double));
  const long force_work = 400L * local;
  double e[3] = {0.0, 0.0, 0.0}, total[3];
  MPI_Allreduce(e, total, 3, MPI_DOUBLE, MPI_SUM, cart);  // the initial energy ends the set-up
  expect_coll("MPI_Allreduce", 1);
  compute(force_work);  // the set-up's force computation
  for (int step = 1; step <= steps; ++step) {
    compute(force_work / 20);  // integrate
    if (step % reneighbour == 0) {
      for (int d = 0; d < 3; ++d) {
        if (dims[d] == 1) continue;
        const int crossing = 1 + (rank * 7 + step * 3 + d) % (ghosts / 4 + 1);  // particles that leave
        exchange(cart, lower[d], upper[d], out, in, crossing * 3);
      }
      for (int d = 0; d < 3; ++d) {
        if (dims[d] == 1) continue;
        exchange(cart, lower[d], upper[d], out, in, ghosts * 3);
        exchange(cart, upper[d], lower[d], out, in, ghosts * 3);
      }
      compute(force_work / 2);  // the neighbour lists
    } else {
      for (int d = 0; d < 3; ++d) {
        if (dims[d] == 1) continue;
        swap(cart, lower[d], upper[d], out, in, ghosts * 3, ghosts * 3);
        swap(cart, upper[d], lower[d], out, in, ghosts * 3, ghosts * 3);
      }
    }
    compute(force_work);  // forces
    for (int d = 2; d >= 0; --d) {
      if (dims[d] == 1) continue;
      swap(cart, upper[d], lower[d], out, in, ghosts * 3, ghosts * 3);
      swap(cart, lower[d], upper[d], out, in, ghosts * 3, ghosts * 3);
    }
    compute(force_work / 20);  // integrate
    if (step % output == 0) {
      for (int q = 0; q < 3; ++q) MPI_Allreduce(&e[q], &total[q], 1, MPI_DOUBLE, MPI_SUM, cart);
      expect_coll("MPI_Allreduce", 3);
    }
  }
  free(out);
  free(in);
  MPI_Comm_free(&cart);
  expect_coll("MPI_Comm_free", 1);
  expect_print();
  MPI_Finalize();
  return 0;
}
