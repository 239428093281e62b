// SPDX-License-Identifier: BSD-3-Clause
// Test app: ping-pong between the ranks of each pair (0 and 1, 2 and 3, ...), one message each way per iteration;
// no computation, so a simulated iteration takes what the network model says.
//
// Usage: pingpong [iterations=100] [bytes=1048576]. A last rank without a partner waits.
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

static int arg(int argc, char** argv, int i, int fallback) { return argc > i ? atoi(argv[i]) : fallback; }

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int iters = arg(argc, argv, 1, 100);
  const int bytes = arg(argc, argv, 2, 1048576);
  const int peer = rank ^ 1;
  char* buf = calloc((size_t)bytes + 1, 1);
  for (int it = 0; it < iters && peer < size; ++it) {
    if (rank % 2 == 0) {
      MPI_Send(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
      MPI_Recv(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("pingpong: %d iterations of %d bytes\n", iters, bytes);
  free(buf);
  MPI_Finalize();
  return 0;
}
