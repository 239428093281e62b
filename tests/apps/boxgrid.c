// SPDX-License-Identifier: BSD-3-Clause
// Scaling app: a 3-D halo exchange on a box that is not a cube, over a process grid the application cuts itself
// to the least surface per rank (as LAMMPS cuts its simulation box), not MPI_Dims_create's.
//
// Usage: boxgrid [iterations=20] [NX=192] [NY=96] [NZ=48] [sleep=0]
//   sleep 1: every compute burst is replaced by a nanosleep of 20 ns per work unit, so that timings behave as if
//            each rank had a core of its own (for oversubscribed runs); 0: the bursts compute.
// Process grid px x py x pz: of the factorisations of n, the one with the least surface per rank,
// (NX/px)(NY/py) + (NY/py)(NZ/pz) + (NX/px)(NZ/pz), the first in order of px, then py ascending (for a 4:2:1 box:
// 4 -> 2x2x1, 8 -> 4x2x1, 12 -> 4x3x1, 16 -> 4x2x2, 32 -> 4x4x2, 48 -> 6x4x2, 64 -> 8x4x2, where MPI_Dims_create
// gives 2x2x2 at 8 and 4x4x4 at 64). Rank r has coordinates (x, y, z), r = x + px (y + py z) (x fastest); the
// neighbours along each axis are periodic. Each rank owns a block of NX/px x NY/py x NZ/pz points (block
// distribution: the first NX % px blocks along x get one more).
// Set-up: MPI_Barrier. Per iteration: for each axis with more than one process (a side of 1 has no messages; a
// side of 2 makes both neighbours the same rank, still two messages told apart by their tags): MPI_Irecv from the -
// neighbour (tag 20 + 2 axis) and from the + neighbour (tag 21 + 2 axis), MPI_Isend of the block's face to the +
// neighbour (tag 20 + 2 axis) and to the - neighbour (tag 21 + 2 axis), MPI_Waitall; the face across axis a is the
// product of the block's two other sides, in doubles. Then the stencil (burst), then MPI_Allreduce of 1 double.
// Expected laws: loop weight = iterations; per axis of side > 1 two Irecv, two Isend and a Waitall with peers at
// +-1 along it on the app's grid; messages of (N_b / p_b)(N_c / p_c) doubles; 1 final MPI_Reduce.
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "expect.h"

enum { kAxes = 3, kTagFace = 20 };

static void nap(long long units) {
  const long long ns = units * 20;
  struct timespec ts = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
  while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
  }
}

/// The factorisation of n with the least surface per rank for a box of sides len[0..2].
static void cut(int n, const int len[kAxes], int p[kAxes]) {
  double best = -1.0;
  for (int px = 1; px <= n; ++px) {
    if (n % px) continue;
    for (int py = 1; py <= n / px; ++py) {
      if ((n / px) % py) continue;
      const int pz = n / px / py;
      const double a = (double)len[0] / px, b = (double)len[1] / py, c = (double)len[2] / pz;
      const double surface = a * b + b * c + a * c;
      if (best < 0 || surface < best * (1 - 1e-12)) {
        best = surface;
        p[0] = px;
        p[1] = py;
        p[2] = pz;
      }
    }
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int iters = expect_arg_int(argc, argv, 1, 20);
  const int len[kAxes] = {expect_arg_int(argc, argv, 2, 192), expect_arg_int(argc, argv, 3, 96),
                          expect_arg_int(argc, argv, 4, 48)};
  const int sleep_mode = expect_arg_int(argc, argv, 5, 0);
  int p[kAxes] = {1, 1, 1};
  cut(size, len, p);
  const int c[kAxes] = {rank % p[0], (rank / p[0]) % p[1], rank / (p[0] * p[1])};
  int side[kAxes];
  for (int a = 0; a < kAxes; ++a) side[a] = block(len[a], p[a], c[a]);
  int nbr[kAxes][2];
  for (int a = 0; a < kAxes; ++a) {
    for (int dir = 0; dir < 2; ++dir) {
      int q[kAxes] = {c[0], c[1], c[2]};
      q[a] = (q[a] + (dir ? 1 : p[a] - 1)) % p[a];
      nbr[a][dir] = q[0] + p[0] * (q[1] + p[1] * q[2]);
    }
  }
  const size_t points = (size_t)side[0] * (size_t)side[1] * (size_t)side[2];
  double* u = calloc(points, sizeof(double));
  size_t max_face = 1;
  for (int a = 0; a < kAxes; ++a) {
    const size_t f = (size_t)side[(a + 1) % kAxes] * (size_t)side[(a + 2) % kAxes];
    if (f > max_face) max_face = f;
  }
  double* out[2] = {calloc(max_face, sizeof(double)), calloc(max_face, sizeof(double))};
  double* in[2] = {calloc(max_face, sizeof(double)), calloc(max_face, sizeof(double))};
  for (size_t i = 0; i < points; ++i) u[i] = (double)((i * 7 + (size_t)rank) % 13);
  MPI_Barrier(MPI_COMM_WORLD);
  double norm = 0.0;
  for (int it = 0; it < iters; ++it) {
    for (int a = 0; a < kAxes; ++a) {
      if (p[a] < 2) continue;
      const int face = side[(a + 1) % kAxes] * side[(a + 2) % kAxes];
      for (int k = 0; k < face; ++k) {
        out[0][k] = u[(size_t)k % points];
        out[1][k] = u[(points - 1 - (size_t)k % points)];
      }
      MPI_Request req[4];
      MPI_Irecv(in[0], face, MPI_DOUBLE, nbr[a][0], kTagFace + 2 * a, MPI_COMM_WORLD, &req[0]);
      MPI_Irecv(in[1], face, MPI_DOUBLE, nbr[a][1], kTagFace + 2 * a + 1, MPI_COMM_WORLD, &req[1]);
      MPI_Isend(out[1], face, MPI_DOUBLE, nbr[a][1], kTagFace + 2 * a, MPI_COMM_WORLD, &req[2]);
      MPI_Isend(out[0], face, MPI_DOUBLE, nbr[a][0], kTagFace + 2 * a + 1, MPI_COMM_WORLD, &req[3]);
      MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
      for (int k = 0; k < face; ++k) u[(size_t)k % points] += 0.01 * (in[0][k] - in[1][k]);
    }
    double local = 0.0;
    if (sleep_mode) {
      nap((long long)points * 8);
    } else {
      for (int sweep = 0; sweep < 8; ++sweep)
        for (size_t i = 1; i + 1 < points; ++i) u[i] = 0.25 * (u[i - 1] + 2 * u[i] + u[i + 1]);
    }
    for (size_t i = 0; i < points; ++i) local += u[i] * u[i];
    MPI_Allreduce(&local, &norm, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  double total = 0.0;
  MPI_Reduce(&norm, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("boxgrid: n %d grid %dx%dx%d box %dx%dx%d iterations %d sleep %d norm %.6e\n", size, p[0], p[1], p[2],
           len[0], len[1], len[2], iters, sleep_mode, total);
  free(u);
  for (int k = 0; k < 2; ++k) {
    free(out[k]);
    free(in[k]);
  }
  MPI_Finalize();
  return 0;
}
