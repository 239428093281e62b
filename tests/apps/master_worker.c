// SPDX-License-Identifier: BSD-3-Clause
// Test app: rank 0 hands out variable-size tasks, workers reply, the master receives from MPI_ANY_SOURCE/MPI_ANY_TAG.
//
// Usage: master_worker [tasks=24]. Task t always goes to worker 1 + t % (size - 1), so although results arrive
// in any order, what each worker does (and so every P3S-EXPECT line) is fixed. At 1 rank the master works alone.
#include "expect.h"

enum { kTagTask = 1, kTagStop = 2, kTagResultBase = 10, kTagDone = 20 };
enum { kMaxLen = 8 };

// Length of the task message and of its result message: variable, so receivers must probe for the size.
static int task_len(int t) { return 1 + t % 4; }
static int result_len(int t) { return 1 + (t * 3) % kMaxLen; }
// Result tags vary so that the master has to learn the tag from the status.
static int result_tag(int t) { return kTagResultBase + t % 3; }

// The work of one task: fills its result from the task message (buf[0] is the task id).
static void do_task(const int* task, int* result) {
  const int t = task[0];
  for (int i = 0; i < result_len(t); ++i) result[i] = t * 100 + i + task[task_len(t) - 1];
}

static long long sum(const int* v, int n) {
  long long s = 0;
  for (int i = 0; i < n; ++i) s += v[i];
  return s;
}

static void make_task(int t, int* task) {
  for (int i = 0; i < task_len(t); ++i) task[i] = i == 0 ? t : t + i;
}

static long long master(int ntasks, int size) {
  int task[kMaxLen], result[kMaxLen];
  long long checksum = 0;
  const int nworkers = size - 1;
  if (nworkers == 0) {
    for (int t = 0; t < ntasks; ++t) {
      make_task(t, task);
      do_task(task, result);
      checksum += sum(result, result_len(t));
    }
    return checksum;
  }
  // next[w]: the next task of worker w (tasks w-1, w-1+nworkers, ...); start one task, or STOP, per worker.
  int* next = malloc(sizeof(int) * (size_t)size);
  for (int w = 1; w <= nworkers; ++w) {
    next[w] = w - 1;
    if (next[w] < ntasks) {
      make_task(next[w], task);
      MPI_Send(task, task_len(next[w]), MPI_INT, w, kTagTask, MPI_COMM_WORLD);
      expect_send(MPI_COMM_WORLD, w, kTagTask, task_len(next[w]), MPI_INT);
    } else {
      MPI_Send(NULL, 0, MPI_INT, w, kTagStop, MPI_COMM_WORLD);
      expect_send(MPI_COMM_WORLD, w, kTagStop, 0, MPI_INT);
    }
  }
  for (int done = 0; done < ntasks; ++done) {
    MPI_Status st;
    int len = 0;
    // Any worker, any result tag: the status says which; the size comes from the probe.
    MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    expect_calls("MPI_Probe", 1);
    MPI_Get_count(&st, MPI_INT, &len);
    const int w = st.MPI_SOURCE;
    // The source and tag are known from the probe, so this receive may ignore its status.
    MPI_Recv(result, len, MPI_INT, w, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    expect_recv(MPI_COMM_WORLD, w, st.MPI_TAG, len, MPI_INT);
    checksum += sum(result, len);
    next[w] += nworkers;
    if (next[w] < ntasks) {
      make_task(next[w], task);
      MPI_Send(task, task_len(next[w]), MPI_INT, w, kTagTask, MPI_COMM_WORLD);
      expect_send(MPI_COMM_WORLD, w, kTagTask, task_len(next[w]), MPI_INT);
    } else {
      MPI_Send(NULL, 0, MPI_INT, w, kTagStop, MPI_COMM_WORLD);
      expect_send(MPI_COMM_WORLD, w, kTagStop, 0, MPI_INT);
    }
  }
  free(next);
  return checksum;
}

static int worker(void) {
  int task[kMaxLen], result[kMaxLen];
  int ntasks = 0;
  for (;;) {
    // Poll with MPI_Iprobe (its call count depends on timing, so it is not printed), then size the receive.
    int flag = 0;
    MPI_Status st;
    while (!flag) MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    int len = 0;
    MPI_Get_count(&st, MPI_INT, &len);
    MPI_Recv(task, len, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    expect_recv_status(MPI_COMM_WORLD, &st, MPI_INT);
    if (st.MPI_TAG == kTagStop) break;
    const int t = task[0];
    do_task(task, result);
    MPI_Send(result, result_len(t), MPI_INT, 0, result_tag(t), MPI_COMM_WORLD);
    expect_send(MPI_COMM_WORLD, 0, result_tag(t), result_len(t), MPI_INT);
    ++ntasks;
  }
  return ntasks;
}

int main(int argc, char** argv) {
  int rank = 0, size = 1;
  expect_start(&argc, &argv, &rank, &size);
  const int ntasks = expect_arg_int(argc, argv, 1, 24);

  long long checksum = 0;
  int mine = 0;
  if (rank == 0)
    checksum = master(ntasks, size);
  else
    mine = worker();

  // After the barrier the master's ANY_SOURCE loop is over, so the DONE reports cannot be caught by it.
  MPI_Barrier(MPI_COMM_WORLD);
  expect_coll("MPI_Barrier", 1);
  if (rank == 0) {
    long long reported = 0;
    // The DONE reports arrive in any order: they are posted as wildcard non-blocking receives and completed
    // with MPI_Waitany, so their sources and tags are known only from the statuses.
    const int workers = size - 1;
    int* done = calloc((size_t)(workers > 0 ? workers : 1), sizeof(int));
    MPI_Request* reqs = malloc((size_t)(workers > 0 ? workers : 1) * sizeof(MPI_Request));
    for (int w = 0; w < workers; ++w) {
      MPI_Irecv(&done[w], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &reqs[w]);
    }
    for (int w = 0; w < workers; ++w) {
      int index = MPI_UNDEFINED;
      MPI_Status st;
      MPI_Waitany(workers, reqs, &index, &st);
      expect_recv_status(MPI_COMM_WORLD, &st, MPI_INT);
      reported += done[index];
    }
    if (workers > 0) expect_calls("MPI_Waitany", workers);
    free(reqs);
    free(done);
    printf("master_worker: tasks %d reported %lld checksum %lld\n", ntasks, size > 1 ? reported : ntasks, checksum);
  } else {
    MPI_Send(&mine, 1, MPI_INT, 0, kTagDone, MPI_COMM_WORLD);
    expect_send(MPI_COMM_WORLD, 0, kTagDone, 1, MPI_INT);
  }
  long long all = 0;
  MPI_Reduce(&checksum, &all, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  expect_coll("MPI_Reduce", 1);
  if (rank == 0) printf("master_worker: reduced checksum %lld\n", all);
  expect_print();
  MPI_Finalize();
  return 0;
}
