// SPDX-License-Identifier: BSD-3-Clause
// Scaling app: a CG-like iteration on a hypercube (n a power of two): local SpMV, butterfly exchanges, and two dot
// products done as recursive-doubling allreduces by hand.
//
// Usage: hypercube [iterations=20] [N=491520]. N must be divisible by n (491520 = 2^15 * 15: any n <= 2^15).
// Each rank owns m = N/n rows of a banded matrix (7 diagonals, block diagonal over the ranks) and the matching
// segments of the vectors p and q. With d = log2(n) and partner(k) = rank XOR 2^k, per iteration, on every rank:
//   SpMV q = A p on the m local rows                 work proportional to N/n
//   for k = 0..d-1: MPI_Sendrecv of q's m doubles    with partner(k), tag 1 (the butterfly coupling of the
//                   then q += 0.25 * partner's q      segments, as in a hypercube-mapped transform)
//   dot p.q: for k = 0..d-1: MPI_Sendrecv of 1 double with partner(k), tag 2
//   q.q and sum(q), fused (as pipelined CG fuses its dot products):
//            for k = 0..d-1: MPI_Sendrecv of 2 doubles with partner(k), tag 3
//   p = q / |q|                                       work proportional to N/n
// It is power iteration (the Rayleigh quotient p.q is printed), which keeps every value normalised, so the
// floating-point work of an iteration never changes (no denormals). Set-up ends with an MPI_Allreduce (|p|^2).
// Expected laws, with T = iterations: 3 * log2(n) Sendrecv per rank and iteration, log2(n) each of N/n doubles,
// 8 bytes and 16 bytes; peers rank XOR 2^k (offset +2^k or -2^k depending on bit k of the rank); one loop phase
// of weight T. (The second reduction carries two values so that it differs from the first by volume: with two
// equal 1-double reductions, tags being no part of a phase's identity, the pair is an inner loop of its own,
// weight 2T, whose instances differ in work by the preceding burst, and p3s analyze splits it into two phases of
// weight T in some runs and not in others.)
#include "expect.h"

#include <math.h>

enum { kTagVector = 1, kTagDot1 = 2, kTagDot2 = 3 };
enum { kHalfBand = 3 };  // 2 * kHalfBand + 1 = 7 diagonals

// Sums of `count` values over all ranks by recursive doubling: after step k every rank holds the sums over its
// 2^(k+1)-rank subcube.
static void allreduce_sum(double* x, int count, int rank, int size, int tag) {
  double other[2];
  for (int bit = 1; bit < size; bit <<= 1) {
    MPI_Sendrecv(x, count, MPI_DOUBLE, rank ^ bit, tag, other, count, MPI_DOUBLE, rank ^ bit, tag, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    // Add in rank order so that both partners compute the identical value.
    for (int c = 0; c < count; ++c) x[c] = (rank & bit) ? other[c] + x[c] : x[c] + other[c];
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int iters = expect_arg_int(argc, argv, 1, 20);
  const int n_global = expect_arg_int(argc, argv, 2, 491520);
  if ((size & (size - 1)) != 0) {
    if (rank == 0) fprintf(stderr, "hypercube: the number of processes must be a power of two, got %d\n", size);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (n_global % size != 0 || n_global / size < 1) {
    if (rank == 0) fprintf(stderr, "hypercube: N=%d must be a positive multiple of n=%d\n", n_global, size);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int m = n_global / size;
  const long long first = (long long)rank * m;

  double* p = malloc(sizeof(double) * (size_t)m);
  double* q = malloc(sizeof(double) * (size_t)m);
  double* other = malloc(sizeof(double) * (size_t)m);
  // Matrix coefficients: a[i][k] for the 7 diagonals of local row i, diagonally dominant and positive.
  double* a = malloc(sizeof(double) * (size_t)m * (2 * kHalfBand + 1));
  for (int i = 0; i < m; ++i) {
    const long long g = first + i;
    p[i] = 1.0 + (double)(g % 13) / 13.0;
    q[i] = 0.0;
    other[i] = 0.0;
    for (int k = 0; k <= 2 * kHalfBand; ++k)
      a[(size_t)i * (2 * kHalfBand + 1) + k] = k == kHalfBand ? 4.0 + (double)(g % 3) : 0.5 / (double)(1 + (g + k) % 4);
  }

  // Normalise p with the library's allreduce: ends the set-up, so that no loop burst carries initialisation work.
  double pp = 0.0, norm2 = 0.0;
  for (int i = 0; i < m; ++i) pp += p[i] * p[i];
  MPI_Allreduce(&pp, &norm2, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  for (int i = 0; i < m; ++i) p[i] /= sqrt(norm2);

  double lambda = 0.0, mean = 0.0;
  for (int it = 0; it < iters; ++it) {
    // SpMV on the local block of rows; the band is cut at the segment ends (block-diagonal matrix).
    for (int i = 0; i < m; ++i) {
      const double* row = &a[(size_t)i * (2 * kHalfBand + 1)];
      double s = 0.0;
      for (int k = -kHalfBand; k <= kHalfBand; ++k) {
        const int j = i + k;
        if (j >= 0 && j < m) s += row[k + kHalfBand] * p[j];
      }
      q[i] = s;
    }
    // Butterfly: couple q's segment with each hypercube neighbour in turn.
    for (int bit = 1; bit < size; bit <<= 1) {
      MPI_Sendrecv(q, m, MPI_DOUBLE, rank ^ bit, kTagVector, other, m, MPI_DOUBLE, rank ^ bit, kTagVector,
                   MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      for (int i = 0; i < m; ++i) q[i] += 0.25 * other[i];
    }
    double pq = 0.0, qs[2] = {0.0, 0.0};
    for (int i = 0; i < m; ++i) pq += p[i] * q[i];
    allreduce_sum(&pq, 1, rank, size, kTagDot1);
    for (int i = 0; i < m; ++i) {
      qs[0] += q[i] * q[i];
      qs[1] += q[i];
    }
    allreduce_sum(qs, 2, rank, size, kTagDot2);
    const double inv = 1.0 / sqrt(qs[0]);
    for (int i = 0; i < m; ++i) p[i] = q[i] * inv;
    lambda = pq;
    mean = qs[1] * inv / (double)n_global;
  }
  if (rank == 0)
    printf("hypercube: n %d N %d iterations %d rayleigh %.6f mean %.6e\n", size, n_global, iters, lambda, mean);
  free(p);
  free(q);
  free(other);
  free(a);
  MPI_Finalize();
  return 0;
}
