// SPDX-License-Identifier: BSD-3-Clause
// Scaling app: Sweep3D-like pipelined wavefront sweeps over an N x N x NZ grid on a non-periodic 2-D process grid.
//
// Usage: wavefront [iterations=6] [N=480] [NZ=8] [K=2] [--sleep-ns-per-cell X]. NZ must be divisible by K (K blocks
// of NZ/K planes); with X (sleep_work.h) the sweep of a block sleeps X ns per cell instead of computing.
// Process grid px x py = MPI_Dims_create(n, 2) (px >= py; rank = cx * py + cy); rank (cx, cy) owns nx = N/px by
// ny = N/py columns of every plane (block distribution, the first N % px get one more; N = 480 divides exactly
// at n = 1, 2, 4, 8, 16, 32, 64). Per iteration, for each of the 4 sweep directions (sx, sy) in the order
// (+,+) (-,+) (+,-) (-,-), and for each of the K blocks of planes, on every rank:
//   MPI_Recv from the upstream x neighbour (cx - sx, cy)   ny * NZ/K doubles, tag 1   skipped on the upstream
//   MPI_Recv from the upstream y neighbour (cx, cy - sy)   nx * NZ/K doubles, tag 2   boundary (no PROC_NULL)
//   the sweep of the block: work proportional to nx * ny * NZ/K
//   MPI_Send to the downstream x neighbour (cx + sx, cy)   ny * NZ/K doubles, tag 1   skipped on the downstream
//   MPI_Send to the downstream y neighbour (cx, cy + sy)   nx * NZ/K doubles, tag 2   boundary
// then one MPI_Allreduce of the flux sum (1 double; the convergence test of a transport code). Set-up ends with
// an MPI_Allreduce of 2 doubles (the total source and its square).
// The pipeline of a sweep is px + py - 1 ranks deep; with K <= px + py - 2 (K = 2 at every n >= 4) it never
// reaches a steady state, and p3s analyze finds one phase per iteration. A larger K (e.g. K = 8 at n = 4 or 8)
// makes the steady state a tandem repeat of its own: inner loops whose weights and even existence depend on n.
// Expected laws: loop weight = iterations; per block and sweep a rank makes up to 2 receives and 2 sends (8K of
// each per iteration): 2 calls at a corner of the process grid, 3 on an edge, 4 inside; x messages
// N/py * NZ/K and y messages N/px * NZ/K doubles; peers at offsets -+py (x) and -+1 (y); 1 Allreduce.
#define _POSIX_C_SOURCE 200809L  // clock_nanosleep, for the sleep mode
#include "expect.h"
#include "sleep_work.h"

enum { kTagX = 1, kTagY = 2 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const double sleep_ns = sleep_ns_per_cell(&argc, argv);
  const int iters = expect_arg_int(argc, argv, 1, 6);
  const int n_global = expect_arg_int(argc, argv, 2, 480);
  const int nz = expect_arg_int(argc, argv, 3, 8);
  const int nblocks = expect_arg_int(argc, argv, 4, 2);

  int dims[2] = {0, 0};
  const int periods[2] = {0, 0};
  MPI_Dims_create(size, 2, dims);
  if (nblocks < 1 || nz % nblocks != 0 || n_global < dims[0] || n_global < dims[1]) {
    fprintf(stderr, "wavefront: need K >= 1 dividing NZ (NZ=%d, K=%d) and N=%d >= the process grid %dx%d\n", nz,
            nblocks, n_global, dims[0], dims[1]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  int rank = 0, coords[2];
  MPI_Comm_rank(cart, &rank);
  MPI_Cart_coords(cart, rank, 2, coords);
  int xm, xp, ym, yp;  // MPI_PROC_NULL outside the grid; used only to decide which calls to skip
  MPI_Cart_shift(cart, 0, 1, &xm, &xp);
  MPI_Cart_shift(cart, 1, 1, &ym, &yp);

  const int nx = block(n_global, dims[0], coords[0]);
  const int ny = block(n_global, dims[1], coords[1]);
  const int planes = nz / nblocks;
  const size_t area = (size_t)nx * (size_t)ny;
  double* src = malloc(area * sizeof(double));
  double* flux = malloc(area * sizeof(double));
  double* in_x = malloc((size_t)ny * planes * sizeof(double));  // face from / to the x neighbours
  double* out_x = malloc((size_t)ny * planes * sizeof(double));
  double* in_y = malloc((size_t)nx * planes * sizeof(double));  // face from / to the y neighbours
  double* out_y = malloc((size_t)nx * planes * sizeof(double));
  double* row = malloc((size_t)ny * sizeof(double));
  for (size_t c = 0; c < area; ++c) {
    src[c] = 1.0 + (double)((c * 7 + (size_t)rank) % 11) / 11.0;
    flux[c] = 0.0;
  }

  // The total source and its square end the set-up, so that no loop burst carries initialisation work. (Two
  // doubles: a reduction of the loop's size would look like the loop's own and start the loop one call early.)
  double total = 0.0, stats[2] = {0.0, 0.0}, stats0[2];
  for (size_t c = 0; c < area; ++c) {
    stats[0] += src[c];
    stats[1] += src[c] * src[c];
  }
  MPI_Allreduce(stats, stats0, 2, MPI_DOUBLE, MPI_SUM, cart);

  static const int kDirs[4][2] = {{1, 1}, {-1, 1}, {1, -1}, {-1, -1}};
  const double cx = 0.6, cy = 0.4, sigma = 1.3;
  const double denom = 1.0 / (sigma + cx + cy);
  for (int it = 0; it < iters; ++it) {
    for (int d = 0; d < 4; ++d) {
      const int sx = kDirs[d][0], sy = kDirs[d][1];
      const int up_x = sx > 0 ? xm : xp, down_x = sx > 0 ? xp : xm;
      const int up_y = sy > 0 ? ym : yp, down_y = sy > 0 ? yp : ym;
      for (int b = 0; b < nblocks; ++b) {
        // Upstream boundary ranks receive nothing: their incoming faces are vacuum (zero).
        if (up_x != MPI_PROC_NULL)
          MPI_Recv(in_x, ny * planes, MPI_DOUBLE, up_x, kTagX, cart, MPI_STATUS_IGNORE);
        else
          for (int k = 0; k < ny * planes; ++k) in_x[k] = 0.0;
        if (up_y != MPI_PROC_NULL)
          MPI_Recv(in_y, nx * planes, MPI_DOUBLE, up_y, kTagY, cart, MPI_STATUS_IGNORE);
        else
          for (int k = 0; k < nx * planes; ++k) in_y[k] = 0.0;
        // The sweep of the block: each cell depends on its upstream x and y neighbours (diamond difference
        // reduced to its recurrence), visited in the sweep's direction.
        if (sleep_ns > 0) sleep_cells((double)nx * ny * planes, sleep_ns);
        for (int k = 0; k < planes && sleep_ns == 0; ++k) {
          const double w = 0.25 + 0.05 * (double)((b * planes + k) % 4);
          for (int j = 0; j < ny; ++j) row[j] = in_x[(size_t)k * ny + j];
          for (int ii = 0; ii < nx; ++ii) {
            const int i = sx > 0 ? ii : nx - 1 - ii;
            double left = in_y[(size_t)k * nx + i];
            for (int jj = 0; jj < ny; ++jj) {
              const int j = sy > 0 ? jj : ny - 1 - jj;
              const size_t c = (size_t)i * ny + j;
              const double psi = (src[c] + cx * row[j] + cy * left) * denom;
              flux[c] += w * psi;
              row[j] = psi;
              left = psi;
            }
            out_y[(size_t)k * nx + i] = left;
          }
          for (int j = 0; j < ny; ++j) out_x[(size_t)k * ny + j] = row[j];
        }
        if (down_x != MPI_PROC_NULL) MPI_Send(out_x, ny * planes, MPI_DOUBLE, down_x, kTagX, cart);
        if (down_y != MPI_PROC_NULL) MPI_Send(out_y, nx * planes, MPI_DOUBLE, down_y, kTagY, cart);
      }
    }
    double local = 0.0;
    for (size_t c = 0; c < area; ++c) local += flux[c];
    MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, cart);
  }
  if (rank == 0)
    printf("wavefront: n %d grid %dx%d N %d NZ %d K %d iterations %d source %.6e flux %.6e\n", size, dims[0], dims[1],
           n_global, nz, nblocks, iters, stats0[0], total);
  free(src);
  free(flux);
  free(in_x);
  free(out_x);
  free(in_y);
  free(out_y);
  free(row);
  MPI_Comm_free(&cart);
  MPI_Finalize();
  return 0;
}
