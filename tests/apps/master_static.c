// SPDX-License-Identifier: BSD-3-Clause
// Scaling app: master-worker with a static, deterministic schedule (explicit sources, no wildcards).
//
// Usage: master_static [rounds=20] [N=19530]. Needs n >= 2. Each round, N doubles of work are split over the
// w = n - 1 workers: worker i gets c_i = N/w doubles (block distribution: the first N % w workers get one more;
// N = 19530 = 2 * 3^2 * 5 * 7 * 31 divides exactly for w = 1, 2, 3, 5, 6, 7, 9, 10, 14, 15, 18, 21, 30, 31, 35,
// 45, 62, 63, ..., i.e. at n = 2, 3, 4, 6, 7, 8, 10, 11, 15, 16, 19, 22, 31, 32, 36, 46, 63, 64). Per round:
//   rank 0: for i = 1..w: build task i, MPI_Send(c_i doubles, to i, tag 1)
//           for i = 1..w: MPI_Recv(c_i doubles, from i, tag 2), fold the result in (work proportional to N/w)
//   worker: MPI_Recv(c_i doubles, from 0, tag 1), evaluate a degree-kDegree polynomial per element (work
//           proportional to N/w), MPI_Send(c_i doubles, to 0, tag 2)
// After the rounds, rank 0 broadcasts a stop flag (MPI_Bcast of 1 int from root 0).
// Expected laws: loop weight = rounds; rank 0 makes n - 1 sends and n - 1 receives per round (peers 1..n-1,
// offsets +1..+(n-1)), each worker one receive and one send with offset -i; messages N/(n-1) doubles.
#include "expect.h"

enum { kTagTask = 1, kTagResult = 2 };
enum { kDegree = 160 };

// The worker's computation: a polynomial per element by Horner's rule (2 * kDegree flops per element).
static void compute(const double* task, double* result, int count) {
  for (int e = 0; e < count; ++e) {
    const double x = task[e];
    double y = 0.0;
    for (int k = kDegree; k >= 0; --k) y = y * x + 1.0 / (double)(k + 1);
    result[e] = y;
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int rounds = expect_arg_int(argc, argv, 1, 20);
  const int n_global = expect_arg_int(argc, argv, 2, 19530);
  const int workers = size - 1;
  if (workers < 1 || n_global < workers) {
    if (rank == 0)
      fprintf(stderr, "master_static: needs at least 2 processes and N >= n - 1 (n=%d N=%d)\n", size, n_global);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int cmax = block(n_global, workers, 0);
  double* task = malloc(sizeof(double) * (size_t)cmax);
  double* result = malloc(sizeof(double) * (size_t)cmax);
  for (int e = 0; e < cmax; ++e) task[e] = result[e] = 0.0;

  double checksum = 0.0;
  if (rank == 0) {
    for (int r = 0; r < rounds; ++r) {
      for (int i = 1, first = 0; i <= workers; ++i) {
        const int c = block(n_global, workers, i - 1);
        // Task elements depend on the global element index and the round only, not on n.
        for (int e = 0; e < c; ++e) task[e] = 0.5 + 0.45 * (double)((first + e + 37 * r) % 1000) / 1000.0;
        first += c;
        MPI_Send(task, c, MPI_DOUBLE, i, kTagTask, MPI_COMM_WORLD);
      }
      for (int i = 1; i <= workers; ++i) {
        const int c = block(n_global, workers, i - 1);
        MPI_Recv(result, c, MPI_DOUBLE, i, kTagResult, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int e = 0; e < c; ++e) checksum += result[e];
      }
    }
  } else {
    const int c = block(n_global, workers, rank - 1);
    for (int r = 0; r < rounds; ++r) {
      MPI_Recv(task, c, MPI_DOUBLE, 0, kTagTask, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      compute(task, result, c);
      MPI_Send(result, c, MPI_DOUBLE, 0, kTagResult, MPI_COMM_WORLD);
      checksum += result[0];
    }
  }
  int stop = rank == 0 ? 1 : 0;
  MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("master_static: n %d N %d rounds %d stop %d checksum %.6f\n", size, n_global, rounds, stop, checksum);
  else if (!stop || checksum < 0.0)
    fprintf(stderr, "master_static: rank %d: bad stop flag or checksum\n", rank);
  free(task);
  free(result);
  MPI_Finalize();
  return 0;
}
