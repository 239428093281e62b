/* SPDX-License-Identifier: BSD-3-Clause
 * Benchmark baseline: writes the events of bench_calls's loop (per iteration and location: Irecv, Isend and
 * Waitall with a CPU-time metric at every enter and leave) straight to an OTF2 archive, the least any converter
 * must spend writing them. Prints events per second. Usage: otf2_direct DIR LOCATIONS ITERATIONS */
#include <otf2/otf2.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static OTF2_FlushType pre_flush(void* user, OTF2_FileType type, OTF2_LocationRef location, void* data, bool final) {
  (void)user, (void)type, (void)location, (void)data, (void) final;
  return OTF2_FLUSH;
}
static OTF2_TimeStamp post_flush(void* user, OTF2_FileType type, OTF2_LocationRef location) {
  (void)user, (void)type, (void)location;
  return 0;
}
static const OTF2_FlushCallbacks kFlush = {pre_flush, post_flush};

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void check(OTF2_ErrorCode rc, const char* what) {
  if (rc != OTF2_SUCCESS) {
    fprintf(stderr, "otf2_direct: %s: %s\n", what, OTF2_Error_GetDescription(rc));
    exit(1);
  }
}

/* Enter or leave with the metric first, as the recorder's archives have it. */
static void region(OTF2_EvtWriter* w, OTF2_TimeStamp t, uint64_t cpu, uint32_t r, int enter) {
  OTF2_Type type = OTF2_TYPE_UINT64;
  OTF2_MetricValue v;
  v.unsigned_int = cpu;
  check(OTF2_EvtWriter_Metric(w, NULL, t, 0, 1, &type, &v), "metric");
  check(enter ? OTF2_EvtWriter_Enter(w, NULL, t, r) : OTF2_EvtWriter_Leave(w, NULL, t, r), "region");
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: otf2_direct DIR LOCATIONS ITERATIONS\n");
    return 2;
  }
  const int locations = atoi(argv[2]);
  const long iters = atol(argv[3]);
  const double t0 = now();
  OTF2_Archive* a = OTF2_Archive_Open(argv[1], "traces", OTF2_FILEMODE_WRITE, OTF2_CHUNK_SIZE_EVENTS_DEFAULT,
                                      OTF2_CHUNK_SIZE_DEFINITIONS_DEFAULT, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  if (a == NULL) return 1;
  check(OTF2_Archive_SetFlushCallbacks(a, &kFlush, NULL), "flush callbacks");
  check(OTF2_Archive_SetSerialCollectiveCallbacks(a), "collective callbacks");
  check(OTF2_Archive_OpenEvtFiles(a), "open event files");
  uint64_t events = 0;
  for (int l = 0; l < locations; ++l) {
    OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(a, (OTF2_LocationRef)l);
    OTF2_TimeStamp t = 1000;
    uint64_t cpu = 1000;
    const uint32_t peer = (uint32_t)(l ^ 1);
    for (long i = 0; i < iters; ++i) {
      region(w, t, cpu, 0, 1);
      check(OTF2_EvtWriter_MpiIrecvRequest(w, NULL, t, (uint64_t)(3 * i)), "irecv request");
      region(w, t + 60, cpu + 60, 0, 0);
      region(w, t + 100, cpu + 100, 1, 1);
      check(OTF2_EvtWriter_MpiIsend(w, NULL, t + 100, peer, 0, 0, 0, (uint64_t)(3 * i + 1)), "isend");
      region(w, t + 160, cpu + 160, 1, 0);
      region(w, t + 200, cpu + 200, 2, 1);
      check(OTF2_EvtWriter_MpiIsendComplete(w, NULL, t + 400, (uint64_t)(3 * i + 1)), "isend complete");
      check(OTF2_EvtWriter_MpiIrecv(w, NULL, t + 400, peer, 0, 0, 0, (uint64_t)(3 * i)), "irecv");
      region(w, t + 400, cpu + 400, 2, 0);
      t += 500;
      cpu += 500;
    }
    events += (uint64_t)iters * 16; /* 6 enter/leave, 6 metrics, 4 message events */
    check(OTF2_Archive_CloseEvtWriter(a, w), "close event writer");
  }
  check(OTF2_Archive_CloseEvtFiles(a), "close event files");
  check(OTF2_Archive_OpenDefFiles(a), "open definition files");
  for (int l = 0; l < locations; ++l) {
    check(OTF2_Archive_CloseDefWriter(a, OTF2_Archive_GetDefWriter(a, (OTF2_LocationRef)l)), "local definitions");
  }
  check(OTF2_Archive_CloseDefFiles(a), "close definition files");
  OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(a);
  const char* names[] = {"", "MPI_Irecv", "MPI_Isend", "MPI_Waitall", "node", "rank", "cputime_ns", "ns"};
  for (uint32_t s = 0; s < 8; ++s) check(OTF2_GlobalDefWriter_WriteString(g, s, names[s]), "string");
  for (uint32_t r = 0; r < 3; ++r) {
    check(OTF2_GlobalDefWriter_WriteRegion(g, r, r + 1, r + 1, 0, OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI,
                                           OTF2_REGION_FLAG_NONE, 0, 0, 0),
          "region");
  }
  check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, 4, 4, OTF2_UNDEFINED_SYSTEM_TREE_NODE), "node");
  for (int l = 0; l < locations; ++l) {
    check(OTF2_GlobalDefWriter_WriteLocationGroup(g, (uint32_t)l, 5, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                                  OTF2_UNDEFINED_LOCATION_GROUP),
          "group");
    check(OTF2_GlobalDefWriter_WriteLocation(g, (uint64_t)l, 5, OTF2_LOCATION_TYPE_CPU_THREAD, 12 * (uint64_t)iters,
                                             (uint32_t)l),
          "location");
  }
  check(OTF2_GlobalDefWriter_WriteMetricMember(g, 0, 6, 6, OTF2_METRIC_TYPE_OTHER, OTF2_METRIC_ACCUMULATED_START,
                                               OTF2_TYPE_UINT64, OTF2_BASE_DECIMAL, -9, 7),
        "metric member");
  OTF2_MetricMemberRef member = 0;
  check(OTF2_GlobalDefWriter_WriteMetricClass(g, 0, 1, &member, OTF2_METRIC_SYNCHRONOUS_STRICT, OTF2_RECORDER_KIND_CPU),
        "metric class");
  check(OTF2_Archive_Close(a), "close");
  const double seconds = now() - t0;
  printf("otf2-direct events %llu seconds %.3f events_per_s %.0f\n", (unsigned long long)events, seconds,
         (double)events / seconds);
  return 0;
}
