// SPDX-License-Identifier: BSD-3-Clause
// Test app: every point-to-point flavour along a non-periodic chain, whose ends talk to MPI_PROC_NULL, plus
// explicit MPI_PROC_NULL peers mixed with real ones; buffered (attached buffer), synchronous and ready modes.
//
// Usage: proc_null [iterations=2]. Operations with an MPI_PROC_NULL peer are called but move no message.
#include "expect.h"

enum { kN = 8 };
enum {
  kTagSend = 1,
  kTagNull = 2,
  kTagIRight = 3,
  kTagILeft = 4,
  kTagSendrecv = 6,
  kTagHalf = 7,
  kTagReplace = 8,
  kTagBsend = 9,
  kTagIbsend = 10,
  kTagSsend = 11,
  kTagIssend = 12,
  kTagRsend = 13,
  kTagIrsend = 14,
  kTagBsendInit = 15,
  kTagSsendInit = 16
};

static long long g_checksum;

static void add(const int* v) {
  for (int i = 0; i < kN; ++i) g_checksum += v[i];
}

int main(int argc, char** argv) {
  int rank = 0, size = 1;
  expect_start(&argc, &argv, &rank, &size);
  const int iters = expect_arg_int(argc, argv, 1, 2);
  const MPI_Comm w = MPI_COMM_WORLD;
  const int right = rank + 1 < size ? rank + 1 : MPI_PROC_NULL;
  const int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
  const int null = MPI_PROC_NULL;

  // Room for the three buffered sends of one iteration, several times over.
  int pack = 0;
  MPI_Pack_size(kN, MPI_INT, w, &pack);
  const int bsize = 16 * (pack + MPI_BSEND_OVERHEAD);
  char* bbuf = malloc((size_t)bsize);
  MPI_Buffer_attach(bbuf, bsize);

  int out[kN], in[kN], in2[kN];
  MPI_Status st, sts[6];
  MPI_Request reqs[6];
  for (int it = 0; it < iters; ++it) {
    for (int i = 0; i < kN; ++i) out[i] = rank * 1000 + it * 10 + i;

    // Blocking standard mode: the chain unwinds from the last rank, whose send goes to MPI_PROC_NULL.
    MPI_Send(out, kN, MPI_INT, right, kTagSend, w);
    expect_send(w, right, kTagSend, kN, MPI_INT);
    MPI_Recv(in, kN, MPI_INT, left, kTagSend, w, &st);
    expect_recv_from(w, left, &st, MPI_INT);
    if (left != null) add(in);
    MPI_Send(out, kN, MPI_INT, null, kTagNull, w);
    MPI_Recv(in, kN, MPI_INT, null, kTagNull, w, &st);  // completes at once with source MPI_PROC_NULL
    expect_recv_from(w, null, &st, MPI_INT);

    // Non-blocking, both directions, plus a pair to MPI_PROC_NULL in the same Waitall.
    MPI_Irecv(in, kN, MPI_INT, left, kTagIRight, w, &reqs[0]);
    MPI_Irecv(in2, kN / 2, MPI_INT, right, kTagILeft, w, &reqs[1]);
    MPI_Irecv(in2 + kN / 2, 1, MPI_INT, null, kTagNull, w, &reqs[2]);
    MPI_Isend(out, kN, MPI_INT, right, kTagIRight, w, &reqs[3]);
    MPI_Isend(out, kN / 2, MPI_INT, left, kTagILeft, w, &reqs[4]);
    MPI_Isend(out, 1, MPI_INT, null, kTagNull, w, &reqs[5]);
    MPI_Waitall(6, reqs, sts);
    const int sources[3] = {left, right, null};
    for (int k = 0; k < 3; ++k) expect_recv_from(w, sources[k], &sts[k], MPI_INT);
    expect_send(w, right, kTagIRight, kN, MPI_INT);
    expect_send(w, left, kTagILeft, kN / 2, MPI_INT);
    if (left != null) add(in);

    // Sendrecv: full, then split into a send-only and a receive-only half through MPI_PROC_NULL.
    MPI_Sendrecv(out, kN, MPI_INT, right, kTagSendrecv, in, kN, MPI_INT, left, kTagSendrecv, w, &st);
    expect_send(w, right, kTagSendrecv, kN, MPI_INT);
    expect_recv_from(w, left, &st, MPI_INT);
    MPI_Sendrecv(out, 3, MPI_INT, right, kTagHalf, in, 3, MPI_INT, null, kTagHalf, w, &st);
    expect_send(w, right, kTagHalf, 3, MPI_INT);
    expect_recv_from(w, null, &st, MPI_INT);
    MPI_Sendrecv(out, 3, MPI_INT, null, kTagHalf, in, 3, MPI_INT, left, kTagHalf, w, &st);
    expect_recv_from(w, left, &st, MPI_INT);
    for (int i = 0; i < kN; ++i) in[i] = out[i];
    MPI_Sendrecv_replace(in, kN, MPI_INT, left, kTagReplace, right, kTagReplace, w, &st);
    expect_send(w, left, kTagReplace, kN, MPI_INT);
    expect_recv_from(w, right, &st, MPI_INT);
    MPI_Sendrecv_replace(in, kN, MPI_INT, null, kTagReplace, null, kTagReplace, w, &st);
    expect_recv_from(w, null, &st, MPI_INT);

    // Buffered mode into the attached buffer.
    MPI_Bsend(out, kN, MPI_INT, right, kTagBsend, w);
    MPI_Bsend(out, kN, MPI_INT, null, kTagBsend, w);
    MPI_Ibsend(out, kN, MPI_INT, right, kTagIbsend, w, &reqs[0]);
    expect_send(w, right, kTagBsend, kN, MPI_INT);
    expect_send(w, right, kTagIbsend, kN, MPI_INT);
    MPI_Recv(in, kN, MPI_INT, left, kTagBsend, w, &st);
    expect_recv_from(w, left, &st, MPI_INT);
    MPI_Recv(in2, kN, MPI_INT, left, kTagIbsend, w, &sts[1]);
    expect_recv_from(w, left, &sts[1], MPI_INT);
    MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);

    // Synchronous mode: Ssend along the chain, Issend with a matching Irecv.
    MPI_Ssend(out, kN, MPI_INT, right, kTagSsend, w);
    expect_send(w, right, kTagSsend, kN, MPI_INT);
    MPI_Recv(in, kN, MPI_INT, left, kTagSsend, w, MPI_STATUS_IGNORE);
    expect_recv(w, left, kTagSsend, kN, MPI_INT);
    MPI_Irecv(in, kN, MPI_INT, left, kTagIssend, w, &reqs[0]);
    MPI_Issend(out, kN, MPI_INT, right, kTagIssend, w, &reqs[1]);
    MPI_Ssend(out, kN, MPI_INT, null, kTagIssend, w);
    expect_send(w, right, kTagIssend, kN, MPI_INT);
    MPI_Waitall(2, reqs, sts);
    expect_recv_from(w, left, &sts[0], MPI_INT);

    // Ready mode is legal only once the receive is posted: post, then a barrier, then Rsend/Irsend.
    MPI_Irecv(in, kN, MPI_INT, left, kTagRsend, w, &reqs[0]);
    MPI_Irecv(in2, kN, MPI_INT, left, kTagIrsend, w, &reqs[1]);
    MPI_Barrier(w);
    expect_coll("MPI_Barrier", 1);
    MPI_Rsend(out, kN, MPI_INT, right, kTagRsend, w);
    MPI_Rsend(out, kN, MPI_INT, null, kTagRsend, w);
    MPI_Irsend(out, kN, MPI_INT, right, kTagIrsend, w, &reqs[2]);
    expect_send(w, right, kTagRsend, kN, MPI_INT);
    expect_send(w, right, kTagIrsend, kN, MPI_INT);
    MPI_Waitall(3, reqs, sts);
    expect_recv_from(w, left, &sts[0], MPI_INT);
    expect_recv_from(w, left, &sts[1], MPI_INT);
    if (left != null) add(in2);

    // Persistent buffered and synchronous sends, and persistent operations on MPI_PROC_NULL.
    MPI_Bsend_init(out, kN, MPI_INT, right, kTagBsendInit, w, &reqs[0]);
    MPI_Ssend_init(out, 2, MPI_INT, right, kTagSsendInit, w, &reqs[1]);
    MPI_Recv_init(in, kN, MPI_INT, left, kTagBsendInit, w, &reqs[2]);
    MPI_Recv_init(in2, 2, MPI_INT, left, kTagSsendInit, w, &reqs[3]);
    MPI_Send_init(out, kN, MPI_INT, null, kTagNull, w, &reqs[4]);
    MPI_Recv_init(in2 + 2, 1, MPI_INT, null, kTagNull, w, &reqs[5]);
    MPI_Startall(6, reqs);
    MPI_Waitall(6, reqs, sts);
    expect_send(w, right, kTagBsendInit, kN, MPI_INT);
    expect_send(w, right, kTagSsendInit, 2, MPI_INT);
    expect_recv_from(w, left, &sts[2], MPI_INT);
    expect_recv_from(w, left, &sts[3], MPI_INT);
    expect_recv_from(w, null, &sts[5], MPI_INT);
    for (int k = 0; k < 6; ++k) MPI_Request_free(&reqs[k]);

    // Probing MPI_PROC_NULL returns at once (Iprobe with flag = true), with source MPI_PROC_NULL.
    int flag = 0;
    MPI_Probe(null, MPI_ANY_TAG, w, &st);
    MPI_Iprobe(null, MPI_ANY_TAG, w, &flag, &st);
    expect_calls("MPI_Probe", 1);
    expect_calls("MPI_Iprobe", 1);
    g_checksum += flag;
  }
  void* detached = NULL;
  int dsize = 0;
  MPI_Buffer_detach(&detached, &dsize);  // waits until every buffered message has left
  free(detached);

  printf("proc_null: rank %d iterations %d checksum %lld\n", rank, iters, g_checksum);
  expect_print();
  MPI_Finalize();
  return 0;
}
