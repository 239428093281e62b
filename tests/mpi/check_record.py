#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Scenario tests of `p3s record`, `p3s recover` and the recorder's behaviour as a guest.

    check_record.py SCENARIO --p3s BIN --preload LIB --work DIR [launcher options] [--app NAME=PATH ...]

Scenarios: crash, unwritable_rank, sigterm, full_disk, fortran_equals_c, counters, record_cli, inert, lammps, readme_env.
Each failure exits non-zero with a message naming the scenario step.
"""
import argparse
import json
import re
import os
import resource
import shutil
import signal
import subprocess
import sys
import time

import p3s_launch


def fail(step, msg):
    print(f"FAIL [{step}]: {msg}", file=sys.stderr)
    sys.exit(1)


def run(cmd, env=None, timeout=300, cwd=None):
    try:
        return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, cwd=cwd)
    except subprocess.TimeoutExpired:
        fail("run", f"timed out after {timeout}s: {' '.join(cmd)}")


class Ctx:
    def __init__(self, a):
        self.a = a
        self.apps = dict(x.split("=", 1) for x in a.app)

    def mpirun(self, np):
        return p3s_launch.launch(self.a, np)

    def record(self, out, cmd, *opts):
        return run([self.a.p3s, "record", "-o", out, *opts, "--"] + cmd)

    def summary(self, trace):
        r = run([self.a.p3s, "summary", "--json", trace])
        if r.returncode != 0:
            fail("summary", f"p3s summary {trace}: {r.stderr.strip()}")
        return json.loads(r.stdout)

    def work(self, name):
        d = os.path.join(self.a.work, name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        return d

    def otf2_print_ok(self, trace):
        r = run(["otf2-print", os.path.join(trace, "traces.otf2")])
        if r.returncode != 0:
            fail("otf2-print", r.stderr.strip()[:500])


def crash(c):
    """SIGKILL of one rank mid-run: `p3s record` notices, recovers what was flushed, exits non-zero."""
    d = c.work("crash")
    trace = os.path.join(d, "trace")
    r = c.record(trace, c.mpirun(4) + [c.apps["crash"], "20000", "--die-at", "15000"], "--buffer-mb", "1")
    if r.returncode == 0:
        fail("exit", "p3s record returned 0 although a rank was killed")
    if "ended before MPI_Finalize" not in r.stderr:
        fail("message", f"p3s record did not report the incomplete run: {r.stderr.strip()[-800:]}")
    c.otf2_print_ok(trace)
    s = c.summary(trace)
    if s["complete"]:
        fail("archive", "a recovered archive must be marked incomplete")
    if s["processes"] != 4 or len(s["ranks"]) != 4:
        fail("archive", f"expected 4 ranks, got {s['processes']} / {len(s['ranks'])}")
    # The MPI library (whose MPI_Dims_create a model's grids follow) is kept through the recovery.
    if "MPI" not in s.get("mpi_library", "") and "MPICH" not in s.get("mpi_library", ""):
        fail("archive", f"the recovered archive does not name the MPI library: {s.get('mpi_library')!r}")
    # 1 MiB buffers fill after ~3*10^4 calls (about 35 bytes of events each): every rank flushed at least twice
    # before the kill at iteration 15000 (75000 calls).
    for rank in s["ranks"]:
        if rank["calls"].get("MPI_Sendrecv", 0) < 1000:
            fail("archive", f"rank {rank['rank']} kept only {rank['calls'].get('MPI_Sendrecv', 0)} Sendrecv calls")
    again = run([c.a.p3s, "recover", trace])
    if again.returncode != 0 or "incomplete" not in again.stdout:
        fail("recover", f"p3s recover on the same directory: {again.stdout} {again.stderr}")
    damaged_length(c, trace)
    damaged_events(c, trace)
    # A log of another run of the same size among them: refused, not merged.
    other = c.work("crash-other")
    r = c.record(os.path.join(other, "trace"), c.mpirun(4) + [c.apps["crash"], "20000", "--die-at", "500"],
                 "--buffer-mb", "1")
    mixed = trace + ".mixed"
    shutil.rmtree(mixed, ignore_errors=True)
    shutil.copytree(trace, mixed)
    shutil.copy(os.path.join(other, "trace", "p3s-raw", "2.0.raw"), os.path.join(mixed, "p3s-raw", "2.0.raw"))
    r = run([c.a.p3s, "recover", mixed])
    if r.returncode != 1 or "belongs to another run" not in r.stderr or r.stderr.count("\n") != 1:
        fail("mixed runs", f"raw logs of two runs must not be merged: exit {r.returncode}: {r.stdout} {r.stderr}")


def damaged_length(c, trace):
    """One record length in the middle of rank 1's raw log made huge (a flipped byte): recovery allocates nothing
    for it, keeps the records before it, and names the torn log with what was lost."""
    d = trace + ".damaged"
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(trace, d)
    log = os.path.join(d, "p3s-raw", "1.0.raw")
    with open(log, "r+b") as f:
        data = f.read()
        at, offsets = 256, []  # the file header, then records of (length varint, body)
        while at < len(data):
            length, shift, head = 0, 0, 0
            while at + head < len(data):
                b = data[at + head]
                head += 1
                length |= (b & 0x7F) << shift
                shift += 7
                if b < 0x80:
                    break
            if length == 0 or at + head + length > len(data):
                break
            offsets.append(at)
            at += head + length
        middle = offsets[len(offsets) // 2]
        f.seek(middle)
        f.write(bytes([0xFF, 0xFF, 0xFF, 0xFF, 0x0F]))  # a length of 4 GiB over the record's first bytes
    limit = lambda: resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
    r = subprocess.run([c.a.p3s, "recover", d], capture_output=True, text=True, timeout=120, preexec_fn=limit)
    if r.returncode != 0 or "rank 1: its raw log is torn after" not in r.stdout or "damaged" not in r.stdout:
        fail("damaged length", f"exit {r.returncode}: {r.stdout} {r.stderr}")
    s = c.summary(d)
    if s["complete"] or not s["ranks"][1]["calls"]:
        fail("damaged length", "the records before the damage must be kept, the archive marked incomplete")


def event_records(data, chunk=1 << 20):
    """Offsets of the records of an OTF2 event file as p3s writes it, in its first chunks (the framing only)."""
    no_length = {12, 13, 16, 17, 21}
    offsets = []
    for start in range(0, len(data), chunk):
        at, end = start + 18, min(start + chunk, len(data))  # after the chunk header
        while at < end and data[at] not in (0, 2):
            rid = data[at]
            if rid == 5:
                size = 9
            elif rid in no_length:
                size = 2 + (0 if data[at + 1] in (0, 0xFF) else data[at + 1])
            else:
                size = 2 + data[at + 1]
            if rid != 5:
                offsets.append(at)
            at += size
    return offsets


def damaged_events(c, trace):
    """A record id in the middle of rank 1's event file overwritten (a flipped byte): recovery keeps the events before
    it, cuts the rest, and names the torn file with what was lost."""
    d = trace + ".damaged-events"
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(trace, d)
    whole = c.summary(trace)["ranks"][1]["calls"].get("MPI_Sendrecv", 0)
    with open(os.path.join(d, "p3s-raw", "1.0.evt"), "r+b") as f:
        offsets = event_records(f.read())
        f.seek(offsets[len(offsets) // 2])
        f.write(bytes([0xEE]))  # no record has this id
    r = run([c.a.p3s, "recover", d])
    if r.returncode != 0 or "rank 1: its event file is torn after" not in r.stdout or "damaged" not in r.stdout:
        fail("damaged events", f"exit {r.returncode}: {r.stdout} {r.stderr}")
    c.otf2_print_ok(d)
    kept = c.summary(d)["ranks"][1]["calls"].get("MPI_Sendrecv", 0)
    if not whole // 3 < kept < whole:
        fail("damaged events", f"rank 1 kept {kept} of its {whole} Sendrecv calls; about half were before the damage")


def unwritable_rank(c):
    """One rank cannot open its raw log (a trace directory not shared with its node): every rank stops recording
    together at MPI_Init, so the job ends as fast as untraced instead of hanging in the tool's MPI_Finalize."""
    d = c.work("unwritable_rank")
    trace = os.path.join(d, "trace")
    app = [c.apps["ring"], "200"]
    # An MPMD launch (Open MPI's syntax): rank 1 is told of a directory that does not exist.
    second = [":", c.a.np_flag, "1"]
    plain = run(c.mpirun(1) + app + second + app, timeout=120)
    if plain.returncode != 0:
        fail("untraced", f"the untraced MPMD run failed: {plain.stderr.strip()[-800:]}")
    elsewhere = ["-x", "P3S_TRACE_DIR=" + os.path.join(d, "missing", "deeper")]
    cmd = c.mpirun(1) + app + second + elsewhere + app
    r = run([c.a.p3s, "record", "-o", trace, "--"] + cmd, timeout=60)
    if "ring: iterations 200" not in r.stdout:
        fail("output", f"the application's output changed: {r.stdout[-500:]!r}")
    if "tracing disabled on every rank" not in r.stderr or "cannot create" not in r.stderr:
        fail("message", f"no message says why recording stopped: {r.stderr.strip()[-800:]}")
    if os.path.exists(os.path.join(trace, "p3s-raw")) or os.path.exists(os.path.join(trace, "traces.otf2")):
        fail("leftovers", f"raw logs or an archive left in {trace}: {os.listdir(trace)}")


def sigterm(c):
    """A batch scheduler's SIGTERM to the job's process group, and a SIGHUP to p3s record alone: the job ends as
    it would untraced (same exit status, no process left), and the trace is recovered."""
    d = c.work("sigterm")
    job = c.mpirun(2) + [c.apps["ring"], "1000000"]

    def ended_by(cmd, sig, group, started):
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)
        for _ in range(300):
            if started(p.pid):
                break
            time.sleep(0.1)
        time.sleep(0.5)
        if group:
            os.killpg(p.pid, sig)
        else:
            os.kill(p.pid, sig)
        try:
            err = p.communicate(timeout=120)[1]
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            fail("signal", f"{' '.join(cmd[:4])} did not end within 120 s of signal {sig}")
        for _ in range(100):  # ranks may take a moment to go once their launcher has
            leftover = run(["pgrep", "-s", str(p.pid)]).stdout.split()
            if not leftover:
                break
            time.sleep(0.1)
        if leftover:
            run(["pkill", "-KILL", "-s", str(p.pid)])
            fail("orphans", f"processes left after signal {sig}: {leftover}")
        return p.returncode, err

    for sig, group in ((signal.SIGTERM, True), (signal.SIGHUP, False)):
        # Started: both ranks of this job (its session) run.
        plain_rc, _ = ended_by(job, sig, group,
                               lambda sid: len(run(["pgrep", "-s", str(sid), "-f", c.apps["ring"]]).stdout.split()) == 2)
        trace = os.path.join(d, f"trace.{int(sig)}")
        raw = os.path.join(trace, "p3s-raw")
        # Started: every rank is past MPI_Init and has written events (its first periodic flush).
        traced_rc, err = ended_by([c.a.p3s, "record", "-o", trace, "--"] + job, sig, group,
                                  lambda sid: os.path.isdir(raw) and len(events_in(raw)) == 2 and all(
                                      os.path.getsize(os.path.join(raw, f)) > 0 for f in events_in(raw)))
        if traced_rc != plain_rc:
            fail("exit status", f"signal {sig}: traced exit {traced_rc}, untraced {plain_rc}: {err[-800:]}")
        if "ended before MPI_Finalize" not in err:
            fail("recovery", f"signal {sig}: the trace was not recovered: {err[-800:]}")
        s = c.summary(trace)
        if s["complete"] or s["processes"] != 2:
            fail("recovery", f"signal {sig}: expected an incomplete 2-rank archive")


def events_in(raw):
    """The event files of a raw log directory (empty until a process writes its first events)."""
    return [f for f in os.listdir(raw) if f.endswith(".evt")] if os.path.isdir(raw) else []


def full_disk(c):
    """Recording, analysing and predicting onto a full file system (a 256 KiB tmpfs): the application's output and
    exit status are those of the untraced run, each tool says "no space left" in one line, no OTF2 library lines
    reach stderr, and no temporary is left behind."""
    d = c.work("full_disk")
    tiny = os.path.join(d, "tiny")
    os.makedirs(tiny)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", tiny], capture_output=True).returncode:
        print("full_disk: cannot mount a tmpfs here (not root, or no permission); nothing checked")
        return
    try:
        app = c.mpirun(2) + [c.apps["ring"], "3000"]
        plain = run(app)
        trace = os.path.join(tiny, "trace")
        r = c.record(trace, app)
        strip = lambda out: [x for x in out.splitlines() if not x.startswith("P3S-EXPECT")]
        if r.returncode != plain.returncode or strip(r.stdout) != strip(plain.stdout):
            fail("application", f"exit {r.returncode} (untraced {plain.returncode}); output {r.stdout[-300:]!r}")
        if f"no space left on {trace}" not in r.stderr or "[OTF2]" in r.stderr:
            fail("message", f"expected 'no space left on {trace}' and no OTF2 lines: {r.stderr[-1500:]}")
        if os.path.exists(os.path.join(trace, ".p3s-partial")):
            fail("temporaries", f"left in {trace}: {os.listdir(trace)}")
        shutil.rmtree(trace)
        # The tools writing their outputs there.
        model_dir = c.work("full_disk.model")
        good = os.path.join(model_dir, "trace")
        if c.record(good, c.mpirun(2) + [c.apps["ring"], "20"]).returncode != 0:
            fail("record", "an ordinary recording failed")
        with open(os.path.join(tiny, "filler"), "wb") as f:
            try:
                f.write(b"\0" * (512 << 10))
            except OSError:
                pass
        # An LT4NC larger than the room left is not started, and the directory predict made goes again.
        runs = []
        for n in (2, 3, 4):
            t = os.path.join(model_dir, f"np{n}")
            if c.record(t, c.mpirun(n) + [c.apps["ring"], "20"]).returncode != 0:
                fail("record", f"an ordinary recording at {n} ranks failed")
            runs.append(t)
        if run([c.a.p3s, "analyze", *runs, "-q"]).returncode != 0:
            fail("analyze", "the ordinary runs do not analyse")
        model = os.path.join(model_dir, "ring.model")
        r = run([c.a.p3s, "model", *runs, "--no-holdout", "-q", "-o", model])
        if r.returncode != 0:
            fail("model", r.stderr)
        lt = os.path.join(tiny, "lt")
        r = run([c.a.p3s, "predict", model, "--np", "4096", "--logical", "-o", lt])
        if r.returncode != 1 or "the LT4NC at n = 4096 needs about" not in r.stderr or os.path.exists(lt):
            fail("predict", f"an LT4NC larger than the room left: exit {r.returncode}: {r.stderr!r}")
        r = run([c.a.p3s, "predict", model, "--np", "4096", "-o", lt])  # the executable trace: named as such
        if r.returncode != 1 or "the ST4NP at n = 4096 needs about" not in r.stderr or os.path.exists(lt):
            fail("predict", f"an ST4NP larger than the room left: exit {r.returncode}: {r.stderr!r}")
        for what, cmd, left in (
                ("analyze", [c.a.p3s, "analyze", good, "-q", "--logical-csv", os.path.join(tiny, "l.csv")],
                 "l.csv."),
                ("analyze -o", [c.a.p3s, "analyze", good, "-q", "-o", os.path.join(tiny, "s.json")], "s.json.")):
            r = run(cmd)
            if r.returncode != 1 or "No space left" not in r.stderr or r.stderr.count("\n") != 1:
                fail(what, f"exit {r.returncode}: {r.stderr!r}")
            stale = [f for f in os.listdir(tiny) if f.startswith(left)]
            if stale:
                fail(what, f"{stale} left behind")
    finally:
        subprocess.run(["umount", tiny], capture_output=True)


def fortran_equals_c(c):
    """The Fortran ring makes the same MPI calls as the C ring; without Fortran wrappers it would record 0."""
    results = {}
    for name in ("ring", "ring_f"):
        trace = os.path.join(c.work(name), "trace")
        r = c.record(trace, c.mpirun(4) + [c.apps[name], "20"])
        if r.returncode != 0:
            fail(name, f"p3s record failed: {r.stderr.strip()[-800:]}")
        results[name] = c.summary(trace)
    for rc, rf in zip(results["ring"]["ranks"], results["ring_f"]["ranks"]):
        if sum(rf["calls"].values()) <= 1:
            fail("fortran", f"rank {rf['rank']}: the Fortran app recorded no MPI calls: Fortran bindings missed")
        for key in ("calls", "messages", "collectives", "events"):
            if rc[key] != rf[key]:
                fail("fortran", f"rank {rc['rank']}: {key} differ: C {rc[key]} vs Fortran {rf[key]}")


def counters(c):
    """No hardware counters here: auto falls back to CPU time and says so; forced PAPI fails fast in the CLI
    and falls back with a warning in the recorder. On a machine with counters, PAPI is used."""
    ring = c.mpirun(2) + [c.apps["ring"], "5"]
    forced = c.record(os.path.join(c.work("papi"), "trace"), ring, "--counters", "papi")
    has_papi = forced.returncode == 0
    if not has_papi:
        if forced.returncode != 1 or "--counters papi" not in forced.stderr or "cputime" not in forced.stderr:
            fail("papi-cli", f"expected a one-line refusal naming the fix: rc {forced.returncode}: {forced.stderr}")
        if os.path.exists(os.path.join(c.a.work, "papi", "trace", "traces.otf2")):
            fail("papi-cli", "a refused record must not leave an archive")
    trace = os.path.join(c.work("auto"), "trace")
    r = c.record(trace, ring)
    if r.returncode != 0:
        fail("auto", r.stderr)
    metric = c.summary(trace)["work_metric"]
    if metric != ("PAPI_TOT_INS" if has_papi else "cputime_ns"):
        fail("auto", f"work metric {metric} (PAPI usable: {has_papi})")
    if not has_papi and "note: PAPI" not in r.stderr:
        fail("auto", f"p3s record must say why it fell back: {r.stderr}")
    # The recorder itself, given P3S_COUNTERS=papi directly, warns once and records CPU time.
    trace = os.path.join(c.work("env"), "trace")
    r = run(c.mpirun(2) + ["env", f"LD_PRELOAD={c.a.preload}", f"P3S_TRACE_DIR={trace}", "P3S_COUNTERS=papi",
                           c.apps["ring"], "5"])
    if r.returncode != 0:
        fail("papi-env", r.stderr)
    if not has_papi and r.stderr.count("P3S_COUNTERS=papi") != 1:
        fail("papi-env", f"expected exactly one warning from rank 0: {r.stderr}")
    if c.summary(trace)["work_metric"] != ("PAPI_TOT_INS" if has_papi else "cputime_ns"):
        fail("papi-env", "wrong work metric")
    trace = os.path.join(c.work("none"), "trace")
    r = c.record(trace, ring, "--counters", "none")
    if r.returncode != 0 or c.summary(trace)["work_metric"] != "none":
        fail("none", r.stderr)
    if "METRIC " in run(["otf2-print", os.path.join(trace, "traces.otf2")]).stdout:
        fail("none", "--counters none must not write metric records")
    # Thread CPU time: the archive says how it was read, with the window the recorder was given.
    for window, expected in (("20", "at most every 20 us"), ("0", "at every MPI call")):
        trace = os.path.join(c.work("cputime" + window), "trace")
        r = run(c.mpirun(2) + ["env", f"LD_PRELOAD={c.a.preload}", f"P3S_TRACE_DIR={trace}", "P3S_COUNTERS=cputime",
                               f"P3S_CPUTIME_WINDOW_US={window}", c.apps["ring"], "5"])
        info = run(["otf2-print", "--show-info", os.path.join(trace, "traces.otf2")]).stdout
        read = re.search(r"P3S::CPU_TIME_READ\s*\n\s*Property value\s+(.*)", info)
        if r.returncode != 0 or read is None or expected not in read.group(1):
            fail("cputime-read", f"window {window}: expected '{expected}' in P3S::CPU_TIME_READ: "
                                 f"{read.group(1) if read else info[-500:]} {r.stderr}")
    # An MPMD launch (Open MPI's syntax) with another window on rank 1: the run uses rank 0's, and says so once.
    trace = os.path.join(c.work("cputime-mpmd"), "trace")
    ranked = lambda window: ["env", f"LD_PRELOAD={c.a.preload}", f"P3S_TRACE_DIR={trace}", "P3S_COUNTERS=cputime",
                             f"P3S_CPUTIME_WINDOW_US={window}", c.apps["ring"], "5"]
    r = run(c.mpirun(1) + ranked("20") + [":", c.a.np_flag, "1"] + ranked("0"))
    info = run(["otf2-print", "--show-info", os.path.join(trace, "traces.otf2")]).stdout
    if r.returncode != 0 or r.stderr.count("P3S_CPUTIME_WINDOW_US differs") != 1 or "every 20 us" not in info:
        fail("cputime-window", f"rank 0's window for every rank, one warning: {r.returncode}: {r.stderr[-800:]}")


def record_cli(c):
    d = c.work("cli")
    trace = os.path.join(d, "trace")
    ring = c.mpirun(2) + [c.apps["ring"], "3"]
    if c.record(trace, ring).returncode != 0:
        fail("first", "first record failed")
    again = c.record(trace, ring)
    if again.returncode != 1 or "--force" not in again.stderr:
        fail("existing", f"an existing archive must be refused with a hint: {again.returncode} {again.stderr}")
    analyzed = run([c.a.p3s, "analyze", trace, "-q"])
    if analyzed.returncode != 0 or not os.path.exists(os.path.join(trace, "signature.json")):
        fail("analyze", analyzed.stderr)
    if c.record(trace, ring, "--force").returncode != 0:
        fail("force", "--force must replace the archive")
    if os.path.exists(os.path.join(trace, "signature.json")):
        fail("force", "--force kept the signature of the replaced run")
    # A second recording into a directory being recorded is refused; the first one's trace is whole.
    busy = os.path.join(d, "busy")
    first = subprocess.Popen([c.a.p3s, "record", "-o", busy, "--", *c.mpirun(2), c.apps["ring"], "20000"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for _ in range(100):
        if os.path.exists(os.path.join(busy, "p3s-raw")):
            break
        time.sleep(0.1)
    second = c.record(busy, ring)
    first_err = first.communicate(timeout=300)[1]
    if second.returncode != 1 or "another recording is writing" not in second.stderr:
        fail("lock", f"a second recording into a busy directory: exit {second.returncode}: {second.stderr}")
    if first.returncode != 0 or c.summary(busy)["ranks"][0]["calls"].get("MPI_Waitall", 0) != 20000:
        fail("lock", f"the first recording suffered: exit {first.returncode}: {first_err}")
    if os.path.exists(os.path.join(busy, ".p3s-record.lock")):
        fail("lock", "the lock file was left behind")
    r = run([c.a.p3s, "record", "-o", os.path.join(d, "x")])
    if r.returncode == 0 or "command" not in r.stderr:
        fail("no-command", f"{r.returncode} {r.stderr}")
    r = c.record(os.path.join(d, "plain"), ["sh", "-c", "exit 3"])
    if r.returncode != 3 or "no trace was written" not in r.stderr:
        fail("exit-code", f"the command's exit status must pass through: {r.returncode} {r.stderr}")
    # A command that is no MPI program: one line, and none that points at messages nobody printed.
    r = c.record(os.path.join(d, "true"), ["true"])
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    if r.returncode != 1 or len(lines) != 1 or "never called MPI_Init" not in lines[0] or "above" in lines[0]:
        fail("no-mpi", f"a command that never calls MPI_Init: exit {r.returncode}: {r.stderr!r}")
    r = run([c.a.p3s, "record", "--help-env"])
    if r.returncode != 0 or "P3S_BUFFER_MB" not in r.stdout:
        fail("help-env", r.stdout + r.stderr)
    r = run([c.a.p3s, "record", "-o", trace, "--counters", "fast", "--", "true"])
    if r.returncode != 2:
        fail("usage", f"a bad option value is a usage error (2): {r.returncode}")


def inert(c):
    """Preloaded into programs that never call MPI_Init, the library does nothing at all."""
    env = dict(os.environ, LD_PRELOAD=c.a.preload)
    r = run(["sh", "-c", "echo hello; ls / > /dev/null"], env=env)
    if r.returncode != 0 or r.stdout != "hello\n" or r.stderr:
        fail("inert", f"rc {r.returncode} out {r.stdout!r} err {r.stderr!r}")
    r = run([c.a.mpiexec, "--version"], env=env)
    if r.returncode != 0:
        fail("inert", f"mpiexec with the recorder preloaded failed: {r.stderr}")


# A LAMMPS input: LJ melt of 4,000 atoms, 200 steps, re-neighbouring every 20, thermodynamic output every 50.
LAMMPS_INPUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "in.melt")


def lammps(c):
    lmp = shutil.which("lmp") or shutil.which("lmp_openmpi")
    if lmp is None:
        fail("lammps", "the lammps package is not installed (apt-get install lammps)")
    d = c.work("lammps")
    shutil.copy(LAMMPS_INPUT, os.path.join(d, "in.melt"))
    trace = os.path.join(d, "trace")
    r = run([c.a.p3s, "record", "-o", trace, "--", *c.mpirun(4), lmp, "-in", "in.melt", "-log", "none"], cwd=d,
            timeout=600)
    if r.returncode != 0:
        fail("lammps", f"exit {r.returncode}: {r.stderr.strip()[-1500:]}")
    c.otf2_print_ok(trace)
    s = c.summary(trace)
    if not s["complete"] or s["processes"] != 4:
        fail("lammps", "incomplete archive")
    for rank in s["ranks"]:
        sent = sum(m["count"] for m in rank["messages"] if m["op"] == "send")
        received = sum(m["count"] for m in rank["messages"] if m["op"] == "recv")
        if sent < 100 or received < 100 or not rank["collectives"] or rank["unresolved_peers"]:
            fail("lammps", f"rank {rank['rank']}: {sent} sends, {received} receives, {rank['collectives']}")
    print(f"lammps: {sum(sum(m['count'] for m in r['messages']) for r in s['ranks'])} messages recorded")


def readme_env(c):
    """README's table of P3S_* variables is the one the recorder declares."""
    r = run([c.a.p3s, "record", "--help-env-markdown"])
    with open(c.a.readme) as f:
        if r.stdout not in f.read():
            fail("readme", "README.md's P3S_* table differs from `p3s record --help-env-markdown`:\n" + r.stdout)


def fork_child(c):
    """A rank that forks a helper which ends with exit(): the child inherits the recorder and its unflushed buffer,
    and must write none of it (it used to write the parent's events again: 150 Allreduce for 100, two MPI_Init)."""
    trace = os.path.join(c.work("fork"), "trace")
    r = c.record(trace, c.mpirun(2) + [c.apps["crash"], "100", "--fork-at", "50"])
    if r.returncode != 0:
        fail("fork", f"p3s record failed: {r.stderr.strip()[-800:]}")
    for rank in c.summary(trace)["ranks"]:
        calls = rank["calls"]
        if calls.get("MPI_Allreduce") != 100 or calls.get("MPI_Init") != 1:
            fail("fork", f"rank {rank['rank']}: {calls.get('MPI_Allreduce')} MPI_Allreduce and {calls.get('MPI_Init')} "
                         "MPI_Init recorded, 100 and 1 made: the forked child wrote its parent's events")


def directory_lock(c):
    """Two recordings into one directory, `p3s record` and a job that preloads the recorder by hand: whichever
    holds the directory keeps it, the other records nothing there and says why, and the archive is the holder's (a
    preloaded job used to replace the archive of a running `p3s record`, which then reported the other's as its
    own)."""
    d = c.work("lock")
    iterations = 30000

    def by_hand(trace, n):
        return c.mpirun(2) + ["env", f"LD_PRELOAD={c.a.preload}", f"P3S_TRACE_DIR={trace}", c.apps["ring"], str(n)]

    def started(trace):
        raw = os.path.join(trace, "p3s-raw")
        for _ in range(600):
            if os.path.isdir(raw) and len([f for f in os.listdir(raw) if f.endswith(".raw")]) == 2:
                return
            time.sleep(0.05)
        fail("lock", f"the first recording into {trace} did not start")

    def own_archive(trace, what):
        for rank in c.summary(trace)["ranks"]:
            if rank["calls"].get("MPI_Waitall") != iterations:
                fail("lock", f"{what}: rank {rank['rank']} holds {rank['calls'].get('MPI_Waitall')} MPI_Waitall, "
                             f"its own run made {iterations}: another job's trace replaced it")

    for first in ("record", "by hand"):
        trace = os.path.join(d, first.replace(" ", "_"))
        long_job = c.mpirun(2) + [c.apps["ring"], str(iterations)]
        cmd = [c.a.p3s, "record", "-o", trace, "--"] + long_job if first == "record" else by_hand(trace, iterations)
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            started(trace)
            if first == "record":
                r = run(by_hand(trace, 100))
                refused = r.returncode == 0 and "another recording is writing" in r.stderr
            else:
                r = c.record(trace, c.mpirun(2) + [c.apps["ring"], "100"])
                refused = r.returncode == 1 and "another recording is writing" in r.stderr
            if not refused:
                fail("lock", f"{first} first: the second recording was not refused: exit {r.returncode}: "
                             f"{r.stderr[-800:]}")
            err = p.communicate(timeout=300)[1]
        finally:
            if p.poll() is None:
                p.kill()
        if p.returncode != 0:
            fail("lock", f"{first} first: the first recording failed: {err[-800:]}")
        own_archive(trace, f"{first} first")
        if os.path.exists(os.path.join(trace, ".p3s-record.lock")):
            fail("lock", f"{first} first: the lock file stays after the recording")


SCENARIOS = {f.__name__: f for f in (crash, unwritable_rank, sigterm, full_disk, fortran_equals_c, counters, record_cli, inert, lammps,
                                     readme_env, fork_child, directory_lock)}


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("scenario", choices=sorted(SCENARIOS))
    p3s_launch.add_options(p)
    p.add_argument("--p3s", required=True)
    p.add_argument("--preload", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--readme", default="")
    p.add_argument("--app", action="append", default=[], help="NAME=PATH of a test app")
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    SCENARIOS[a.scenario](Ctx(a))
    print(f"ok: {a.scenario}")


if __name__ == "__main__":
    main()
