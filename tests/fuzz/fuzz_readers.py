#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Every reader of p3s against damaged input: truncations, byte flips and random bytes over real files.

    fuzz_readers.py --p3s BIN --data TESTS_DATA --work DIR [--cases N] [--seed S]
                    [--raw-from TRACE_DIR | --app MPI_APP [--mpiexec M --np-flag F --preflag P]]

Inputs (all real): the Score-P archives of tests/data/scorep (anchor, global and local definitions, event files,
read by `p3s summary --json` and `p3s analyze`), signatures of tests/data/models/ring (read by `p3s model`), the
model fitted from them (read by `p3s predict`), and with --raw-from (or --app) the raw logs and event files of a
recorded run (read by `p3s recover`, and the archive it makes by `p3s summary`). Each case damages one file of a
fresh copy and runs its reader under a memory limit (1 GiB of address space) and a time limit (30 s). A case passes when the reader exits 0 (the damage did not matter) or 1
with exactly one line on stderr; a signal, exit 2 or 3, a second line, a library's exception id
("[json.exception...") or a timeout fails it. The cases are drawn
from a fixed seed, so a failure reproduces with the same --seed and --cases; the failing case's files are kept
under WORK/failed-N.
"""
import argparse
import os
import random
import resource
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mpi"))
import p3s_launch  # noqa: E402

import fuzz_inputs  # noqa: E402

MEMORY = 1 << 30
TIMEOUT = 30


def limit():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run(cmd):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=TIMEOUT, preexec_fn=limit)
        return r.returncode, r.stderr
    except subprocess.TimeoutExpired:
        return "timeout", ""


def damage(path, rng):
    """One of: cut the file at a random length, flip 1 to 4 random bytes, or overwrite 100 bytes at random."""
    with open(path, "rb") as f:
        data = bytearray(f.read())
    how = rng.choice(["truncate", "flip", "random"]) if data else "random"
    if how == "truncate":
        data = data[:rng.randrange(len(data))]
    elif how == "flip":
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(data))
            data[i] ^= 1 << rng.randrange(8)
    else:
        at = rng.randrange(len(data) + 1)
        data[at:at + 100] = bytes(rng.randrange(256) for _ in range(100))
    with open(path, "wb") as f:
        f.write(data)
    return how


class Fuzz:
    def __init__(self, a):
        self.a = a
        self.rng = random.Random(a.seed)
        self.failures = []
        self.cases = 0
        self.outcomes = {}

    def case(self, kind, source, pick, command):
        """Copies `source` (a file or directory) to a fresh place, damages the file `pick(copy)` chooses, runs
        `command(copy, out)`."""
        self.cases += 1
        where = os.path.join(self.a.work, "case")
        shutil.rmtree(where, ignore_errors=True)
        os.makedirs(where)
        copy = os.path.join(where, os.path.basename(source.rstrip("/")))
        (shutil.copytree if os.path.isdir(source) else shutil.copy)(source, copy)
        target = pick(copy)
        how = damage(target, self.rng)
        rc, err = run(command(copy, os.path.join(where, "out")))
        lines = [x for x in err.splitlines() if x.strip()]
        # One line, in p3s's words: no library's exception ids.
        ok = (rc == 0 or (rc == 1 and len(lines) == 1)) and "[json.exception" not in err
        self.outcomes[(kind, rc if rc in (0, 1) else "bad")] = self.outcomes.get((kind, rc if rc in (0, 1) else "bad"), 0) + 1
        if not ok:
            kept = os.path.join(self.a.work, f"failed-{self.cases}")
            shutil.rmtree(kept, ignore_errors=True)
            shutil.copytree(where, kept)
            self.failures.append(f"case {self.cases} ({kind}, {how} {os.path.relpath(target, where)}): exit {rc}, "
                                 f"{len(lines)} lines: {' | '.join(lines)[:400]} (kept in {kept})")


def files_under(d):
    return sorted(os.path.join(r, f) for r, _, fs in os.walk(d) for f in fs)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--p3s", required=True)
    p.add_argument("--data", required=True, help="tests/data")
    p.add_argument("--work", required=True)
    p.add_argument("--cases", type=int, default=400, help="damaged inputs in all")
    p.add_argument("--seed", type=int, default=20261125)
    p.add_argument("--raw-from", help="a trace directory whose raw logs were kept (p3s record --keep-raw)")
    p.add_argument("--app", help="record this MPI app at 2 ranks with its raw logs kept, and fuzz those")
    p3s_launch.add_options(p)
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    p3s = a.p3s
    if a.app:
        a.raw_from = os.path.join(a.work, "recorded")
        shutil.rmtree(a.raw_from, ignore_errors=True)
        r = subprocess.run([p3s, "record", "-o", a.raw_from, "--keep-raw", "--", *p3s_launch.launch(a, 2), a.app, "200"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"FAIL: recording {a.app}: {r.stderr[-800:]}")

    # The intact inputs, and a check that each reader accepts them.
    sigs = fuzz_inputs.intact_signatures(a.data, a.work)
    model = fuzz_inputs.fresh_model(a.work)
    rc, err = run([p3s, "model", *sigs, "--no-holdout", "-q", "-o", model])
    if rc != 0:
        sys.exit(f"FAIL: the intact signatures do not fit: {err}")
    archives = [os.path.join(a.data, "scorep", d) for d in ("phases-c-np4", "phases-mpi-np8")]
    raw = None
    if a.raw_from:
        raw = os.path.join(a.work, "raw-run")
        shutil.rmtree(raw, ignore_errors=True)
        os.makedirs(raw)
        shutil.copytree(os.path.join(a.raw_from, "p3s-raw"), os.path.join(raw, "p3s-raw"))
        rc, err = run([p3s, "recover", raw])
        if rc != 0:
            sys.exit(f"FAIL: the intact raw logs do not recover: {err}")
        # The archive p3s wrote from them is fuzzed with the Score-P ones.
        ours = os.path.join(a.work, "p3s-archive")
        shutil.rmtree(ours, ignore_errors=True)
        os.makedirs(ours)
        for f in ("traces.otf2", "traces.def", "traces"):
            shutil.move(os.path.join(raw, f), os.path.join(ours, f))
        archives.append(ours)

    f = Fuzz(a)
    kinds = ["archive-summary", "archive-analyze", "signature", "model"] + (["raw"] if raw else [])
    for i in range(a.cases):
        kind = kinds[i % len(kinds)]
        if kind.startswith("archive"):
            source = f.rng.choice(archives)
            # The anchor and global definitions are small and say the most: damage them as often as the rest.
            pick = lambda c: f.rng.choice([os.path.join(c, "traces.otf2"), os.path.join(c, "traces.def"),
                                           f.rng.choice(files_under(os.path.join(c, "traces")))])
            if kind == "archive-summary":
                f.case(kind, source, pick, lambda c, out: [p3s, "summary", "--json", c])
            else:
                f.case(kind, source, pick, lambda c, out: [p3s, "analyze", c, "-q", "-o", out + ".json"])
        elif kind == "signature":
            which = f.rng.randrange(len(sigs))
            f.case(kind, sigs[which], lambda c: c,
                   lambda c, out: [p3s, "model", *[c if j == which else s for j, s in enumerate(sigs)],
                                   "--no-holdout", "-q", "-o", out + ".model"])
        elif kind == "model":
            f.case(kind, model, lambda c: c,
                   lambda c, out: [p3s, "predict", c, "--np", str(f.rng.choice([8, 64, 1000])), "--logical", "-o", out])
        else:
            # What recovery makes of damaged logs must read cleanly too.
            f.case(kind, raw, lambda c: f.rng.choice(files_under(os.path.join(c, "p3s-raw"))),
                   lambda c, out: ["sh", "-c", '"$0" recover "$1" > /dev/null && "$0" summary "$1" > /dev/null',
                                   p3s, c])
    shutil.rmtree(os.path.join(a.work, "case"), ignore_errors=True)
    summary = ", ".join(f"{k} exit {rc}: {n}" for (k, rc), n in sorted(f.outcomes.items(), key=str))
    print(f"fuzz: {f.cases} cases (seed {a.seed}), {len(f.failures)} failed; {summary}")
    if f.failures:
        print("FAIL:\n" + "\n".join(f.failures), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
