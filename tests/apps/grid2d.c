// SPDX-License-Identifier: BSD-3-Clause
// Scaling app: a 2-D halo exchange on a grid the application numbers itself, the way codes without a Cartesian
// communicator do, so that the modeler must find the frame in which the peers are constant offsets.
//
// Usage: grid2d [iterations=20] [N=1920] [order=0] [cart=0] [null=0]
//   order 0: row-major numbering r = i * cols + j; order 1: column-major r = i + j * rows
//   cart  1: the neighbours come from MPI_Cart_create/MPI_Cart_shift (column-major: a Cartesian grid of the
//            swapped dimensions), 0: the application computes them from its own numbering
//   null  1: at the grid boundary the calls are made with MPI_PROC_NULL; 0: they are skipped
// Grid rows x cols = MPI_Dims_create(n, 2) (rows >= cols); rank (i, j) owns a block of N/rows x N/cols cells.
// Per iteration: Irecv from up, down, left, right, Isend to them, Waitall, a 5-point sweep, Allreduce of the
// residual (1 double). Up/down messages hold a block row (N/cols doubles), left/right a block column (N/rows).
// Expected laws: loop weight = iterations; peers at constant offsets (+-1, +-cols row-major; +-1, +-rows
// column-major) in the matching frame.
#include "expect.h"

enum { kUp = 0, kDown = 1, kLeft = 2, kRight = 3 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int iters = expect_arg_int(argc, argv, 1, 20);
  const int n_global = expect_arg_int(argc, argv, 2, 1920);
  const int column_major = expect_arg_int(argc, argv, 3, 0);
  const int use_cart = expect_arg_int(argc, argv, 4, 0);
  const int use_null = expect_arg_int(argc, argv, 5, 0);

  int dims[2] = {0, 0};
  MPI_Dims_create(size, 2, dims);
  const int rows = dims[0], cols = dims[1];
  const int i = column_major ? rank % rows : rank / cols;
  const int j = column_major ? rank / rows : rank % cols;
  int peer[4];
  if (use_cart) {
    // Row-major Cartesian numbering; column-major is the row-major numbering of the transposed grid.
    const int cdims[2] = {column_major ? cols : rows, column_major ? rows : cols};
    const int periods[2] = {0, 0};
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, cdims, periods, 0, &cart);
    if (column_major) {
      MPI_Cart_shift(cart, 1, 1, &peer[kUp], &peer[kDown]);
      MPI_Cart_shift(cart, 0, 1, &peer[kLeft], &peer[kRight]);
    } else {
      MPI_Cart_shift(cart, 0, 1, &peer[kUp], &peer[kDown]);
      MPI_Cart_shift(cart, 1, 1, &peer[kLeft], &peer[kRight]);
    }
    MPI_Comm_free(&cart);  // reorder = 0: Cartesian ranks are world ranks
  } else {
    const int at[4][2] = {{i - 1, j}, {i + 1, j}, {i, j - 1}, {i, j + 1}};
    for (int d = 0; d < 4; ++d) {
      const int pi = at[d][0], pj = at[d][1];
      const int inside = pi >= 0 && pi < rows && pj >= 0 && pj < cols;
      peer[d] = !inside ? MPI_PROC_NULL : column_major ? pi + pj * rows : pi * cols + pj;
    }
  }
  const int nx = block(n_global, rows, i), ny = block(n_global, cols, j);
  const int len[4] = {ny, ny, nx, nx};
  const int tag_out[4] = {1, 2, 3, 4}, tag_in[4] = {2, 1, 4, 3};  // a message sent down arrives from up
  double* out[4];
  double* in[4];
  for (int d = 0; d < 4; ++d) {
    out[d] = calloc((size_t)len[d], sizeof(double));
    in[d] = calloc((size_t)len[d], sizeof(double));
  }
  double* u = calloc((size_t)nx * (size_t)ny, sizeof(double));
  for (int c = 0; c < nx * ny; ++c) u[c] = (double)((rank * 31 + c) % 17) / 16.0;
  MPI_Barrier(MPI_COMM_WORLD);

  double residual = 0.0;
  for (int it = 0; it < iters; ++it) {
    MPI_Request req[8];
    int nreq = 0;
    for (int d = 0; d < 4; ++d) {
      if (peer[d] == MPI_PROC_NULL && !use_null) continue;
      MPI_Irecv(in[d], len[d], MPI_DOUBLE, peer[d], tag_in[d], MPI_COMM_WORLD, &req[nreq++]);
    }
    for (int d = 0; d < 4; ++d) {
      if (peer[d] == MPI_PROC_NULL && !use_null) continue;
      MPI_Isend(out[d], len[d], MPI_DOUBLE, peer[d], tag_out[d], MPI_COMM_WORLD, &req[nreq++]);
    }
    MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
    double local = 0.0;
    for (int sweep = 0; sweep < 4; ++sweep) {
      for (int c = 1; c + 1 < nx * ny; ++c) {
        const double v = 0.25 * (u[c - 1] + u[c + 1]) + 0.5 * u[c];
        local += (v - u[c]) * (v - u[c]);
        u[c] = v;
      }
    }
    for (int d = 0; d < 4; ++d) out[d][0] = u[d] + in[d][0];
    MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  if (rank == 0)
    printf("grid2d: n %d grid %dx%d order %d cart %d null %d residual %.6e\n", size, rows, cols, column_major, use_cart,
           use_null, residual);
  for (int d = 0; d < 4; ++d) {
    free(out[d]);
    free(in[d]);
  }
  free(u);
  MPI_Finalize();
  return 0;
}
