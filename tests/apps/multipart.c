// SPDX-License-Identifier: BSD-3-Clause
// Scaling app: an ADI solver on a multi-partitioned N x N x N grid, structured like the BT and SP applications of
// the NAS Parallel Benchmarks (face exchange, then pipelined line solves along x, y and z), written from scratch.
//
// Usage: multipart [iterations=5] [N=36] [sleep=0]
//   N >= q; N = 36 divides evenly at q = 1 .. 6 (block distribution otherwise: the first N % q cells along an axis
//     get one more point)
//   sleep 1: every compute burst is replaced by a nanosleep of 20 ns per work unit, so that timings behave as if
//            each rank had a core of its own (for oversubscribed runs); 0: the bursts compute.
// n must be a square q * q (the program aborts otherwise). Process grid q x q, rank r = row * q + col. The grid is
// cut into q x q x q cells; rank (row, col) owns the q cells c = 0 .. q-1 at cell coordinates
// ((row + c) mod q, (col + c) mod q, c): a diagonal multi-partition, in which every slab of cells across any axis
// holds exactly one cell of every rank. The owner of the neighbouring cell is the same rank for all q cells:
//   +x: (row + 1, col)   -x: (row - 1, col)   +y: (row, col + 1)   -y: (row, col - 1)
//   +z: (row - 1, col - 1)   -z: (row + 1, col + 1)   (all mod q; at q = 2, +x = -x, +y = -y and +z = -z).
// Each cell has 5 unknowns per point. Set-up: MPI_Barrier. Per iteration:
//   copy_faces: MPI_Irecv from the 6 neighbour ranks, MPI_Isend to them, MPI_Waitall (12 requests; the grid is
//               periodic here, so every cell sends its face in every direction): the message to the +a / -a
//               neighbour packs the + / - face of all q cells, q * (N/q)^2 * 5 doubles (tag 1 + direction, the
//               receive from a neighbour carries the tag of the opposite direction); then the right-hand-side burst
//               (5 work units per point of every cell)
//   x, y and z sweeps: along axis a the cells are solved in the order of their coordinate a (stage s = 0 .. q-1;
//               the cell at stage s is c = (s - row) mod q for x, (s - col) mod q for y, s for z):
//     forward,  s = 0 .. q-1:  s > 0: MPI_Recv from the predecessor (the -a neighbour), (N/q)^2 * 10 doubles
//                              (tag 10 + a); the elimination burst (5 work units per point of the cell); s > 0:
//                              MPI_Wait for the send of stage s-1; s < q-1: MPI_Isend to the successor (the +a
//                              neighbour), (N/q)^2 * 10 doubles
//     backward, s = q-1 .. 0:  s < q-1: MPI_Recv from the successor, (N/q)^2 * 5 doubles (tag 20 + a); the
//                              substitution burst (5 work units per point); s < q-1: MPI_Wait for the send of stage
//                              s+1; s > 0: MPI_Isend to the predecessor, (N/q)^2 * 5 doubles
//     (Isend, not a blocking MPI_Send: in a multi-partition every rank is busy at every stage, so all ranks send
//     at stage s before any of them receives at stage s+1, and blocking sends above the eager limit would deadlock.
//     The send of one stage is waited for after the next stage's burst, overlapping it.)
//   the update burst (5 work units per point)
// Finish: MPI_Allreduce of 5 doubles (the solution norms).
// Expected laws: loop weight = iterations; copy_faces 6 Irecv + 6 Isend + 1 Waitall with peers at offsets +-q,
// +-1 (mod q within the row), -+(q+1) (both mod q), messages 5 N^2 / q doubles; per sweep and rank q-1 receives, q-1
// sends and q-1 waits forward and the same backward (2 (q-1) messages each way per direction, 6 (q-1) per
// iteration), messages 10 (N/q)^2 and 5 (N/q)^2 doubles; 1 final Allreduce.
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <time.h>

#include "expect.h"

enum { kVars = 5, kFwdVars = 10, kDirs = 6, kTagFace = 1, kTagFwd = 10, kTagBwd = 20 };

/// Sleeps 20 ns per work unit (sleep mode).
static void nap(long long units) {
  const long long ns = units * 20;
  struct timespec ts = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
  while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
  }
}

typedef struct {
  int side[3];  // points along x, y, z
  size_t points;
  double* u;
  double* rhs;
} Cell;

/// Index of unknown m at point (x, y, z) of cell `cl`.
static size_t at(const Cell* cl, const int p[3], int m) {
  return (((size_t)p[2] * (size_t)cl->side[1] + (size_t)p[1]) * (size_t)cl->side[0] + (size_t)p[0]) * kVars + (size_t)m;
}

/// Points of the face of cell `cl` across `axis`.
static int face(const Cell* cl, int axis) { return cl->side[(axis + 1) % 3] * cl->side[(axis + 2) % 3]; }

/// Copies the plane `plane` across `axis` of the unknowns of `cl` (to_buf: cell -> buf), `per` doubles per point
/// (the unknowns, repeated when per > kVars).
static void plane_copy(Cell* cl, int axis, int plane, double* buf, int per, int to_buf) {
  const int b = (axis + 1) % 3, c = (axis + 2) % 3;
  int p[3];
  p[axis] = plane;
  size_t k = 0;
  for (p[c] = 0; p[c] < cl->side[c]; ++p[c])
    for (p[b] = 0; p[b] < cl->side[b]; ++p[b])
      for (int m = 0; m < per; ++m) {
        if (to_buf) {
          buf[k] = cl->u[at(cl, p, m % kVars)] * (m < kVars ? 1.0 : 0.5);
        } else if (m < kVars) {
          const size_t t = at(cl, p, m);
          cl->u[t] = 0.5 * (cl->u[t] + buf[k]);
        }
        ++k;
      }
}

/// One line burst of a sweep along `axis` over cell `cl`: a first-order recurrence along the lines, seeded by the
/// neighbour's face (`in`, `per` doubles per point, NULL at the end of the chain), forward or backward.
static void line_solve(Cell* cl, int axis, int forward, const double* in, int per) {
  const int b = (axis + 1) % 3, c = (axis + 2) % 3, n = cl->side[axis];
  int p[3];
  size_t k = 0;
  for (p[c] = 0; p[c] < cl->side[c]; ++p[c])
    for (p[b] = 0; p[b] < cl->side[b]; ++p[b], k += (size_t)per)
      for (int m = 0; m < kVars; ++m) {
        double prev = in ? in[k + (size_t)m] : 0.0;
        for (int t = 0; t < n; ++t) {
          p[axis] = forward ? t : n - 1 - t;
          const size_t q = at(cl, p, m);
          cl->u[q] = forward ? (cl->rhs[q] + 0.5 * prev) / 1.5 : cl->u[q] - 0.3 * prev;
          prev = cl->u[q];
        }
      }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int iters = expect_arg_int(argc, argv, 1, 5);
  const int n_global = expect_arg_int(argc, argv, 2, 36);
  const int sleep_mode = expect_arg_int(argc, argv, 3, 0);

  int q = 1;
  while ((q + 1) * (q + 1) <= size) ++q;
  if (q * q != size || n_global < q) {
    if (rank == 0) {
      fprintf(stderr, "multipart: the process count must be a square q * q (n=%d) and N >= q (N=%d)\n", size, n_global);
      fflush(stderr);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int row = rank / q, col = rank % q;
  // Neighbour ranks in the directions +x, -x, +y, -y, +z, -z (direction d: axis d / 2, + when d is even).
  const int at_row[kDirs] = {row + 1, row - 1, row, row, row - 1, row + 1};
  const int at_col[kDirs] = {col, col, col + 1, col - 1, col - 1, col + 1};
  int nbr[kDirs];
  for (int d = 0; d < kDirs; ++d) nbr[d] = ((at_row[d] + q) % q) * q + (at_col[d] + q) % q;

  Cell* cells = calloc((size_t)q, sizeof(Cell));
  long long cell_points = 0;
  size_t max_face = 1;
  for (int c = 0; c < q; ++c) {
    Cell* cl = &cells[c];
    cl->side[0] = block(n_global, q, (row + c) % q);
    cl->side[1] = block(n_global, q, (col + c) % q);
    cl->side[2] = block(n_global, q, c);
    cl->points = (size_t)cl->side[0] * (size_t)cl->side[1] * (size_t)cl->side[2];
    cell_points += (long long)cl->points;
    cl->u = malloc(cl->points * kVars * sizeof(double));
    cl->rhs = malloc(cl->points * kVars * sizeof(double));
    for (size_t t = 0; t < cl->points * kVars; ++t) {
      cl->u[t] = 0.0;
      cl->rhs[t] = 1.0 + (double)((t * 7 + (size_t)c * 5 + (size_t)rank * 3) % 19) / 19.0;
    }
    for (int a = 0; a < 3; ++a)
      if ((size_t)face(cl, a) > max_face) max_face = (size_t)face(cl, a);
  }
  // copy_faces buffers: the faces of all cells in one direction, packed in cell order.
  double* face_out[kDirs];
  double* face_in[kDirs];
  int face_len[kDirs];
  for (int d = 0; d < kDirs; ++d) {
    face_len[d] = 0;
    for (int c = 0; c < q; ++c) face_len[d] += face(&cells[c], d / 2) * kVars;
    face_out[d] = calloc((size_t)face_len[d], sizeof(double));
    face_in[d] = calloc((size_t)face_len[d], sizeof(double));
  }
  double* line_in = calloc(max_face * kFwdVars, sizeof(double));
  double* line_out = calloc(max_face * kFwdVars, sizeof(double));
  MPI_Barrier(MPI_COMM_WORLD);

  for (int it = 0; it < iters; ++it) {
    // copy_faces: pack, exchange with the 6 neighbours, then fold the received faces into the boundary planes.
    for (int d = 0; d < kDirs; ++d) {
      size_t off = 0;
      for (int c = 0; c < q; ++c) {
        Cell* cl = &cells[c];
        plane_copy(cl, d / 2, d % 2 == 0 ? cl->side[d / 2] - 1 : 0, face_out[d] + off, kVars, 1);
        off += (size_t)face(cl, d / 2) * kVars;
      }
    }
    MPI_Request req[2 * kDirs];
    for (int d = 0; d < kDirs; ++d)  // a face sent towards +a arrives from the receiver's -a neighbour
      MPI_Irecv(face_in[d], face_len[d], MPI_DOUBLE, nbr[d], kTagFace + (d ^ 1), MPI_COMM_WORLD, &req[d]);
    for (int d = 0; d < kDirs; ++d)
      MPI_Isend(face_out[d], face_len[d], MPI_DOUBLE, nbr[d], kTagFace + d, MPI_COMM_WORLD, &req[kDirs + d]);
    MPI_Waitall(2 * kDirs, req, MPI_STATUSES_IGNORE);
    if (sleep_mode) {
      nap(cell_points * kVars);
    } else {
      // The neighbour packs its cells in its own order; along x and y its cell c touches ours, along z its cell
      // c + 1 (+z) or c - 1 (-z) does, and it has the face size of our cell c.
      for (int d = 0; d < kDirs; ++d) {
        const int shift = d == 4 ? 1 : d == 5 ? q - 1 : 0;
        for (int c = 0; c < q; ++c) {
          const int cn = (c + shift) % q;  // the neighbour's index of the cell touching our cell c
          size_t off = 0;
          for (int t = 0; t < cn; ++t) off += (size_t)face(&cells[(t - shift + q) % q], d / 2) * kVars;
          Cell* cl = &cells[c];
          plane_copy(cl, d / 2, d % 2 == 0 ? cl->side[d / 2] - 1 : 0, face_in[d] + off, kVars, 0);
        }
      }
      for (int c = 0; c < q; ++c)
        for (size_t t = 0; t < cells[c].points * kVars; ++t)
          cells[c].rhs[t] = 0.9 * cells[c].rhs[t] + 0.1 * cells[c].u[t];
    }
    // The three directional sweeps, pipelined through the cells.
    for (int a = 0; a < 3; ++a) {
      const int succ = nbr[2 * a], pred = nbr[2 * a + 1];
      const int offset = a == 0 ? row : a == 1 ? col : 0;
      MPI_Request pending = MPI_REQUEST_NULL;
      for (int s = 0; s < q; ++s) {
        Cell* cl = &cells[(s - offset + q) % q];
        const int len = face(cl, a) * kFwdVars;
        if (s > 0) MPI_Recv(line_in, len, MPI_DOUBLE, pred, kTagFwd + a, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (sleep_mode)
          nap((long long)cl->points * kVars);
        else
          line_solve(cl, a, 1, s > 0 ? line_in : NULL, kFwdVars);
        if (s > 0) MPI_Wait(&pending, MPI_STATUS_IGNORE);
        if (s < q - 1) {
          plane_copy(cl, a, cl->side[a] - 1, line_out, kFwdVars, 1);
          MPI_Isend(line_out, len, MPI_DOUBLE, succ, kTagFwd + a, MPI_COMM_WORLD, &pending);
        }
      }
      for (int s = q - 1; s >= 0; --s) {
        Cell* cl = &cells[(s - offset + q) % q];
        const int len = face(cl, a) * kVars;
        if (s < q - 1) MPI_Recv(line_in, len, MPI_DOUBLE, succ, kTagBwd + a, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (sleep_mode)
          nap((long long)cl->points * kVars);
        else
          line_solve(cl, a, 0, s < q - 1 ? line_in : NULL, kVars);
        if (s < q - 1) MPI_Wait(&pending, MPI_STATUS_IGNORE);
        if (s > 0) {
          plane_copy(cl, a, 0, line_out, kVars, 1);
          MPI_Isend(line_out, len, MPI_DOUBLE, pred, kTagBwd + a, MPI_COMM_WORLD, &pending);
        }
      }
    }
    // The update.
    if (sleep_mode) {
      nap(cell_points * kVars);
    } else {
      for (int c = 0; c < q; ++c)
        for (size_t t = 0; t < cells[c].points * kVars; ++t) cells[c].u[t] = 0.8 * cells[c].u[t] + 0.01;
    }
  }
  double local[kVars] = {0.0, 0.0, 0.0, 0.0, 0.0}, norms[kVars];
  for (int c = 0; c < q; ++c)
    for (size_t t = 0; t < cells[c].points * kVars; ++t) local[t % kVars] += cells[c].u[t] * cells[c].u[t];
  MPI_Allreduce(local, norms, kVars, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("multipart: n %d grid %dx%d N %d iterations %d sleep %d norm %.6e\n", size, q, q, n_global, iters,
           sleep_mode, norms[0]);
  for (int c = 0; c < q; ++c) {
    free(cells[c].u);
    free(cells[c].rhs);
  }
  free(cells);
  for (int d = 0; d < kDirs; ++d) {
    free(face_out[d]);
    free(face_in[d]);
  }
  free(line_in);
  free(line_out);
  MPI_Finalize();
  return 0;
}
