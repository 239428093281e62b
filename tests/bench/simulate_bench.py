#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Simulation benchmark: `p3s simulate` against real runs and the full replay, and its cost up to 4,096 ranks.

1. `p3s calibrate` on this machine (2 ranks): the machine file every simulation below runs on.
2. The sleep-mode apps (amdahl, stencil2d) through `p3s scale --fit 2,4,8 --predict 16,32 --validate 16,32`
   (real runs at 16 and 32 beside the full replay's predictions), then simulated at every fitted n, at 16 and 32
   and at 64: per app a table of the real run's time, the full replay's PET, the simulated PET and the two errors.
3. The stencil's model simulated from 4 to 4,096 ranks: PET (the curve must fall where the runs fall), and the
   wall time and peak memory (p3s with smpirun under it) of each simulation.
On this oversubscribed 2-core machine the real runs at 16 and more ranks wait their turn for a core (sleeping
bursts keep their time, messages do not), which the simulated machine, a core per rank, does not: the errors there
are the machine's, printed, not held to a limit.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

from child_usage import run_quietly

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mpi"))
import p3s_launch  # noqa: E402

APPS = (("amdahl", "40 4000000 --sleep-ns-per-cell 50"), ("stencil2d", "40 1920 --sleep-ns-per-cell 50"))
FIT = (2, 4, 8)
CHECK = (16, 32)


def run(cmd):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"benchmark command failed: {' '.join(map(str, cmd))}\n{r.stderr[-2000:]}")
    return r


def simulated_pet(a, model, machine, n, out):
    path = os.path.join(out, f"sim.np{n}.json")
    seconds, mib = run_quietly([a.p3s, "simulate", model, "--np", str(n), "--platform", machine, "-o", path,
                                "--force"])
    with open(path) as f:
        return json.load(f)["pet_ns"], seconds, mib


def app_table(a, machine, app, args):
    work = os.path.join(a.work, app)
    run([a.p3s, "scale", "-o", work, "--fit", ",".join(map(str, FIT)), "--predict", ",".join(map(str, CHECK)),
         "--validate", ",".join(map(str, CHECK)), "--compute", "sleep", "--force", "--",
         *p3s_launch.launch(a, "{n}", os.path.join(a.apps, app), *args.split())])
    with open(os.path.join(work, "curve.json")) as f:
        rows = {r["n"]: r for r in json.load(f)["rows"]}
    print(f"\n{app} {args}: simulated on the calibrated machine")
    print(f"{'n':>5} {'real':>10} {'replay':>10} {'simulated':>10} {'vs real':>8} {'vs replay':>9}")
    for n in (*FIT, *CHECK, 64):
        pet, _, _ = simulated_pet(a, os.path.join(work, "app.model"), machine, n, work)
        real, replay = rows.get(n, {}).get("measured_ns"), rows.get(n, {}).get("predicted_ns")
        cell = lambda t: f"{t / 1e6:8.2f}ms" if t else f"{'-':>10}"
        err = lambda t: f"{(pet / t - 1) * 100:+7.1f}%" if t else f"{'-':>8}"
        print(f"{n:>5} {cell(real)} {cell(replay)} {cell(pet)} {err(real)} {err(replay):>9}")
    return os.path.join(work, "app.model")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p3s_launch.add_options(ap)
    ap.add_argument("--p3s", required=True)
    ap.add_argument("--apps", required=True, help="the folder of the test apps")
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    if shutil.which("smpirun") is None:
        sys.exit("bench-simulate needs SimGrid's smpirun: apt-get install libsimgrid-dev")
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    machine = os.path.join(a.work, "machine.json")
    print(run([a.p3s, "calibrate", "-o", machine, "--", *p3s_launch.launch(a, 2)]).stdout, end="")
    stencil = None
    for app, args in APPS:
        model = app_table(a, machine, app, args)
        if app == "stencil2d":
            stencil = model
    print("\nstencil2d simulated from 4 to 4096 ranks (time and peak memory of p3s simulate with smpirun)")
    print(f"{'n':>5} {'PET':>10} {'speedup':>8} {'wall':>8} {'peak':>9}")
    curve = []
    for n in (4, 16, 64, 256, 1024, 4096):
        pet, seconds, mib = simulated_pet(a, stencil, machine, n, a.work)
        curve.append(pet)
        print(f"{n:>5} {pet / 1e6:8.2f}ms {curve[0] / pet:8.1f} {seconds:7.1f}s {mib:7.0f}MiB")
    falling = all(b < c for b, c in zip(curve[1:], curve))
    print(f"the simulated curve {'falls at every step' if falling else 'does not fall at every step'}")


if __name__ == "__main__":
    main()
