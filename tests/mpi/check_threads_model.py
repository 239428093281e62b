#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""An MPI_THREAD_MULTIPLE application: what the model leaves out is said, and no phase is called exact for it.

    check_threads_model.py --p3s BIN --app THREADS_APP --work DIR [launcher options]

The threads app at 2, 4 and 8 ranks (3 threads each, each thread its own ring), recorded and analyzed together,
then modelled with the run at 8 held out for validation. Each process's first thread only is modelled (the model's
limits), so the others' calls, most of the run's, are out of the model:
  1. `p3s model` says so in one line, with their share of the calls;
  2. the validation calls no phase whose other threads communicate exact, and counts their communications;
  3. `p3s predict` says so in one line too, and so does p3s-replay (with --replay) among its notes.
"""
import argparse
import os
import shutil
import subprocess
import sys

import p3s_launch


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def run(cmd, what):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        fail(f"{what}: exit {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    return r


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--p3s", required=True)
    p.add_argument("--app", required=True)
    p.add_argument("--replay", help="p3s-replay, to check its notes too")
    p.add_argument("--work", required=True)
    p3s_launch.add_options(p)
    a = p.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    runs = []
    for n in (2, 4, 8):
        d = os.path.join(a.work, f"np{n}")
        run([a.p3s, "record", "-o", d, "--", *p3s_launch.launch(a, n), a.app, 20, 3], f"record at {n}")
        runs.append(d)
    run([a.p3s, "analyze", *runs, "-q"], "analyze")
    model = os.path.join(a.work, "threads.model")
    r = run([a.p3s, "model", *[os.path.join(d, "signature.json") for d in runs], "-o", model], "model")
    notes = [x for x in r.stdout.splitlines() if "threads other than each process's first made" in x]
    if len(notes) != 1 or "MPI_THREAD_MULTIPLE" not in notes[0]:
        fail(f"`p3s model` does not say, in one line, that other threads' calls are left out:\n{r.stdout}")
    print(f"MODEL: {notes[0]}")
    rows = [x for x in r.stdout.splitlines() if x.strip().split(" ")[0].isdigit()]
    if any(" exact " in x for x in rows):
        fail(f"the validation calls a phase exact where other threads' calls are left out:\n{r.stdout}")
    if "communications, which the model leaves out" not in r.stdout:
        fail(f"the validation does not name the other threads' communications:\n{r.stdout}")
    r = run([a.p3s, "predict", model, "--np", 16], "predict")
    if "threads other than each process's first made" not in r.stdout:
        fail(f"`p3s predict` does not say that other threads' calls are left out:\n{r.stdout}")
    if a.replay:
        r = run([*p3s_launch.launch(a, 4), a.replay, model, "-o", os.path.join(a.work, "replay.json"),
                 "--compute", "sleep", "--min-time", 0, "--instances", 1, "--warmup", 0], "p3s-replay")
        if "note: threads other than each process's first made" not in r.stdout:
            fail(f"p3s-replay does not say that other threads' calls are left out:\n{r.stdout}")
    print("PASS")


if __name__ == "__main__":
    main()
