#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""`p3s predict --format tit`: SimGrid's time-independent trace of a prediction.

    check_tit.py --p3s BIN --data DIR --work DIR [--np 16 12]

The model of the `collectives` app (collectives on the world, on row and column communicators, and a halo) is
written at each n; the trace is checked as SMPI's replay would use it:
  - traces.txt lists one file per rank (absolute paths), each starting with init and ending with finalize, every
    line `<rank> <action> ...` of that rank;
  - every send (send, isend) has its receive (recv, irecv) with the same source, destination, tag and size, in order;
  - every isend and irecv is waited for once by its (source, destination, tag) key, and no two open requests share
    a key (the format matches waits by that key);
  - the world's collectives are the same, in the same order, with the same arguments, on every rank; collectives on
    the row and column communicators became messages (the note says so);
  - the compute amounts follow --flops (twice the speed, twice the flops);
  - smpirun -replay runs it to the end on a generated cluster, where SimGrid is installed (else: skipped, said);
  - an existing trace is replaced only with --force; a wrong option is refused in one line.
"""
import argparse
import collections
import os
import shutil
import subprocess
import sys

from altered import write_altered

COLLECTIVES = {"barrier", "bcast", "reduce", "allreduce", "alltoall", "gather", "allgather", "scatter"}


def fail(msg):
    sys.exit(f"FAIL: {msg}")


def run(cmd, want_rc=0, timeout=600):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout)
    if r.returncode != want_rc:
        fail(f"exit {r.returncode} (expected {want_rc}): {' '.join(map(str, cmd))}\n{r.stdout[-2000:]}\n"
             f"{r.stderr[-2000:]}")
    return r


def read_trace(directory, n):
    with open(os.path.join(directory, "traces.txt")) as f:
        files = f.read().split()
    if len(files) != n or any(not os.path.isabs(p) for p in files):
        fail(f"traces.txt lists {len(files)} files for {n} ranks, or relative paths: {files[:3]}")
    ranks = []
    for r, path in enumerate(files):
        with open(path) as f:
            lines = [line.split() for line in f.read().splitlines()]
        if not lines or lines[0] != [str(r), "init"] or lines[-1] != [str(r), "finalize"]:
            fail(f"rank {r}'s file does not run from init to finalize: {lines[:1]} ... {lines[-1:]}")
        if any(line[0] != str(r) for line in lines):
            fail(f"rank {r}'s file holds another rank's lines")
        ranks.append([line[1:] for line in lines[1:-1]])
    return ranks


def check_messages(ranks):
    """Sends against receives per (source, destination, tag), in order; requests against waits."""
    sent, received = collections.defaultdict(list), collections.defaultdict(list)
    for r, actions in enumerate(ranks):
        open_keys = set()
        for a in actions:
            if a[0] in ("send", "isend"):
                key = (r, int(a[1]), int(a[2]))
                sent[key].append(a[3])
            elif a[0] in ("recv", "irecv"):
                key = (int(a[1]), r, int(a[2]))
                received[key].append(a[3])
            if a[0] in ("isend", "irecv"):
                if key in open_keys:
                    fail(f"rank {r}: two open requests share the key {key}")
                open_keys.add(key)
            elif a[0] == "wait":
                key = tuple(int(x) for x in a[1:4])
                if key not in open_keys:
                    fail(f"rank {r}: a wait for {key}, which no open request has")
                open_keys.remove(key)
        if open_keys:
            fail(f"rank {r}: requests never waited for: {sorted(open_keys)[:4]}")
    if sent != received:
        bad = [k for k in set(sent) | set(received) if sent.get(k) != received.get(k)]
        fail(f"{len(bad)} keys whose sends and receives differ, e.g. {bad[0]}: sent {sent.get(bad[0])}, "
             f"received {received.get(bad[0])}")
    return sum(len(v) for v in sent.values())


def check_collectives(ranks):
    seqs = [[a for a in actions if a[0] in COLLECTIVES] for actions in ranks]
    if any(s != seqs[0] for s in seqs):
        fail("the ranks' world collectives differ")
    return len(seqs[0])


def replay(directory, n):
    if shutil.which("smpirun") is None:
        print("smpirun not found (SimGrid is not installed): the replay by SimGrid is skipped")
        return
    platform = os.path.join(directory, "platform.xml")
    with open(platform, "w") as f:
        f.write("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                "<platform version=\"4.1\">\n"
                f"  <cluster id=\"c\" prefix=\"node-\" suffix=\"\" radical=\"0-{n - 1}\" speed=\"1Gf\" bw=\"10GBps\" "
                "lat=\"1us\" bb_bw=\"100GBps\" bb_lat=\"0\"/>\n</platform>\n")
    hosts = os.path.join(directory, "hosts")
    with open(hosts, "w") as f:
        f.write("".join(f"node-{i}\n" for i in range(n)))
    r = run(["smpirun", "-np", n, "-platform", platform, "-hostfile", hosts, "-replay",
             os.path.join(directory, "traces.txt")], timeout=300)
    said = [line for line in (r.stdout + r.stderr).splitlines() if "Simulation time" in line]
    if not said or float(said[-1].split()[-1]) <= 0:
        fail(f"smpirun -replay said no simulation time:\n{r.stderr[-1500:]}")
    print(f"n = {n}: smpirun -replay ran it to the end ({said[-1].split()[-1]} s simulated)")


def compute_total(ranks):
    return sum(int(a[1]) for actions in ranks for a in actions if a[0] == "compute")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--p3s", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--np", type=int, nargs="+", default=[16, 12])
    a = ap.parse_args()
    sigs, _ = write_altered(a.data, a.work, lambda signature: None)  # as bundled
    model = os.path.join(a.work, "app.model")
    run([a.p3s, "model", *sigs, "-o", model, "-q"])
    for n in a.np:
        out = os.path.join(a.work, f"tit{n}")
        said = run([a.p3s, "predict", model, "--np", n, "-o", out, "--format", "tit"]).stdout
        if "collectives on communicators other than the world" not in said:
            fail(f"n = {n}: no note that the row and column collectives became messages:\n{said}")
        ranks = read_trace(out, n)
        messages = check_messages(ranks)
        collectives = check_collectives(ranks)
        if messages == 0 or collectives == 0:
            fail(f"n = {n}: {messages} messages, {collectives} world collectives: the app has both")
        print(f"n = {n}: {sum(map(len, ranks))} actions, {messages} messages matched, {collectives} world "
              f"collectives alike on every rank")
        replay(out, n)
    n = a.np[0]
    base = compute_total(read_trace(os.path.join(a.work, f"tit{n}"), n))
    fast = os.path.join(a.work, "fast")
    run([a.p3s, "predict", model, "--np", n, "-o", fast, "--format", "tit", "--flops", "2e9"])
    doubled = compute_total(read_trace(fast, n))
    if base <= 0 or abs(doubled - 2 * base) > 1e-3 * base + n * 1000:
        fail(f"--flops 2e9 wrote {doubled} flops, 1e9 wrote {base}")
    r = run([a.p3s, "predict", model, "--np", n, "-o", fast, "--format", "tit"], want_rc=1)
    if "--force" not in r.stderr or len(r.stderr.strip().splitlines()) != 1:
        fail(f"an existing trace was not refused in one line: {r.stderr!r}")
    r = run([a.p3s, "predict", model, "--np", n, "-o", fast, "--format", "tit", "--flops", "0"], want_rc=2)
    if "--flops" not in r.stderr:
        fail(f"--flops 0 was not named: {r.stderr!r}")
    print("--flops scales the compute; an existing trace and a bad option are refused: ok")
    print("PASS")


if __name__ == "__main__":
    main()
