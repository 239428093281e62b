// SPDX-License-Identifier: BSD-3-Clause
// Scaling app: strong-scaled 2-D Jacobi on an N x N grid over a non-periodic MPI_Cart_create grid.
//
// Usage: stencil2d [iterations=20] [N=1920] [--sleep-ns-per-cell X] (sleep_work.h: the sweep sleeps X ns per cell
// instead of computing).
// Process grid px x py = MPI_Dims_create(n, 2) (px >= py); rank (cx, cy) owns nx = N/px rows and ny = N/py
// columns (block distribution: the first N % px rows of ranks get one row more, same for columns; N = 1920
// divides exactly at n = 1, 2, 4, 8, 16, 32, 64). Per iteration, on every rank:
//   Irecv x4 (up, down, left, right), Isend x4, Waitall(8)   neighbours from MPI_Cart_shift; MPI_PROC_NULL at
//                                                            the grid boundary (the calls are still made)
//     up/down messages: ny doubles (a row);  left/right messages: nx doubles (a column, MPI_Type_vector)
//   Jacobi sweep over nx * ny cells (work proportional to N^2 / n)
//   MPI_Allreduce of the squared residual (1 double)
// Set-up ends with an MPI_Allreduce of 2 doubles (initial mean and mean square), the run with an MPI_Reduce.
// Expected laws: loop weight = iterations; messages of N/py and N/px doubles; peers at offsets -py, +py, -1, +1
// (world ranks, row-major Cartesian numbering) except on the boundary.
#define _POSIX_C_SOURCE 200809L  // nanosleep, for the sleep mode
#include "expect.h"
#include "sleep_work.h"

#include <math.h>
#include <string.h>

enum { kTagDown = 1, kTagUp = 2, kTagRight = 3, kTagLeft = 4 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const double sleep_ns = sleep_ns_per_cell(&argc, argv);
  const int iters = expect_arg_int(argc, argv, 1, 20);
  const int n_global = expect_arg_int(argc, argv, 2, 1920);

  int dims[2] = {0, 0};
  const int periods[2] = {0, 0};
  MPI_Dims_create(size, 2, dims);
  if (n_global < dims[0] || n_global < dims[1]) {
    fprintf(stderr, "stencil2d: N=%d is smaller than the process grid %dx%d\n", n_global, dims[0], dims[1]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  int rank = 0, coords[2];
  MPI_Comm_rank(cart, &rank);
  MPI_Cart_coords(cart, rank, 2, coords);
  int up, down, left, right;
  MPI_Cart_shift(cart, 0, 1, &up, &down);
  MPI_Cart_shift(cart, 1, 1, &left, &right);

  const int nx = block(n_global, dims[0], coords[0]);
  const int ny = block(n_global, dims[1], coords[1]);
  int gx = 0, gy = 0;  // global index of the first owned row / column
  for (int i = 0; i < coords[0]; ++i) gx += block(n_global, dims[0], i);
  for (int j = 0; j < coords[1]; ++j) gy += block(n_global, dims[1], j);

  // Two (nx + 2) x (ny + 2) arrays with a one-cell halo, swapped every iteration. Both are written in full here
  // so that no page is first touched inside a timed burst. The global boundary (halo cells of boundary ranks)
  // holds a fixed Dirichlet value of 1 on the top edge and 0 elsewhere.
  const int ld = ny + 2;
  const size_t cells = (size_t)(nx + 2) * (size_t)ld;
  double* u = malloc(cells * sizeof(double));
  double* v = malloc(cells * sizeof(double));
  for (int i = 0; i < nx + 2; ++i)
    for (int j = 0; j < ld; ++j) {
      const int top = i == 0 && up == MPI_PROC_NULL;
      u[(size_t)i * ld + j] = top ? 1.0 : (double)((gx + i) % 7 + (gy + j) % 5) / 12.0;
    }
  memcpy(v, u, cells * sizeof(double));
  MPI_Datatype column;
  MPI_Type_vector(nx, 1, ld, MPI_DOUBLE, &column);
  MPI_Type_commit(&column);

  // The initial mean and mean square end the set-up, so that no loop burst carries initialisation work. (Two
  // doubles: a reduction of the loop's size would look like the loop's own and start the loop one call early.)
  double stats[2] = {0.0, 0.0}, stats0[2];
  for (int i = 1; i <= nx; ++i)
    for (int j = 1; j <= ny; ++j) {
      stats[0] += u[(size_t)i * ld + j];
      stats[1] += u[(size_t)i * ld + j] * u[(size_t)i * ld + j];
    }
  MPI_Allreduce(stats, stats0, 2, MPI_DOUBLE, MPI_SUM, cart);
  const double mean0 = stats0[0] / ((double)n_global * n_global);

  double residual = 0.0;
  for (int it = 0; it < iters; ++it) {
    MPI_Request reqs[8];
    // Receives first; each tag names the direction the message travels.
    MPI_Irecv(&u[1], ny, MPI_DOUBLE, up, kTagDown, cart, &reqs[0]);
    MPI_Irecv(&u[(size_t)(nx + 1) * ld + 1], ny, MPI_DOUBLE, down, kTagUp, cart, &reqs[1]);
    MPI_Irecv(&u[ld], 1, column, left, kTagRight, cart, &reqs[2]);
    MPI_Irecv(&u[ld + ny + 1], 1, column, right, kTagLeft, cart, &reqs[3]);
    MPI_Isend(&u[(size_t)nx * ld + 1], ny, MPI_DOUBLE, down, kTagDown, cart, &reqs[4]);
    MPI_Isend(&u[ld + 1], ny, MPI_DOUBLE, up, kTagUp, cart, &reqs[5]);
    MPI_Isend(&u[ld + ny], 1, column, right, kTagRight, cart, &reqs[6]);
    MPI_Isend(&u[ld + 1], 1, column, left, kTagLeft, cart, &reqs[7]);
    MPI_Waitall(8, reqs, MPI_STATUSES_IGNORE);

    double local = 0.0;
    if (sleep_ns > 0) sleep_cells((double)nx * ny, sleep_ns);
    for (int i = 1; i <= nx && sleep_ns == 0; ++i) {
      const double* a = &u[(size_t)i * ld];
      double* b = &v[(size_t)i * ld];
      for (int j = 1; j <= ny; ++j) {
        b[j] = 0.25 * (a[j - ld] + a[j + ld] + a[j - 1] + a[j + 1]);
        local += (b[j] - a[j]) * (b[j] - a[j]);
      }
    }
    double* t = u;  // v now holds the new interior; its halo is refreshed by the next exchange
    u = v;
    v = t;
    MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, cart);
  }
  double mine = 0.0, sum = 0.0;
  for (int i = 1; i <= nx; ++i)
    for (int j = 1; j <= ny; ++j) mine += u[(size_t)i * ld + j];
  MPI_Reduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, cart);
  if (rank == 0)
    printf("stencil2d: n %d grid %dx%d N %d iterations %d residual %.6e mean %.6f (rms %.6f) -> %.6f\n", size, dims[0],
           dims[1], n_global, iters, residual, mean0, sqrt(stats0[1] / ((double)n_global * n_global)),
           sum / ((double)n_global * n_global));

  MPI_Type_free(&column);
  MPI_Comm_free(&cart);
  free(u);
  free(v);
  MPI_Finalize();
  return 0;
}
