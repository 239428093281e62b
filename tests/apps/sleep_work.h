// SPDX-License-Identifier: BSD-3-Clause
// The sleep mode of the strong-scaling apps: `--sleep-ns-per-cell X` replaces the computation of each burst by a
// sleep of X ns per cell of work. Ranks then behave as if each had its own core, however many share the machine,
// while their communication stays real: a prediction at n can be compared with a real run at n on 2 cores.
#pragma once

#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

/// Removes `--sleep-ns-per-cell X` (or `=X`) from argv, so that positional arguments keep their places, and returns
/// X (0 when absent: the app computes). Exits the job on a value that is not a number >= 0.
static inline double sleep_ns_per_cell(int* argc, char** argv) {
  static const char flag[] = "--sleep-ns-per-cell";
  const size_t len = sizeof flag - 1;
  for (int i = 1; i < *argc; ++i) {
    if (strncmp(argv[i], flag, len) != 0 || (argv[i][len] != '\0' && argv[i][len] != '=')) continue;
    const int has_value = argv[i][len] == '=' || i + 1 < *argc;
    const char* text = argv[i][len] == '=' ? argv[i] + len + 1 : (i + 1 < *argc ? argv[i + 1] : "");
    char* end = NULL;
    const double v = strtod(text, &end);
    if (!has_value || *text == '\0' || *end != '\0' || !(v >= 0)) {
      fprintf(stderr, "%s: %s needs a number of ns >= 0, got '%s'\n", argv[0], flag, text);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const int taken = argv[i][len] == '=' ? 1 : 2;
    for (int j = i; j + taken <= *argc; ++j) argv[j] = argv[j + taken];
    *argc -= taken;
    return v;
  }
  return 0;
}

static inline long long sleep_work_now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/// Sleeps for `cells` x `ns_per_cell` ns, with the least timer slack the kernel allows (a sleeping burst should last
/// what it stands for, not what the timer adds). A sleep wakes late, by more the busier the machine (on an
/// oversubscribed node the ranks waiting in MPI spin), so it is woken as early as this process's recent sleeps were
/// late: the bursts then last what they stand for on average, as if each rank had its own core. A burst too short
/// to sleep (50 us after the early wake) is spun.
static inline void sleep_cells(double cells, double ns_per_cell) {
  enum { kShortestSleepNs = 50000 };
  static int slack_set = 0;
  static long long late = 0;  // running mean of how late a sleep woke
  if (!slack_set) {
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    slack_set = 1;
  }
  const double ns = cells * ns_per_cell;
  if (!(ns >= 1)) return;
  const long long deadline = sleep_work_now_ns() + (long long)ns;
  if ((long long)ns <= late + kShortestSleepNs) {
    while (sleep_work_now_ns() < deadline) {
    }
    if ((long long)ns > kShortestSleepNs) late -= late / 8;  // one very late wake must not leave every later burst spun
    return;
  }
  const long long wake = deadline - late;
  struct timespec t;
  t.tv_sec = (time_t)(wake / 1000000000LL);
  t.tv_nsec = (long)(wake % 1000000000LL);
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR) {
  }
  const long long woke = sleep_work_now_ns() - wake;
  late += ((woke > 0 ? woke : 0) - late) / 8;
}
