// SPDX-License-Identifier: BSD-3-Clause
// Scaling app: an LU-SSOR-like solver with pipelined lower and upper triangular sweeps over an NX x NY x NZ grid
// (NY = NX) on a non-periodic 2-D process grid, structured like the LU application of the NAS Parallel Benchmarks,
// written from scratch.
//
// Usage: luwave [iterations=10] [NX=64] [NZ=16] [interval=5] [sleep=0]
//   interval: the residual norms are reduced on every iteration it with it % interval == interval - 1
//   sleep 1: every compute burst is replaced by a nanosleep of 20 ns per work unit, so that timings behave as if
//            each rank had a core of its own (for oversubscribed runs); 0: the bursts compute.
// Process grid rows x cols = MPI_Dims_create(n, 2) (rows >= cols); rank r = i * cols + j; neighbours north (i - 1),
// south (i + 1), west (j - 1), east (j + 1); off the grid there is none and the calls are skipped (no
// MPI_PROC_NULL). Rank (i, j) owns nx = NX/rows by ny = NY/cols columns of every plane, 5 unknowns per cell
// (block distribution, the first NX % rows get one more). Set-up: MPI_Barrier. Per iteration:
//   lower sweep, for k = 0 .. NZ-1:   MPI_Recv from north (ny * 5 doubles, tag 1), MPI_Recv from west (nx * 5,
//                                     tag 2), the plane's burst (nx * ny * 5 work units), MPI_Send to south
//                                     (ny * 5, tag 1), MPI_Send to east (nx * 5, tag 2)
//   upper sweep, for k = NZ-1 .. 0:   MPI_Recv from south (ny * 5, tag 3), MPI_Recv from east (nx * 5, tag 4),
//                                     the plane's burst, MPI_Send to north (ny * 5, tag 3), MPI_Send to west
//                                     (nx * 5, tag 4)
//   face exchange: MPI_Irecv from each existing neighbour, MPI_Isend to each, MPI_Waitall; north/south faces
//                  ny * NZ * 5 doubles, west/east faces nx * NZ * 5 (tags 5..8)
//   the right-hand-side burst (nx * ny * NZ * 5 work units)
//   on iterations it % interval == interval - 1 only: MPI_Allreduce of 5 doubles (the residual norms)
// Finish: MPI_Reduce of 5 doubles (the error norms) to rank 0.
// Expected laws: loop weight = iterations (the reduction makes the true period `interval` iterations: with 10
// iterations and interval 5 it occurs on iterations 4 and 9 only); per iteration and rank 2 NZ receives and 2 NZ
// sends per existing pair of upstream/downstream neighbours, 2 to 4 face Irecv/Isend; north/south messages
// NX/cols * 5 (sweeps) and NX/cols * NZ * 5 doubles (faces), west/east NX/rows * 5 and NX/rows * NZ * 5 doubles;
// peers at offsets +-cols (north/south) and +-1 (west/east).
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <time.h>

#include "expect.h"

enum { kN = 0, kS = 1, kW = 2, kE = 3, kVars = 5 };
enum { kTagLowerNS = 1, kTagLowerWE = 2, kTagUpperNS = 3, kTagUpperWE = 4, kTagFace = 5 };

/// Sleeps 20 ns per work unit (sleep mode).
static void nap(long long units) {
  const long long ns = units * 20;
  struct timespec ts = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
  while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int iters = expect_arg_int(argc, argv, 1, 10);
  const int nx_global = expect_arg_int(argc, argv, 2, 64);
  const int ny_global = nx_global;
  const int nz = expect_arg_int(argc, argv, 3, 16);
  const int interval = expect_arg_int(argc, argv, 4, 5);
  const int sleep_mode = expect_arg_int(argc, argv, 5, 0);

  int dims[2] = {0, 0};
  MPI_Dims_create(size, 2, dims);
  const int rows = dims[0], cols = dims[1];
  if (nz < 1 || interval < 1 || nx_global < rows || ny_global < cols) {
    if (rank == 0) {
      fprintf(stderr, "luwave: need NZ >= 1, interval >= 1 and NX=%d >= the process grid %dx%d (NZ=%d, interval=%d)\n",
              nx_global, rows, cols, nz, interval);
      fflush(stderr);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int i = rank / cols, j = rank % cols;
  int peer[4];  // -1: no neighbour on that side
  peer[kN] = i > 0 ? rank - cols : -1;
  peer[kS] = i < rows - 1 ? rank + cols : -1;
  peer[kW] = j > 0 ? rank - 1 : -1;
  peer[kE] = j < cols - 1 ? rank + 1 : -1;
  const int nx = block(nx_global, rows, i), ny = block(ny_global, cols, j);
  const int ns_len = ny * kVars, we_len = nx * kVars;  // one plane's row (north/south), column (west/east)
  const int face_len[4] = {ns_len * nz, ns_len * nz, we_len * nz, we_len * nz};
  const size_t cells = (size_t)nx * (size_t)ny * (size_t)nz * kVars;
  const long long plane_units = (long long)nx * ny * kVars;

  double* u = malloc(cells * sizeof(double));
  double* rhs = malloc(cells * sizeof(double));
  double* ns_in = malloc((size_t)ns_len * sizeof(double));
  double* ns_out = malloc((size_t)ns_len * sizeof(double));
  double* we_in = malloc((size_t)we_len * sizeof(double));
  double* we_out = malloc((size_t)we_len * sizeof(double));
  double* face_in[4];
  double* face_out[4];
  for (int d = 0; d < 4; ++d) {
    face_in[d] = calloc((size_t)face_len[d], sizeof(double));
    face_out[d] = calloc((size_t)face_len[d], sizeof(double));
  }
#define AT(a, b, c, m) ((((size_t)(c) * (size_t)nx + (size_t)(a)) * (size_t)ny + (size_t)(b)) * kVars + (size_t)(m))
  for (size_t c = 0; c < cells; ++c) {
    u[c] = 0.0;
    rhs[c] = 1.0 + (double)((c * 11 + (size_t)rank) % 13) / 13.0;
  }
  MPI_Barrier(MPI_COMM_WORLD);

  double norms[kVars] = {0.0, 0.0, 0.0, 0.0, 0.0};
  for (int it = 0; it < iters; ++it) {
    // Lower triangular sweep: the wavefront runs from the north-west corner, plane by plane.
    for (int k = 0; k < nz; ++k) {
      if (peer[kN] >= 0)
        MPI_Recv(ns_in, ns_len, MPI_DOUBLE, peer[kN], kTagLowerNS, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      else
        for (int t = 0; t < ns_len; ++t) ns_in[t] = 0.0;
      if (peer[kW] >= 0)
        MPI_Recv(we_in, we_len, MPI_DOUBLE, peer[kW], kTagLowerWE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      else
        for (int t = 0; t < we_len; ++t) we_in[t] = 0.0;
      if (sleep_mode) {
        nap(plane_units);
      } else {
        for (int a = 0; a < nx; ++a)
          for (int b = 0; b < ny; ++b)
            for (int m = 0; m < kVars; ++m) {
              const double up = a > 0 ? u[AT(a - 1, b, k, m)] : ns_in[b * kVars + m];
              const double left = b > 0 ? u[AT(a, b - 1, k, m)] : we_in[a * kVars + m];
              const double below = k > 0 ? u[AT(a, b, k - 1, m)] : 0.0;
              u[AT(a, b, k, m)] = 0.3 * up + 0.3 * left + 0.2 * below + 0.2 * rhs[AT(a, b, k, m)];
            }
      }
      if (peer[kS] >= 0) {
        for (int b = 0; b < ny; ++b)
          for (int m = 0; m < kVars; ++m) ns_out[b * kVars + m] = u[AT(nx - 1, b, k, m)];
        MPI_Send(ns_out, ns_len, MPI_DOUBLE, peer[kS], kTagLowerNS, MPI_COMM_WORLD);
      }
      if (peer[kE] >= 0) {
        for (int a = 0; a < nx; ++a)
          for (int m = 0; m < kVars; ++m) we_out[a * kVars + m] = u[AT(a, ny - 1, k, m)];
        MPI_Send(we_out, we_len, MPI_DOUBLE, peer[kE], kTagLowerWE, MPI_COMM_WORLD);
      }
    }
    // Upper triangular sweep: back from the south-east corner.
    for (int k = nz - 1; k >= 0; --k) {
      if (peer[kS] >= 0)
        MPI_Recv(ns_in, ns_len, MPI_DOUBLE, peer[kS], kTagUpperNS, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      else
        for (int t = 0; t < ns_len; ++t) ns_in[t] = 0.0;
      if (peer[kE] >= 0)
        MPI_Recv(we_in, we_len, MPI_DOUBLE, peer[kE], kTagUpperWE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      else
        for (int t = 0; t < we_len; ++t) we_in[t] = 0.0;
      if (sleep_mode) {
        nap(plane_units);
      } else {
        for (int a = nx - 1; a >= 0; --a)
          for (int b = ny - 1; b >= 0; --b)
            for (int m = 0; m < kVars; ++m) {
              const double down = a < nx - 1 ? u[AT(a + 1, b, k, m)] : ns_in[b * kVars + m];
              const double right = b < ny - 1 ? u[AT(a, b + 1, k, m)] : we_in[a * kVars + m];
              const double above = k < nz - 1 ? u[AT(a, b, k + 1, m)] : 0.0;
              u[AT(a, b, k, m)] = 0.4 * u[AT(a, b, k, m)] + 0.2 * down + 0.2 * right + 0.2 * above;
            }
      }
      if (peer[kN] >= 0) {
        for (int b = 0; b < ny; ++b)
          for (int m = 0; m < kVars; ++m) ns_out[b * kVars + m] = u[AT(0, b, k, m)];
        MPI_Send(ns_out, ns_len, MPI_DOUBLE, peer[kN], kTagUpperNS, MPI_COMM_WORLD);
      }
      if (peer[kW] >= 0) {
        for (int a = 0; a < nx; ++a)
          for (int m = 0; m < kVars; ++m) we_out[a * kVars + m] = u[AT(a, 0, k, m)];
        MPI_Send(we_out, we_len, MPI_DOUBLE, peer[kW], kTagUpperWE, MPI_COMM_WORLD);
      }
    }
    // Face exchange with every existing neighbour: the boundary layers of all planes.
    for (int k = 0; k < nz; ++k)
      for (int m = 0; m < kVars; ++m) {
        for (int b = 0; b < ny; ++b) {
          face_out[kN][(k * ny + b) * kVars + m] = u[AT(0, b, k, m)];
          face_out[kS][(k * ny + b) * kVars + m] = u[AT(nx - 1, b, k, m)];
        }
        for (int a = 0; a < nx; ++a) {
          face_out[kW][(k * nx + a) * kVars + m] = u[AT(a, 0, k, m)];
          face_out[kE][(k * nx + a) * kVars + m] = u[AT(a, ny - 1, k, m)];
        }
      }
    static const int kOpposite[4] = {kS, kN, kE, kW};
    MPI_Request req[8];
    int nreq = 0;
    for (int d = 0; d < 4; ++d)  // a face sent south arrives from the north: tag of the sending direction
      if (peer[d] >= 0)
        MPI_Irecv(face_in[d], face_len[d], MPI_DOUBLE, peer[d], kTagFace + kOpposite[d], MPI_COMM_WORLD, &req[nreq++]);
    for (int d = 0; d < 4; ++d)
      if (peer[d] >= 0)
        MPI_Isend(face_out[d], face_len[d], MPI_DOUBLE, peer[d], kTagFace + d, MPI_COMM_WORLD, &req[nreq++]);
    MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
    // The new right-hand side, with the neighbours' faces at the block boundary.
    double local[kVars] = {0.0, 0.0, 0.0, 0.0, 0.0};
    if (sleep_mode) {
      nap(plane_units * nz);
    } else {
      for (int k = 0; k < nz; ++k)
        for (int a = 0; a < nx; ++a)
          for (int b = 0; b < ny; ++b)
            for (int m = 0; m < kVars; ++m) {
              const double n_side = a > 0 ? u[AT(a - 1, b, k, m)] : face_in[kN][(k * ny + b) * kVars + m];
              const double w_side = b > 0 ? u[AT(a, b - 1, k, m)] : face_in[kW][(k * nx + a) * kVars + m];
              const double res = 0.5 * (n_side + w_side) - u[AT(a, b, k, m)];
              rhs[AT(a, b, k, m)] = 0.9 * rhs[AT(a, b, k, m)] + 0.1 * res;
              local[m] += res * res;
            }
    }
    if (it % interval == interval - 1) MPI_Allreduce(local, norms, kVars, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }

  double errors[kVars] = {0.0, 0.0, 0.0, 0.0, 0.0}, total[kVars];
  for (size_t c = 0; c < cells; ++c) errors[c % kVars] += u[c] * u[c];
  MPI_Reduce(errors, total, kVars, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("luwave: n %d grid %dx%d NX %d NZ %d iterations %d interval %d sleep %d rsdnm %.6e error %.6e\n", size, rows,
           cols, nx_global, nz, iters, interval, sleep_mode, sqrt(norms[0]), sqrt(total[0]));
#undef AT
  free(u);
  free(rhs);
  free(ns_in);
  free(ns_out);
  free(we_in);
  free(we_out);
  for (int d = 0; d < 4; ++d) {
    free(face_in[d]);
    free(face_out[d]);
  }
  MPI_Finalize();
  return 0;
}
