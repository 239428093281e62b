// SPDX-License-Identifier: BSD-3-Clause
// Scaling app: inner loops whose trip counts grow with n: a ring allgather by hand (n - 1 steps) and a
// recursive-halving reduce-scatter (log2 n steps) in every outer iteration.
//
// Usage: growing [iterations T=10] [N=61440]. n must be a power of two (the textbook recursive halving; the
// job aborts otherwise) and divide N (61440 = 2^12 * 15). With b = N/n, per outer iteration, on every rank:
//   (a) ring allgather, for s = 1..n-1: fold the block about to be passed on into a local sum (work
//       proportional to b), MPI_Sendrecv(b doubles to rank+1, b doubles from rank-1, periodic, tag 1)
//   (b) recursive halving over the gathered N-vector, for k = 1..log2 n with h = n / 2^k: partner = rank XOR h,
//       MPI_Sendrecv of N / 2^k doubles each way (tag 2): keep the half of the current segment on this rank's
//       side of h, send the other half, add what comes back (work proportional to N / 2^k); after the last step
//       each rank holds the sum over all ranks of its own b-block. (Not strong-scaled: the first steps move N/2,
//       N/4, ... doubles whatever n; the total is N (1 - 1/n) per rank.)
//   local work on the b-block, then MPI_Allreduce of 1 double (the outer iteration's convergence test)
// Set-up ends with an MPI_Allreduce of 2 doubles (initial sum and norm), so that no loop burst carries it.
// Expected laws: the outer iteration is the phase, weight T at every n; inside it, the ring steps are a loop of
// n - 1 identical steps (offsets +1 / -1, b doubles), and the halving steps differ from each other (offset
// +-n/2^k, N/2^k doubles), log2 n Sendrecv per rank, then the Allreduce.
#include "expect.h"

enum { kTagRing = 1, kTagHalving = 2 };

// The work done on one gathered block: a dozen flops per element, the same for every block.
static double fold(const double* blk, const double* acc, int b) {
  double s = 0.0;
  for (int e = 0; e < b; ++e) {
    const double x = blk[e], y = acc[e];
    s += x * y / (1.0 + x * x) + (x - y) / (2.0 + y * y) + x / (3.0 + x * y * y);
  }
  return s;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int iters = expect_arg_int(argc, argv, 1, 10);
  const int n_global = expect_arg_int(argc, argv, 2, 61440);
  if ((size & (size - 1)) != 0 || n_global % size != 0 || n_global < size) {
    if (rank == 0) fprintf(stderr, "growing: n must be a power of two dividing N (n=%d N=%d)\n", size, n_global);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int b = n_global / size;
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  double* full = malloc(sizeof(double) * (size_t)n_global);  // the gathered vector, block p at p * b
  double* incoming = malloc(sizeof(double) * (size_t)n_global / 2 + 1);
  double* acc = malloc(sizeof(double) * (size_t)b);
  for (int e = 0; e < n_global; ++e) full[e] = 0.0;
  for (int e = 0; e < b; ++e) acc[e] = 1.0 + (double)((rank * b + e) % 23) / 23.0;

  for (int e = 0; e < b; ++e) full[(size_t)rank * b + e] = acc[e];
  // The initial sum and norm end the set-up, so that no loop burst carries initialisation work. (Two doubles: a
  // reduction of the loop's size would look like the loop's own and start the loop one call early.)
  double result = 0.0, stats[2] = {0.0, 0.0}, stats0[2];
  for (int e = 0; e < b; ++e) {
    stats[0] += acc[e];
    stats[1] += acc[e] * acc[e];
  }
  MPI_Allreduce(stats, stats0, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);

  for (int it = 0; it < iters; ++it) {
    // (a) Ring allgather: at step s, pass on the block that came from rank - s + 1, receive rank - s's block.
    // Each block is folded into `mix` just before it is passed on (the last one after the loop), so every
    // step's burst is the same work on b elements.
    double mix = 0.0;
    for (int s = 1; s < size; ++s) {
      const int send_block = (rank - s + 1 + size) % size, recv_block = (rank - s + size) % size;
      mix += fold(&full[(size_t)send_block * b], acc, b);
      MPI_Sendrecv(&full[(size_t)send_block * b], b, MPI_DOUBLE, right, kTagRing, &full[(size_t)recv_block * b], b,
                   MPI_DOUBLE, left, kTagRing, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    mix += fold(&full[(size_t)((rank + 1) % size) * b], acc, b);
    // (b) Recursive halving: the live segment [lo, lo + len) halves every step; this rank keeps the half on its
    // side of the partner and ends with [rank * b, (rank + 1) * b).
    int lo = 0, len = n_global;
    for (int h = size / 2; h >= 1; h /= 2) {
      const int partner = rank ^ h;
      const int half = len / 2;
      const int keep_lo = (rank & h) ? lo + half : lo, send_lo = (rank & h) ? lo : lo + half;
      MPI_Sendrecv(&full[send_lo], half, MPI_DOUBLE, partner, kTagHalving, incoming, half, MPI_DOUBLE, partner,
                   kTagHalving, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      for (int e = 0; e < half; ++e) full[keep_lo + e] += incoming[e];
      lo = keep_lo;
      len = half;
    }
    // The new local block, which is also this rank's block of the next allgather.
    double local = mix;
    for (int e = 0; e < b; ++e) {
      acc[e] = 0.5 * acc[e] + full[lo + e] / (double)(size + 1) * 0.5;
      full[(size_t)rank * b + e] = acc[e];
      local += acc[e];
    }
    MPI_Allreduce(&local, &result, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  if (rank == 0)
    printf("growing: n %d N %d iterations %d start %.6e result %.6e\n", size, n_global, iters, stats0[0], result);
  free(full);
  free(incoming);
  free(acc);
  MPI_Finalize();
  return 0;
}
