// SPDX-License-Identifier: BSD-3-Clause
// Test app: 2-D Jacobi halo exchange on a non-periodic Cartesian grid (rows contiguous, columns as MPI_Type_vector).
//
// Usage: halo2d [iterations=10] [local rows=8] [local columns=8]. Boundary ranks exchange with MPI_PROC_NULL:
// the calls are made but move no message.
#include "expect.h"

enum { kTagDown = 1, kTagUp = 2, kTagRight = 3, kTagLeft = 4 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  expect_coll("MPI_Init", 1);
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int iters = expect_arg_int(argc, argv, 1, 10);
  int nx = expect_arg_int(argc, argv, 2, 8);
  int ny = expect_arg_int(argc, argv, 3, 8);
  if (nx < 1) nx = 1;
  if (ny < 1) ny = 1;

  int dims[2] = {0, 0};
  const int periods[2] = {0, 0};
  MPI_Dims_create(size, 2, dims);
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &cart);
  expect_coll("MPI_Cart_create", 1);
  int rank = 0, coords[2];
  MPI_Comm_rank(cart, &rank);
  MPI_Cart_coords(cart, rank, 2, coords);
  int up, down, left, right;  // MPI_PROC_NULL at the grid boundary
  MPI_Cart_shift(cart, 0, 1, &up, &down);
  MPI_Cart_shift(cart, 1, 1, &left, &right);

  // Local block with a one-cell halo, row-major: (nx + 2) rows of (ny + 2) doubles.
  const int ld = ny + 2;
  const size_t cells = (size_t)(nx + 2) * (size_t)ld;
  double* u = calloc(cells, sizeof(double));
  double* v = calloc(cells, sizeof(double));
  for (int i = 1; i <= nx; ++i)
    for (int j = 1; j <= ny; ++j) u[i * ld + j] = (double)((coords[0] * nx + i) % 5 + (coords[1] * ny + j) % 3);
  MPI_Datatype column;
  MPI_Type_vector(nx, 1, ld, MPI_DOUBLE, &column);
  MPI_Type_commit(&column);

  double residual = 0.0;
  for (int it = 0; it < iters; ++it) {
    MPI_Request reqs[8];
    MPI_Status st[8];
    // Receives first; each tag names the direction the message travels.
    MPI_Irecv(&u[0 * ld + 1], ny, MPI_DOUBLE, up, kTagDown, cart, &reqs[0]);
    MPI_Irecv(&u[(nx + 1) * ld + 1], ny, MPI_DOUBLE, down, kTagUp, cart, &reqs[1]);
    MPI_Irecv(&u[1 * ld + 0], 1, column, left, kTagRight, cart, &reqs[2]);
    MPI_Irecv(&u[1 * ld + ny + 1], 1, column, right, kTagLeft, cart, &reqs[3]);
    MPI_Isend(&u[nx * ld + 1], ny, MPI_DOUBLE, down, kTagDown, cart, &reqs[4]);
    MPI_Isend(&u[1 * ld + 1], ny, MPI_DOUBLE, up, kTagUp, cart, &reqs[5]);
    MPI_Isend(&u[1 * ld + ny], 1, column, right, kTagRight, cart, &reqs[6]);
    MPI_Isend(&u[1 * ld + 1], 1, column, left, kTagLeft, cart, &reqs[7]);
    MPI_Waitall(8, reqs, st);
    expect_calls("MPI_Waitall", 1);
    expect_recv_from(cart, up, &st[0], MPI_DOUBLE);
    expect_recv_from(cart, down, &st[1], MPI_DOUBLE);
    expect_recv_from(cart, left, &st[2], column);
    expect_recv_from(cart, right, &st[3], column);
    expect_send(cart, down, kTagDown, ny, MPI_DOUBLE);
    expect_send(cart, up, kTagUp, ny, MPI_DOUBLE);
    expect_send(cart, right, kTagRight, 1, column);
    expect_send(cart, left, kTagLeft, 1, column);

    // Jacobi sweep; halo cells of boundary ranks stay 0 (Dirichlet boundary).
    double local = 0.0;
    for (int i = 1; i <= nx; ++i)
      for (int j = 1; j <= ny; ++j) {
        const int c = i * ld + j;
        v[c] = 0.25 * (u[c - ld] + u[c + ld] + u[c - 1] + u[c + 1]);
        local += (v[c] - u[c]) * (v[c] - u[c]);
      }
    for (int i = 1; i <= nx; ++i)
      for (int j = 1; j <= ny; ++j) u[i * ld + j] = v[i * ld + j];
    MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, cart);
    expect_coll("MPI_Allreduce", 1);
  }
  // Rounded so that the line cannot depend on the last bits of a floating-point reduction.
  if (rank == 0) printf("halo2d: grid %dx%d iterations %d residual %.6e\n", dims[0], dims[1], iters, residual);

  MPI_Type_free(&column);
  MPI_Comm_free(&cart);
  expect_coll("MPI_Comm_free", 1);
  free(u);
  free(v);
  expect_print();
  MPI_Finalize();
  return 0;
}
