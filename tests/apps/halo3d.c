// SPDX-License-Identifier: BSD-3-Clause
// Scaling app: a strong-scaled 3-D seven-point stencil on an N x N x N grid over a periodic MPI_Cart_create grid
// (MPI_Dims_create(n, 3)), the halo exchanged face by face.
//
// Usage: halo3d [iterations=20] [N=96] [--sleep-ns-per-cell X] (sleep_work.h: the sweep sleeps X ns per cell
// instead of computing).
// Rank (c0, c1, c2) owns a block of n_d = N/p_d points along each axis d (block distribution: the first N % p_d
// blocks get one more). Per iteration, on every rank, for each axis d of more than one process:
//   MPI_Irecv from the - and + neighbours (tags 10 + 2d, 11 + 2d), MPI_Isend to the + and - neighbours, one
//   MPI_Waitall(4); the face across d is the product of the block's two other sides, in doubles
// then the sweep over the block (work proportional to N^3 / n) and an MPI_Allreduce of the squared residual.
// Set-up ends with an MPI_Allreduce of 2 doubles, the run with an MPI_Reduce.
// Expected laws: loop weight = iterations; per axis of side > 1 two Irecv, two Isend and a Waitall with peers +-1
// along it; faces of (N/p_a)(N/p_b) doubles.
#define _POSIX_C_SOURCE 200809L  // nanosleep, for the sleep mode
#include "expect.h"
#include "sleep_work.h"

enum { kAxes = 3, kTagFace = 10 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const double sleep_ns = sleep_ns_per_cell(&argc, argv);
  const int iters = expect_arg_int(argc, argv, 1, 20);
  const int n_global = expect_arg_int(argc, argv, 2, 96);
  int dims[kAxes] = {0, 0, 0};
  const int periods[kAxes] = {1, 1, 1};
  MPI_Dims_create(size, kAxes, dims);
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, kAxes, dims, periods, 0, &cart);
  int rank = 0, coords[kAxes], side[kAxes], nbr[kAxes][2];
  MPI_Comm_rank(cart, &rank);
  MPI_Cart_coords(cart, rank, kAxes, coords);
  for (int d = 0; d < kAxes; ++d) {
    side[d] = block(n_global, dims[d], coords[d]);
    MPI_Cart_shift(cart, d, 1, &nbr[d][0], &nbr[d][1]);
  }
  const size_t cells = (size_t)side[0] * (size_t)side[1] * (size_t)side[2];
  double* u = calloc(cells, sizeof(double));
  double* v = calloc(cells, sizeof(double));
  size_t largest = 1;
  for (int d = 0; d < kAxes; ++d) {
    const size_t f = (size_t)side[(d + 1) % kAxes] * (size_t)side[(d + 2) % kAxes];
    if (f > largest) largest = f;
  }
  double* in[2] = {calloc(largest, sizeof(double)), calloc(largest, sizeof(double))};
  double* out[2] = {calloc(largest, sizeof(double)), calloc(largest, sizeof(double))};
  double stats[2] = {0.0, 0.0}, stats0[2];
  for (size_t i = 0; i < cells; ++i) {
    u[i] = (double)((i * 7 + (size_t)rank) % 11) / 10.0;
    stats[0] += u[i];
    stats[1] += u[i] * u[i];
  }
  MPI_Allreduce(stats, stats0, 2, MPI_DOUBLE, MPI_SUM, cart);
  double residual = 0.0;
  for (int it = 0; it < iters; ++it) {
    for (int d = 0; d < kAxes; ++d) {
      if (dims[d] < 2) continue;
      const int face = side[(d + 1) % kAxes] * side[(d + 2) % kAxes];
      MPI_Request reqs[4];
      MPI_Irecv(in[0], face, MPI_DOUBLE, nbr[d][0], kTagFace + 2 * d, cart, &reqs[0]);
      MPI_Irecv(in[1], face, MPI_DOUBLE, nbr[d][1], kTagFace + 2 * d + 1, cart, &reqs[1]);
      MPI_Isend(out[1], face, MPI_DOUBLE, nbr[d][1], kTagFace + 2 * d, cart, &reqs[2]);
      MPI_Isend(out[0], face, MPI_DOUBLE, nbr[d][0], kTagFace + 2 * d + 1, cart, &reqs[3]);
      MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE);
    }
    double local = 0.0;
    if (sleep_ns > 0) sleep_cells((double)cells, sleep_ns);
    for (size_t i = 1; i + 1 < cells && sleep_ns == 0; ++i) {
      v[i] = (u[i - 1] + u[i] + u[i + 1]) / 3.0;
      local += (v[i] - u[i]) * (v[i] - u[i]);
    }
    double* t = u;
    u = v;
    v = t;
    MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, cart);
  }
  double sum = 0.0;
  MPI_Reduce(&residual, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, cart);
  if (rank == 0)
    printf("halo3d: n %d grid %dx%dx%d N %d iterations %d residual %.6e mean %.6f\n", size, dims[0], dims[1], dims[2],
           n_global, iters, sum, stats0[0] / ((double)n_global * n_global * n_global));
  for (int k = 0; k < 2; ++k) {
    free(in[k]);
    free(out[k]);
  }
  free(u);
  free(v);
  MPI_Comm_free(&cart);
  MPI_Finalize();
  return 0;
}
