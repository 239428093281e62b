// SPDX-License-Identifier: BSD-3-Clause
// Test app: a long loop of ring exchanges and Allreduce; with --die-at K, rank 1 kills itself with SIGKILL at
// iteration K, so that tests can check what a killed run leaves behind; with --fork-at K, every rank forks a child
// at iteration K that ends at once with exit() (a helper process), so that tests can check the child writes none
// of its parent's trace.
//
// Usage: crash [iterations=2000] [--die-at K] [--fork-at K]. Prints progress from rank 0, and no P3S-EXPECT lines.
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "expect.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int iters = 2000, die_at = -1, fork_at = -1;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--die-at") == 0 && i + 1 < argc)
      die_at = expect_arg_int(argc, argv, ++i, -1);
    else if (strcmp(argv[i], "--fork-at") == 0 && i + 1 < argc)
      fork_at = expect_arg_int(argc, argv, ++i, -1);
    else
      iters = expect_arg_int(argc, argv, i, iters);
  }
  const int right = (rank + 1) % size, left = (rank - 1 + size) % size;
  const int progress_every = iters >= 4 ? iters / 4 : 1;

  long long value = rank, sum = 0;
  for (int it = 0; it < iters; ++it) {
    if (rank == 1 && it == die_at) {
      fflush(stdout);
      raise(SIGKILL);  // no handler, no MPI_Finalize: what the recorder flushed so far is all there is
    }
    if (it == fork_at) {
      fflush(stdout);
      const pid_t child = fork();
      if (child == 0) exit(0);  // exit(), not _exit(): the process's exit handlers and destructors run
      if (child > 0) waitpid(child, NULL, 0);
    }
    long long from_left = 0, from_right = 0;
    MPI_Sendrecv(&value, 1, MPI_LONG_LONG, right, 1, &from_left, 1, MPI_LONG_LONG, left, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Request reqs[2];
    MPI_Irecv(&from_right, 1, MPI_LONG_LONG, right, 2, MPI_COMM_WORLD, &reqs[0]);
    MPI_Isend(&value, 1, MPI_LONG_LONG, left, 2, MPI_COMM_WORLD, &reqs[1]);
    MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
    value = (from_left + from_right + it) % 1000003;
    MPI_Allreduce(&value, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && (it + 1) % progress_every == 0) {
      printf("crash: iteration %d of %d, sum %lld\n", it + 1, iters, sum);
      fflush(stdout);
    }
  }
  MPI_Finalize();
  return 0;
}
