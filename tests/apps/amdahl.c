// SPDX-License-Identifier: BSD-3-Clause
// Scaling app whose speedup bends: a strong-scaled parallel part, a serial part that does not shrink with n, and
// the imbalance it causes (Amdahl's law).
//
// Usage: amdahl [iterations=20] [cells=4000000] [--sleep-ns-per-cell X] (sleep_work.h).
// Per iteration: rank 0 works through the serial part (cells / 32, at every n) while the others wait in an
// MPI_Bcast of 4 doubles from rank 0; then every rank works through its block of cells / n; a ring exchange
// (MPI_Sendrecv of 1024 doubles to the right, from the left) and an MPI_Allreduce of one double end the
// iteration. Set-up: an MPI_Bcast of 2 ints; the run ends with an MPI_Reduce.
#define _POSIX_C_SOURCE 200809L  // nanosleep, for the sleep mode
#include "expect.h"
#include "sleep_work.h"

/// `cells` of work: computed, or slept in sleep mode. Returns a value the compiler cannot drop.
static double work(double cells, double sleep_ns, double x) {
  if (sleep_ns > 0) {
    sleep_cells(cells, sleep_ns);
    return x;
  }
  for (long i = 0; i < (long)cells; ++i) x = x * 1.0000001 + 1e-9;
  return x;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const double sleep_ns = sleep_ns_per_cell(&argc, argv);
  int params[2] = {expect_arg_int(argc, argv, 1, 20), expect_arg_int(argc, argv, 2, 4000000)};
  MPI_Bcast(params, 2, MPI_INT, 0, MPI_COMM_WORLD);
  const int iters = params[0];
  const double cells = params[1];
  const double serial = cells / 32;
  const long mine = params[1] / size + (rank < params[1] % size ? 1 : 0);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  double* out = calloc(1024, sizeof(double));
  double* in = calloc(1024, sizeof(double));
  double x = 1.0, coef[4] = {0, 0, 0, 0}, sum = 0;
  for (int it = 0; it < iters; ++it) {
    if (rank == 0) coef[0] = work(serial, sleep_ns, x);
    MPI_Bcast(coef, 4, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    x = work((double)mine, sleep_ns, x + coef[0] * 1e-12);
    out[0] = x;
    MPI_Sendrecv(out, 1024, MPI_DOUBLE, right, 5, in, 1024, MPI_DOUBLE, left, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    double local = x + in[0], global = 0;
    MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    sum += global;
  }
  double total = 0;
  MPI_Reduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("amdahl: n %d iterations %d cells %.0f serial %.0f sum %.6e\n", size, iters, cells, serial, total);
  free(out);
  free(in);
  MPI_Finalize();
  return 0;
}
