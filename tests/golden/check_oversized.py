#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A phase too long to align degrades on its own, within bounded memory and time.

Usage: check_oversized.py --p3s P3S --data DIR --work DIR

DIR holds the signatures of the ring app (np<k>.json.gz). The representative instance of its loop phase is made
10,000 calls long on every rank, each send to a pseudo-random peer (an iteration no loop folds, as a run whose
main loop the analysis could not find leaves in one phase). Then:
  1. `p3s model` exits 0 within a memory ceiling (it once needed more than 24 GB for such signatures), says which
     phase and why, and keeps that phase as its work and time only (`calls_left_out` in the model);
  2. the other phases are modelled as before (no note on them);
  3. `p3s predict --np 64 --logical` exits 0, names the phase whose calls it leaves out, and writes no call of it.
"""
import argparse
import json
import os
import resource
import subprocess
import sys

from altered import scattered_peer, write_altered

# The calls of one rank in the long phase, and the ceiling on the address space of `p3s model` (a program whose
# structures grow with the square of a phase's calls needs far more).
CALLS = 10000
CEILING = 2 << 30


def fail(msg):
    sys.exit(f"FAIL: {msg}")


def run(cmd, want_rc=0, ceiling=None):
    def limit():
        if ceiling:
            resource.setrlimit(resource.RLIMIT_AS, (ceiling, ceiling))
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, preexec_fn=limit)
    if r.returncode != want_rc:
        fail(f"exit {r.returncode} (expected {want_rc}): {' '.join(cmd)}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    return r


def lengthen(signature):
    """The heaviest phase's instance on every rank becomes CALLS calls: its sends and receives, again and again,
    each to a pseudo-random peer. Returns the phase's id."""
    n = signature["processes"]
    loop = max(signature["phases"], key=lambda p: p["weight"])
    for rank in loop["ranks"]:
        events = rank["events"]
        long = []
        for k in range(CALLS):
            e = json.loads(json.dumps(events[k % len(events)]))
            for a in e["actions"]:
                if "peer" in a:
                    a["peer"] = scattered_peer(rank["rank"], n, k)
                    a["offset"] = a["peer"] - rank["rank"]
                a.pop("started", None)
            long.append(e)
        rank["events"] = long
    return loop["id"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--p3s", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    sigs, long_phase = write_altered(args.data, args.work, lengthen)

    model = os.path.join(args.work, "long.model")
    out = run([args.p3s, "model", *sigs, "-o", model, "--force"], ceiling=CEILING).stdout
    if f"phase {long_phase}: an instance holds up to {CALLS} calls on one rank" not in out:
        fail(f"`p3s model` did not say which phase it kept as measured, and why:\n{out}")
    with open(model) as f:
        phases = {p["id"]: p for p in json.load(f)["phases"]}
    if phases[long_phase].get("calls_left_out") != CALLS or phases[long_phase]["groups"]:
        fail(f"phase {long_phase} is not kept as its work and time: {phases[long_phase].get('calls_left_out')}")
    if not phases[long_phase]["work"]:
        fail(f"phase {long_phase} keeps no work")
    others = [p for i, p in phases.items() if i != long_phase]
    if any(p.get("calls_left_out") for p in others) or not all(p["groups"] for p in others):
        fail("another phase lost its calls")

    lt = os.path.join(args.work, "lt64")
    out = run([args.p3s, "predict", model, "--np", "64", "--logical", "-o", lt, "--force", "--strict"]).stdout
    if "its calls are left out" not in out:
        fail(f"`p3s predict` did not say that phase {long_phase}'s calls are left out:\n{out}")
    with open(os.path.join(lt, "ranks.jsonl")) as f:
        for line in f:
            entry = json.loads(line)
            if entry["phase"] == long_phase and entry["calls"]:
                fail(f"the LT4NC holds calls of phase {long_phase} at rank {entry['rank']}")
    print(f"phase {long_phase} of {CALLS} calls per rank kept as its work and time; model and prediction written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
