#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The modeler on a real application: Debian's LAMMPS, fitted at small counts, predicted at a larger one.

    check_lammps.py --p3s BIN --work DIR [--fit 2 4 8 16] [--predict 32] [--cells 20] [--replay BIN]
                    [launcher options]

Records LAMMPS (tests/mpi/in.melt: an LJ melt of 4 L^3 atoms, 200 steps, re-neighbouring every 20, output every
50) at every fitted and predicted count, analyzes the runs together, fits a model on the fitted runs and validates
it against the real run at the predicted count. LAMMPS's messages carry the atoms each rank holds, which differ
from rank to rank, and its atom migration makes a second exchange each way along sides longer than 2: at 32 ranks
(4 x 4 x 2) along the second dimension too, which no fitted run had longer than 2 but the first had at 16 (4 x 2 x 2);
the same exchange along each dimension makes the same calls. So the check asks of every phase:
  - every phase of the model is related to the run's, with its weight exact;
  - every phase's pattern is exact, with as many communications as the run made (the second exchanges included);
  - a phase whose volume error is over 1 % on average or 3 % at most names the groups whose sizes are approximate;
  - every relevant phase's message sizes (1 % of the run's time or more) are within 5 % on average;
  - the model holds every phase of the run (the set-up, the four step kinds and the end).
One ACCURACY line per phase is printed for the record. With --replay, the predicted count is not recorded nor
validated (fitted runs whose grid sides are all 2 cannot show how LAMMPS cuts a longer one); instead the prediction
there must be consistent as written (no repair) and p3s-replay must run it through (with a short watchdog): fitted
on 2, 4 and 8 ranks, LAMMPS's exchanges used to be predicted receiving from where they send, which hung the replay at
16.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

import p3s_launch

INPUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "in.melt")


def fail(step, msg):
    print(f"FAIL [{step}]: {msg}", file=sys.stderr)
    sys.exit(1)


def run(cmd, what, timeout=900):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        fail(what, f"exit {r.returncode}: {' '.join(cmd)}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    return r


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p3s_launch.add_options(p)
    p.add_argument("--p3s", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--fit", type=int, nargs="+", default=[2, 4, 8, 16])
    p.add_argument("--predict", type=int, default=32)
    p.add_argument("--cells", type=int, default=20, help="L: the box is L^3 fcc cells (4 L^3 atoms)")
    p.add_argument("--attempts", type=int, default=3, help="recordings of the series when the phases differ")
    p.add_argument("--replay", help="p3s-replay: replay the prediction at --predict")
    a = p.parse_args()
    lmp = shutil.which("lmp") or shutil.which("lmp_openmpi")
    if lmp is None:
        fail("lammps", "the lammps package is not installed (apt-get install lammps)")
    os.makedirs(a.work, exist_ok=True)
    counts = [*a.fit] if a.replay else [*a.fit, a.predict]
    dirs = {n: os.path.join(a.work, f"lammps.np{n}") for n in counts}

    def record(n):
        shutil.rmtree(dirs[n], ignore_errors=True)
        run([a.p3s, "record", "-o", dirs[n], "--", *p3s_launch.launch(a, n), lmp, "-in", INPUT,
             "-var", "L", str(a.cells), "-log", "none", "-screen", "none"], f"record {n}")

    for n in counts:
        record(n)
    # A loaded machine can make one count's steps look unlike the others' (their compute bursts stretched): the counts
    # whose phases differ from most counts' are recorded again (a count that differs every time still fails).
    for attempt in range(1, a.attempts + 1):
        report = run([a.p3s, "analyze", *dirs.values()], "analyze").stdout
        sigs = {}
        for n in counts:
            with open(os.path.join(dirs[n], "signature.json")) as f:
                sigs[n] = json.load(f)
        shapes = {n: [(q["weight"], q["relevant"]) for q in s["phases"]] for n, s in sigs.items()}
        if len({tuple(w for w, _ in v) for v in shapes.values()}) == 1:
            break
        if attempt == a.attempts:
            fail("phases", f"the runs' phases differ in all {a.attempts} recordings: {shapes}\n{report}")
        weights = {n: tuple(w for w, _ in v) for n, v in shapes.items()}
        common = max(set(weights.values()), key=lambda w: sum(1 for x in weights.values() if x == w))
        again = [n for n in counts if weights[n] != common]
        print(f"note: the runs' phases differ ({shapes}); recording {again} again", file=sys.stderr)
        for n in again:
            record(n)
    model = os.path.join(a.work, "lammps.model")
    if a.replay:
        print(run([a.p3s, "model", *[dirs[n] for n in a.fit], "-o", model, "--force"], "model").stdout, end="")
        replay(a, model)
        print(f"ok: LAMMPS fitted at {', '.join(map(str, a.fit))}, predicted and replayed at {a.predict}")
        return
    out = run([a.p3s, "model", *[dirs[n] for n in a.fit], "--validate-with", dirs[a.predict], "-o", model, "--force"],
              "model").stdout
    print(out, end="")
    with open(model + ".report.json") as f:
        v = json.load(f)["validation"]
    problems = []
    if v["unrelated"]:
        problems += v["unrelated"]
    for c in v["phases"]:
        where = f"LAMMPS n={v['n']} phase {c['phase']}"
        caveats = c.get("caveats", [])
        if c.get("error"):
            problems.append(f"{where}: not evaluated: {c['error']}")
            continue
        if c["weight_predicted"] != c["weight_actual"]:
            problems.append(f"{where}: weight {c['weight_predicted']} predicted, {c['weight_actual']} real")
        if not c["pattern_exact"] or c["comms_predicted"] != c["comms_actual"]:
            problems.append(f"{where}: pattern differs ({c['first_mismatch']}; comms {c['comms_predicted']} "
                            f"predicted, {c['comms_actual']} real)")
        if (c["volume_error_mean"] > 0.01 or c["volume_error_max"] > 0.03) and not c.get("approximate_sizes"):
            problems.append(f"{where}: volume error {100 * c['volume_error_mean']:.2f} % mean, "
                            f"{100 * c['volume_error_max']:.2f} % max, and no group's sizes are named approximate")
        print(f"ACCURACY lammps n={v['n']:<4d} phase {c['phase']}: pattern "
              f"{'exact' if c['pattern_exact'] else 'DIFFERS'}, comms {c['comms_predicted']}/{c['comms_actual']}, "
              f"weight {c['weight_predicted']}/{c['weight_actual']}, volume err {100 * c['volume_error_mean']:.2f} % "
              f"mean / {100 * c['volume_error_max']:.2f} % max, approximate sizes {c.get('approximate_sizes', [])}, "
              f"{len(caveats)} caveats")
    # Every relevant phase's messages (1 % of the run's time or more there) within 5 % on average: the ghost atoms'
    # sizes following the sub-domain's faces (a posted receive described by the messages it took over the run, as a
    # send is, not by its first one: the lattice before it melted, 15-30 % off), and a scan's sizes each rank's place
    # in it. The first step alone (under 1 % at 32) exchanges the lattice as set up, whose sizes no law of n gives.
    for c in v["phases"]:
        if not c.get("relevant", True):
            continue
        if c.get("error") or c["volume_error_mean"] > 0.05:
            problems.append(f"LAMMPS n={v['n']} phase {c['phase']}: volume error "
                            f"{100 * c.get('volume_error_mean', 1):.2f} % mean, more than 5 %")
    if problems:
        fail("validation", "\n".join(problems))
    print(f"ok: LAMMPS fitted at {', '.join(map(str, a.fit))} and predicted at {a.predict}")


def replay(a, model):
    """The ST4NP at --predict is consistent as predicted, and p3s-replay runs it through without stalling."""
    st4np = os.path.join(a.work, f"lammps.st4np.np{a.predict}")
    run([a.p3s, "predict", model, "--np", str(a.predict), "-o", st4np, "--force"], "predict")
    with open(os.path.join(st4np, "lt4nc.json")) as f:
        consistency = json.load(f)["consistency"]
    if consistency != "checked":
        fail("predict", f"the ST4NP at {a.predict} is {consistency}")
    result = os.path.join(a.work, f"lammps.replay.np{a.predict}.json")
    r = run([*p3s_launch.launch(a, a.predict), a.replay, st4np, "-o", result, "--force",
             "--compute", "sleep", "--watchdog", "60", "--warmup", "0", "--instances", "1", "--min-time", "0"],
            "replay", timeout=600)
    print(r.stdout, end="")


if __name__ == "__main__":
    main()
