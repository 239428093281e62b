/* SPDX-License-Identifier: BSD-3-Clause
 * Benchmark app: a two-rank loop of 0-byte Isend/Irecv/Waitall (3 MPI calls per iteration), optionally with a
 * compute burst per iteration. Rank 0 prints the time per iteration; every rank prints its peak RSS after
 * MPI_Finalize (so it includes the recorder's conversion of its logs). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long peak_rss_kb(void) {
  FILE* f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = -1;
  while (f != NULL && fgets(line, sizeof line, f) != NULL) {
    if (strncmp(line, "VmHWM:", 6) == 0) kb = strtol(line + 6, NULL, 10);
  }
  if (f != NULL) fclose(f);
  return kb;
}

int main(int argc, char** argv) {
  const long iters = argc > 1 ? atol(argv[1]) : 200000;
  const long burst = argc > 2 ? atol(argv[2]) : 0;
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int peer = rank ^ 1;
  volatile double x = 1.0;
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (long i = 0; i < iters && peer < size; ++i) {
    MPI_Request r[2];
    MPI_Irecv(NULL, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &r[0]);
    MPI_Isend(NULL, 0, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &r[1]);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    for (long k = 0; k < burst; ++k) x = x * 1.0000001 + 1e-9;
  }
  const double t1 = MPI_Wtime();
  if (rank == 0) printf("p3s-bench ns_per_iter %.1f\n", (t1 - t0) * 1e9 / (double)iters);
  MPI_Finalize();
  printf("p3s-bench rank %d peak_rss_kb %ld\n", rank, peak_rss_kb());
  return 0;
}
