#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Models of recorded test apps against their golden laws, and the same model twice, once under load.

Usage: check_golden.py --p3s P3S --data DIR --work DIR [--update]

DIR holds the signatures of one application at four process counts (np<k>.json.gz, recorded by the mpi.model
tests) and laws.json, the laws a model fitted on them must contain. The check:
  1. fits `p3s model` on the signatures (the largest held out, then folded in);
  2. every law of laws.json (weights, groups with their peers, sizes, tags, collectives and completions, work
     classes with their burst laws, the phase order) must be in the model byte for byte: a change that moves a
     law is a change of behaviour and must update the golden file on purpose (--update);
  3. fits the model again while every core spins, and requires the same file but for its date: no law may
     depend on how fast the machine is; and the same with an expression-search budget small enough to run out
     (--search-candidates), where a clock used to decide.
"""
import argparse
import glob
import gzip
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import time

# What the golden file keeps of each phase and work class: what prediction reads, not what reports say.
PHASE_KEYS = ("id", "calls", "relevant", "weight", "weight_exact", "weight_measured", "step", "step_total", "groups",
              "work")
WORK_KEYS = ("cases", "when", "bursts")


def laws(model):
    phases = []
    for p in model["phases"]:
        q = {k: p[k] for k in PHASE_KEYS if k in p}
        q["work"] = [{k: w[k] for k in WORK_KEYS if k in w} for w in p.get("work", [])]
        phases.append(q)
    return {"order": model["order"], "phases": phases}


def missing(golden, actual, path="laws"):
    """The first place where `golden` is not contained in `actual` (dicts: every key, recursively; lists:
    same length, element by element; anything else: equal), or None."""
    if isinstance(golden, dict):
        if not isinstance(actual, dict):
            return f"{path}: expected an object, got {json.dumps(actual)[:200]}"
        for k, v in golden.items():
            if k not in actual:
                return f"{path}.{k}: missing"
            m = missing(v, actual[k], f"{path}.{k}")
            if m:
                return m
        return None
    if isinstance(golden, list):
        if not isinstance(actual, list) or len(actual) != len(golden):
            return f"{path}: expected {json.dumps(golden)[:200]}, got {json.dumps(actual)[:200]}"
        for i, (g, a) in enumerate(zip(golden, actual)):
            m = missing(g, a, f"{path}[{i}]")
            if m:
                return m
        return None
    if golden != actual or type(golden) != type(actual):
        return f"{path}: expected {json.dumps(golden)}, got {json.dumps(actual)}"
    return None


def spin(stop):
    while not stop.is_set():
        pass


# A budget that the failing expression searches of some cases run out of.
SMALL_BUDGET = 300000


def fit(p3s, sigs, out, budget=None):
    if os.path.exists(out):
        os.remove(out)
    extra = ["--search-candidates", str(budget)] if budget else []
    r = subprocess.run([p3s, "model", *sigs, "-o", out, "-q", "--force", *extra], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"p3s model failed ({r.returncode}): {r.stderr.strip()}")
    with open(out) as f:
        return f.read()


def without_date(text):
    model = json.loads(text)
    model.pop("date", None)
    return json.dumps(model, sort_keys=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--p3s", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--update", action="store_true", help="rewrite laws.json from the model fitted now")
    args = ap.parse_args()

    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    sigs = []
    for gz in sorted(glob.glob(os.path.join(args.data, "np*.json.gz"))):
        path = os.path.join(args.work, os.path.basename(gz)[:-3])
        with gzip.open(gz, "rb") as src, open(path, "wb") as dst:
            shutil.copyfileobj(src, dst)
        sigs.append(path)
    if len(sigs) < 3:
        sys.exit(f"{args.data}: expected np<k>.json.gz signatures of three or more runs, found {len(sigs)}")

    quiet = fit(args.p3s, sigs, os.path.join(args.work, "quiet.model"))
    quiet_small = fit(args.p3s, sigs, os.path.join(args.work, "quiet-small.model"), SMALL_BUDGET)
    golden_path = os.path.join(args.data, "laws.json")
    if args.update:
        with open(golden_path, "w") as f:
            json.dump(laws(json.loads(quiet)), f, indent=1, sort_keys=True)
            f.write("\n")
        print(f"wrote {golden_path}")
        return 0
    with open(golden_path) as f:
        golden = json.load(f)
    m = missing(golden, json.loads(quiet))
    if m:
        sys.exit(f"the model of {args.data} no longer holds its golden laws: {m}\n"
                 f"(an intended change of the laws: re-run this check with --update and commit laws.json)")
    print(f"golden laws of {os.path.basename(os.path.normpath(args.data))}: "
          f"{len(golden['phases'])} phases, all in the model")

    stop = multiprocessing.Event()
    spinners = [multiprocessing.Process(target=spin, args=(stop,)) for _ in range(2 * (os.cpu_count() or 2))]
    for s in spinners:
        s.start()
    try:
        time.sleep(0.2)
        loaded = fit(args.p3s, sigs, os.path.join(args.work, "loaded.model"))
        loaded_small = fit(args.p3s, sigs, os.path.join(args.work, "loaded-small.model"), SMALL_BUDGET)
    finally:
        stop.set()
        for s in spinners:
            s.join()
    if without_date(quiet) != without_date(loaded):
        sys.exit("the model fitted while the machine was loaded differs from the one fitted before: a law "
                 "depends on timing")
    if without_date(quiet_small) != without_date(loaded_small):
        sys.exit(f"with --search-candidates {SMALL_BUDGET}, the model fitted under load differs: the search's "
                 "stop depends on timing")
    print("the model fitted under load is the same, with the default search budget and with a small one")
    return 0


if __name__ == "__main__":
    sys.exit(main())
