#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Replay benchmark: the accuracy and cost of p3s-replay on the sleep-mode apps, and the cost of writing an ST4NP.

1. amdahl, stencil2d and wavefront (a pipeline) with --sleep-ns-per-cell 50, fitted at 2 (4 for the pipeline), 4,
   8, 16 ranks, replayed at 32 and 48 with --compute sleep against real runs there, three of each alternating
   (tests/mpi/check_replay.py time --repeat 3: their medians), with the strict limits: main loop within 10 % on
   every app and n, the median error over them within 5 %, each phase's compute time within 5 %; then at 32
   with M = 1, 3, 5, 10 measured instances and the default (--min-time): the replay's wall time over the
   application's, and the error. Beside each full replay, a range replay in ranges of 8 (its ACCURACY line: its
   error against the real run and against the full replay, and the job's ranks; its COST line: steps, wall time and
   core-seconds against the full replay's and the application's), within the time test's loose limit of the full
   replay. Then the same at 64 and 128 ranks, once, printed only (the oversubscribed machine dominates there), with
   a 3-D periodic halo (halo3d) beside them.
2. `p3s predict -o` (the ST4NP) at 4096 ranks of the stencil's model: time and peak memory, against a plain copy of
   the file it writes, measured in the same session.
"""
import argparse
import os
import shutil
import subprocess
import sys

from child_usage import run_quietly

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mpi"))
import p3s_launch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK = os.path.join(HERE, "..", "mpi", "check_replay.py")


def range_at_scale(a, launch):
    """The range replay at 64 and 128 ranks (C = 8) beside the full replay and a real run, once each, printed: on 2
    cores such runs measure the oversubscribed machine (each rank waits its turn among 64 or 128), which the range
    replay's 34 ranks see less of, so no limit holds here; the figures are the cost (COST lines)."""
    for app, args, fit in (("amdahl", "60 4000000", "2 4 8 16"), ("stencil2d", "60 1920", "2 4 8 16"),
                           ("wavefront", "20 480 8 2", "4 8 16"), ("halo3d", "60 96", "2 4 8 16")):
        r = subprocess.run([sys.executable, CHECK, "time", app, *launch, "--p3s", a.p3s, "--replay", a.replay,
                            "--fit", *fit.split(), "--np", "64", "128", "--limit", "100", "--compute-limit", "100",
                            "--range-limit", "100", "--app", os.path.join(a.apps, app),
                            f"--app-args={args} --sleep-ns-per-cell 50", "--work", os.path.join(a.work, f"{app}.scale")],
                           capture_output=True, text=True)
        print("\n".join(x for x in r.stdout.splitlines() if x.startswith(("ACCURACY", "COST"))))
        if r.returncode != 0:
            print(r.stderr.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--p3s", required=True)
    p.add_argument("--replay", required=True)
    p.add_argument("--apps", required=True, help="the directory of the test apps")
    p3s_launch.add_options(p)
    p.add_argument("--work", required=True)
    a = p.parse_args()
    launch = p3s_launch.passed_on(a)
    failed = False
    errors = []
    for app, args, fit in (("amdahl", "60 4000000", "2 4 8 16"), ("stencil2d", "60 1920", "2 4 8 16"),
                           ("wavefront", "20 480 8 2", "4 8 16")):
        r = subprocess.run([sys.executable, CHECK, "time", app, *launch, "--p3s", a.p3s, "--replay", a.replay,
                            "--fit", *fit.split(), "--repeat", "3",
                            "--app", os.path.join(a.apps, app), f"--app-args={args} --sleep-ns-per-cell 50",
                            "--work", os.path.join(a.work, app), "--sweep-instances", "1", "3", "5", "10"],
                           capture_output=True, text=True)
        print("\n".join(x for x in r.stdout.splitlines() if x.startswith(("ACCURACY", "COST", f"{app} ", "app "))))
        for row in r.stdout.splitlines():
            words = row.split()
            if len(words) == 7 and words[0] == app and words[4].endswith("%"):
                errors.append(abs(float(words[4].rstrip("%"))))
        if r.returncode != 0:
            print(r.stderr.strip().splitlines()[-1])
            failed = True
    range_at_scale(a, launch)
    if errors:
        errors.sort()
        middle = (errors[(len(errors) - 1) // 2] + errors[len(errors) // 2]) / 2
        print(f"median main-loop error over {len(errors)} comparisons: {middle:.1f} % (limit 5 %)")
        failed = failed or middle > 5
    model = os.path.join(a.work, "stencil2d", "stencil2d.model")
    out = os.path.join(a.work, "st4np.4096")
    seconds, mib = run_quietly([a.p3s, "predict", model, "--np", "4096", "-o", out, "--force"])
    size = os.path.getsize(os.path.join(out, "ranks.jsonl"))
    copy = os.path.join(a.work, "copy.jsonl")
    copy_s, _ = run_quietly(["cp", os.path.join(out, "ranks.jsonl"), copy])
    print(f"ST4NP at 4096 ranks: {seconds:.2f} s, peak {mib:.0f} MiB, {size / 1e6:.1f} MB "
          f"({size / 4096 / 1024:.1f} KiB per rank); a plain copy of it {copy_s:.3f} s "
          f"(ratio {seconds / max(copy_s, 1e-6):.0f}x)")
    shutil.rmtree(out, ignore_errors=True)
    os.remove(copy)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
