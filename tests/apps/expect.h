// SPDX-License-Identifier: BSD-3-Clause
// Header-only bookkeeping for the C test apps: tallies what an app did and prints the P3S-EXPECT lines.
//
// Protocol (the MPI tests parse it), one line per distinct key, printed just before MPI_Finalize:
//   P3S-EXPECT <rank> send <peer world rank> <tag> <bytes> <count>
//   P3S-EXPECT <rank> recv <peer world rank> <tag> <bytes> <count>
//   P3S-EXPECT <rank> coll <MPI function name> <count>
//   P3S-EXPECT <rank> calls <MPI function name> <count>
// Peers are always MPI_COMM_WORLD ranks; messages to or from MPI_PROC_NULL are not counted.
// Deliberately independent of p3s: the apps stand for unmodified user binaries.
#pragma once

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EXPECT_SEND = 0, EXPECT_RECV = 1, EXPECT_COLL = 2, EXPECT_CALLS = 3 };
enum { EXPECT_MAX_KEYS = 1024, EXPECT_NAME_LEN = 48 };

typedef struct {
  int kind;
  int peer;
  int tag;
  long long bytes;
  char name[EXPECT_NAME_LEN];
  long long count;
} ExpectKey;

static ExpectKey expect_keys[EXPECT_MAX_KEYS];
static int expect_nkeys;

/// Adds `n` to the tally of one key, creating it on first use.
static inline void expect_add(int kind, int peer, int tag, long long bytes, const char* name, long long n) {
  for (int i = 0; i < expect_nkeys; ++i) {
    ExpectKey* k = &expect_keys[i];
    if (k->kind == kind && k->peer == peer && k->tag == tag && k->bytes == bytes && strcmp(k->name, name) == 0) {
      k->count += n;
      return;
    }
  }
  if (expect_nkeys == EXPECT_MAX_KEYS) {
    // A test app with this many distinct keys is a bug in the app, not a run-time condition.
    fprintf(stderr, "expect.h: more than %d distinct keys\n", EXPECT_MAX_KEYS);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  ExpectKey* k = &expect_keys[expect_nkeys++];
  k->kind = kind;
  k->peer = peer;
  k->tag = tag;
  k->bytes = bytes;
  snprintf(k->name, sizeof k->name, "%s", name);
  k->count = n;
}

/// World rank of rank `r` of communicator `comm` (MPI_PROC_NULL stays MPI_PROC_NULL).
static inline int expect_world_rank(MPI_Comm comm, int r) {
  if (r == MPI_PROC_NULL || comm == MPI_COMM_WORLD) return r;
  MPI_Group g, wg;
  int w = MPI_UNDEFINED;
  MPI_Comm_group(comm, &g);
  MPI_Comm_group(MPI_COMM_WORLD, &wg);
  MPI_Group_translate_ranks(g, 1, &r, wg, &w);
  MPI_Group_free(&g);
  MPI_Group_free(&wg);
  return w;
}

/// Data size in bytes of `count` elements of `dtype` (the type size, not the extent).
static inline long long expect_bytes(int count, MPI_Datatype dtype) {
  int size = 0;
  MPI_Type_size(dtype, &size);
  return (long long)count * size;
}

/// One message sent to rank `peer` of `comm`; nothing for MPI_PROC_NULL.
static inline void expect_send(MPI_Comm comm, int peer, int tag, int count, MPI_Datatype dtype) {
  if (peer == MPI_PROC_NULL) return;
  expect_add(EXPECT_SEND, expect_world_rank(comm, peer), tag, expect_bytes(count, dtype), "", 1);
}

/// One message received from rank `peer` of `comm`, known by construction (MPI_STATUS_IGNORE was used).
static inline void expect_recv(MPI_Comm comm, int peer, int tag, int count, MPI_Datatype dtype) {
  if (peer == MPI_PROC_NULL) return;
  expect_add(EXPECT_RECV, expect_world_rank(comm, peer), tag, expect_bytes(count, dtype), "", 1);
}

/// One completed receive on `comm`, described by its status: actual source, tag and size.
/// A receive from MPI_PROC_NULL completes with source MPI_PROC_NULL and is not a message.
static inline void expect_recv_status(MPI_Comm comm, const MPI_Status* st, MPI_Datatype dtype) {
  if (st->MPI_SOURCE == MPI_PROC_NULL) return;
  int count = 0;
  MPI_Get_count(st, dtype, &count);
  expect_add(EXPECT_RECV, expect_world_rank(comm, st->MPI_SOURCE), st->MPI_TAG, expect_bytes(count, dtype), "", 1);
}

/// As expect_recv_status() for a receive that named `source`: none when that is MPI_PROC_NULL, whatever the
/// status says (MPICH 4.0 completes such a receive in MPI_Waitall with source 0 and tag 0, in MPI_Sendrecv with
/// source MPI_ANY_SOURCE, where the standard says MPI_PROC_NULL and MPI_ANY_TAG).
static inline void expect_recv_from(MPI_Comm comm, int source, const MPI_Status* st, MPI_Datatype dtype) {
  if (source != MPI_PROC_NULL) expect_recv_status(comm, st, dtype);
}

/// `n` completed collective operations (including communicator creation/free and MPI_Init) started by `name`.
static inline void expect_coll(const char* name, long long n) { expect_add(EXPECT_COLL, 0, 0, 0, name, n); }

/// `n` calls of `name`, for functions whose call count is deterministic.
static inline void expect_calls(const char* name, long long n) { expect_add(EXPECT_CALLS, 0, 0, 0, name, n); }

/// MPI_Init plus the bookkeeping every app starts with: MPI_Init counts as one collective (CREATE_HANDLE).
static inline void expect_start(int* argc, char*** argv, int* rank, int* size) {
  MPI_Init(argc, argv);
  expect_coll("MPI_Init", 1);
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
}

static inline int expect_cmp(const void* a, const void* b) {
  const ExpectKey* x = (const ExpectKey*)a;
  const ExpectKey* y = (const ExpectKey*)b;
  if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
  if (x->peer != y->peer) return x->peer < y->peer ? -1 : 1;
  if (x->tag != y->tag) return x->tag < y->tag ? -1 : 1;
  if (x->bytes != y->bytes) return x->bytes < y->bytes ? -1 : 1;
  return strcmp(x->name, y->name);
}

/// Prints every tallied key of this rank in a fixed order; call once, just before MPI_Finalize.
static inline void expect_print(void) {
  static const char* const kinds[] = {"send", "recv", "coll", "calls"};
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  qsort(expect_keys, (size_t)expect_nkeys, sizeof expect_keys[0], expect_cmp);
  for (int i = 0; i < expect_nkeys; ++i) {
    const ExpectKey* k = &expect_keys[i];
    if (k->count == 0) continue;
    if (k->kind == EXPECT_SEND || k->kind == EXPECT_RECV)
      printf("P3S-EXPECT %d %s %d %d %lld %lld\n", rank, kinds[k->kind], k->peer, k->tag, k->bytes, k->count);
    else
      printf("P3S-EXPECT %d %s %s %lld\n", rank, kinds[k->kind], k->name, k->count);
  }
  fflush(stdout);
}

/// Block distribution of `total` items over `parts` (the first total % parts get one more): the size of part `i`.
static inline int block(int total, int parts, int i) { return total / parts + (i < total % parts ? 1 : 0); }

/// Parses argv[i] as a non-negative int, or returns `fallback` when absent; exits the job on garbage.
static inline int expect_arg_int(int argc, char** argv, int i, int fallback) {
  if (i >= argc) return fallback;
  char* end = NULL;
  long v = strtol(argv[i], &end, 10);
  if (*argv[i] == '\0' || *end != '\0' || v < 0 || v > 100000000L) {
    fprintf(stderr, "%s: argument %d must be a non-negative integer, got '%s'\n", argv[0], i, argv[i]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return (int)v;
}
