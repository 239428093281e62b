// SPDX-License-Identifier: BSD-3-Clause
// Test app: Isend/Irecv both ways around a periodic ring + Waitall, a compute burst and an Allreduce per iteration.
//
// Usage: ring [iterations=10] [doubles per message=16]. ring.f90 makes exactly the same MPI calls.
#include "expect.h"

enum { kTagRight = 10, kTagLeft = 11 };

// Deterministic integer work standing in for computation between communications.
static long long burst(long long seed) {
  long long acc = seed;
  for (int k = 0; k < 20000; ++k) acc = (acc * 31 + k) % 1000003;
  return acc;
}

int main(int argc, char** argv) {
  int rank = 0, size = 1;
  expect_start(&argc, &argv, &rank, &size);
  const int iters = expect_arg_int(argc, argv, 1, 10);
  int n = expect_arg_int(argc, argv, 2, 16);
  if (n < 1) n = 1;
  const int m = n / 2 + 1;  // the leftward message has another size
  const int right = (rank + 1) % size;
  const int left = (rank - 1 + size) % size;

  double* to_right = malloc(sizeof(double) * (size_t)n);
  double* from_left = malloc(sizeof(double) * (size_t)n);
  double* to_left = malloc(sizeof(double) * (size_t)m);
  double* from_right = malloc(sizeof(double) * (size_t)m);
  double total = 0.0;
  for (int it = 0; it < iters; ++it) {
    for (int i = 0; i < n; ++i) to_right[i] = rank + it + i;
    for (int i = 0; i < m; ++i) to_left[i] = rank * it - i;
    MPI_Request reqs[4];
    MPI_Status st[4];
    MPI_Irecv(from_left, n, MPI_DOUBLE, left, kTagRight, MPI_COMM_WORLD, &reqs[0]);
    MPI_Irecv(from_right, m, MPI_DOUBLE, right, kTagLeft, MPI_COMM_WORLD, &reqs[1]);
    MPI_Isend(to_right, n, MPI_DOUBLE, right, kTagRight, MPI_COMM_WORLD, &reqs[2]);
    MPI_Isend(to_left, m, MPI_DOUBLE, left, kTagLeft, MPI_COMM_WORLD, &reqs[3]);
    MPI_Waitall(4, reqs, st);
    expect_recv_status(MPI_COMM_WORLD, &st[0], MPI_DOUBLE);
    expect_recv_status(MPI_COMM_WORLD, &st[1], MPI_DOUBLE);
    expect_send(MPI_COMM_WORLD, right, kTagRight, n, MPI_DOUBLE);
    expect_send(MPI_COMM_WORLD, left, kTagLeft, m, MPI_DOUBLE);
    expect_calls("MPI_Waitall", 1);

    // Integer-valued doubles keep the sum exact, so the checksum does not depend on reduction order.
    double local = (double)(burst(rank + it) % 7);
    for (int i = 0; i < n; ++i) local += from_left[i];
    for (int i = 0; i < m; ++i) local += from_right[i];
    double global = 0.0;
    MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    expect_coll("MPI_Allreduce", 1);
    total += global;
  }
  if (rank == 0) printf("ring: iterations %d checksum %lld\n", iters, (long long)total);
  free(to_right);
  free(from_left);
  free(to_left);
  free(from_right);
  expect_print();
  MPI_Finalize();
  return 0;
}
