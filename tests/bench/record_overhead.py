#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Recorder benchmarks; every figure is a ratio or difference against untraced runs made in the same session.

1. Added cost per MPI call: a two-rank loop of 0-byte Isend/Irecv/Waitall (3 calls per iteration), traced
   versus untraced, per counter mode; median over interleaved repetitions. Aim: <= 200 ns in the default mode.
   "cputime syscall" reads thread CPU time by a system call at every call (P3S_CPUTIME_WINDOW_US=0), as the
   default mode's CPU clock does only after a context switch or once per 20 us.
   1b: the same with one busy process per core beside the ranks (a loaded node). Where SCOREP_ROOT names a Score-P
   8.x installation, the loop is also built with Score-P's MPI adapter and traced, and the ratio of added costs is
   printed (aim: p3s's <= 1/4 of Score-P's).
2. Whole-run slowdown of the halo test app: traced / untraced wall time, MPI_Finalize and the archive's writing
   included, as a mix, communication-bound (aim <= 1.10) and compute-heavy (aim <= 1.02); beside each, the seconds
   rank 0 spent after MPI_Finalize began (the archive's writing).
3. Trace bytes per MPI call (the archive, and p3s-raw kept: the event files, linked into the archive, and the
   definitions), and peak extra RSS per rank for a short and a 5x longer run (it must not grow).
4. Fixed cost of a traced run: 4 ranks, one iteration, traced against untraced. Aim: <= 0.1 s.
5. Recovery: events per second of `p3s recover` (each event file read back and cut after its last whole event,
   one process) against writing the same events with OTF2 directly (otf2_direct).
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mpi"))
import p3s_launch  # noqa: E402


def run(cmd, env=None):
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"benchmark command failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr[-2000:]}")
    return r


def timed(cmd):
    """Wall time of one run of cmd, launch to exit."""
    t = time.perf_counter()
    run(cmd)
    return time.perf_counter() - t


def timed_traced(cmd):
    """Wall time of one traced run (P3S_VERBOSE=1 among its variables) and the seconds rank 0 says the archive
    took after MPI_Finalize began."""
    t = time.perf_counter()
    r = run(cmd)
    wall = time.perf_counter() - t
    m = re.search(r"in ([\d.]+) s after MPI_Finalize", r.stderr)
    if not m:
        sys.exit(f"traced run did not report its archive: {' '.join(cmd)}\n{r.stderr[-2000:]}")
    return wall, float(m.group(1))


class Bench:
    def __init__(self, a):
        self.a = a
        os.makedirs(a.work, exist_ok=True)

    def launch(self, np):
        return p3s_launch.launch(self.a, np)

    def traced(self, trace, *env):
        shutil.rmtree(trace, ignore_errors=True)
        return ["env", f"LD_PRELOAD={self.a.preload}", f"P3S_TRACE_DIR={trace}", *env]

    def scorep_app(self):
        """bench_calls instrumented by Score-P (MPI adapter only) when SCOREP_ROOT names an installation, else None."""
        root = os.environ.get("SCOREP_ROOT")
        if not root or not self.a.calls_source:
            return None
        scorep = os.path.join(root, "bin", "scorep")
        if not os.access(scorep, os.X_OK):
            sys.exit(f"SCOREP_ROOT={root} holds no bin/scorep; unset it or name a Score-P installation")
        exe = os.path.join(self.a.work, "bench_calls_scorep")
        if not os.path.exists(exe):
            run([scorep, "--mpp=mpi", "--thread=none", "--nocompiler", "--nouser",
                 self.a.mpicc or "mpicc", "-O2", self.a.calls_source, "-o", exe])
        return exe

    def calls_run(self, iters, trace=None, env=(), app=None):
        prefix = self.traced(trace, *env) if trace else (["env", *env] if env else [])
        r = run(self.launch(2) + prefix + [app or self.a.calls_app, str(iters)])
        ns = float(re.search(r"ns_per_iter ([\d.]+)", r.stdout).group(1))
        rss = [int(x) for x in re.findall(r"peak_rss_kb (\d+)", r.stdout)]
        return ns, rss


class Load:
    """Busy processes, one per core, for the loaded measurement: the ranks are switched out often, as on a busy
    node, and every switch costs the CPU-time path a system call."""

    def __init__(self, processes):
        self.procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(processes)]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            p.kill()
            p.wait()


def per_call(b, iters, reps, label="", load=0):
    modes = [("none", ["P3S_COUNTERS=none"]), ("cputime", ["P3S_COUNTERS=cputime"]),
             ("cputime syscall", ["P3S_COUNTERS=cputime", "P3S_CPUTIME_WINDOW_US=0"]),
             ("cputime+callsite", ["P3S_COUNTERS=cputime", "P3S_CALLSITE=1"])]
    if load:
        modes = modes[:3]
    probe = subprocess.run([b.a.p3s, "record", "--counters", "papi", "-o", os.path.join(b.a.work, "papi-probe"),
                            "--force", "--", "true"], capture_output=True, text=True)
    if "--counters papi" not in probe.stderr:
        modes.append(("papi", ["P3S_COUNTERS=papi"]))
    base, traced = [], {m: [] for m, _ in modes}
    trace = os.path.join(b.a.work, "calls")
    scorep = b.scorep_app() if not load else None
    scorep_env = ["SCOREP_ENABLE_TRACING=true", "SCOREP_ENABLE_PROFILING=false", "SCOREP_TOTAL_MEMORY=256M",
                  "SCOREP_OVERWRITE_EXPERIMENT_DIRECTORY=true",
                  f"SCOREP_EXPERIMENT_DIRECTORY={os.path.join(b.a.work, 'scorep-run')}"]
    scorep_runs = []
    b.calls_run(iters // 10)  # warm-up
    for _ in range(reps):
        base.append(b.calls_run(iters)[0])
        for mode, env in modes:
            traced[mode].append(b.calls_run(iters, trace, env)[0])
        if scorep:
            scorep_runs.append(b.calls_run(iters, env=scorep_env, app=scorep)[0])
    b0 = statistics.median(base)
    print(f"1{label}. cost per MPI call (2 ranks, 0-byte Isend/Irecv/Waitall, {iters} iterations x {reps} runs"
          f"{f', {load} busy processes beside them' if load else ''})")
    print(f"   untraced: {b0 / 3:8.1f} ns per call")
    for mode, _ in modes:
        t = statistics.median(traced[mode])
        print(f"   {mode:17s} {t / 3:8.1f} ns per call  added {(t - b0) / 3:7.1f} ns  ratio {t / b0:5.2f}")
    if scorep_runs:
        t = statistics.median(scorep_runs)
        ours = statistics.median(traced["cputime"]) - b0
        # Score-P adding nothing measurable (noise) leaves no ratio to give.
        ratio = f"{ours / (t - b0):.2f}" if t > b0 else "n/a"
        print(f"   Score-P tracing   {t / 3:8.1f} ns per call  added {(t - b0) / 3:7.1f} ns  ratio {t / b0:5.2f}; "
              f"p3s cputime's added cost over Score-P's: {ratio} (aim <= 0.25)")
    elif not load:
        print("   Score-P tracing: skipped (set SCOREP_ROOT to a Score-P 8.x installation to compare)")


def slowdown(b, reps):
    """Wall time of whole runs (launch to exit), traced per counter mode against untraced, interleaved: the halo app
    as a mix (4 ranks, 512x512 points each), communication-bound (2 ranks, 16x16 points: small messages, aim <=
    1.10), compute-heavy (2 ranks, 1024x1024 points, aim <= 1.02), and at the size of the halo + Allreduce run of
    REFERENCE.md (2 ranks, 850,000 calls each), on which Score-P 8.4 tracing added 530-630 ns per call (1.8-1.9x).
    Each rank makes 10 calls per iteration (8 point-to-point, MPI_Waitall, MPI_Allreduce): the time added per call
    is the difference of the medians over 10 x iterations."""
    if not b.a.halo_app:
        print("2. whole-run slowdown: skipped (no halo app)")
        return
    cases = [("mixed", 4, ["2000", "512", "512"]), ("communication-bound", 2, ["1000000", "16", "16"]),
             ("compute-heavy", 2, ["1000", "1024", "1024"]), ("as Score-P's figure", 2, ["85000", "8", "8"])]
    trace = os.path.join(b.a.work, "halo")
    modes = [("cputime", "P3S_COUNTERS=cputime"), ("none", "P3S_COUNTERS=none")]
    verbose = "P3S_VERBOSE=1"
    print(f"2. whole-run slowdown of halo2d ({reps} runs each, median, MPI_Finalize and archive writing included)")
    for label, np, params in cases:
        args = [b.a.halo_app, *params]
        plain, traced, finalize = [], {m: [] for m, _ in modes}, {m: [] for m, _ in modes}
        run(b.launch(np) + args)
        for _ in range(reps):
            plain.append(timed(b.launch(np) + args))
            for mode, env in modes:
                wall, fin = timed_traced(b.launch(np) + b.traced(trace, env, verbose) + args)
                traced[mode].append(wall)
                finalize[mode].append(fin)
        p = statistics.median(plain)
        calls = 10 * int(params[0])

        def per_call(mode):
            # Only where calls are many enough for the difference of two wall times to say something.
            added = (statistics.median(traced[mode]) - p) / calls * 1e9
            return f"+{added:.0f} ns/call; " if calls >= 100000 else ""

        ratios = ", ".join(f"{mode} {statistics.median(traced[mode]) / p:.3f} "
                           f"({per_call(mode)}{statistics.median(finalize[mode]):.2f} s of "
                           f"{statistics.median(traced[mode]):.2f} s after MPI_Finalize)" for mode, _ in modes)
        print(f"   {label:20s} {np} ranks, {params[0]} iterations of {params[1]}x{params[2]} points: untraced {p:.3f} s; "
              f"ratio {ratios}")


def fixed_cost(b, reps):
    """What a traced run costs whatever its length: a 4-rank run of one iteration, traced against untraced (launch
    to exit: initialisation and the archive's writing)."""
    trace = os.path.join(b.a.work, "fixed")
    cmd = b.launch(4) + [b.a.calls_app, "1"]

    front = [b.a.p3s, "record", "-o", trace, "--force", "--"] + cmd
    run(cmd)
    plain, traced, recorded = [], [], []
    for _ in range(reps):
        plain.append(timed(cmd))
        traced.append(timed(b.launch(4) + b.traced(trace, "P3S_COUNTERS=auto") + [b.a.calls_app, "1"]))
        recorded.append(timed(front))
    p, q, r = statistics.median(plain), statistics.median(traced), statistics.median(recorded)
    print(f"4. fixed cost per traced run, 4 ranks, one iteration ({reps} runs each, median; aim <= 0.1 s): untraced "
          f"{p:.3f} s; preloaded {q:.3f} s, added {q - p:.3f} s; through `p3s record` {r:.3f} s, added {r - p:.3f} s")


def archive_bytes(trace):
    total = 0
    for root, _, files in os.walk(trace):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    return total


def size_and_memory(b, iters):
    print("3. trace size and memory per rank (cputime counters)")
    for n in (iters, 5 * iters):
        trace = os.path.join(b.a.work, f"size{n}")
        _, base_rss = b.calls_run(n)
        _, rss = b.calls_run(n, trace, ["P3S_COUNTERS=cputime", "P3S_KEEP_RAW=1"])
        calls = 2 * (3 * n + 2)  # two ranks: the loop plus Init/Barrier... counted exactly below when possible
        summary = subprocess.run([b.a.p3s, "summary", "--json", trace], capture_output=True, text=True)
        if summary.returncode == 0:
            import json
            calls = sum(sum(r["calls"].values()) for r in json.loads(summary.stdout)["ranks"])
        raw = archive_bytes(os.path.join(trace, "p3s-raw"))
        size = archive_bytes(trace) - raw
        extra = max(t - u for t, u in zip(sorted(rss), sorted(base_rss)))
        print(f"   {n:8d} iterations: {calls} calls, archive {size / 1e6:7.1f} MB, {size / calls:5.1f} bytes/call, "
              f"p3s-raw (event files and definitions, kept) {raw / calls:5.1f} bytes/call, "
              f"peak extra RSS per rank {extra / 1024:6.1f} MiB")


def recovery(b, iters, reps):
    """Raw logs of a 2-rank run kept (P3S_KEEP_RAW) and made into an archive again by `p3s recover` (each event file
    read back record by record and copied, cut after its last whole event), against otf2_direct writing as many
    locations and loop iterations."""
    trace = os.path.join(b.a.work, "convert")
    b.calls_run(iters, trace, ["P3S_COUNTERS=cputime", "P3S_KEEP_RAW=1"])
    ours, direct = [], []
    events = 0
    for _ in range(reps):
        t = time.perf_counter()
        r = run([b.a.p3s, "recover", trace])
        ours.append(time.perf_counter() - t)
        events = int(re.search(r": (\d+) events", r.stdout).group(1))
        out = os.path.join(b.a.work, "direct")
        shutil.rmtree(out, ignore_errors=True)
        r = run([b.a.otf2_direct, out, "2", str(iters)])
        direct.append(float(re.search(r"events_per_s ([\d.]+)", r.stdout).group(1)))
    rate = events / statistics.median(ours)
    best = statistics.median(direct)
    print(f"5. recovery ({reps} runs, median): p3s recover {events} events of 2 ranks, {rate / 1e6:.1f} M events/s; "
          f"OTF2 written directly {best / 1e6:.1f} M events/s; ratio {rate / best:.2f}")


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p3s_launch.add_options(p)
    p.add_argument("--preload", required=True)
    p.add_argument("--p3s", required=True)
    p.add_argument("--calls-app", required=True)
    p.add_argument("--halo-app", default="")
    p.add_argument("--otf2-direct", default="")
    p.add_argument("--calls-source", default="", help="bench_calls.c, built with Score-P where SCOREP_ROOT is set")
    p.add_argument("--mpicc", default="mpicc")
    p.add_argument("--work", required=True)
    p.add_argument("--iters", type=int, default=200000)
    p.add_argument("--reps", type=int, default=7)
    p.add_argument("--only", type=int, action="append", choices=[1, 2, 3, 4, 5], default=[],
                   help="run only these parts (repeatable); all by default")
    a = p.parse_args()
    parts = set(a.only or [1, 2, 3, 4, 5])
    b = Bench(a)
    if 1 in parts:
        per_call(b, a.iters, a.reps)
        with Load(os.cpu_count() or 2):
            per_call(b, a.iters // 4, a.reps, "b", load=os.cpu_count() or 2)
    if 2 in parts:
        slowdown(b, a.reps)
    if 3 in parts:
        size_and_memory(b, a.iters)
    if 4 in parts:
        fixed_cost(b, a.reps)
    if 5 in parts:
        if a.otf2_direct:
            recovery(b, a.iters, a.reps)
        else:
            print("5. recovery: skipped (no --otf2-direct)")


if __name__ == "__main__":
    main()
