// SPDX-License-Identifier: BSD-3-Clause
// Scaling app: a multigrid V-cycle on a periodic NG x NG x NG grid over a 3-D periodic process grid that the
// application builds itself (no MPI_Dims_create, no Cartesian communicator), structured like the MG kernel of the
// NAS Parallel Benchmarks, written from scratch.
//
// Usage: mg3d [iterations=4] [NG=64] [levels=log2(NG)] [sleep=0]
//   NG: a power of two >= 2; level l (0 = finest) has the global side NG >> l; levels is their number, at most (and
//       by default) log2(NG), so that the coarsest level has 2^3 points
//   sleep 1: every compute burst is replaced by a nanosleep of 20 ns per work unit, so that timings behave as if
//            each rank had a core of its own (for oversubscribed runs); 0: the bursts compute.
// Process grid px x py x pz: n must be a power of two 2^k; starting from 1 x 1 x 1 the sides are doubled k times in
// the order x, y, z, x, y, z, ... (n = 4: 2x2x1, 8: 2x2x2, 16: 4x2x2, 32: 4x4x2, 64: 4x4x4). Rank r has coordinates
// (x, y, z) with r = x + px * (y + py * z) (x fastest); the neighbours along each axis are periodic.
// Data at level l, along an axis with p processes and global side g = NG >> l: if g >= p every rank holds g / p
// planes; if g < p only the ranks whose coordinate is a multiple of the stride p / g hold one plane. A rank holding
// data along every axis is "live" at level l and owns a block of side[0] x side[1] x side[2] points (plus one ghost
// layer); its neighbours along an axis are the live ranks at +- stride (periodic), which are live too. A rank that
// is not live at a level (it holds no data along some axis) skips that level's compute and exchange entirely; the
// neighbours of a live rank are live, so every send has a matching receive. An axis along which only
// one rank holds data (p = 1, or g = stride) has no exchange; with two holders both neighbours are the same rank
// (still two messages, told apart by their tags).
// comm3 (the ghost exchange of one array at one level, live ranks only), for each axis x, y, z in turn with two or
// more holders: MPI_Irecv from the - neighbour (tag 10 + 2 axis) and from the + neighbour (tag 11 + 2 axis),
// MPI_Send to the + neighbour (tag 10 + 2 axis) and to the - neighbour (tag 11 + 2 axis), MPI_Wait on each receive;
// every message is the block's face across that axis: side[b] * side[c] doubles (b, c the other two axes), so the
// sizes shrink by 4 level by level until the process grid is coarser than the data.
// Set-up: MPI_Barrier. Per iteration (L = levels):
//   down:     for l = 1 .. L-1: restriction of the residual to level l (burst), comm3 of it at level l
//   coarsest: smoothing at level L-1 (burst), comm3 of the correction at level L-1
//   up:       for l = L-2 .. 0: prolongation of the correction to level l and smoothing (burst), comm3 at level l
//   residual: the new residual at level 0 (burst), comm3 of it at level 0, its squared norm (burst), MPI_Allreduce
//             of 1 double (sum)
// so comm3 runs at levels 1, 2, .., L-1, L-1, L-2, .., 0, 0: 2 L times per iteration.
// Expected laws: loop weight = iterations; per live level and axis with >= 2 holders, 2 Irecv, 2 Send and 2 Wait;
// face messages of (NG >> l)^2 / (p_b p_c) doubles while NG >> l >= p along every axis (1-point sides beyond); peers
// at offsets +-stride, +-stride px, +-stride px py (periodic: the wrap-around peer is p - 1 strides away); with
// NG = 64, at n = 32 and 64 the coarsest level has 4 and 8 live ranks with peers 2 strides away along x and y.
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <time.h>

#include "expect.h"

enum { kAxes = 3, kTagFace = 10, kUnitsPerPoint = 4 };

/// Sleeps 20 ns per work unit (sleep mode).
static void nap(long long units) {
  const long long ns = units * 20;
  struct timespec ts = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
  while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
  }
}

typedef struct {
  int live;            // this rank holds data at this level
  int side[kAxes];     // local block side (interior points) along each axis
  int holders[kAxes];  // ranks holding data along each axis (no exchange below 2)
  int nbr[kAxes][2];   // world ranks of the - and + neighbours
  size_t st[kAxes];    // strides of the ghosted array
  size_t total;        // points of the ghosted array
  double* u;           // correction
  double* r;           // residual
} Level;

static size_t at(const Level* lv, int a, int b, int c) {
  return (size_t)a * lv->st[0] + (size_t)b * lv->st[1] + (size_t)c * lv->st[2];
}

/// Copies the plane `plane` (0 .. side + 1) across `axis` between array `u` and the buffer (to_buf: u -> buf).
static void face_copy(const Level* lv, double* u, int axis, int plane, double* buf, int to_buf) {
  const int b = (axis + 1) % kAxes, c = (axis + 2) % kAxes;
  size_t k = 0;
  for (int j = 1; j <= lv->side[c]; ++j)
    for (int i = 1; i <= lv->side[b]; ++i) {
      const size_t p = (size_t)plane * lv->st[axis] + (size_t)i * lv->st[b] + (size_t)j * lv->st[c];
      if (to_buf)
        buf[k++] = u[p];
      else
        u[p] = buf[k++];
    }
}

/// The ghost exchange of array `u` at one level (live ranks only).
static void comm3(const Level* lv, double* u, double* bufs[4]) {
  if (!lv->live) return;
  for (int axis = 0; axis < kAxes; ++axis) {
    if (lv->holders[axis] < 2) continue;
    const int len = lv->side[(axis + 1) % kAxes] * lv->side[(axis + 2) % kAxes];
    MPI_Request req[2];
    // A message sent towards + carries tag kTagFace + 2 axis and arrives from the receiver's - neighbour.
    MPI_Irecv(bufs[0], len, MPI_DOUBLE, lv->nbr[axis][0], kTagFace + 2 * axis, MPI_COMM_WORLD, &req[0]);
    MPI_Irecv(bufs[1], len, MPI_DOUBLE, lv->nbr[axis][1], kTagFace + 2 * axis + 1, MPI_COMM_WORLD, &req[1]);
    face_copy(lv, u, axis, lv->side[axis], bufs[2], 1);
    MPI_Send(bufs[2], len, MPI_DOUBLE, lv->nbr[axis][1], kTagFace + 2 * axis, MPI_COMM_WORLD);
    face_copy(lv, u, axis, 1, bufs[3], 1);
    MPI_Send(bufs[3], len, MPI_DOUBLE, lv->nbr[axis][0], kTagFace + 2 * axis + 1, MPI_COMM_WORLD);
    MPI_Wait(&req[0], MPI_STATUS_IGNORE);
    face_copy(lv, u, axis, 0, bufs[0], 0);
    MPI_Wait(&req[1], MPI_STATUS_IGNORE);
    face_copy(lv, u, axis, lv->side[axis] + 1, bufs[1], 0);
  }
}

/// Sum of the 6 neighbours of interior point p.
static double sum6(const Level* lv, const double* u, size_t p) {
  return u[p - lv->st[0]] + u[p + lv->st[0]] + u[p - lv->st[1]] + u[p + lv->st[1]] + u[p - lv->st[2]] +
         u[p + lv->st[2]];
}

static long long volume(const Level* lv) { return (long long)lv->side[0] * lv->side[1] * lv->side[2]; }

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int iters = expect_arg_int(argc, argv, 1, 4);
  const int ng = expect_arg_int(argc, argv, 2, 64);
  int log2ng = 0;
  while ((1 << log2ng) < ng) ++log2ng;
  const int nlevels = expect_arg_int(argc, argv, 3, log2ng);
  const int sleep_mode = expect_arg_int(argc, argv, 4, 0);

  int k = 0;
  while ((1 << k) < size) ++k;
  if ((1 << k) != size || ng < 2 || (1 << log2ng) != ng || nlevels < 1 || nlevels > log2ng) {
    if (rank == 0) {
      fprintf(stderr,
              "mg3d: need a power-of-two process count, NG a power of two >= 2 and 1 <= levels <= log2(NG) "
              "(n=%d, NG=%d, levels=%d)\n",
              size, ng, nlevels);
      fflush(stderr);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int p[kAxes] = {1, 1, 1};
  for (int d = 0; d < k; ++d) p[d % kAxes] *= 2;
  const int coord[kAxes] = {rank % p[0], (rank / p[0]) % p[1], rank / (p[0] * p[1])};

  Level* lv = calloc((size_t)nlevels, sizeof(Level));
  for (int l = 0; l < nlevels; ++l) {
    Level* v = &lv[l];
    const int g = ng >> l;
    v->live = 1;
    int stride[kAxes];
    for (int a = 0; a < kAxes; ++a) {
      stride[a] = g >= p[a] ? 1 : p[a] / g;
      v->side[a] = g >= p[a] ? g / p[a] : 1;
      v->holders[a] = p[a] / stride[a];
      if (coord[a] % stride[a] != 0) v->live = 0;
    }
    for (int a = 0; a < kAxes; ++a)
      for (int dir = 0; dir < 2; ++dir) {
        int c[kAxes] = {coord[0], coord[1], coord[2]};
        c[a] = (c[a] + (dir ? stride[a] : p[a] - stride[a])) % p[a];
        v->nbr[a][dir] = c[0] + p[0] * (c[1] + p[1] * c[2]);
      }
    v->st[0] = 1;
    v->st[1] = (size_t)v->side[0] + 2;
    v->st[2] = v->st[1] * ((size_t)v->side[1] + 2);
    v->total = v->st[2] * ((size_t)v->side[2] + 2);
    v->u = calloc(v->total, sizeof(double));
    v->r = calloc(v->total, sizeof(double));
  }
  size_t max_face = 1;
  for (int a = 0; a < kAxes; ++a) {
    const size_t f = (size_t)lv[0].side[(a + 1) % kAxes] * (size_t)lv[0].side[(a + 2) % kAxes];
    if (f > max_face) max_face = f;
  }
  double* bufs[4];
  for (int b = 0; b < 4; ++b) bufs[b] = calloc(max_face, sizeof(double));
  // The right-hand side: a deterministic pattern of charges; with u = 0 it is also the first residual.
  double* rhs = calloc(lv[0].total, sizeof(double));
  for (size_t q = 0; q < lv[0].total; ++q) {
    rhs[q] = (double)((q * 13 + (size_t)rank * 7) % 29) / 29.0 - 0.5;
    lv[0].r[q] = rhs[q];
  }
  MPI_Barrier(MPI_COMM_WORLD);

  const int last = nlevels - 1;
  double rnorm = 0.0;
  for (int it = 0; it < iters; ++it) {
    // Down: restriction of the residual, level by level.
    for (int l = 1; l < nlevels; ++l) {
      const Level* f = &lv[l - 1];
      Level* c = &lv[l];
      if (!c->live) continue;
      if (sleep_mode) {
        nap(volume(c) * kUnitsPerPoint * 2);
      } else {
        for (int z = 1; z <= c->side[2]; ++z)
          for (int y = 1; y <= c->side[1]; ++y)
            for (int x = 1; x <= c->side[0]; ++x) {
              // The fine points 2x-1, 2x (clamped to the fine block, which is 1 thick where the coarse one is too).
              const int fx = f->side[0] > 1 ? 2 * x : 1, fy = f->side[1] > 1 ? 2 * y : 1;
              const int fz = f->side[2] > 1 ? 2 * z : 1;
              const size_t q = at(f, fx, fy, fz);
              c->r[at(c, x, y, z)] =
                  0.5 * f->r[q] +
                  0.5 * (f->r[q - f->st[0]] + f->r[q - f->st[1]] + f->r[q - f->st[2]] + sum6(f, f->r, q)) / 9.0;
              c->u[at(c, x, y, z)] = 0.0;
            }
      }
      comm3(c, c->r, bufs);
    }
    // Coarsest level: a smoothing step gives the correction.
    if (lv[last].live) {
      Level* c = &lv[last];
      if (sleep_mode) {
        nap(volume(c) * kUnitsPerPoint);
      } else {
        for (int z = 1; z <= c->side[2]; ++z)
          for (int y = 1; y <= c->side[1]; ++y)
            for (int x = 1; x <= c->side[0]; ++x) {
              const size_t q = at(c, x, y, z);
              c->u[q] = -0.25 * c->r[q] - 0.02 * sum6(c, c->r, q);
            }
      }
      comm3(c, c->u, bufs);
    }
    // Up: prolongation of the correction and smoothing, level by level.
    for (int l = last - 1; l >= 0; --l) {
      const Level* c = &lv[l + 1];
      Level* f = &lv[l];
      if (!f->live) continue;
      if (sleep_mode) {
        nap(volume(f) * kUnitsPerPoint * 2);
      } else {
        for (int z = 1; z <= f->side[2]; ++z)
          for (int y = 1; y <= f->side[1]; ++y)
            for (int x = 1; x <= f->side[0]; ++x) {
              const int cx = c->side[0] > 1 ? (x + 1) / 2 : 1, cy = c->side[1] > 1 ? (y + 1) / 2 : 1;
              const int cz = c->side[2] > 1 ? (z + 1) / 2 : 1;
              const double corr = c->live ? c->u[at(c, cx, cy, cz)] : 0.0;
              const size_t q = at(f, x, y, z);
              f->u[q] += corr - 0.25 * f->r[q] - 0.02 * sum6(f, f->r, q);
            }
      }
      comm3(f, f->u, bufs);
    }
    // The new residual at the finest level and its norm.
    Level* f = &lv[0];
    double local = 0.0;
    if (f->live) {
      if (sleep_mode) {
        nap(volume(f) * kUnitsPerPoint);
      } else {
        for (int z = 1; z <= f->side[2]; ++z)
          for (int y = 1; y <= f->side[1]; ++y)
            for (int x = 1; x <= f->side[0]; ++x) {
              const size_t q = at(f, x, y, z);
              f->r[q] = rhs[q] - 0.1 * (6.0 * f->u[q] - sum6(f, f->u, q));
            }
      }
      comm3(f, f->r, bufs);
      if (sleep_mode) {
        nap(volume(f));
      } else {
        for (int z = 1; z <= f->side[2]; ++z)
          for (int y = 1; y <= f->side[1]; ++y)
            for (int x = 1; x <= f->side[0]; ++x) {
              const double v = f->r[at(f, x, y, z)];
              local += v * v;
            }
      }
    }
    MPI_Allreduce(&local, &rnorm, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  if (rank == 0)
    printf("mg3d: n %d grid %dx%dx%d NG %d levels %d iterations %d sleep %d rnorm2 %.6e\n", size, p[0], p[1], p[2], ng,
           nlevels, iters, sleep_mode, rnorm);
  for (int l = 0; l < nlevels; ++l) {
    free(lv[l].u);
    free(lv[l].r);
  }
  free(lv);
  for (int b = 0; b < 4; ++b) free(bufs[b]);
  free(rhs);
  MPI_Finalize();
  return 0;
}
