// SPDX-License-Identifier: BSD-3-Clause
// Test app: derived datatypes (vector, struct, contiguous, nested) in Send/Recv, Sendrecv and Sendrecv_replace;
// the expected byte counts are data sizes (MPI_Type_size), never extents.
//
// Usage: dtype [iterations=4].
#include <stddef.h>

#include "expect.h"

enum { kTagVector = 1, kTagStruct = 2, kTagContig = 3, kTagStructPair = 4, kTagNested = 5 };

typedef struct {
  int id;
  double value[2];
  char flag;
} Particle;  // 21 bytes of data in a 32-byte struct

int main(int argc, char** argv) {
  int rank = 0, size = 1;
  expect_start(&argc, &argv, &rank, &size);
  const int iters = expect_arg_int(argc, argv, 1, 4);
  const int right = (rank + 1) % size, left = (rank - 1 + size) % size;
  // Blocking Send/Recv pairs ranks 2k and 2k+1; an odd last rank has no partner and skips them.
  const int partner = (rank ^ 1) < size ? rank ^ 1 : MPI_PROC_NULL;

  // 4 blocks of 2 doubles, stride 3: 64 bytes of data spread over an 88-byte extent.
  MPI_Datatype vec, particle_raw, particle, five_ints, nested;
  MPI_Type_vector(4, 2, 3, MPI_DOUBLE, &vec);
  MPI_Type_commit(&vec);
  const int lens[3] = {1, 2, 1};
  const MPI_Aint disps[3] = {offsetof(Particle, id), offsetof(Particle, value), offsetof(Particle, flag)};
  const MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
  MPI_Type_create_struct(3, lens, disps, types, &particle_raw);
  // Resized to the C struct, so that arrays of Particle can be sent with count > 1.
  MPI_Type_create_resized(particle_raw, 0, sizeof(Particle), &particle);
  MPI_Type_commit(&particle);
  MPI_Type_contiguous(5, MPI_INT, &five_ints);
  MPI_Type_commit(&five_ints);
  // Every other block of five ints: a vector of a contiguous type, 40 bytes of data.
  MPI_Type_vector(2, 1, 2, five_ints, &nested);
  MPI_Type_commit(&nested);

  long long checksum = 0;
  for (int it = 0; it < iters; ++it) {
    double grid[12], flat[8];
    for (int i = 0; i < 12; ++i) grid[i] = rank * 100 + it * 10 + i;
    MPI_Status st;
    // A vector on the send side matches 8 plain doubles on the receive side: same type signature.
    MPI_Sendrecv(grid, 1, vec, right, kTagVector, flat, 8, MPI_DOUBLE, left, kTagVector, MPI_COMM_WORLD, &st);
    expect_send(MPI_COMM_WORLD, right, kTagVector, 1, vec);
    expect_recv_status(MPI_COMM_WORLD, &st, MPI_DOUBLE);
    for (int i = 0; i < 8; ++i) checksum += (long long)flat[i];

    Particle p[3];
    for (int i = 0; i < 3; ++i) {
      p[i].id = rank * 3 + i;
      p[i].value[0] = it;
      p[i].value[1] = -i;
      p[i].flag = (char)('a' + i);
    }
    MPI_Sendrecv_replace(p, 3, particle, right, kTagStruct, left, kTagStruct, MPI_COMM_WORLD, &st);
    expect_send(MPI_COMM_WORLD, right, kTagStruct, 3, particle);
    expect_recv_status(MPI_COMM_WORLD, &st, particle);
    for (int i = 0; i < 3; ++i) checksum += p[i].id + (long long)p[i].value[0] + (long long)p[i].value[1] + p[i].flag;

    int ints[20], back[20];
    for (int i = 0; i < 20; ++i) ints[i] = rank + i * it;
    MPI_Sendrecv(ints, 1, nested, left, kTagNested, back, 10, MPI_INT, right, kTagNested, MPI_COMM_WORLD, &st);
    expect_send(MPI_COMM_WORLD, left, kTagNested, 1, nested);
    expect_recv_status(MPI_COMM_WORLD, &st, MPI_INT);
    for (int i = 0; i < 10; ++i) checksum += back[i];

    if (partner != MPI_PROC_NULL) {
      Particle q[2];
      // The lower rank of a pair sends first, so the blocking calls cannot deadlock.
      for (int round = 0; round < 2; ++round) {
        if ((round == 0) == (rank < partner)) {
          MPI_Send(ints, 2, five_ints, partner, kTagContig, MPI_COMM_WORLD);
          MPI_Send(p, 2, particle, partner, kTagStructPair, MPI_COMM_WORLD);
          expect_send(MPI_COMM_WORLD, partner, kTagContig, 2, five_ints);
          expect_send(MPI_COMM_WORLD, partner, kTagStructPair, 2, particle);
        } else {
          MPI_Recv(back, 2, five_ints, partner, kTagContig, MPI_COMM_WORLD, &st);
          expect_recv_status(MPI_COMM_WORLD, &st, five_ints);
          // Source, tag and size are known here by construction.
          MPI_Recv(q, 2, particle, partner, kTagStructPair, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          expect_recv(MPI_COMM_WORLD, partner, kTagStructPair, 2, particle);
          for (int i = 0; i < 10; ++i) checksum += back[i];
          for (int i = 0; i < 2; ++i) checksum += q[i].id + q[i].flag;
        }
      }
    }
  }
  printf("dtype: rank %d iterations %d checksum %lld\n", rank, iters, checksum);

  MPI_Type_free(&nested);
  MPI_Type_free(&five_ints);
  MPI_Type_free(&particle);
  MPI_Type_free(&particle_raw);
  MPI_Type_free(&vec);
  expect_print();
  MPI_Finalize();
  return 0;
}
