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
An executable trace written by hand (tests/tools/handwritten_st4np.py: non-blocking ring completed by Waitany and
Testsome, collectives on the world and on block and strided communicators, Sendrecv, a non-periodic halo) is
written by `p3s predict DIR --format tit` and read back against its own lines: every instance of the order, on
every rank, the same actions in the same order (peers, sizes, collectives, each burst as the compute before the
next action), tags renumbered alike on both ends, waits on the requests their calls started, collectives on other
communicators as messages among their members only; smpirun replays it.
"""
import argparse
import collections
import os
import shutil
import subprocess
import sys

from altered import write_altered

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from handwritten_st4np import write_handwritten  # noqa: E402

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


class Reading:
    """One rank's time-independent lines read back along its ST4NP lines (what the export must have written)."""

    STRIDE = 1 << 16  # tags: base per (communicator, tag) x this + the message's count in the instance

    def __init__(self, r, actions, comms, bases, flops):
        self.r, self.actions, self.at, self.comms, self.bases, self.flops = r, actions, 0, comms, bases, flops

    def take(self, *kinds):
        if self.at >= len(self.actions):
            fail(f"rank {self.r}: the trace ends where a {'/'.join(kinds)} was due")
        a = self.actions[self.at]
        if a[0] not in kinds:
            fail(f"rank {self.r}, line {self.at + 2}: {' '.join(a)} where a {'/'.join(kinds)} was due")
        self.at += 1
        return a

    def flush(self):
        if self.pending > 0:
            got = int(self.take("compute")[1])
            want = round(self.pending * 1e-9 * self.flops)
            if abs(got - want) > 1:
                fail(f"rank {self.r}: compute {got} where the bursts before it make {want}")
            self.pending = 0

    def tag(self, comm, tag, direction, peer, got):
        base = self.bases.setdefault((comm, tag), int(got) // self.STRIDE)
        k = self.count[(direction, comm, tag, peer)]
        self.count[(direction, comm, tag, peer)] += 1
        if int(got) != base * self.STRIDE + k:
            fail(f"rank {self.r}: tag {got} for message {k} of (communicator {comm}, tag {tag}), not "
                 f"{base * self.STRIDE + k}")
        return int(got)

    def message(self, kind, x):
        a = self.take(kind)
        if int(a[1]) != x["peer"] or int(a[3]) != round(x["bytes"]):
            fail(f"rank {self.r}: {' '.join(a)} for {x['kind']} of {x['bytes']} bytes with {x['peer']}")
        direction = "out" if kind in ("send", "isend") else "in"
        return self.tag(x["comm"], x["tag"], direction, x["peer"], a[2])

    def wait(self, key):
        a = self.take("wait")
        if tuple(int(v) for v in a[1:4]) != key:
            fail(f"rank {self.r}: wait {' '.join(a[1:4])} where the request {key} was due")

    def collective(self, x):
        comm = self.comms[x["comm"]]
        if comm["kind"] == "world":
            a = self.take(x["collective"].lower())
            if int(a[1]) != x["block"]:
                fail(f"rank {self.r}: {' '.join(a)} for a block of {x['block']}")
            return
        # As messages among the members: the lines of one base, to and from the communicator's members only.
        members = [q for q in range(len(self.comm_color)) if self.comm_color[q][x["comm"]] == self.comm_color[self.r][
            x["comm"]]]
        seen = 0
        while self.at < len(self.actions) and self.actions[self.at][0] in ("send", "recv"):
            a = self.actions[self.at]
            base = int(a[2]) // self.STRIDE
            if any(b == base for (c, t), b in self.bases.items() if t != "coll"):
                break
            if self.bases.setdefault((x["comm"], "coll"), base) != base or int(a[1]) not in members:
                fail(f"rank {self.r}: {' '.join(a)} in a {x['collective']} among {members}")
            self.at += 1
            seen += 1
        if seen == 0:
            fail(f"rank {self.r}: its {x['collective']} on communicator {x['comm']} wrote no message")

    def instance(self, line):
        self.pending, self.count, started = 0, collections.Counter(), collections.defaultdict(list)
        for i, call in enumerate(line["calls"]):
            self.pending += call["burst_ns"]
            for x in call["actions"]:
                if x["kind"] != "isend_complete" and not (x["kind"] == "recv" and "started" in x):
                    self.flush()
                if x["kind"] == "send":
                    nb = call["call"].startswith("MPI_I")
                    t = self.message("isend" if nb else "send", x)
                    if nb:
                        started[i].append(("send", (self.r, x["peer"], t)))
                elif x["kind"] == "irecv":
                    started[i].append(("irecv", (x["peer"], self.r, self.message("irecv", x))))
                elif x["kind"] == "recv" and "started" not in x:
                    self.message("recv", x)
                elif x["kind"] in ("recv", "isend_complete"):
                    want = "irecv" if x["kind"] == "recv" else "send"
                    mine = started[x["started"]]
                    k = next(j for j, (kind, _) in enumerate(mine) if kind == want)
                    self.flush()
                    self.wait(mine.pop(k)[1])
                elif x["kind"] == "coll":
                    self.collective(x)
        self.pending += line.get("tail_ns", 0)
        self.flush()


def check_st4np_roundtrip(a, n):
    """The hand-written ST4NP at n exported by `p3s predict DIR --format tit` and read back against its lines."""
    st4np = os.path.join(a.work, f"handwritten.np{n}")
    out = st4np + ".tit"
    shutil.rmtree(st4np, ignore_errors=True)
    shutil.rmtree(out, ignore_errors=True)
    header, lines = write_handwritten(st4np, n)
    said = run([a.p3s, "predict", st4np, "--format", "tit", "-o", out]).stdout
    if "collectives on communicators other than the world" not in said:
        fail(f"hand-written ST4NP: no note that its block and strided collectives became messages:\n{said}")
    ranks = read_trace(out, n)
    comms = header["communicators"]
    colour = [[eval(c["color"].replace("mod", "%").replace("/", "//").replace("r", str(r))) for c in comms] for r in range(n)]
    bases = {}
    for r in range(n):
        reading = Reading(r, ranks[r], comms, bases, 1e9)
        reading.comm_color = colour
        own = {x["phase"]: x for x in lines if x["rank"] == r}
        for phase, count in header["order"]:
            for _ in range(count):
                reading.instance(own[phase])
        if reading.at != len(ranks[r]):
            fail(f"rank {r}: {len(ranks[r]) - reading.at} lines more than its ST4NP's, from {ranks[r][reading.at]}")
    messages = check_messages(ranks)
    instances = sum(c for _, c in header["order"])
    print(f"hand-written ST4NP at n = {n}: {sum(map(len, ranks))} lines read back as its {instances} instances per "
          f"rank, {messages} messages matched")
    replay(out, n)
    r = run([a.p3s, "predict", st4np, "--np", n + 1, "--format", "tit", "-o", out + "2"], want_rc=1)
    if "ranks, not --np" not in r.stderr or len(r.stderr.strip().splitlines()) != 1:
        fail(f"an ST4NP at another --np was not refused in one line: {r.stderr!r}")
    # A receive of any tag (which the format cannot say) is refused in one line, not written to hang SMPI.
    anytag = st4np + ".anytag"
    shutil.rmtree(anytag, ignore_errors=True)
    write_handwritten(anytag, n, lambda ls: ls[0]["calls"][0]["actions"][0].update(tag="any"))
    r = run([a.p3s, "predict", anytag, "--format", "tit", "-o", anytag + ".tit"], want_rc=1)
    if "with any tag" not in r.stderr or len(r.stderr.strip().splitlines()) != 1:
        fail(f"a receive of any tag was not refused in one line: {r.stderr!r}")
    r = run([a.p3s, "predict", st4np, "-o", out + "2"], want_rc=1)
    if "--format tit" not in r.stderr or len(r.stderr.strip().splitlines()) != 1:
        fail(f"an ST4NP written as anything but tit was not refused in one line: {r.stderr!r}")


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
    for n in (8, 6):
        check_st4np_roundtrip(a, n)
    print("PASS")


if __name__ == "__main__":
    main()
