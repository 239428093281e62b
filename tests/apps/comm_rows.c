// SPDX-License-Identifier: BSD-3-Clause
// Test app: MPI_Comm_split into rows and columns, then every blocking collective (with MPI_IN_PLACE variants),
// four non-blocking ones and point-to-point on the sub-communicators, whose peers are printed as world ranks.
//
// Usage: comm_rows [iterations=2].
#include "expect.h"

enum { kMax = 64 };  // room for per-peer vectors of up to 8 elements from up to 8 ranks

static long long g_checksum;

static void add(const int* v, int n) {
  for (int i = 0; i < n; ++i) g_checksum += (long long)(i + 1) * v[i];
}

// Counts and displacements where rank i of the communicator contributes i + 1 elements.
static void ramp(int n, int* counts, int* displs) {
  for (int i = 0, d = 0; i < n; d += i + 1, ++i) {
    counts[i] = i + 1;
    displs[i] = d;
  }
}

// Every blocking collective once (plus MPI_IN_PLACE variants), then the non-blocking ones.
static void collectives(MPI_Comm c, int it) {
  int n = 0, r = 0;
  MPI_Comm_size(c, &n);
  MPI_Comm_rank(c, &r);
  int a[kMax], b[kMax], counts[8], displs[8], rcounts[8], rdispls[8];
  for (int i = 0; i < kMax; ++i) a[i] = 10 * r + i + it;
  const int root = it % n;
  ramp(n, counts, displs);
  const int total = displs[n - 1] + counts[n - 1];

  MPI_Bcast(a, 4, MPI_INT, root, c);
  add(a, 4);
  MPI_Reduce(a, b, 3, MPI_INT, MPI_SUM, root, c);
  if (r == root) add(b, 3);
  // The root of an in-place reduction contributes, and receives, in its receive buffer.
  if (r == root)
    MPI_Reduce(MPI_IN_PLACE, a, 3, MPI_INT, MPI_MAX, root, c);
  else
    MPI_Reduce(a, NULL, 3, MPI_INT, MPI_MAX, root, c);
  if (r == root) add(a, 3);
  MPI_Allreduce(a, b, 2, MPI_INT, MPI_SUM, c);
  add(b, 2);
  MPI_Allreduce(MPI_IN_PLACE, a, 2, MPI_INT, MPI_MIN, c);
  add(a, 2);
  expect_coll("MPI_Bcast", 1);
  expect_coll("MPI_Reduce", 2);
  expect_coll("MPI_Allreduce", 2);

  MPI_Gather(a, 2, MPI_INT, b, 2, MPI_INT, root, c);
  if (r == root) add(b, 2 * n);
  if (r == root)
    MPI_Gather(MPI_IN_PLACE, 2, MPI_INT, b, 2, MPI_INT, root, c);
  else
    MPI_Gather(a, 2, MPI_INT, NULL, 0, MPI_INT, root, c);
  if (r == root) add(b, 2 * n);
  MPI_Gatherv(a, r + 1, MPI_INT, b, counts, displs, MPI_INT, root, c);
  if (r == root) add(b, total);
  MPI_Scatter(b, 2, MPI_INT, a, 2, MPI_INT, root, c);
  add(a, 2);
  // In-place scatter: the root keeps its own block where it is in the send buffer.
  if (r == root)
    MPI_Scatter(b, 2, MPI_INT, MPI_IN_PLACE, 2, MPI_INT, root, c);
  else
    MPI_Scatter(NULL, 0, MPI_INT, a, 2, MPI_INT, root, c);
  add(a, 2);
  MPI_Scatterv(b, counts, displs, MPI_INT, a, r + 1, MPI_INT, root, c);
  add(a, r + 1);
  expect_coll("MPI_Gather", 2);
  expect_coll("MPI_Gatherv", 1);
  expect_coll("MPI_Scatter", 2);
  expect_coll("MPI_Scatterv", 1);

  MPI_Allgather(a, 2, MPI_INT, b, 2, MPI_INT, c);
  add(b, 2 * n);
  for (int i = 0; i < 2; ++i) b[2 * r + i] = r - i;
  MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, 2, MPI_INT, c);
  add(b, 2 * n);
  MPI_Allgatherv(a, r + 1, MPI_INT, b, counts, displs, MPI_INT, c);
  add(b, total);
  for (int i = 0; i < 2 * n; ++i) a[i] = 100 * r + i;
  MPI_Alltoall(a, 2, MPI_INT, b, 2, MPI_INT, c);
  add(b, 2 * n);
  MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, 2, MPI_INT, c);
  add(a, 2 * n);
  // Alltoallv: rank r sends j + 1 elements to rank j, so it receives r + 1 from everyone.
  for (int j = 0; j < n; ++j) {
    rcounts[j] = r + 1;
    rdispls[j] = j * (r + 1);
  }
  MPI_Alltoallv(a, counts, displs, MPI_INT, b, rcounts, rdispls, MPI_INT, c);
  add(b, n * (r + 1));
  expect_coll("MPI_Allgather", 2);
  expect_coll("MPI_Allgatherv", 1);
  expect_coll("MPI_Alltoall", 2);
  expect_coll("MPI_Alltoallv", 1);

  MPI_Reduce_scatter(a, b, counts, MPI_INT, MPI_SUM, c);
  add(b, r + 1);
  MPI_Reduce_scatter_block(a, b, 2, MPI_INT, MPI_SUM, c);
  add(b, 2);
  MPI_Reduce_scatter_block(MPI_IN_PLACE, a, 2, MPI_INT, MPI_MAX, c);
  add(a, 2);
  MPI_Scan(a, b, 3, MPI_INT, MPI_SUM, c);
  add(b, 3);
  MPI_Scan(MPI_IN_PLACE, a, 3, MPI_INT, MPI_SUM, c);
  add(a, 3);
  // The result of an exclusive scan is undefined on rank 0, so it stays out of the checksum there.
  MPI_Exscan(a, b, 3, MPI_INT, MPI_SUM, c);
  if (r > 0) add(b, 3);
  MPI_Exscan(MPI_IN_PLACE, a, 3, MPI_INT, MPI_SUM, c);
  if (r > 0) add(a, 3);
  MPI_Barrier(c);
  expect_coll("MPI_Reduce_scatter", 1);
  expect_coll("MPI_Reduce_scatter_block", 2);
  expect_coll("MPI_Scan", 2);
  expect_coll("MPI_Exscan", 2);
  expect_coll("MPI_Barrier", 1);

  MPI_Request reqs[2];
  int x[4] = {r, r + 1, r + 2, r + 3}, y[4];
  MPI_Ibcast(x, 4, MPI_INT, root, c, &reqs[0]);
  MPI_Iallreduce(a, y, 4, MPI_INT, MPI_SUM, c, &reqs[1]);
  MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
  add(x, 4);
  add(y, 4);
  for (int i = 0; i < n; ++i) a[i] = r * n + i;
  MPI_Ialltoall(a, 1, MPI_INT, b, 1, MPI_INT, c, &reqs[0]);
  MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
  add(b, n);
  MPI_Ibarrier(c, &reqs[0]);
  MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
  expect_coll("MPI_Ibcast", 1);
  expect_coll("MPI_Iallreduce", 1);
  expect_coll("MPI_Ialltoall", 1);
  expect_coll("MPI_Ibarrier", 1);
}

// Point-to-point around a ring inside communicator c: a Sendrecv, then Isend/Irecv + Waitall.
static void ring_on(MPI_Comm c, int tag) {
  int n = 0, r = 0;
  MPI_Comm_size(c, &n);
  MPI_Comm_rank(c, &r);
  const int right = (r + 1) % n, left = (r - 1 + n) % n;
  int out[3] = {r, tag, n}, in[3];
  MPI_Status st;
  MPI_Sendrecv(out, 3, MPI_INT, right, tag, in, 3, MPI_INT, left, tag, c, &st);
  expect_send(c, right, tag, 3, MPI_INT);
  expect_recv_status(c, &st, MPI_INT);
  add(in, 3);
  MPI_Request reqs[2];
  MPI_Status sts[2];
  MPI_Irecv(in, 2, MPI_INT, right, tag + 1, c, &reqs[0]);
  MPI_Isend(out, 2, MPI_INT, left, tag + 1, c, &reqs[1]);
  MPI_Waitall(2, reqs, sts);
  expect_send(c, left, tag + 1, 2, MPI_INT);
  expect_recv_status(c, &sts[0], MPI_INT);
  add(in, 2);
}

int main(int argc, char** argv) {
  int rank = 0, size = 1;
  expect_start(&argc, &argv, &rank, &size);
  const int iters = expect_arg_int(argc, argv, 1, 2);
  if (size > 64) {
    if (rank == 0) fprintf(stderr, "comm_rows: at most 64 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }

  int dims[2] = {0, 0};
  MPI_Dims_create(size, 2, dims);
  const int row = rank / dims[1], col = rank % dims[1];
  MPI_Comm rows, cols, rows_dup;
  MPI_Comm_split(MPI_COMM_WORLD, row, col, &rows);
  MPI_Comm_split(MPI_COMM_WORLD, col, row, &cols);
  MPI_Comm_dup(rows, &rows_dup);
  expect_coll("MPI_Comm_split", 2);
  expect_coll("MPI_Comm_dup", 1);

  for (int it = 0; it < iters; ++it) {
    collectives(rows, it);
    collectives(cols, it);
    ring_on(rows, 20);
    ring_on(rows_dup, 30);
    ring_on(cols, 40);
  }
  printf("comm_rows: rank %d grid %dx%d checksum %lld\n", rank, dims[0], dims[1], g_checksum);

  MPI_Comm_free(&rows_dup);
  MPI_Comm_free(&cols);
  MPI_Comm_free(&rows);
  expect_coll("MPI_Comm_free", 3);
  expect_print();
  MPI_Finalize();
  return 0;
}
