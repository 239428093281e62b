#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""`p3s analyze` on runs recorded from the test apps.

    check_analyze.py SCENARIO --p3s BIN --work DIR [launcher options] --app PATH [--iters N]

Scenarios:
  scaling   record the app at 2, 4, 8 and 16 ranks with N and 2N iterations: the loop phase weighs N (2N), the
            phase count and order shape are the same at every rank count and iteration count, coverage >= 95 %
  pipeline  a pipelined wavefront solver (the wavefront app with 8 blocks of planes per sweep) at 4, 8 and 16
            ranks: analysed together with the default, one method for all, and with --phases by-rank, one
            relevant loop phase weighing N and the same relevant phases at every rank count; with any method, the phases' times and the time outside them add up to the run time
            within 1 %
  md        an MD time loop (the mdsteps app, then Debian's LAMMPS on an LJ melt: 200 steps, re-neighbouring every
            20, output every 50) at 2, 4, 8 and 16 ranks, analysed together with the default --phases auto, which
            must choose by-rank for the series: the plain step, the step that re-neighbours and the step that
            writes output are phases weighing 186, 10 and 3 (the last output step ends the run) at every rank
            count, in the same order, with the same relevant steps; time partition within 1 %
  exports   --logical-csv (one row per action, ticks increasing per rank, phases and instances) and
            --otf2-logical (otf2-print reads it; phase regions present)
  errors    negative inputs: not an archive, damaged archive (alone, and in a series: no signature written),
            -o with several runs, a killed run (unmatched receive) without and with --partial
"""
import argparse
import csv
import json
import os
import shutil
import subprocess
import sys

import p3s_launch
from p3s_order import order_runs


def fail(step, msg):
    print(f"FAIL [{step}]: {msg}", file=sys.stderr)
    sys.exit(1)


def run(cmd, timeout=600, env=None):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        fail("run", f"timed out: {' '.join(cmd)}")


class Ctx:
    def __init__(self, a):
        self.a = a

    def record(self, name, np, args, extra=(), app=None):
        trace = os.path.join(self.a.work, name)
        shutil.rmtree(trace, ignore_errors=True)
        cmd = [self.a.p3s, "record", "-o", trace, *extra, "--", *p3s_launch.launch(self.a, np), app or self.a.app,
               *args]
        r = run(cmd)
        return trace, r

    def analyze(self, trace, *opts):
        sig = os.path.join(trace, "signature.json")
        r = run([self.a.p3s, "analyze", trace, "-o", sig, *opts])
        if r.returncode != 0:
            fail("analyze", f"{trace}: exit {r.returncode}: {r.stderr.strip()}")
        with open(sig) as f:
            return json.load(f), r.stdout

    def analyze_series(self, traces, *opts):
        """The runs analysed together (one phase method for all): their signatures and the report."""
        for t in traces:
            try:
                os.remove(os.path.join(t, "signature.json"))
            except FileNotFoundError:
                pass
        r = run([self.a.p3s, "analyze", *traces, *opts])
        if r.returncode != 0:
            fail("analyze", f"{' '.join(traces)}: exit {r.returncode}: {r.stderr.strip()}")
        sigs = []
        for t in traces:
            with open(os.path.join(t, "signature.json")) as f:
                sigs.append(json.load(f))
        return sigs, r.stdout


def check_time_partition(sig, what):
    """Sum over phases of weight x mean instance time, plus the time outside phases, is the run time."""
    total = sum(p["weight"] * p["time_ns"]["mean"] for p in sig["phases"]) + sig["outside_ns"]
    ratio = total / sig["run_time_ns"]
    if abs(ratio - 1) > 0.01:
        fail("time partition", f"{what}: phases and outside add up to {ratio:.4f} x the run time")
    return ratio


def loop_phase(sig):
    return max(sig["phases"], key=lambda p: p["weight"])


def shape(sig):
    """Order with phase ids replaced by their weight rank: comparable across runs."""
    return [(len(sig["phases"]), len(order_runs(sig["order"])))]


def check_requests(sig, phase, np):
    """Every posted receive names the message that completed it, every completion the event that started its
    request, and the communicators used are listed with their members."""
    comms = {c["id"]: c for c in sig["communicators"]}
    for r in phase["ranks"]:
        events = r["events"]
        for i, e in enumerate(events):
            for a in e["actions"]:
                linked = a["kind"] != "isend_complete" or "started" in a
                if a["comm"] not in comms and linked:
                    fail("communicators", f"rank {r['rank']}: communicator {a['comm']} is not listed")
                if a["kind"] == "irecv" and "peer" not in a:
                    fail("requests", f"rank {r['rank']} event {i}: a posted receive without its message: {a}")
                if a["kind"] in ("recv", "isend_complete") and a.get("request") and "started" in a:
                    start = events[a["started"]]
                    kinds = {"recv": "irecv", "isend_complete": "send"}
                    origin = [x for x in start["actions"] if x["kind"] == kinds[a["kind"]]]
                    if not origin or (a["kind"] == "recv" and origin[0]["peer"] != a["peer"]):
                        fail("requests", f"rank {r['rank']} event {i}: {a} was not started by event {start}")
    for c in sig["communicators"]:
        if c["kind"] == "group" and not set(c["ranks"]) <= set(range(np)):
            fail("communicators", f"communicator {c} has ranks outside 0..{np - 1}")


def scaling(c):
    n = c.a.iters
    seen = {}
    for np in (2, 4, 8, 16):
        for iters in (n, 2 * n):
            # A loaded machine can slow a few consecutive iterations enough (CPU time on an oversubscribed VM) to
            # make them a work population of their own: such a run is recorded again, up to twice.
            for attempt in range(3):
                trace, r = c.record(f"scaling.np{np}.it{iters}", np, [str(iters)])
                if r.returncode != 0:
                    fail("record", f"{np} ranks: {r.stderr.strip()[-500:]}")
                sig, report = c.analyze(trace)
                if attempt == 2 or not any("split_from" in p for p in sig["phases"]):
                    break
                print(f"note: {np} ranks, {iters} iterations: a work split; recording again", file=sys.stderr)
            if sig["processes"] != np:
                fail("processes", f"{sig['processes']} != {np}")
            loop = loop_phase(sig)
            if loop["weight"] != iters:
                fail("weight", f"{np} ranks, {iters} iterations: the loop phase weighs {loop['weight']}\n{report}")
            if sig["coverage"] < 0.95:
                fail("coverage", f"{np} ranks: coverage {sig['coverage']:.3f} < 0.95\n{report}")
            total = sum(p["weight"] * p["ticks"] for p in sig["phases"])
            if total != sig["ticks"]:
                fail("ticks", f"phase occurrences cover {total} of {sig['ticks']} ticks")
            if sum(run_[1] for run_ in order_runs(sig["order"])) != sum(p["weight"] for p in sig["phases"]):
                fail("order", "the phase order does not add up to the weights")
            check_time_partition(sig, f"{np} ranks, {iters} iterations")
            if len(loop["ranks"]) != np:
                fail("sipt", f"the loop phase has events for {len(loop['ranks'])} of {np} ranks")
            check_requests(sig, loop, np)
            seen[(np, iters)] = (len(sig["phases"]), len(order_runs(sig["order"])), loop["ticks"])
            print(f"{np:3d} ranks {iters:4d} iterations: {len(sig['phases'])} phases, order {sig['order']}, "
                  f"loop weight {loop['weight']}, coverage {100 * sig['coverage']:.1f} %")
    counts = {v[:2] for v in seen.values()}
    if len(counts) != 1:
        fail("same phases", f"phase count / order length differ across runs: {seen}")


def relevant_loop(sig, n, what, report):
    """The relevant phases' weights, which must hold one loop phase of n."""
    relevant = sorted((p["weight"] for p in sig["phases"] if p["relevant"]), reverse=True)
    if not relevant or relevant[0] != n or relevant.count(n) != 1:
        fail("weight", f"{what}: relevant phases weigh {relevant}, expected one loop phase of {n}\n{report}")
    return relevant


def pipeline(c):
    n = c.a.iters
    counts = (4, 8, 16)
    traces = []
    for np in counts:
        trace, r = c.record(f"pipeline.np{np}", np, [str(n), "240", "16", "8"])
        if r.returncode != 0:
            fail("record", f"{np} ranks: {r.stderr.strip()[-500:]}")
        traces.append(trace)
    # The series analysed together with the default: one method, one loop phase of n, the same at every count.
    sigs, report = c.analyze_series(traces)
    methods = {sig["phase_method"] for sig in sigs}
    if len(methods) != 1:
        fail("one method", f"the series' phases were found by {methods}\n{report}")
    series = {}
    for np, sig in zip(counts, sigs):
        check_time_partition(sig, f"{np} ranks, series")
        series[np] = relevant_loop(sig, n, f"{np} ranks, series", report)
    if len({tuple(v) for v in series.values()}) != 1:
        fail("same phases", f"the series' relevant phases differ across rank counts: {series}")
    print(f"series by {methods.pop()}: relevant phases weigh {series}")
    shapes = {}
    for np, trace in zip(counts, traces):
        sig, _ = c.analyze(trace, "--phases", "global-ticks")
        ratio_global = check_time_partition(sig, f"{np} ranks, global-ticks")
        sig, report = c.analyze(trace, "--phases", "by-rank")
        if sig["phase_method"] != "by-rank":
            fail("method", f"{np} ranks: phases found by {sig['phase_method']}\n{report}")
        ratio = check_time_partition(sig, f"{np} ranks, by-rank")
        shapes[np] = relevant_loop(sig, n, f"{np} ranks, by-rank", report)
        print(f"{np:3d} ranks: relevant phases weigh {shapes[np]}; time partition {ratio:.4f} "
              f"(global-ticks {ratio_global:.4f})")
    if len({tuple(v) for v in shapes.values()}) != 1:
        fail("same phases", f"the relevant phases differ across rank counts: {shapes}")


# A LAMMPS input: LJ melt of 4,000 atoms, 200 steps, re-neighbouring every 20, thermodynamic output every 50.
LAMMPS_INPUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "in.melt")


def md_steps(c, what, app, args, counts):
    """The step kinds of an MD time loop: its repeated phases weighing 186, 10 and 3 in one order at every count, found
    by the by-rank method, which the default `auto` must choose for the series analysed together."""
    def record(np):
        trace, r = c.record(f"md.{what}.np{np}", np, args, app=app)
        if r.returncode != 0:
            fail("record", f"{what}, {np} ranks: {r.stderr.strip()[-500:]}")
        return trace

    def loop_steps(sig):
        """The phases of 3 instances or more that run inside the time loop (from the first to the last instance of
        the heaviest phase), by id: the set-up's straight-line code can recur in pieces (a lone Allreduce between
        two of its computations, cut so under load) without being a step of the loop."""
        runs = order_runs(sig["order"])
        main = max(sig["phases"], key=lambda p: p["weight"])["id"]
        at = [i for i, (phase, _) in enumerate(runs) if phase == main]
        inside = {phase for phase, _ in runs[at[0]:at[-1] + 1]}
        return {p["id"]: p for p in sig["phases"] if p["weight"] >= 3 and p["id"] in inside}

    def steps_of(sig):
        return sorted((p["weight"] for p in loop_steps(sig).values()), reverse=True)

    traces = [record(np) for np in counts]
    sigs, report = c.analyze_series(traces)
    # With the CPU-time metric a loaded machine can slow a few steps of one kind together, which then form a work
    # population of their own (a phase split from another), or make a short burst that is computation in every
    # other step fall below the compute threshold once, so that two steps are one unit (a plain step of 184 and one
    # of two steps), or the first steps' bursts, slowed so, join the set-up: such a run is recorded again, up to
    # twice. A run that does it three times fails.
    for _ in range(2):
        split = [i for i, sig in enumerate(sigs)
                 if any("split_from" in p for p in sig["phases"]) or steps_of(sig) != [186, 10, 3]]
        if not split:
            break
        print(f"note: {what}: a work split or steps cut otherwise at {[counts[i] for i in split]} ranks; "
              "recording again", file=sys.stderr)
        for i in split:
            traces[i] = record(counts[i])
        sigs, report = c.analyze_series(traces)
    orders = {}
    for np, sig in zip(counts, sigs):
        if sig["phase_method"] != "by-rank":
            fail("method", f"{what}, {np} ranks: phases by {sig['phase_method']} ({sig.get('phase_method_note', '')}),"
                           f" expected by-rank\n{report}")
        ratio = check_time_partition(sig, f"{what}, {np} ranks")
        steps = {i: p["weight"] for i, p in loop_steps(sig).items()}
        if steps_of(sig) != [186, 10, 3]:
            fail("step kinds", f"{what}, {np} ranks: repeated phases weigh {sorted(steps.values(), reverse=True)}, "
                               f"expected the plain, re-neighbouring and output steps: [186, 10, 3]\n{report}")
        orders[np] = [(steps[run_[0]], run_[1]) for run_ in order_runs(sig["order"]) if run_[0] in steps]
        print(f"{what}: {np:3d} ranks: steps weigh {sorted(steps.values(), reverse=True)} of "
              f"{len(sig['phases'])} phases; time partition {ratio:.4f}; {sig.get('phase_method_note', '')}")
    if len({tuple(v) for v in orders.values()}) != 1:
        fail("same order", f"{what}: the steps come in another order at some rank count: {orders}")
    # The steps (phases of 3 or more instances in the loop) relevant at one count are relevant at every count.
    relevant = {np: [p["weight"] for p in loop_steps(sig).values() if p["relevant"]] for np, sig in zip(counts, sigs)}
    if len({tuple(v) for v in relevant.values()}) != 1:
        fail("same relevant steps", f"{what}: the relevant steps differ across rank counts: {relevant}")


def md(c):
    md_steps(c, "mdsteps", c.a.app, ["200", "20", "50"], (2, 4, 8, 16))
    lmp = shutil.which("lmp") or shutil.which("lmp_openmpi")
    if lmp is None:
        fail("lammps", "the lammps package is not installed (apt-get install lammps)")
    # 32,000 atoms: at 16 ranks a step's force computation (~0.6 ms) then stands clear of the ~30-50 us delays a
    # loaded 2-core machine adds to a burst now and then; with 4,000 atoms (~75 us) such a delay cut a step in two.
    md_steps(c, "lammps", lmp, ["-in", LAMMPS_INPUT, "-var", "L", "20", "-log", "none", "-screen", "none"],
             (2, 4, 8, 16))


def exports(c):
    trace, r = c.record("exports", 4, [str(c.a.iters)])
    if r.returncode != 0:
        fail("record", r.stderr)
    csv_path = os.path.join(c.a.work, "logical.csv")
    otf2_dir = os.path.join(c.a.work, "logical-otf2")
    shutil.rmtree(otf2_dir, ignore_errors=True)
    if os.path.exists(csv_path):
        os.remove(csv_path)
    sig, _ = c.analyze(trace, "--logical-csv", csv_path, "--otf2-logical", otf2_dir, "-q")
    # Existing exports are replaced only with --force.
    for opt, path in (("--logical-csv", csv_path), ("--otf2-logical", otf2_dir)):
        again = run([c.a.p3s, "analyze", trace, opt, path, "-q"])
        if again.returncode != 1 or "--force" not in again.stderr or again.stderr.count("\n") != 1:
            fail("no overwrite", f"{opt} over an existing output: exit {again.returncode}: {again.stderr!r}")
        forced = run([c.a.p3s, "analyze", trace, opt, path, "-q", "--force"])
        if forced.returncode != 0:
            fail("force", f"{opt} with --force: exit {forced.returncode}: {forced.stderr!r}")
    with open(csv_path) as f:
        rows = list(csv.DictReader(f))
    if not rows or set(rows[0]) != {"rank", "thread", "seq", "call", "action", "peer", "tag", "bytes", "tick",
                                     "phase", "instance"}:
        fail("csv", f"unexpected columns: {rows[0] if rows else 'no rows'}")
    last = {}
    for row in rows:
        key = (row["rank"], row["thread"])
        if row["action"] in ("send", "recv", "coll", "icoll_complete"):
            t = int(row["tick"])
            if t <= last.get(key, 0):
                fail("csv", f"ticks of rank {key} do not increase at {row}")
            last[key] = t
        if int(row["phase"]) >= len(sig["phases"]):
            fail("csv", f"unknown phase in {row}")
    events = sum(1 for row in rows if row["action"] in ("send", "recv", "coll", "icoll_complete"))
    if events != sig["events"]:
        fail("csv", f"{events} event rows, the signature counts {sig['events']}")
    printed = run(["otf2-print", os.path.join(otf2_dir, "traces.otf2")])
    if printed.returncode != 0:
        fail("otf2-logical", printed.stderr.strip()[:500])
    loop = loop_phase(sig)
    if f'"phase {loop["id"]}"' not in printed.stdout:
        fail("otf2-logical", "the phase regions are missing")


def errors(c):
    bad = run([c.a.p3s, "analyze", os.path.join(c.a.work, "no-such-trace")])
    if bad.returncode != 1 or "no such file" not in bad.stderr or bad.stderr.count("\n") != 1:
        fail("not an archive", f"exit {bad.returncode}: {bad.stderr!r}")
    trace, r = c.record("errors.ok", 2, ["5"])
    damaged = os.path.join(c.a.work, "errors.damaged")
    shutil.rmtree(damaged, ignore_errors=True)
    shutil.copytree(trace, damaged)
    evt = os.path.join(damaged, "traces", "1.evt")
    os.truncate(evt, os.path.getsize(evt) // 2)
    r = run([c.a.p3s, "analyze", damaged])
    if r.returncode != 1 or "traces.otf2" not in r.stderr:
        fail("damaged archive", f"exit {r.returncode}: {r.stderr!r}")
    # A series with a damaged run: refused, and no signature written for the good run either.
    good_sig = os.path.join(trace, "signature.json")
    if os.path.exists(good_sig):
        os.remove(good_sig)
    r = run([c.a.p3s, "analyze", trace, damaged])
    if r.returncode != 1 or "traces.otf2" not in r.stderr or os.path.exists(good_sig):
        fail("damaged series", f"exit {r.returncode}, signature left: {os.path.exists(good_sig)}: {r.stderr!r}")
    # No output may write over the input archive, --force or not; the archive stays readable.
    for opts in (["--otf2-logical", trace], ["-o", os.path.join(trace, "traces.otf2")],
                 ["--logical-csv", os.path.join(trace, "traces.otf2")], ["-o", os.path.join(trace, "traces.def")],
                 ["--logical-csv", os.path.join(trace, "traces", "0.evt"), "--force"]):
        r = run([c.a.p3s, "analyze", trace, *opts, "-q"])
        if r.returncode != 1 or "input archive" not in r.stderr or r.stderr.count("\n") != 1:
            fail("input kept", f"analyze {' '.join(opts)}: exit {r.returncode}: {r.stderr!r}")
    c.analyze(trace, "-q")
    r = run([c.a.p3s, "analyze", trace, trace, "-o", os.path.join(c.a.work, "one.json")])
    if r.returncode != 1 or "take one run" not in r.stderr or r.stderr.count("\n") != 1:
        fail("series output", f"-o with two runs must be refused: exit {r.returncode}: {r.stderr!r}")
    # A series holds each run once, and runs of one program: a run given twice voted twice for the series' phase
    # method, another program's run had its phases found by this one's method and its signature rewritten so.
    r = run([c.a.p3s, "analyze", trace, os.path.join(trace, "traces.otf2")])
    if r.returncode != 1 or "again" not in r.stderr or r.stderr.count("\n") != 1:
        fail("twice", f"a run given twice: exit {r.returncode}: {r.stderr!r}")
    other_app = os.path.join(c.a.work, "other_program")
    shutil.copy(c.a.app, other_app)
    other, r = c.record("errors.other", 4, ["5"], app=other_app)
    if r.returncode != 0:
        fail("other program", f"recording failed: {r.stderr[-500:]}")
    with open(os.path.join(other, "signature.json"), "w") as f:
        f.write("kept\n")
    r = run([c.a.p3s, "analyze", trace, other])
    if r.returncode != 1 or "different programs" not in r.stderr or r.stderr.count("\n") != 1:
        fail("other program", f"two programs in one series: exit {r.returncode}: {r.stderr!r}")
    with open(os.path.join(other, "signature.json")) as f:
        if f.read() != "kept\n":
            fail("other program", "the other program's signature was rewritten")
    killed, r = c.record("errors.killed", 4, ["20000", "--die-at", "2000"], ["--buffer-mb", "1"])
    if r.returncode == 0:
        fail("killed run", "the crash app was expected to die")
    r = run([c.a.p3s, "analyze", killed])
    if r.returncode != 1 or "has no matching send" not in r.stderr and "members" not in r.stderr:
        fail("unmatched", f"a killed run must be refused with the unmatched call: exit {r.returncode}: {r.stderr!r}")
    if "--partial" not in r.stderr:
        fail("unmatched", f"the message must name the fix: {r.stderr!r}")
    sig, _ = c.analyze(killed, "--partial", "-q")
    if sig["complete"] or not sig["warnings"]:
        fail("partial", "a partial analysis must say the run was incomplete")


SCENARIOS = {f.__name__: f for f in (scaling, pipeline, md, exports, errors)}


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("scenario", choices=sorted(SCENARIOS))
    p3s_launch.add_options(p)
    p.add_argument("--p3s", required=True)
    p.add_argument("--app", required=True)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--work", required=True)
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    SCENARIOS[a.scenario](Ctx(a))
    print(f"ok: {a.scenario}")


if __name__ == "__main__":
    main()
