// SPDX-License-Identifier: BSD-3-Clause
// Test app: persistent requests around a ring (Send_init/Recv_init, Start/Startall), completed out of order with
// MPI_Waitany and MPI_Testsome loops, freed with MPI_Request_free; plus cancelled receives that never match.
//
// Usage: persistent [iterations=6] [doubles per message=8].
#include "expect.h"

enum { kTagRight = 1, kTagLeft = 2, kTagNever = 999 };

int main(int argc, char** argv) {
  int rank = 0, size = 1;
  expect_start(&argc, &argv, &rank, &size);
  const int iters = expect_arg_int(argc, argv, 1, 6);
  int n = expect_arg_int(argc, argv, 2, 8);
  if (n < 1) n = 1;
  const int m = n / 2 + 1;
  const int right = (rank + 1) % size, left = (rank - 1 + size) % size;

  double* to_right = malloc(sizeof(double) * (size_t)n);
  double* from_left = malloc(sizeof(double) * (size_t)n);
  int* to_left = malloc(sizeof(int) * (size_t)m);
  int* from_right = malloc(sizeof(int) * (size_t)m);
  // Receives first in the array, so that index < 2 means "a receive completed".
  MPI_Request reqs[4];
  MPI_Recv_init(from_left, n, MPI_DOUBLE, left, kTagRight, MPI_COMM_WORLD, &reqs[0]);
  MPI_Recv_init(from_right, m, MPI_INT, right, kTagLeft, MPI_COMM_WORLD, &reqs[1]);
  MPI_Send_init(to_right, n, MPI_DOUBLE, right, kTagRight, MPI_COMM_WORLD, &reqs[2]);
  MPI_Send_init(to_left, m, MPI_INT, left, kTagLeft, MPI_COMM_WORLD, &reqs[3]);
  const MPI_Datatype recv_type[2] = {MPI_DOUBLE, MPI_INT};

  long long checksum = 0;
  for (int it = 0; it < iters; ++it) {
    // Send buffers of inactive persistent requests may be changed between starts.
    for (int i = 0; i < n; ++i) to_right[i] = rank * 10 + it + i;
    for (int i = 0; i < m; ++i) to_left[i] = rank - it * i;
    MPI_Startall(2, reqs);
    MPI_Start(&reqs[2]);
    MPI_Start(&reqs[3]);
    expect_calls("MPI_Startall", 1);
    expect_calls("MPI_Start", 2);
    // One message per start of a persistent send.
    expect_send(MPI_COMM_WORLD, right, kTagRight, n, MPI_DOUBLE);
    expect_send(MPI_COMM_WORLD, left, kTagLeft, m, MPI_INT);
    if (it % 2 == 0) {
      // Waitany skips inactive persistent requests, so four calls complete the four operations in any order.
      for (int k = 0; k < 4; ++k) {
        int index = MPI_UNDEFINED;
        MPI_Status st;
        MPI_Waitany(4, reqs, &index, &st);
        if (index < 2) expect_recv_status(MPI_COMM_WORLD, &st, recv_type[index]);
      }
      expect_calls("MPI_Waitany", 4);
    } else {
      // Testsome polls; how many calls it takes depends on timing, so its call count is not printed.
      int done = 0;
      while (done < 4) {
        int outcount = 0, indices[4];
        MPI_Status sts[4];
        MPI_Testsome(4, reqs, &outcount, indices, sts);
        if (outcount == MPI_UNDEFINED) break;
        for (int k = 0; k < outcount; ++k)
          if (indices[k] < 2) expect_recv_status(MPI_COMM_WORLD, &sts[k], recv_type[indices[k]]);
        done += outcount;
      }
    }
    for (int i = 0; i < n; ++i) checksum += (long long)from_left[i];
    for (int i = 0; i < m; ++i) checksum += from_right[i];
  }
  for (int k = 0; k < 4; ++k) MPI_Request_free(&reqs[k]);
  expect_calls("MPI_Request_free", 4);

  // Receives that no send will ever match, cancelled: they complete as cancelled and move no message.
  int never = 0, cancelled_ok = 0;
  MPI_Request req;
  MPI_Status st;
  MPI_Irecv(&never, 1, MPI_INT, MPI_ANY_SOURCE, kTagNever, MPI_COMM_WORLD, &req);
  MPI_Cancel(&req);
  MPI_Wait(&req, &st);
  int flag = 0;
  MPI_Test_cancelled(&st, &flag);
  cancelled_ok += flag;
  // The same with a persistent receive: started, cancelled, completed, freed.
  MPI_Recv_init(&never, 1, MPI_INT, left, kTagNever, MPI_COMM_WORLD, &req);
  MPI_Start(&req);
  MPI_Cancel(&req);
  MPI_Wait(&req, &st);
  MPI_Test_cancelled(&st, &flag);
  cancelled_ok += flag;
  MPI_Request_free(&req);
  expect_calls("MPI_Cancel", 2);
  expect_calls("MPI_Start", 1);
  expect_calls("MPI_Request_free", 1);

  printf("persistent: rank %d iterations %d checksum %lld cancelled %d\n", rank, iters, checksum, cancelled_ok);
  free(to_right);
  free(from_left);
  free(to_left);
  free(from_right);
  expect_print();
  MPI_Finalize();
  return 0;
}
