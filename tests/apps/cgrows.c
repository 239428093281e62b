// SPDX-License-Identifier: BSD-3-Clause
// Scaling app: a conjugate-gradient solver on a 2-D process grid of a power-of-two rank count, structured like the
// CG kernel of the NAS Parallel Benchmarks (row reductions by recursive halving and doubling, a transpose
// exchange), written from scratch.
//
// Usage: cgrows [iterations=15] [NA=14000] [sleep=0]
//   sleep 1: every compute burst is replaced by a nanosleep of 20 ns per work unit, so that timings behave as if
//            each rank had a core of its own (for oversubscribed runs); 0: the bursts compute.
// n must be 2^k (the job aborts otherwise). Grid rows x cols = 2^floor(k/2) x 2^ceil(k/2) (cols = rows or
// 2 * rows); rank r sits at row = r / cols, col = r % cols and owns a segment of seg = NA/cols vector elements
// (block distribution, the first NA % cols columns get one more; NA = 14000 divides exactly for cols <= 16).
// Transpose partner exch: rows == cols: the rank at (row = col, col = row), exch = col * cols + row; cols == 2 rows:
// drop the low bit of r, transpose the rows x rows square, restore the low bit:
// exch = 2 * (((r / 2) % rows) * rows + (r / 2) / rows) + r % 2. Ranks on the diagonal (exch == r) exchange with
// themselves, as the real code does; at n = 1 (cols = 1) there is no exchange and no row communication at all.
// Set-up: MPI_Barrier. Per outer iteration (one phase instance), 3 inner CG steps, each:
//   the matrix-vector product burst (NA * NA / (64 n) work units)
//   the row reduce-scatter by recursive halving, for j = log2(cols) - 1 down to 0 (step s = log2(cols) - 1 - j):
//     partner = row * cols + (col ^ 2^j); MPI_Irecv, MPI_Send, MPI_Wait of seg >> s doubles (tag 1)
//   the transpose exchange with exch: MPI_Irecv, MPI_Send, MPI_Wait of seg doubles (tag 2)
//   two dot products, each reduced in the row by recursive doubling, for j = 0 up to log2(cols) - 1:
//     partner = row * cols + (col ^ 2^j); MPI_Irecv, MPI_Send, MPI_Wait of 1 double (tag 3)
//   with short vector-update bursts (a few seg work units) between them
// then the residual-norm burst and one MPI_Allreduce of 1 double on MPI_COMM_WORLD. Finish: MPI_Reduce of 1
// double to rank 0.
// Expected laws: loop weight = iterations; per iteration 3 * (3 log2(cols) + 1) sends and as many receives per
// rank, 1 Allreduce; halving messages NA/cols * 2^-s doubles, transpose NA/cols, dot products 1 double; peers at
// offsets +-2^j (j < log2(cols)) in the row, and the transpose partner (a permutation that is not an offset).
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <time.h>

#include "expect.h"

enum { kTagReduce = 1, kTagTranspose = 2, kTagDot = 3, kInnerSteps = 3 };

/// Sleeps 20 ns per work unit (sleep mode).
static void nap(long long units) {
  const long long ns = units * 20;
  struct timespec ts = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
  while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
  }
}

/// Sum of `value` over the ranks of this rank's grid row, by recursive doubling.
static double row_sum(double value, int row, int col, int log2cols, int cols) {
  double sum = value;
  for (int j = 0; j < log2cols; ++j) {
    const int partner = row * cols + (col ^ (1 << j));
    double other = 0.0;
    MPI_Request req;
    MPI_Irecv(&other, 1, MPI_DOUBLE, partner, kTagDot, MPI_COMM_WORLD, &req);
    MPI_Send(&sum, 1, MPI_DOUBLE, partner, kTagDot, MPI_COMM_WORLD);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    sum += other;
  }
  return sum;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int iters = expect_arg_int(argc, argv, 1, 15);
  const int na = expect_arg_int(argc, argv, 2, 14000);
  const int sleep_mode = expect_arg_int(argc, argv, 3, 0);

  int k = 0;
  while ((1 << k) < size) ++k;
  const int rows = 1 << (k / 2), cols = 1 << ((k + 1) / 2), log2cols = (k + 1) / 2;
  if ((1 << k) != size || na < cols) {
    if (rank == 0) {
      fprintf(stderr, "cgrows: need a power-of-two process count and NA >= the grid columns (n=%d, NA=%d)\n", size, na);
      fflush(stderr);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int row = rank / cols, col = rank % cols;
  const int exch = rows == cols ? col * cols + row : 2 * (((rank / 2) % rows) * rows + (rank / 2) / rows) + rank % 2;
  const int seg = block(na, cols, col);
  const int seg_exch = block(na, cols, exch % cols);
  const int seg_max = block(na, cols, 0);
  const long long matvec_units = (long long)na * na / (64LL * size);

  double* x = malloc((size_t)seg_max * sizeof(double));  // solution estimate
  double* r = malloc((size_t)seg_max * sizeof(double));  // residual
  double* p = malloc((size_t)seg_max * sizeof(double));  // search direction
  double* q = malloc((size_t)seg_max * sizeof(double));  // A p, after the transpose
  double* w = malloc((size_t)seg_max * sizeof(double));  // partial product of the local matrix block
  double* in = malloc((size_t)seg_max * sizeof(double));
  for (int t = 0; t < seg_max; ++t) {
    x[t] = 0.0;
    r[t] = 1.0 + (double)((t * 13 + rank) % 7) / 7.0;
    p[t] = r[t];
    q[t] = w[t] = in[t] = 0.0;
  }
  MPI_Barrier(MPI_COMM_WORLD);

  double rho = 0.0;  // of the local segment only: the set-up ends with the Barrier
  for (int t = 0; t < seg; ++t) rho += r[t] * r[t];
  double norm = 0.0, zeta = 0.0;
  for (int it = 0; it < iters; ++it) {
    for (int step = 0; step < kInnerSteps; ++step) {
      // The local matrix block times p: a sparse-like product generated on the fly.
      if (sleep_mode) {
        nap(matvec_units);
      } else {
        for (int t = 0; t < seg; ++t) w[t] = 0.0;
        for (long long c = 0; c < matvec_units; ++c) {
          const int a = (int)(c % seg), b = (int)((c * 7 + row) % seg);
          w[a] += (0.5 + 0.01 * (double)((c + col) % 5)) * p[b] / (double)(1 + matvec_units / seg);
        }
      }
      // Reduce-scatter of the partial product across the row by recursive halving.
      for (int j = log2cols - 1; j >= 0; --j) {
        const int s = log2cols - 1 - j;
        const int partner = row * cols + (col ^ (1 << j));
        const int partner_seg = block(na, cols, col ^ (1 << j));
        const int send_len = seg >> s > 0 ? seg >> s : 1;
        const int recv_len = partner_seg >> s > 0 ? partner_seg >> s : 1;
        MPI_Request req;
        MPI_Irecv(in, recv_len, MPI_DOUBLE, partner, kTagReduce, MPI_COMM_WORLD, &req);
        MPI_Send(w, send_len, MPI_DOUBLE, partner, kTagReduce, MPI_COMM_WORLD);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        for (int t = 0; t < recv_len && t < seg; ++t) w[t] += in[t];
      }
      // The transpose exchange: q gets the reduced segment of the transposed position.
      if (cols > 1) {
        MPI_Request req;
        MPI_Irecv(in, seg_exch, MPI_DOUBLE, exch, kTagTranspose, MPI_COMM_WORLD, &req);
        MPI_Send(w, seg, MPI_DOUBLE, exch, kTagTranspose, MPI_COMM_WORLD);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        for (int t = 0; t < seg; ++t) q[t] = 0.5 * (in[t % seg_exch] + w[t]);
      } else {
        for (int t = 0; t < seg; ++t) q[t] = w[t];
      }
      // alpha = rho / (p . q)
      double pq = 0.0;
      if (sleep_mode)
        nap(seg);
      else
        for (int t = 0; t < seg; ++t) pq += p[t] * q[t];
      pq = row_sum(pq, row, col, log2cols, cols);
      const double alpha = rho / (fabs(pq) + 1.0);
      // x += alpha p, r -= alpha q, rho' = r . r
      double rr = 0.0;
      if (sleep_mode) {
        nap(3LL * seg);
      } else {
        for (int t = 0; t < seg; ++t) {
          x[t] += alpha * p[t];
          r[t] = 0.9 * r[t] - 0.1 * alpha * q[t] / (1.0 + fabs(alpha));
          rr += r[t] * r[t];
        }
      }
      const double rho_new = row_sum(rr, row, col, log2cols, cols);
      const double beta = rho_new / (rho + 1e-300);
      rho = rho_new;
      // p = r + beta p
      if (sleep_mode)
        nap(seg);
      else
        for (int t = 0; t < seg; ++t) p[t] = r[t] + 0.5 * beta * p[t];
    }
    // The residual norm of the outer iteration.
    double local = 0.0;
    if (sleep_mode)
      nap(2LL * seg);
    else
      for (int t = 0; t < seg; ++t) local += (x[t] - r[t]) * (x[t] - r[t]);
    MPI_Allreduce(&local, &norm, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    zeta = 10.0 + 1.0 / (1.0 + sqrt(norm));
  }

  double checksum = 0.0, total = 0.0;
  for (int t = 0; t < seg; ++t) checksum += x[t];
  MPI_Reduce(&checksum, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("cgrows: n %d grid %dx%d NA %d iterations %d sleep %d zeta %.6e checksum %.6e\n", size, rows, cols, na,
           iters, sleep_mode, zeta, total);
  free(x);
  free(r);
  free(p);
  free(q);
  free(w);
  free(in);
  MPI_Finalize();
  return 0;
}
