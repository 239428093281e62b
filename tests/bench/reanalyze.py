#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Which recorded series a change of the analysis moves: every series re-analysed, its phases against the stored ones.

    reanalyze.py --p3s BIN --work DIR ROOT... [--json FILE]

A series is the recorded runs NAME.np<N> (the test suite's) or NAME/np<N> (bench-corpus's) under one folder, each
with its archive (traces.otf2) and the signature p3s analyze wrote beside it when the run was checked; WORK itself is
not searched. Each series is copied into WORK, analysed together by BIN (`p3s analyze DIR...`), and its phases (their
weights, in order) compared with the stored signatures', one row per series: `same`, or `moved` with the phases before and after at each n
that changed. The runs are copied, never analysed in place, so the stored signatures stay as they were. A phase rule
that moves one series and none of the others is suspect; one that moves none of the series it was not meant for is
safe to test further. Series whose runs were analysed one by one rather than together may show as moved without a
change (the series' method is shared); rerun on the stored code to tell. Exit status 0 whatever moved; 1 when BIN
fails on a series.
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys


def phases_of(signature):
    with open(signature) as f:
        return [p["weight"] for p in json.load(f)["phases"]]


def series_under(roots, work):
    """NAME -> [(n, run folder)] for every run folder NAME.np<N> or NAME/np<N> that holds an archive and a signature
    (each once, however the roots nest), outside `work`."""
    series = {}
    seen = set()
    work = os.path.realpath(work)
    for root in roots:
        for sig in glob.glob(os.path.join(root, "**", "signature.json"), recursive=True):
            run = os.path.realpath(os.path.dirname(sig))
            m = re.fullmatch(r"(.*)[./]np(\d+)", run)
            if not m or run in seen or run.startswith(work + os.sep):
                continue
            if os.path.exists(os.path.join(run, "traces.otf2")):
                seen.add(run)
                series.setdefault(m.group(1), []).append((int(m.group(2)), run))
    return {name: sorted(runs) for name, runs in sorted(series.items())}


def reanalyze(p3s, work, name, runs):
    """The weights per n before (stored) and after (BIN on copies); raises RuntimeError with p3s's message."""
    scratch = os.path.join(work, "series")
    shutil.rmtree(scratch, ignore_errors=True)
    copies = []
    for n, run in runs:
        copy = os.path.join(scratch, f"run.np{n}")
        shutil.copytree(run, copy)
        copies.append(copy)
    try:
        try:
            r = subprocess.run([p3s, "analyze", *copies, "--force", "-q"], capture_output=True, text=True,
                               timeout=1800)
        except subprocess.TimeoutExpired:
            raise RuntimeError("p3s analyze ran past 30 minutes") from None
        if r.returncode != 0:
            raise RuntimeError(r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"exit {r.returncode}")
        return {n: (phases_of(os.path.join(run, "signature.json")),
                    phases_of(os.path.join(copy, "signature.json"))) for (n, run), copy in zip(runs, copies)}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--p3s", required=True)
    p.add_argument("--work", required=True, help="scratch folder for the copies")
    p.add_argument("--json", help="write the rows as JSON to this file")
    p.add_argument("roots", nargs="+", help="folders searched for recorded runs NAME.np<N>")
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    rows, failed = [], False
    roots = [os.path.realpath(r) for r in a.roots]
    common = os.path.commonpath(roots) if len(roots) > 1 else roots[0]
    for name, runs in series_under(roots, a.work).items():
        label = os.path.relpath(name, common)
        try:
            per_n = reanalyze(a.p3s, a.work, name, runs)
        except RuntimeError as e:
            print(f"failed  {label}: {e}", flush=True)
            rows.append({"series": label, "error": str(e)})
            failed = True
            continue
        moved = {n: ba for n, ba in per_n.items() if ba[0] != ba[1]}
        print(f"{'moved' if moved else 'same '}   {label} (n = {', '.join(str(n) for n in per_n)})", flush=True)
        for n, (before, after) in moved.items():
            print(f"        n = {n}: {len(before)} phases {before[:12]} -> {len(after)} phases {after[:12]}")
        rows.append({"series": label, "moved": {str(n): {"before": b, "after": x} for n, (b, x) in moved.items()},
                     "counts": sorted(per_n)})
    count = sum(1 for r in rows if r.get("moved"))
    print(f"{len(rows)} series, {count} moved, {sum(1 for r in rows if 'error' in r)} failed")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
