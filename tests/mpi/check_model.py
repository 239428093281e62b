#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The modeler end to end on a test app: record small runs, fit a model, predict larger runs, compare with them.

    check_model.py APP --p3s BIN --app PATH --work DIR [--fit 4 8 16 32] [--predict 64] [--uneven]
                   [--first-longer-last] [launcher options]

1. check_series.py records and analyzes APP at every fitted and predicted process count (and checks the
   signatures against the app's laws), keeping the runs under WORK/<app>.np<n>.
2. `p3s model` on the fitted runs, which holds the largest one out, validates on it and folds it in.
3. `p3s model` on the fitted runs with --validate-with the predicted run: the model evaluated at a process count
   beyond every fitted one, against the real run there.
4. `p3s predict --logical` at the predicted count: one line per rank and phase, the calls of each.
For both validations (the held-out one only printed with --first-longer-last), every phase must be evaluated, with no group approximated, its communication pattern and
number of communications exact, its weight exact, and message sizes within 1 % on average and 3 % at most (with
--uneven, at the predicted count sizes may differ where the phase's caveats name an uneven division of the data);
the work error (CPU time here, noisy) is printed, one table row per phase, for the record.
"""
import argparse
import json
import os
import subprocess
import sys

import p3s_launch


def fail(step, msg):
    print(f"FAIL [{step}]: {msg}", file=sys.stderr)
    sys.exit(1)


def run(cmd, what):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    if r.returncode != 0:
        # All of stderr: check_series.py prints its FAIL line first and the series' report (several KB) after it.
        fail(what, f"exit {r.returncode}: {' '.join(cmd)}\n{r.stdout[-3000:]}\n{r.stderr}")
    return r


def check_validation(app, model_path, label):
    # The validation is in the fit report beside the model (the model file holds only what prediction reads).
    report_path = model_path + ".report.json"
    with open(report_path) as f:
        report = json.load(f)
    v = report.get("validation")
    if v is None:
        fail(label, f"{report_path} has no validation")
    problems = []
    for c in v["phases"]:
        where = f"{app} n={v['n']} ({label}) phase {c['phase']}"
        # Every phase of these apps can be evaluated at the run's n, and none of its groups is approximate.
        if c.get("error"):
            problems.append(f"{where}: not evaluated: {c['error']}")
        if c.get("approximate_groups"):
            problems.append(f"{where}: groups {c['approximate_groups']} only approximated (kept as measured)")
        if not c["pattern_exact"]:
            problems.append(f"{where}: pattern differs: {c['first_mismatch']}")
        if c["comms_predicted"] != c["comms_actual"]:
            problems.append(f"{where}: {c['comms_predicted']} communications predicted, {c['comms_actual']} real")
        if c["weight_predicted"] != c["weight_actual"]:
            problems.append(f"{where}: weight {c['weight_predicted']} predicted, {c['weight_actual']} real")
        uneven = any("unevenly" in x for x in c.get("caveats", []))
        if label == "predicted" and ARGS.uneven:
            # The app's data does not divide evenly at this n: the sizes may miss, but a caveat must say so, and
            # the phase with the most messages (the loop) must have one.
            if c["volume_error_max"] > 0 and not uneven:
                problems.append(f"{where}: sizes differ ({100 * c['volume_error_max']:.2f} % max) and no caveat "
                                f"names the uneven division")
        elif c["volume_error_mean"] > 0.01 or c["volume_error_max"] > 0.03:
            problems.append(f"{where}: volume error mean {100 * c['volume_error_mean']:.2f} %, "
                            f"max {100 * c['volume_error_max']:.2f} % (limits 1 % and 3 %)")
        print(f"ACCURACY {app:14s} n={v['n']:<4d} {label:9s} phase {c['phase']}: pattern "
              f"{'exact' if c['pattern_exact'] else 'DIFFERS'}, comms {c['comms_predicted']}/{c['comms_actual']}, "
              f"weight {c['weight_predicted']}/{c['weight_actual']}, volume err {100 * c['volume_error_mean']:.2f} % "
              f"mean / {100 * c['volume_error_max']:.2f} % max, work err {100 * c['work_error_total']:.1f} % phase, "
              f"{100 * c['work_error_mean']:.1f} % mean / {100 * c['work_error_max']:.1f} % max per rank")
    for u in v.get("unrelated", []):
        problems.append(f"{app} n={v['n']} ({label}): {u}")
    if problems:
        report = run([ARGS.p3s, "model", *FIT_DIRS, "-o", model_path + ".report", "--report", "--no-holdout", "--force"],
                     "report").stdout
        fail(label, "\n".join(problems) + "\n" + report)


def main():
    global ARGS, FIT_DIRS
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("name")
    p3s_launch.add_options(p)
    p.add_argument("--p3s", required=True)
    p.add_argument("--app", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--fit", type=int, nargs="+", default=[4, 8, 16, 32])
    p.add_argument("--predict", type=int, default=64)
    p.add_argument("--app-args", type=int, nargs="+", default=[], help="a variant of the app (check_series.py)")
    p.add_argument("--uneven", action="store_true",
                   help="the app's data divides unevenly at --predict: sizes may differ there where a caveat says so")
    p.add_argument("--first-longer-last", action="store_true",
                   help="a side of the grid is longer than 2 only in the largest fitted run: the others cannot predict "
                        "it, so the held-out validation is printed, not checked")
    a = p.parse_args()
    ARGS = a
    series = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_series.py")
    launch = p3s_launch.passed_on(a)
    r = run([sys.executable, series, a.name, *launch, "--p3s", a.p3s, "--app", a.app, "--work", a.work,
             "--np", *[str(n) for n in [*a.fit, a.predict]],
             *(["--app-args", *map(str, a.app_args)] if a.app_args else [])], "series")
    print(r.stdout, end="")
    FIT_DIRS = [os.path.join(a.work, f"{a.name}.np{n}") for n in a.fit]
    target = os.path.join(a.work, f"{a.name}.np{a.predict}")

    held = os.path.join(a.work, f"{a.name}.model")
    out = run([a.p3s, "model", *FIT_DIRS, "-o", held, "--force"], "model").stdout
    print(out, end="")
    if a.first_longer_last:
        print(f"{a.name}: held-out validation at n={a.fit[-1]} not checked: no smaller fitted run has a side longer "
              "than 2")
    else:
        check_validation(a.name, held, "held out")

    beyond = os.path.join(a.work, f"{a.name}.beyond.model")
    out = run([a.p3s, "model", *FIT_DIRS, "--validate-with", target, "-o", beyond, "--force"], "model").stdout
    print(out, end="")
    check_validation(a.name, beyond, "predicted")

    lt = os.path.join(a.work, f"{a.name}.lt4nc.np{a.predict}")
    run([a.p3s, "predict", held, "--np", str(a.predict), "--logical", "-o", lt, "--force"], "predict")
    with open(os.path.join(lt, "lt4nc.json")) as f:
        header = json.load(f)
    with open(held) as f:
        phases = len(json.load(f)["phases"])
    approximate = [(p["id"], p.get("approximate_groups")) for p in header["phases"] if p.get("approximate_groups") != []]
    if approximate:
        fail("lt4nc", f"phases with approximate groups (or without the list): {approximate}")
    with open(os.path.join(lt, "ranks.jsonl")) as f:
        lines = [json.loads(line) for line in f]
    if header["processes"] != a.predict or len(lines) != a.predict * phases:
        fail("lt4nc", f"{len(lines)} rank lines for {a.predict} ranks and {phases} phases")
    # Every communicator the apps use was made by a call the trace shows (MPI_Init, MPI_Comm_split,
    # MPI_Cart_create): the model keeps it, and every action names a communicator of the table.
    comms = header["communicators"]
    unknown = [c for c in comms if not c.get("created_by")]
    if not comms or unknown:
        fail("lt4nc", f"communicators without the call that created them: {unknown or 'no table'}")
    for line in lines:
        for call in line["calls"]:
            for act in call["actions"]:
                if act["kind"] != "isend_complete" and not 0 <= act.get("comm", -1) < len(comms):
                    fail("lt4nc", f"rank {line['rank']}: {call['call']} names no communicator of the table: {act}")
    with open(os.path.join(target, "signature.json")) as f:
        real = json.load(f)
    # The loop phase's calls of every rank, as the real run made them (function names in order).
    loop = max(real["phases"], key=lambda q: q["weight"])
    real_calls = {r["rank"]: [e["call"] for e in r["events"]] for r in loop["ranks"]}
    predicted = {}
    for line in lines:
        if line["phase"] == loop["id"]:
            predicted[line["rank"]] = [c["call"] for c in line["calls"]]
    if predicted != real_calls:
        bad = next(r for r in sorted(real_calls) if predicted.get(r) != real_calls[r])
        fail("lt4nc", f"rank {bad}: the LT4NC calls {predicted.get(bad)} differ from the real {real_calls[bad]}")
    held_out = "" if a.first_longer_last else f"n={a.fit[-1]} (held out) and "
    print(f"{a.name}: model validated at {held_out}n={a.predict} (beyond the fitted runs); "
          f"LT4NC at {a.predict} ranks matches the real run's calls")


if __name__ == "__main__":
    main()
