#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""`p3s model` and `p3s predict` degrade a phase at a time rather than failing.

Usage: check_degrade.py --p3s P3S --data DIR --work DIR

DIR holds the signatures of the ring app (np<k>.json.gz). Every send of its loop phase is given a pseudo-random
peer, so no law reproduces that group. Then:
  1. `p3s model` exits 0, writes the model and its report; the report lists the group in the phase's
     approximate_groups and its note says it was kept as measured;
  2. `p3s predict --np 64 --logical --strict` refuses the prediction, whose stand-in sends no longer meet the
     receives, in one line; without --strict it exits 0, prints a note naming the group and the repair, and the LT4NC's phase lists it in
     approximate_groups with the fitted run standing in, and what the repair dropped;
  3. bad input still fails with one line and exit code 1, and writes nothing.
"""
import argparse
import json
import os
import subprocess
import sys

from altered import scattered_peer, write_altered


def fail(msg):
    sys.exit(f"FAIL: {msg}")


def run(cmd, want_rc=0):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if r.returncode != want_rc:
        fail(f"exit {r.returncode} (expected {want_rc}): {' '.join(cmd)}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    return r


def scatter(signature):
    """Sends of the heaviest phase go to pseudo-random peers."""
    n = signature["processes"]
    loop = max(signature["phases"], key=lambda p: p["weight"])
    for rank in loop["ranks"]:
        for k, event in enumerate(rank["events"]):
            for a in event["actions"]:
                if a["kind"] == "send":
                    a["peer"] = scattered_peer(rank["rank"], n, k)
                    a["offset"] = a["peer"] - rank["rank"]
    return loop["id"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--p3s", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    sigs, scattered = write_altered(args.data, args.work, scatter)

    model = os.path.join(args.work, "scattered.model")
    out = run([args.p3s, "model", *sigs, "-o", model, "--force"]).stdout
    if "kept as measured" not in out:
        fail(f"`p3s model` printed no note on the group kept as measured:\n{out}")
    with open(model + ".report.json") as f:
        report = json.load(f)
    approximate = {p["id"]: p["approximate_groups"] for p in report["phases"] if p["approximate_groups"]}
    if not approximate:
        fail("the fit report lists no approximate group")
    # The model fitted without the run at 32 could only approximate those sends there: the validation says so.
    for check in report["validation"]["phases"]:
        if check["phase"] in approximate and not check["approximate_groups"]:
            fail(f"the validation at n={report['validation']['n']} does not flag phase {check['phase']}")

    lt = os.path.join(args.work, "lt64")
    r = run([args.p3s, "predict", model, "--np", "64", "--logical", "-o", lt, "--force", "--strict"], want_rc=1)
    if "is inconsistent" not in r.stderr or r.stderr.count("\n") != 1 or os.path.exists(lt):
        fail(f"`p3s predict` of sends that no longer meet their receives: {r.stderr!r}")
    out = run([args.p3s, "predict", model, "--np", "64", "--logical", "-o", lt, "--force"]).stdout
    if "stand in (approximate, not extrapolated)" not in out:
        fail(f"`p3s predict` printed no note on the approximate group:\n{out}")
    if f"repaired: phase {scattered} repaired at n = 64" not in out:
        fail(f"`p3s predict` printed no note on the repair:\n{out}")
    with open(os.path.join(lt, "lt4nc.json")) as f:
        header = json.load(f)
    if [p["id"] for p in header["phases"] if p["repair"]] != [scattered]:
        fail(f"the LT4NC records repairs of {[p['id'] for p in header['phases'] if p['repair']]}, not {scattered}")
    flagged = {p["id"]: [a["group"] for a in p["approximate_groups"]] for p in header["phases"]}
    for phase, groups in approximate.items():
        if flagged.get(phase) != groups:
            fail(f"the LT4NC flags {flagged.get(phase)} in phase {phase}, the report {groups}")
        if any(a["from_n"] != 32 for p in header["phases"] if p["id"] == phase for a in p["approximate_groups"]):
            fail("the LT4NC at 64 does not name the run at 32 as the one standing in")

    # Existing outputs are replaced only with --force, and an input never.
    r = run([args.p3s, "model", *sigs, "-o", model], want_rc=1)
    if "--force" not in r.stderr or r.stderr.count("\n") != 1:
        fail(f"`p3s model` over an existing model: {r.stderr!r}")
    r = run([args.p3s, "model", *sigs, "-o", sigs[0], "--force"], want_rc=1)
    if "would write over the input" not in r.stderr:
        fail(f"`p3s model -o` naming an input: {r.stderr!r}")
    r = run([args.p3s, "predict", model, "--np", "64", "--logical", "-o", lt], want_rc=1)
    if "--force" not in r.stderr or r.stderr.count("\n") != 1:
        fail(f"`p3s predict --logical` over an existing LT4NC: {r.stderr!r}")

    # Counts outside the fitted range are said to be so.
    out = run([args.p3s, "predict", model, "--np", "2"]).stdout
    if "below the smallest fitted count" not in out:
        fail(f"`p3s predict --np 2` does not say it is below the fitted runs:\n{out}")
    out = run([args.p3s, "predict", model, "--np", "1000000"]).stdout
    if "a guess" not in out:
        fail(f"`p3s predict --np 1000000` does not say how far it extrapolates:\n{out}")

    # Bad input: one line, exit code 1, nothing written.
    broken = os.path.join(args.work, "broken.json")
    with open(broken, "w") as f:
        f.write('{"schema_version": 2, "phases": [')
    bad_model = os.path.join(args.work, "bad.model")
    r = run([args.p3s, "model", *sigs[:2], broken, "-o", bad_model], want_rc=1)
    if len(r.stderr.strip().splitlines()) != 1 or os.path.exists(bad_model) or os.path.exists(bad_model + ".report.json"):
        fail(f"bad input: expected one line and no output, got {r.stderr!r}")
    print(f"degraded model: approximate groups {approximate}; predicted at 64 with them flagged")
    return 0


if __name__ == "__main__":
    sys.exit(main())
