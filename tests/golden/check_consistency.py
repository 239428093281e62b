#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""`p3s predict` writes only predictions whose messages, collectives and requests match.

Usage: check_consistency.py --p3s P3S --data DIR --work DIR

DIR holds the signatures of the ring app (np<k>.json.gz). A model is fitted on them; then:
  1. its prediction at 64 is checked and written (`consistency` is `checked`, no phase repaired);
  2. with --strict, a copy of the model whose receives take another tag than the sends is refused: exit code 1,
     one line on stderr naming the phase, the rank and the call, and no output left (not even over an LT4NC written
     before with --force);
  3. without --strict that copy is written repaired, the repair printed and recorded in the LT4NC (the flaws, what was dropped),
     and no rank's calls still name the mismatched tag.
"""
import argparse
import glob
import gzip
import json
import os
import shutil
import subprocess
import sys


def fail(msg):
    sys.exit(f"FAIL: {msg}")


def run(cmd, want_rc=0):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=600)
    if r.returncode != want_rc:
        fail(f"exit {r.returncode} (expected {want_rc}): {' '.join(map(str, cmd))}\n{r.stdout[-2000:]}\n"
             f"{r.stderr[-2000:]}")
    return r


def header(directory):
    with open(os.path.join(directory, "lt4nc.json")) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--p3s", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    sigs = []
    for gz in sorted(glob.glob(os.path.join(a.data, "np*.json.gz"))):
        path = os.path.join(a.work, os.path.basename(gz)[:-3])
        with gzip.open(gz, "rb") as f, open(path, "wb") as out:
            out.write(f.read())
        sigs.append(path)
    model = os.path.join(a.work, "ring.model")
    run([a.p3s, "model", *sigs, "-o", model, "-q"])

    # 1. A consistent model: checked, written.
    good = os.path.join(a.work, "lt64")
    out = run([a.p3s, "predict", model, "--np", 64, "--logical", "-o", good]).stdout
    if "checked" not in out or "repaired" in out:
        fail(f"`p3s predict` of a consistent model: {out!r}")
    h = header(good)
    if h["schema_version"] != 4 or h["consistency"] != "checked" or any(p["repair"] for p in h["phases"]):
        fail(f"the LT4NC of a consistent model: consistency {h.get('consistency')!r}, phases {h['phases']}")

    # 2. Receives that wait for a tag no send carries: refused in one line, nothing written.
    with open(model) as f:
        m = json.load(f)
    receives = next(g for p in m["phases"] for g in p["groups"] if g["call"] == "MPI_Irecv")
    receives["traits"][0][0][0]["tag"] = 99
    bad = os.path.join(a.work, "mismatched.model")
    with open(bad, "w") as f:
        json.dump(m, f)
    target = os.path.join(a.work, "refused")
    r = run([a.p3s, "predict", bad, "--np", 64, "-o", target, "--strict"], want_rc=1)
    lines = r.stderr.strip().splitlines()
    if len(lines) != 1:
        fail(f"the refusal is {len(lines)} lines: {r.stderr!r}")
    for words in ("phase 1 predicted at n = 64 is inconsistent", "rank ", "call ", "(MPI_", "tag 99", "--strict"):
        if words not in lines[0]:
            fail(f"the refusal does not say {words!r}: {lines[0]}")
    if os.path.exists(target):
        fail(f"a refused prediction left {target}")
    before = {f: open(os.path.join(good, f), "rb").read() for f in ("lt4nc.json", "ranks.jsonl", "ranks.index")}
    run([a.p3s, "predict", bad, "--np", 64, "--logical", "-o", good, "--force", "--strict"], want_rc=1)
    for f, content in before.items():
        if open(os.path.join(good, f), "rb").read() != content:
            fail(f"a refused prediction changed {good}/{f}")

    # 3. Without --strict: written repaired, said and recorded.
    repaired = os.path.join(a.work, "repaired")
    out = run([a.p3s, "predict", bad, "--np", 64, "-o", repaired]).stdout
    if "repaired: phase 1 repaired at n = 64" not in out or "actions dropped" not in out:
        fail(f"`p3s predict` does not say what it repaired: {out!r}")
    h = header(repaired)
    record = {p["id"]: p["repair"] for p in h["phases"] if p["repair"]}
    if h["consistency"] != "repaired" or list(record) != [1]:
        fail(f"the repaired LT4NC: consistency {h['consistency']!r}, repairs {record}")
    if not record[1]["flaws"].get("unmatched_send") or not record[1]["flaws"].get("unmatched_receive") or \
            record[1]["dropped_actions"] <= 0 or not record[1]["first"]:
        fail(f"the repair record of phase 1: {record[1]}")
    with open(os.path.join(repaired, "ranks.jsonl")) as f:
        for line in f:
            for call in json.loads(line)["calls"]:
                if any(act.get("tag") == 99 for act in call["actions"]):
                    fail(f"a repaired rank still waits for tag 99: {line[:300]}")
    print(f"refused in one line: {lines[0][:160]}...; repaired: {record[1]['flaws']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
