// SPDX-License-Identifier: BSD-3-Clause
// Scaling app: a collective-heavy iteration on MPI_COMM_WORLD and on the row and column communicators of a
// 2-D process grid.
//
// Usage: collectives [iterations=20] [N=16384].
// Counts (doubles): b = N/n per rank, a = N/n^2 per pair of ranks, and with px x py = MPI_Dims_create(n, 2)
// (px >= py; row r/py, column r%py) N/px and N/py. All are floor divisions: N = 16384 = 2^14 makes every count
// exact and >= 4 for power-of-two n <= 64; at other n the remainders are simply not communicated. Setup: the
// row communicator (MPI_Comm_split, color r / py: py members) and the column communicator (color r % py: px
// members), created once. Per iteration, on every rank:
//   MPI_Bcast      N doubles from root 0                       (the fixed-size input of the step)
//   MPI_Scatter    b doubles per rank from root 0
//   local work on b elements
//   MPI_Allgather  b doubles per rank
//   MPI_Alltoall   a doubles per pair (the transpose of the rank's share)
//   local work on b elements
//   MPI_Reduce     b doubles to root n - 1
//   MPI_Gather     b doubles per rank to root 0
//   MPI_Allreduce  N/px doubles on the row communicator
//   MPI_Allreduce  N/py doubles on the column communicator
//   MPI_Bcast      N/px doubles on the row communicator from its rank 0
// Expected laws: loop weight = iterations; 9 collectives per rank and iteration; volumes as above.
#include "expect.h"

// Local work: a few flops per element, repeated `sweeps` times; returns a value that is used.
static double work(double* v, int count, int sweeps) {
  double s = 0.0;
  for (int k = 0; k < sweeps; ++k)
    for (int e = 0; e < count; ++e) {
      v[e] = 0.5 * v[e] + 0.25 * (double)(e % 5) + 1.0 / (1.0 + v[e] * v[e]);
      s += v[e];
    }
  return s;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int iters = expect_arg_int(argc, argv, 1, 20);
  const int n_global = expect_arg_int(argc, argv, 2, 16384);
  int dims[2] = {0, 0};
  MPI_Dims_create(size, 2, dims);
  const int px = dims[0], py = dims[1];
  const int b = n_global / size;
  const int a = n_global / size / size;
  const int nrow = n_global / px, ncol = n_global / py;
  if (a < 1) {
    if (rank == 0) fprintf(stderr, "collectives: N=%d is too small for n=%d: N/n^2 must be >= 1\n", n_global, size);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }

  double* input = malloc(sizeof(double) * (size_t)n_global);  // Bcast buffer and Scatter source
  double* mine = malloc(sizeof(double) * (size_t)b);
  double* all = malloc(sizeof(double) * (size_t)b * size);  // Allgather / Gather / Alltoall buffers
  double* swapped = malloc(sizeof(double) * (size_t)a * size);
  double* reduced = malloc(sizeof(double) * (size_t)b);
  double* row_in = malloc(sizeof(double) * (size_t)nrow);
  double* row_out = malloc(sizeof(double) * (size_t)nrow);
  double* col_in = malloc(sizeof(double) * (size_t)ncol);
  double* col_out = malloc(sizeof(double) * (size_t)ncol);
  for (int e = 0; e < n_global; ++e) input[e] = (double)(e % 17) / 17.0;
  for (int e = 0; e < b * size; ++e) all[e] = 0.0;
  for (int e = 0; e < b; ++e) mine[e] = reduced[e] = 0.0;
  for (int e = 0; e < a * size; ++e) swapped[e] = 0.0;
  for (int e = 0; e < nrow; ++e) row_in[e] = row_out[e] = 0.0;
  for (int e = 0; e < ncol; ++e) col_in[e] = col_out[e] = 0.0;

  // The communicators are created after the buffers are initialised, which ends the set-up.
  MPI_Comm row_comm, col_comm;
  MPI_Comm_split(MPI_COMM_WORLD, rank / py, rank % py, &row_comm);
  MPI_Comm_split(MPI_COMM_WORLD, rank % py, rank / py, &col_comm);

  double checksum = 0.0;
  for (int it = 0; it < iters; ++it) {
    if (rank == 0)
      for (int e = 0; e < n_global; ++e) input[e] = 0.5 * input[e] + (double)((e + it) % 9) / 9.0;
    MPI_Bcast(input, n_global, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Scatter(input, b, MPI_DOUBLE, mine, b, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    checksum += work(mine, b, 24);
    MPI_Allgather(mine, b, MPI_DOUBLE, all, b, MPI_DOUBLE, MPI_COMM_WORLD);
    // The first a elements of each gathered block go to each rank: a transpose of everybody's share.
    for (int p = 0; p < size; ++p)
      for (int e = 0; e < a; ++e) swapped[p * a + e] = all[(size_t)p * b + e] + all[(size_t)rank * b + e];
    MPI_Alltoall(swapped, a, MPI_DOUBLE, all, a, MPI_DOUBLE, MPI_COMM_WORLD);
    for (int e = 0; e < b; ++e) mine[e] += all[e % (a * size)];
    checksum += work(mine, b, 24);
    MPI_Reduce(mine, reduced, b, MPI_DOUBLE, MPI_SUM, size - 1, MPI_COMM_WORLD);
    MPI_Gather(mine, b, MPI_DOUBLE, all, b, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    for (int e = 0; e < nrow; ++e) row_in[e] = mine[e % b] + (double)e;
    MPI_Allreduce(row_in, row_out, nrow, MPI_DOUBLE, MPI_SUM, row_comm);
    for (int e = 0; e < ncol; ++e) col_in[e] = row_out[e % nrow] * 0.5;
    MPI_Allreduce(col_in, col_out, ncol, MPI_DOUBLE, MPI_SUM, col_comm);
    for (int e = 0; e < nrow; ++e) row_in[e] = col_out[e % ncol];
    MPI_Bcast(row_in, nrow, MPI_DOUBLE, 0, row_comm);
    checksum += row_in[0] + (rank == size - 1 ? reduced[0] : 0.0) + (rank == 0 ? all[b * size - 1] : 0.0);
  }
  double total = 0.0;
  MPI_Reduce(&checksum, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("collectives: n %d grid %dx%d N %d iterations %d checksum %.6e\n", size, px, py, n_global, iters, total);
  MPI_Comm_free(&row_comm);
  MPI_Comm_free(&col_comm);
  free(input);
  free(mine);
  free(all);
  free(swapped);
  free(reduced);
  free(row_in);
  free(row_out);
  free(col_in);
  free(col_out);
  MPI_Finalize();
  return 0;
}
