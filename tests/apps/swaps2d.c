// SPDX-License-Identifier: BSD-3-Clause
// Scaling app: a ghost exchange made swap by swap on a non-periodic grid, as particle codes make it: per dimension a
// swap each way, each posting a receive only where a neighbour sends to it and sending only where one receives; the
// forward exchange goes along dimension 0 then 1, the reverse one (forces sent back) along 1 then 0.
//
// Usage: swaps2d [iterations=20] [N=1920]
// Grid rows x cols = MPI_Dims_create(n, 2) (rows >= cols), rank (i, j) = i * cols + j, a block of N/rows x N/cols
// cells. A swap toward dir along d: MPI_Irecv from the neighbour at -dir (where there is one), MPI_Send to the one at
// +dir (where there is one), MPI_Wait for the receive. Per iteration: the forward swaps (d 0: -1, +1; d 1: -1, +1),
// a sweep, the reverse swaps (d 1: +1, -1; d 0: +1, -1), MPI_Allreduce of the residual (1 double). Along d 0 a
// message holds a block row (N/cols doubles), along d 1 a block column (N/rows).
// A side of 2 shows a rank one call of each pair (a receive and its wait toward the other rank, or a send): fitted
// where dimension 1 is never longer than 2, the interior ranks of a longer side are known from dimension 0 alone.
#include "expect.h"

/// The rank one step from (i, j) along d toward dir, or MPI_PROC_NULL off the grid.
static int neighbour(int i, int j, int rows, int cols, int d, int dir) {
  const int pi = d == 0 ? i + dir : i, pj = d == 1 ? j + dir : j;
  return pi >= 0 && pi < rows && pj >= 0 && pj < cols ? pi * cols + pj : MPI_PROC_NULL;
}

/// One swap toward dir along d: what arrives from -dir, what leaves toward +dir.
static void swap(double* in, double* out, int len, int from, int to) {
  MPI_Request req;
  if (from != MPI_PROC_NULL) MPI_Irecv(in, len, MPI_DOUBLE, from, 0, MPI_COMM_WORLD, &req);
  if (to != MPI_PROC_NULL) MPI_Send(out, len, MPI_DOUBLE, to, 0, MPI_COMM_WORLD);
  if (from != MPI_PROC_NULL) MPI_Wait(&req, MPI_STATUS_IGNORE);
}

int main(int argc, char** argv) {
  int size = 1, rank = 0;
  expect_start(&argc, &argv, &rank, &size);
  const int iters = expect_arg_int(argc, argv, 1, 20);
  const int n_global = expect_arg_int(argc, argv, 2, 1920);
  int dims[2] = {0, 0};
  MPI_Dims_create(size, 2, dims);
  const int rows = dims[0], cols = dims[1];
  const int i = rank / cols, j = rank % cols;
  const int nx = block(n_global, rows, i), ny = block(n_global, cols, j);
  const int len[2] = {ny, nx};
  double* in = calloc((size_t)(nx > ny ? nx : ny), sizeof(double));
  double* out = calloc((size_t)(nx > ny ? nx : ny), sizeof(double));
  double* u = calloc((size_t)nx * (size_t)ny, sizeof(double));
  for (int c = 0; c < nx * ny; ++c) u[c] = (double)((rank * 31 + c) % 17) / 16.0;
  const int forward[4][2] = {{0, -1}, {0, 1}, {1, -1}, {1, 1}};
  const int reverse[4][2] = {{1, 1}, {1, -1}, {0, 1}, {0, -1}};
  MPI_Barrier(MPI_COMM_WORLD);

  double residual = 0.0;
  for (int it = 0; it < iters; ++it) {
    for (int s = 0; s < 4; ++s) {
      const int d = forward[s][0], dir = forward[s][1];
      swap(in, out, len[d], neighbour(i, j, rows, cols, d, -dir), neighbour(i, j, rows, cols, d, dir));
    }
    double local = 0.0;
    for (int sweep = 0; sweep < 4; ++sweep) {
      for (int c = 1; c + 1 < nx * ny; ++c) {
        const double v = 0.25 * (u[c - 1] + u[c + 1]) + 0.5 * u[c];
        local += (v - u[c]) * (v - u[c]);
        u[c] = v;
      }
    }
    for (int s = 0; s < 4; ++s) {
      const int d = reverse[s][0], dir = reverse[s][1];
      swap(in, out, len[d], neighbour(i, j, rows, cols, d, -dir), neighbour(i, j, rows, cols, d, dir));
    }
    out[0] = u[0] + in[0];
    MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  if (rank == 0) printf("swaps2d: n %d grid %dx%d residual %.6e\n", size, rows, cols, residual);
  free(in);
  free(out);
  free(u);
  MPI_Finalize();
  return 0;
}
