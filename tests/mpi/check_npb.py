#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The pipeline on a NAS Parallel Benchmark: record it at the fitted and target counts, analyze the series, model it
and compare the predictions with the real runs.

    check_npb.py NAME --bin PATH --p3s BIN --work DIR --fit 4 8 16 32 --predict 64 [--predict ...]
                 [--max-model-seconds 120] [--max-model-mb 1024] [--reuse] [--report FILE] [launcher options]

1. `p3s record` of PATH at every fitted and target count (with --reuse, a run already recorded there is kept).
2. `p3s analyze` of the runs together: their phases must correspond (the same repeated phases in the same order,
   each as often at every count), one of them must run as often as the benchmark's own iteration count (or once
   more: the untimed warm-up step NPB makes before its timer starts), and each signature stays small.
3. Per target: `p3s model FIT --validate-with TARGET`, timed, its peak memory read from the kernel. Every phase
   must be related and evaluated with no group approximated, its pattern, number of communications and weight
   exact, and its message volume error within 1 % on average and 3 % at most; the model must stay within the time
   and memory limits. Then `p3s predict --logical` at the target.
One ACCURACY line per phase and target, and one RESOURCES line per target, are printed; --report appends them to a
file (the benchmark's table).

--short PHASE names a phase whose prediction is known to fall short of exact (an open problem, said in the project's
notes): it must still be evaluated with its weight exact and its communications within 5 % of the real count, and is
printed as SHORT; every other phase must be exact. What falls short is the extrapolation only: at every fitted count
the model must reproduce a short phase exactly (`p3s predict --compare` of the model with that run: pattern,
communications and weight). A phase named short that comes out exact is reported, so that the exemption is dropped.
The prediction at a target is written with --strict (consistent as predicted), except where a phase is known to
fall short (--short): that one is written repaired where it must be.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import p3s_launch
from p3s_order import order_runs

# A signature holds one instance of each phase per rank, whatever the number of iterations: this bounds it for the
# class W runs of the suite (LU at 32 ranks: about 10 MB) with room, and fails a signature that grows with the run.
MAX_SIGNATURE_MB = 32
SIGNATURE_MB = {}  # per process count, as analyzed


def fail(step, msg):
    print(f"FAIL [{ARGS.name} {step}]: {msg}", file=sys.stderr)
    sys.exit(1)


def problem(step, msg):
    """A result short of the acceptance: fails the check, or (--keep-going, the benchmark) is printed."""
    if not ARGS.keep_going:
        fail(step, msg)
    print(f"NOT MET [{ARGS.name} {step}]: {msg.splitlines()[0]}")


def run(cmd, what, timeout=1800):
    """Runs cmd; returns (its stdout, wall seconds, its peak resident MB as the kernel counted it)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, text=True)
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid != 0:
                break
            if time.monotonic() - start > timeout:
                proc.kill()
                os.wait4(proc.pid, 0)
                fail(what, f"timed out after {timeout} s: {' '.join(cmd)}")
            time.sleep(0.05)
        wall = time.monotonic() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if proc.returncode != 0:
        fail(what, f"exit {proc.returncode}: {' '.join(cmd)}\n{stdout[-3000:]}\n{stderr[-3000:]}")
    return stdout, wall, usage.ru_maxrss / 1024


def record(n):
    trace = os.path.join(ARGS.work, f"{ARGS.name}.np{n}")
    log = trace + ".out"
    if ARGS.reuse and os.path.exists(os.path.join(trace, "traces.otf2")) and os.path.exists(log):
        with open(log) as f:
            return f.read()
    shutil.rmtree(trace, ignore_errors=True)
    out, _, _ = run([ARGS.p3s, "record", "-o", trace, "--force", "--", *p3s_launch.launch(ARGS, n), ARGS.bin],
                    f"record {n}")
    if not re.search(r"verification\s*(=\s*)?successful", out, re.IGNORECASE):
        fail(f"record {n}", f"the benchmark did not verify:\n{out[-2000:]}")
    with open(log, "w") as f:
        f.write(out)
    return out


def iterations(sig):
    """The repeated phases (3 instances or more) in the order they first run, and how often each runs."""
    weight = {p["id"]: p["weight"] for p in sig["phases"] if p["weight"] >= 3}
    order = []
    for phase, _ in order_runs(sig["order"]):
        if phase in weight and phase not in order:
            order.append(phase)
    return [weight[p] for p in order]


def check_series(counts, outputs):
    traces = [os.path.join(ARGS.work, f"{ARGS.name}.np{n}") for n in counts]
    report, _, _ = run([ARGS.p3s, "analyze", *traces], "analyze")
    sigs = {}
    for n, trace in zip(counts, traces):
        path = os.path.join(trace, "signature.json")
        mb = os.path.getsize(path) / 2**20
        if mb > MAX_SIGNATURE_MB:
            problem("signature", f"the signature at {n} ranks takes {mb:.1f} MB (limit {MAX_SIGNATURE_MB} MB)")
        with open(path) as f:
            sigs[n] = json.load(f)
        SIGNATURE_MB[n] = mb
        print(f"SIGNATURE {ARGS.name} n={n}: {len(sigs[n]['phases'])} phases, repeated phases weigh "
              f"{iterations(sigs[n])}, {mb:.2f} MB, by {sigs[n]['phase_method']}")
    shapes = {n: iterations(s) for n, s in sigs.items()}
    if len({tuple(v) for v in shapes.values()}) != 1:
        problem("phases", f"the runs' repeated phases differ: {shapes}\n{report}")
    # The benchmark prints its own iteration count ("Iterations: 300", or "nit = 4").
    m = re.search(r"(?:Iterations|nit)\s*[:=]\s*(\d+)", outputs[counts[0]])
    if m:
        steps = int(m.group(1))
        if not {steps, steps + 1} & set(shapes[counts[0]]):
            problem("time step", f"no repeated phase runs {steps} times (the benchmark's iterations) or {steps + 1} "
                              f"(with its warm-up step): {shapes[counts[0]]}\n{report}")
        print(f"STEP {ARGS.name}: the time step is a phase of weight "
              f"{steps if steps in shapes[counts[0]] else steps + 1} ({steps} iterations)")


def short_of(c, where, problems, lines):
    """A phase known to fall short (--short): evaluated, its weight exact, its communications within 5 %."""
    comms = f"comms {c['comms_predicted']}/{c['comms_actual']}, weight {c['weight_predicted']}/{c['weight_actual']}"
    exact = (c["pattern_exact"] and not c.get("approximate_groups") and c["comms_predicted"] == c["comms_actual"]
             and c["volume_error_mean"] <= 0.01 and c["volume_error_max"] <= 0.03)
    if exact:
        print(f"NOTE [{ARGS.name}]: {where} is now exact: drop --short {c['phase']}")
    if c["weight_predicted"] != c["weight_actual"]:
        problems.append(f"{where} (short): weight {c['weight_predicted']} predicted, {c['weight_actual']} real")
    if abs(c["comms_predicted"] - c["comms_actual"]) > 0.05 * c["comms_actual"]:
        problems.append(f"{where} (short): {c['comms_predicted']} communications predicted, {c['comms_actual']} real "
                        f"(more than 5 % apart)")
    lines.append(f"SHORT    {ARGS.name:3s} fit {'-'.join(map(str, ARGS.fit))} -> {where}: pattern "
                 f"{'exact' if c['pattern_exact'] else 'DIFFERS (' + c['first_mismatch'] + ')'}, {comms}")


# A row of `p3s predict --compare`'s table: phase, pattern, comms predicted/real, weight predicted/real.
COMPARE_ROW = re.compile(r"^\s*(\d+)\s+(\S+)\s+(\d+)/(\d+)\s+(\d+)/(\d+)\s")


def short_at_fitted(model, problems):
    """Each short phase as the model predicts it at each fitted count, against that run: exact."""
    for n in ARGS.fit:
        out, _, _ = run([ARGS.p3s, "predict", model, "--np", str(n), "--compare",
                         os.path.join(ARGS.work, f"{ARGS.name}.np{n}")], f"compare at fitted {n}")
        rows = {int(m[1]): m for m in map(COMPARE_ROW.match, out.splitlines()) if m}
        for phase in ARGS.short:
            m = rows.get(phase)
            if m is None:
                problems.append(f"n={n} (fitted) phase {phase} (short): not in the comparison")
            elif m[2] != "exact" or m[3] != m[4] or m[5] != m[6]:
                problems.append(f"n={n} (fitted) phase {phase} (short): not reproduced exactly: {m[0].strip()}")


def check_target(target):
    fit_dirs = [os.path.join(ARGS.work, f"{ARGS.name}.np{n}") for n in ARGS.fit]
    real = os.path.join(ARGS.work, f"{ARGS.name}.np{target}")
    model = os.path.join(ARGS.work, f"{ARGS.name}.to{target}.model")
    out, wall, peak_mb = run([ARGS.p3s, "model", *fit_dirs, "--validate-with", real, "-o", model, "--force"],
                             f"model for {target}")
    with open(model + ".report.json") as f:
        v = json.load(f).get("validation")
    if v is None:
        fail(f"model for {target}", f"{model}.report.json has no validation")
    lines = []
    problems = [f"n={target}: {u}" for u in v.get("unrelated", [])]
    if ARGS.short:
        short_at_fitted(model, problems)
    exact = 0
    volume = []
    for c in v["phases"]:
        where = f"n={target} phase {c['phase']}"
        if c.get("error"):
            problems.append(f"{where}: not evaluated: {c['error']}")
            continue
        if c["phase"] in ARGS.short:
            short_of(c, where, problems, lines)
            continue
        ok = True
        if c.get("approximate_groups"):
            problems.append(f"{where}: groups {c['approximate_groups']} only approximated (kept as measured)")
            ok = False
        if not c["pattern_exact"]:
            problems.append(f"{where}: pattern differs: {c['first_mismatch']}")
            ok = False
        if c["comms_predicted"] != c["comms_actual"]:
            problems.append(f"{where}: {c['comms_predicted']} communications predicted, {c['comms_actual']} real")
            ok = False
        if c["weight_predicted"] != c["weight_actual"]:
            problems.append(f"{where}: weight {c['weight_predicted']} predicted, {c['weight_actual']} real")
            ok = False
        if c["volume_error_mean"] > 0.01 or c["volume_error_max"] > 0.03:
            problems.append(f"{where}: volume error mean {100 * c['volume_error_mean']:.2f} %, "
                            f"max {100 * c['volume_error_max']:.2f} % (limits 1 % and 3 %)")
            ok = False
        exact += 1 if ok else 0
        volume.append((c["volume_error_mean"], c["volume_error_max"]))
        lines.append(f"ACCURACY {ARGS.name:3s} fit {'-'.join(map(str, ARGS.fit))} -> n={target:<3d} phase {c['phase']}: "
                     f"pattern {'exact' if c['pattern_exact'] else 'DIFFERS'}, comms {c['comms_predicted']}/"
                     f"{c['comms_actual']}, weight {c['weight_predicted']}/{c['weight_actual']}, volume err "
                     f"{100 * c['volume_error_mean']:.2f} % mean / {100 * c['volume_error_max']:.2f} % max, work err "
                     f"{100 * c['work_error_total']:.1f} %")
    mean = sum(x for x, _ in volume) / len(volume) if volume else 0
    worst = max((y for _, y in volume), default=0)
    largest = max(SIGNATURE_MB[n] for n in ARGS.fit)
    lines.append(f"RESOURCES {ARGS.name:3s} fit {'-'.join(map(str, ARGS.fit))} -> n={target:<3d}: phases exact "
                 f"{exact}/{len(v['phases'])}, volume error mean {100 * mean:.2f} % / max {100 * worst:.2f} %, "
                 f"largest signature {largest:.2f} MB, p3s model {wall:.1f} s, peak {peak_mb:.0f} MB")
    print("\n".join(lines))
    if ARGS.report:
        with open(ARGS.report, "a") as f:
            f.write("\n".join(lines) + "\n")
    if wall > ARGS.max_model_seconds:
        problems.append(f"p3s model took {wall:.1f} s (limit {ARGS.max_model_seconds} s)")
    if peak_mb > ARGS.max_model_mb:
        problems.append(f"p3s model peaked at {peak_mb:.0f} MB (limit {ARGS.max_model_mb} MB)")
    if problems and not ARGS.keep_going:
        fail(f"prediction at {target}", "\n".join(problems) + "\n" + out[-4000:])
    lt = os.path.join(ARGS.work, f"{ARGS.name}.lt4nc.np{target}")
    strict = [] if ARGS.short else ["--strict"]
    run([ARGS.p3s, "predict", model, "--np", str(target), "--logical", "-o", lt, "--force", *strict],
        f"predict {target}")
    return not problems


def main():
    global ARGS
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("name")
    p.add_argument("--bin", required=True, help="the benchmark's binary (e.g. bin/lu.W.x)")
    p.add_argument("--p3s", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--fit", type=int, nargs="+", required=True)
    p.add_argument("--predict", type=int, nargs="+", required=True)
    p3s_launch.add_options(p)
    p.add_argument("--max-model-seconds", type=float, default=120)
    p.add_argument("--max-model-mb", type=float, default=1024)
    p.add_argument("--reuse", action="store_true", help="keep runs already recorded in WORK")
    p.add_argument("--keep-going", action="store_true",
                   help="report every target and exit 0 whatever the accuracy (the benchmark prints the table)")
    p.add_argument("--report", help="append the ACCURACY and RESOURCES lines to this file")
    p.add_argument("--short", type=int, action="append", default=[], metavar="PHASE",
                   help="a phase known to fall short of exact (see above)")
    ARGS = p.parse_args()
    if not os.access(ARGS.bin, os.X_OK):
        fail("binary", f"{ARGS.bin} is not an executable (the NAS benchmarks are built from ../shared/npb)")
    os.makedirs(ARGS.work, exist_ok=True)
    counts = sorted(set(ARGS.fit) | set(ARGS.predict))
    outputs = {n: record(n) for n in counts}
    check_series(counts, outputs)
    results = [check_target(t) for t in ARGS.predict]
    if not all(results):
        print(f"{ARGS.name}: not every prediction is exact (see the lines above)")
        return
    print(f"{ARGS.name}: fitted on {ARGS.fit}, predicted {ARGS.predict} exactly")


if __name__ == "__main__":
    main()
