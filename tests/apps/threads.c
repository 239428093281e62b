// SPDX-License-Identifier: BSD-3-Clause
// Test app: MPI_THREAD_MULTIPLE with several pthreads per rank; thread t talks only to thread t of the neighbour
// ranks, on its own duplicated communicator, so message matching is unambiguous.
//
// Usage: threads [iterations=5] [threads=3]. Without MPI_THREAD_MULTIPLE the thread bodies run one after the
// other on the main thread: the same MPI calls, the same P3S-EXPECT lines.
#include <pthread.h>

#include "expect.h"

enum { kMaxThreads = 8 };

typedef struct {
  int index;
  int iters;
  MPI_Comm comm;
  long long checksum;
} Worker;

static pthread_mutex_t g_expect_lock = PTHREAD_MUTEX_INITIALIZER;

static void* body(void* arg) {
  Worker* w = (Worker*)arg;
  int rank = 0, size = 1;
  MPI_Comm_rank(w->comm, &rank);
  MPI_Comm_size(w->comm, &size);
  const int right = (rank + 1) % size, left = (rank - 1 + size) % size;
  const int n = 4 * (w->index + 1);  // a different size per thread
  const int tag = 100 + w->index;
  int out[4 * kMaxThreads], in[4 * kMaxThreads], back[2];
  for (int it = 0; it < w->iters; ++it) {
    for (int i = 0; i < n; ++i) out[i] = rank * 100 + w->index * 10 + it + i;
    MPI_Request reqs[2];
    MPI_Status sts[2], st;
    MPI_Irecv(in, n, MPI_INT, left, tag, w->comm, &reqs[0]);
    MPI_Isend(out, n, MPI_INT, right, tag, w->comm, &reqs[1]);
    MPI_Waitall(2, reqs, sts);
    // Reply leftwards with a blocking Sendrecv of a fixed size.
    MPI_Sendrecv(out, 2, MPI_INT, left, tag + 50, back, 2, MPI_INT, right, tag + 50, w->comm, &st);
    long long local = 0, global = 0;
    for (int i = 0; i < n; ++i) local += in[i];
    local += back[0] + back[1];
    MPI_Allreduce(&local, &global, 1, MPI_LONG_LONG, MPI_SUM, w->comm);
    w->checksum += global;

    // The tallies are shared by all threads of the rank.
    pthread_mutex_lock(&g_expect_lock);
    expect_recv_status(w->comm, &sts[0], MPI_INT);
    expect_send(w->comm, right, tag, n, MPI_INT);
    expect_send(w->comm, left, tag + 50, 2, MPI_INT);
    expect_recv_status(w->comm, &st, MPI_INT);
    expect_coll("MPI_Allreduce", 1);
    expect_calls("MPI_Waitall", 1);
    pthread_mutex_unlock(&g_expect_lock);
  }
  return NULL;
}

int main(int argc, char** argv) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  expect_coll("MPI_Init_thread", 1);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int iters = expect_arg_int(argc, argv, 1, 5);
  int nthreads = expect_arg_int(argc, argv, 2, 3);
  if (nthreads < 1) nthreads = 1;
  if (nthreads > kMaxThreads) nthreads = kMaxThreads;

  Worker workers[kMaxThreads];
  for (int t = 0; t < nthreads; ++t) {
    workers[t] = (Worker){.index = t, .iters = iters, .comm = MPI_COMM_NULL, .checksum = 0};
    MPI_Comm_dup(MPI_COMM_WORLD, &workers[t].comm);
  }
  expect_coll("MPI_Comm_dup", nthreads);

  int threaded = provided == MPI_THREAD_MULTIPLE;
  if (threaded) {
    pthread_t ids[kMaxThreads];
    int started = 0;
    for (; started < nthreads; ++started)
      if (pthread_create(&ids[started], NULL, body, &workers[started]) != 0) break;
    for (int t = 0; t < started; ++t) pthread_join(ids[t], NULL);
    // Should a thread fail to start, its body runs here instead, so every rank still makes every call.
    for (int t = started; t < nthreads; ++t) body(&workers[t]);
  } else {
    for (int t = 0; t < nthreads; ++t) body(&workers[t]);
  }

  long long checksum = 0;
  for (int t = 0; t < nthreads; ++t) {
    checksum += workers[t].checksum;
    MPI_Comm_free(&workers[t].comm);
  }
  expect_coll("MPI_Comm_free", nthreads);
  if (rank == 0)
    printf("threads: %d threads, %s, checksum %lld\n", nthreads, threaded ? "MPI_THREAD_MULTIPLE" : "serialised",
           checksum);
  expect_print();
  MPI_Finalize();
  return 0;
}
