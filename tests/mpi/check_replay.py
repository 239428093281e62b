#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""p3s-replay end to end: that it makes every predicted call as written, and how well it predicts run time.

    check_replay.py calls APP --p3s BIN --replay BIN --app PATH --work DIR [--fit 4 8 16] [--np 8]
                         [--app-args "ARGS"] [launcher options]
    check_replay.py time APP --p3s BIN --replay BIN --app PATH --work DIR [--fit 2 4 8 16] [--np 32 48]
                         [--app-args "ARGS"] [--limit 0.10] [--compute-limit 0.05] [launcher options]

calls: records APP at the fitted counts, fits a model, writes the LT4NC at each --np and replays the model there
under `p3s record` (the model at the first count, the ST4NP `p3s predict -o` writes at the others). On every rank the replay's recorded calls must hold, as one stretch, the LT4NC's calls of every
phase but MPI_Init and MPI_Finalize, instance after instance (W warm-up, M measured and one trailing instance of a repeated phase, or all of a
shorter one, as p3s-replay runs them with --min-time 0): the same MPI functions, each send and receive with the same peer, tag and size, each collective with the
same operation. At the other counts also the range replay in ranges of 2: its plan from the model and from the
ST4NP the same, every range timed once, and the range replay on the job its plan needs making as many calls per
rank and instance as the full replay.
errors: on copies of a model of APP with one defect each, p3s-replay must refuse, in one line printed once, with
exit status != 0 and no result file: a model without compute-time laws (schema 2), a process count where a law is
no whole number, a model whose receives wait for a tag no send carries (the check of the prediction names the phase,
rank and call, with --strict; without it that model is replayed repaired, the repair noted and the phase marked), an ST4NP for another number of ranks, one
written by a p3s that did not check it (schema 3), a logical trace (no burst times), an existing result without
--force; and a replay stuck in a receive (an ST4NP edited after it was checked, a tag no send matches) must be
stopped by the watchdog, which names the rank, phase, instance and call.
handwritten: an ST4NP written by the script with known peers, tags and sizes (a ring completed with MPI_Waitany
and MPI_Testsome, an MPI_Allreduce on blocks of 2 ranks, an MPI_Bcast on every other rank, MPI_Sendrecv,
MPI_Alltoall, a halo exchange on a grid whose boundary ranks skip calls) replayed under `p3s record`: every
call made as written, the compute time as written (APP unused).
time: records APP (a sleep-mode app) at the fitted counts and at each --np, fits a model on the fitted runs,
replays it at each --np with --compute sleep and compares with the real run there: the main-loop time (MPI_Init
and MPI_Finalize apart) must be within --limit, every replayed phase's compute time within --compute-limit; the
range replay (ranges of --range-size, on the job its schedule needs) is run beside them and its error printed; it
must be within --range-limit of the full replay.
Prints one ACCURACY line per (app, n) and a table.
"""
import argparse
import csv
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from handwritten_st4np import write_handwritten  # noqa: E402

import p3s_launch

WARMUP = 2
INSTANCES = 5


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def run(cmd, what, timeout=1200):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        fail(f"{what}: exit {r.returncode}: {' '.join(map(str, cmd))}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    return r


def launch(a, n, *cmd):
    return p3s_launch.launch(a, n, *cmd)


def record(a, n, name, *cmd):
    trace = os.path.join(a.work, name)
    shutil.rmtree(trace, ignore_errors=True)
    run([a.p3s, "record", "-o", trace, "--", *launch(a, n, *cmd)], f"record {name}")
    run([a.p3s, "analyze", trace, "--force"], f"analyze {name}")
    return trace


def fit(a):
    runs = [record(a, n, f"{a.name}.np{n}", a.app, *a.app_args) for n in a.fit]
    # The series analysed together, as the README's workflow does: its runs' phases then correspond.
    run([a.p3s, "analyze", *runs], "analyze")
    model = os.path.join(a.work, f"{a.name}.model")
    run([a.p3s, "model", *runs, "-o", model, "--no-holdout", "--force", "-q"], "model")
    return model


def replayed_instances(count, warmup=WARMUP, instances=INSTANCES):
    """p3s-replay's instances of a phase the application runs `count` times, with --min-time 0: all of them where
    there are no more than the warm-up, the measured ones and one; else the warm-up, the measured ones and one more."""
    return count if count <= warmup + instances + 1 else warmup + instances + 1


def expected_calls(a, model, n):
    """Per rank, the calls p3s-replay must make: each phase's LT4NC calls, instance after instance."""
    out = os.path.join(a.work, f"lt4nc.np{n}")
    run([a.p3s, "predict", model, "--np", n, "--logical", "-o", out, "--force", "--strict"], "predict --logical")
    return calls_of_trace(out, n)


def calls_of_trace(out, n):
    with open(os.path.join(out, "lt4nc.json")) as f:
        header = json.load(f)
    lines = defaultdict(dict)
    with open(os.path.join(out, header["ranks_file"])) as f:
        for line in f:
            j = json.loads(line)
            lines[j["rank"]][j["phase"]] = j["calls"]
    want = {}
    for r in range(n):
        calls, seen = [], set()
        for phase, count in header["order"]:
            if phase in seen or count == 0:
                continue
            seen.add(phase)
            for _ in range(replayed_instances(count)):
                calls.extend(call_key(c["call"], c["actions"]) for c in lines[r].get(phase, [])
                             if c["call"] not in ("MPI_Init", "MPI_Init_thread", "MPI_Finalize"))
        want[r] = calls
    return want


def action_key(kind, peer, tag, size, collective=None):
    if kind == "coll":
        return ("coll", collective)
    if kind in ("send", "recv"):
        return (kind, int(peer), int(tag), int(round(float(size))))
    return (kind,)  # a posted receive (the trace keeps its peer on the completion), a request's completion


def call_key(call, actions):
    # A start of a persistent request is replayed as the non-blocking call it starts, a buffered or ready send as
    # a standard one, a blocking probe as MPI_Iprobe (p3s-replay's documented substitutions).
    keys = [action_key(x["kind"], x.get("peer", -1), x.get("tag", 0), x.get("bytes", 0), x.get("collective"))
            for x in actions]
    return (call, tuple(sorted(keys)))


# Calls that poll or complete requests in an order the run decides: consecutive calls of one of them are one
# operation to the analyzer (an exchange's completion), their actions together.
POLLING = {"MPI_Waitany", "MPI_Waitsome", "MPI_Test", "MPI_Testany", "MPI_Testsome", "MPI_Testall", "MPI_Iprobe"}


def as_analyzed(calls):
    """The calls as `p3s analyze` sees them: consecutive polling calls of one function merged."""
    out = []
    for call, acts in calls:
        if out and call in POLLING and out[-1][0] == call:
            out[-1] = (call, tuple(sorted(out[-1][1] + acts)))
        else:
            out.append((call, acts))
    return out


def recorded_calls(a, trace):
    path = os.path.join(trace, "logical.csv")
    run([a.p3s, "analyze", trace, "--logical-csv", path, "--force"], "analyze --logical-csv")
    by_rank = defaultdict(dict)
    with open(path) as f:
        for row in csv.DictReader(f):
            if row["thread"] != "0":
                continue
            calls = by_rank[int(row["rank"])]
            seq = int(row["seq"])
            call, acts = calls.setdefault(seq, (row["call"], []))
            if row["action"]:
                acts.append(action_key(row["action"], row["peer"], row["tag"], row["bytes"]))
    return {r: [(c, tuple(sorted(acts))) for _, (c, acts) in sorted(calls.items())] for r, calls in by_rank.items()}


def contains(haystack, needle):
    if not needle:
        return True
    first = needle[0]
    for i in range(len(haystack) - len(needle) + 1):
        if haystack[i] == first and haystack[i:i + len(needle)] == needle:
            return True
    return False


def first_difference(haystack, needle):
    best, at = -1, 0
    for i in range(len(haystack)):
        k = 0
        while k < len(needle) and i + k < len(haystack) and haystack[i + k] == needle[k]:
            k += 1
        if k > best:
            best, at = k, i
    got = haystack[at + best] if at + best < len(haystack) else None
    return best, needle[best] if best < len(needle) else None, got


def compare_calls(a, n, want, trace, what):
    got = recorded_calls(a, trace)
    # Collectives are compared by call name (the CSV names the operation by the call).
    strip = lambda calls: [(c, tuple(k if k[0] != "coll" else ("coll",) for k in acts)) for c, acts in calls]
    total = 0
    for r in range(n):
        w, g = strip(as_analyzed(want[r])), strip(got.get(r, []))
        total += len(w)
        if not contains(g, w):
            k, expected, actual = first_difference(g, w)
            fail(f"{a.name} n={n} rank {r}: the replay's calls do not hold the predicted ones: the first "
                 f"{k} of {len(w)} match, then expected {expected}, recorded {actual}")
    print(f"CALLS {a.name} n={n} ({what}): every rank made its {total // n} predicted calls (mean per rank) as "
          f"written")


def check_calls(a):
    model = fit(a)
    for k, n in enumerate(a.np):
        want = expected_calls(a, model, n)
        # The first count replays the model (each rank evaluates its own calls), the others the ST4NP that
        # `p3s predict -o` writes (each rank reads its own lines).
        source = model
        if k > 0:
            source = os.path.join(a.work, f"st4np.np{n}")
            run([a.p3s, "predict", model, "--np", n, "-o", source, "--force", "--strict"], "predict -o")
        trace = record(a, n, f"replay.np{n}", a.replay, source, "-o", os.path.join(a.work, f"replay.np{n}.json"),
                       "--force", "--warmup", WARMUP, "--instances", INSTANCES, "--min-time", 0)
        compare_calls(a, n, want, trace, "model" if k == 0 else "ST4NP")
        if k > 0:
            check_schedule(a, n, model, source)


def schedule_of(a, n, source, ranges, name):
    """The range replay's plan of `source` at n (--schedule-only, run on one rank), as written to its JSON."""
    out = os.path.join(a.work, name)
    r = run(launch(a, 1, a.replay, source, "--np", n, "--ranges", ranges, "--schedule-only", "-o", out, "--force"),
            f"--schedule-only {name}")
    if f"job          " not in r.stdout:
        fail(f"--schedule-only prints no job size:\n{r.stdout}")
    with open(out) as f:
        return json.load(f)


def check_schedule(a, n, model, st4np):
    """The range replay's plan at n with ranges of 2: the model and the ST4NP written from it plan the same steps;
    every range is timed in exactly one step, paired with a range it exchanges messages with where it has one; the
    job holds the measured ranks, one black hole per measured rank with a peer outside the step, and the noise."""
    from_model = schedule_of(a, n, model, 2, f"schedule.model.np{n}.json")
    from_st4np = schedule_of(a, n, st4np, 2, f"schedule.st4np.np{n}.json")
    if from_model["steps"] != from_st4np["steps"]:
        fail(f"at n = {n} the model and its ST4NP plan different steps:\n{from_model}\n{from_st4np}")
    s = from_model
    timed = [0] * s["ranges"]
    for step in s["steps"]:
        for rng, t in zip(step["ranges"], step["timed"]):
            timed[rng] += 1 if t else 0
        if step["black_holes"] > 2 * len(step["ranges"]):
            fail(f"step {step}: more black holes than measured ranks")
    if timed != [1] * s["ranges"]:
        fail(f"at n = {n} the ranges are timed {timed} times, not once each: {s['steps']}")
    if s["job_size"] != min(n, 4) + s["black_holes"] + s["noise_ranks"]:
        fail(f"at n = {n} the job size {s['job_size']} is not the measured ranks, black holes and noise: {s}")
    print(f"SCHEDULE {a.name} n={n} C=2: {len(s['steps'])} steps, job {s['job_size']} ranks "
          f"({s['black_holes']} black holes, {s['noise_ranks']} noise)")
    check_range_replay(a, n, st4np, s)


def check_range_replay(a, n, st4np, schedule):
    """The range replay of the ST4NP at n, ranges of 2, on the job its schedule needs: it ends, every phase is
    replayed with as many calls per rank and instance as the full replay at n made (every predicted rank replayed
    once, its messages with outside ranks answered by black holes), its noise ranks sent the schedule's noise, and
    the result holds the schedule."""
    out = os.path.join(a.work, f"range.np{n}.json")
    job = schedule["job_size"]
    r = run(launch(a, job, a.replay, st4np, "--np", n, "--ranges", 2, "-o", out, "--force", "--warmup", WARMUP,
                   "--instances", INSTANCES, "--min-time", 0, "--compute", "sleep"), f"range replay at {n}")
    if f"range replay on {job} ranks" not in r.stdout:
        fail(f"the range replay's summary does not say so:\n{r.stdout}")
    with open(out) as f:
        ranged = json.load(f)
    with open(os.path.join(a.work, f"replay.np{n}.json")) as f:
        full = json.load(f)
    if ranged["processes"] != n or ranged["range"]["job_ranks"] != job:
        fail(f"range replay at {n}: processes {ranged['processes']}, job {ranged['range']['job_ranks']}")
    if ranged["range"]["schedule"]["steps"] != schedule["steps"]:
        fail(f"range replay at {n}: the result's schedule is not the one planned")
    for p, q in zip(ranged["phases"], full["phases"]):
        if p["replayed"] != q["replayed"] or abs(p["calls_per_instance"] - q["calls_per_instance"]) > 1e-9:
            fail(f"range replay at {n}, phase {p['id']}: {p['calls_per_instance']} calls per rank and instance, the "
                 f"full replay {q['calls_per_instance']}")
    # The noise ranks send, per instance the step's first rank replays, the phase's noise of the step, every pass
    # (the first of the two with one warm-up instance and at most two measured).
    with open(os.path.join(st4np, "lt4nc.json")) as f:
        order = json.load(f)["order"]
    ids = [p["id"] for p in full["phases"]]
    noise = 0
    for warmup, instances in ((min(WARMUP, 1), min(INSTANCES, 2)), (WARMUP, INSTANCES)):
        runs = {}
        for phase, count in order:
            runs.setdefault(phase, replayed_instances(count, warmup, instances) if count > 0 else 0)
        noise += sum(round(m) * runs.get(ids[p], 0) for step in schedule["steps"]
                     for p, m in enumerate(step["noise_messages"]))
    if schedule["noise_ranks"] and noise == 0:
        fail(f"range replay at {n}: noise ranks planned with no noise to send")
    if ranged["range"]["noise_messages"] != noise:
        fail(f"range replay at {n}: the noise ranks sent {ranged['range']['noise_messages']} messages, the schedule "
             f"says {noise} (two passes)")
    print(f"RANGE {a.name} n={n} C=2 on {job} ranks: PET {ranged['pet_ns'] / 1e6:.2f} ms, full replay "
          f"{full['pet_ns'] / 1e6:.2f} ms (not compared: the full replay spun its bursts)")


def check_handwritten(a):
    for n in a.np:
        out = os.path.join(a.work, f"handwritten.np{n}")
        shutil.rmtree(out, ignore_errors=True)
        write_handwritten(out, n)
        trace = record(a, n, f"replay.handwritten.np{n}", a.replay, out, "-o", out + ".json", "--force", "--warmup",
                       WARMUP, "--instances", INSTANCES, "--min-time", 0)
        compare_calls(a, n, calls_of_trace(out, n), trace, "hand-written ST4NP")
        with open(out + ".json") as f:
            result = json.load(f)
        ring = result["phases"][0]
        # 7 bursts of 26 us and a tail of 10 us per instance: the replay's compute time must be the trace's.
        if abs(ring["compute_ns"] - 36000) > 0.5 * 36000 or ring["predicted_compute_ns"] != 36000:
            fail(f"hand-written ring: compute {ring['compute_ns']:.0f} ns per instance emulated, "
                 f"{ring['predicted_compute_ns']:.0f} predicted, 36000 written")


def one_comparison(a, n, model, k):
    """A real run at n and a replay beside it: main loop real and predicted, the worst main-loop phase's compute
    error, and the replay's wall time over the application's run time."""
    real = record(a, n, f"{a.name}.np{n}" + (f".{k}" if k is not None else ""), a.app, *a.app_args)
    out = os.path.join(a.work, f"replay.np{n}" + (f".{k}" if k is not None else "") + ".json")
    r = run(launch(a, n, a.replay, model, "--compute", a.compute, "-o", out, "--force", "--compare",
                   os.path.join(real, "signature.json")), f"replay at {n}")
    print(r.stdout)
    with open(out) as f:
        result = json.load(f)
    with open(os.path.join(real, "signature.json")) as f:
        sig = json.load(f)
    c = result["comparison"]
    worst_compute = 0.0
    for p in c["phases"]:
        if p["main_loop"] and p["real_compute_ns"] > 0 and p["real_ns"] > 0.01 * c["real_main_ns"]:
            worst_compute = max(worst_compute,
                                abs(p["predicted_compute_ns"] - p["real_compute_ns"]) / p["real_compute_ns"])
    ranged = range_comparison(a, n, model, real, k) if a.range_size > 0 else (float("nan"), 0, 0, 0.0)
    return (c["real_main_ns"], c["predicted_main_ns"], worst_compute, result["replay_wall_ns"] / sig["run_time_ns"],
            *ranged, result["replay_wall_ns"], sig["run_time_ns"])


def range_comparison(a, n, model, real, k):
    """The range replay at n in ranges of --range-size beside the real run: its main loop, the job's ranks, the
    schedule's steps and the replay's wall time."""
    suffix = f".{k}" if k is not None else ""
    schedule = schedule_of(a, n, model, a.range_size, f"schedule.np{n}{suffix}.json")
    job = schedule["job_size"]
    out = os.path.join(a.work, f"range.np{n}{suffix}.json")
    r = run(launch(a, job, a.replay, model, "--np", n, "--ranges", a.range_size, "--compute", a.compute, "-o", out,
                   "--force", "--compare", os.path.join(real, "signature.json")), f"range replay at {n}")
    print(r.stdout)
    with open(out) as f:
        result = json.load(f)
    return result["comparison"]["predicted_main_ns"], job, len(schedule["steps"]), result["replay_wall_ns"]


def median(v):
    v = sorted(v)
    return (v[(len(v) - 1) // 2] + v[len(v) // 2]) / 2


def check_time(a):
    model = fit(a)
    rows = []
    range_rows = []
    for n in a.np:
        # Real runs and replays alternate, so that both see the machine as it is then; with --repeat K the medians
        # are compared (a 2-core machine's time for 48 ranks drifts by 10 % over minutes).
        runs = [one_comparison(a, n, model, k if a.repeat > 1 else None) for k in range(a.repeat)]
        real, pred = median([x[0] for x in runs]), median([x[1] for x in runs])
        err = (pred - real) / real
        comp, cost = median([x[2] for x in runs]), median([x[3] for x in runs])
        spread = (f" (real {min(x[0] for x in runs) / 1e6:.1f}..{max(x[0] for x in runs) / 1e6:.1f} ms, predicted "
                  f"{min(x[1] for x in runs) / 1e6:.1f}..{max(x[1] for x in runs) / 1e6:.1f} ms over {a.repeat})"
                  if a.repeat > 1 else "")
        rows.append((n, real, pred, err, comp, cost))
        print(f"ACCURACY {a.name} n={n}: main loop real {real / 1e6:.2f} ms predicted {pred / 1e6:.2f} ms error "
              f"{100 * err:+.1f} %{spread} worst phase compute error {100 * comp:.1f} % replay/app wall "
              f"{100 * cost:.1f} %")
        if a.range_size > 0:
            ranged, job = median([x[4] for x in runs]), runs[0][5]
            range_err = (ranged - real) / real
            range_rows.append((n, job, ranged, range_err, (ranged - pred) / pred))
            print(f"ACCURACY {a.name} n={n} range C={a.range_size} on {job} ranks: main loop {ranged / 1e6:.2f} ms, "
                  f"error {100 * range_err:+.1f} % against the real run, {100 * (ranged - pred) / pred:+.1f} % "
                  f"against the full replay")
            steps, wall, full_wall, app = runs[0][6], median([x[7] for x in runs]), median([x[8] for x in runs]), \
                median([x[9] for x in runs])
            print(f"COST {a.name} n={n} range C={a.range_size}: {job} ranks, {steps} steps, wall {wall / 1e9:.2f} s "
                  f"({job * wall / 1e9:.1f} core-s); full replay {full_wall / 1e9:.2f} s on {n} ranks "
                  f"({n * full_wall / 1e9:.1f} core-s); application {app / 1e9:.2f} s ({n * app / 1e9:.1f} core-s)")
    if a.sweep_instances:
        sweep(a, model)
    print(f"{'app':12s} {'n':>4s} {'real (ms)':>10s} {'predicted':>10s} {'error':>8s} {'compute':>8s} {'cost':>7s}")
    for n, real, pred, err, comp, cost in rows:
        print(f"{a.name:12s} {n:4d} {real / 1e6:10.2f} {pred / 1e6:10.2f} {100 * err:+7.1f}% {100 * comp:7.1f}% "
              f"{100 * cost:6.1f}%")
    bad = [f"n={n}: main loop error {100 * err:+.1f} % (limit {100 * a.limit:.0f} %)"
           for n, _, _, err, _, _ in rows if abs(err) > a.limit]
    # The range replay is held to a loose limit against the full replay (its own error is printed): on 2 cores the
    # full replay's 48 ranks wait on each other more than a range replay's 30, but a black hole that answered before
    # its sender sent (a pipeline's wait on the range before it lost) falls well short of it.
    for n, job, ranged, err, vs_full in range_rows:
        if not ranged > 0:
            fail(f"{a.name} n={n}: the range replay's main loop is {ranged}")
        if abs(vs_full) > a.range_limit:
            bad.append(f"n={n}: the range replay's main loop is {100 * vs_full:+.1f} % from the full replay's (limit "
                       f"{100 * a.range_limit:.0f} %)")
    bad += [f"n={n}: a phase's compute time off by {100 * comp:.1f} % (limit {100 * a.compute_limit:.0f} %)"
            for n, _, _, _, comp, _ in rows if comp > a.compute_limit]
    if bad:
        fail(f"{a.name}: " + "; ".join(bad))


def replay_fails(a, n, model, out, *extra, expect):
    r = subprocess.run([str(c) for c in launch(a, n, a.replay, model, "-o", out, *extra)], capture_output=True,
                       text=True, timeout=300)
    lines = [x for x in r.stderr.splitlines() if x.startswith("p3s-replay:")]
    if r.returncode == 0:
        fail(f"{expect!r}: p3s-replay succeeded")
    if not any(expect in x for x in lines):
        fail(f"{expect!r}: not in p3s-replay's messages {lines}\n{r.stderr[-2000:]}")
    if expect != "no progress" and len(lines) != 1:
        fail(f"{expect!r}: {len(lines)} lines from p3s-replay, expected one: {lines}")
    # A stuck job: the lowest rank reports first and its report ends the job (not one line per rank).
    if expect == "no progress" and (not lines[0].startswith("p3s-replay: rank 0 ") or len(lines) > 2):
        fail(f"a stuck replay reports {len(lines)} lines, the first not rank 0's: {lines}")
    print(f"REFUSED {expect!r}: exit {r.returncode}: {[x for x in lines if expect in x][0]}")
    return r


def crafted(a, model, name, change):
    """A copy of the model with one defect, as a model file could carry."""
    with open(model) as f:
        m = json.load(f)
    change(m)
    path = os.path.join(a.work, name + ".model")
    with open(path, "w") as f:
        json.dump(m, f)
    return path


def without_time(m):
    m["schema_version"] = 2
    for p in m["phases"]:
        for w in p["work"]:
            w.pop("time_fit", None)
            for b in w["bursts"]:
                b.pop("time", None)


def first_p2p(m):
    return next(g for p in m["phases"] for g in p["groups"] if g["role"] == "p2p")


def half_n_peer(m):
    first_p2p(m)["pattern"]["cases"][0]["terms"][0]["slots"][0][0]["base"] = {"a": "1/2", "b": 0, "basis": "n",
                                                                             "kind": "exact"}


def unmatched_tag(m):
    first_p2p(m)["traits"][0][0][0]["tag"] = 99  # a receive no send matches: every rank waits for ever


def edited(a, st4np, name, change):
    """A copy of an ST4NP changed after `p3s predict` checked it."""
    path = os.path.join(a.work, f"st4np.{name}")
    shutil.rmtree(path, ignore_errors=True)
    shutil.copytree(st4np, path)
    change(path)
    return path


def unchecked(path):
    """As an earlier p3s wrote it: schema 3, no record of a check."""
    with open(os.path.join(path, "lt4nc.json")) as f:
        h = json.load(f)
    h["schema_version"] = 3
    h.pop("consistency")
    with open(os.path.join(path, "lt4nc.json"), "w") as f:
        json.dump(h, f)


def zeroed_index(path):
    """The rank index zero-filled, as a damaged disk leaves it: every rank's range empty (it used to replay nothing
    and exit 0)."""
    index = os.path.join(path, "ranks.index")
    size = os.path.getsize(index)
    with open(index, "wb") as f:
        f.write(bytes(size))


def huge_message(path):
    """A message of 9e99 bytes in place of a real one, spaces keeping the line's length so the index holds (the
    replay used to allocate and zero-fill the largest size on every rank, or die of std::bad_alloc)."""
    with open(os.path.join(path, "ranks.jsonl")) as f:
        text = f.read()
    found = re.search(r'"bytes":([1-9][0-9.]{3,})', text)
    if found is None:
        fail(f"no message size written in 4 characters or more in {path}")
    text = text[:found.start(1)] + "9e99".ljust(len(found.group(1))) + text[found.end(1):]
    with open(os.path.join(path, "ranks.jsonl"), "w") as f:
        f.write(text)


def longer_burst(path, value):
    """The first burst of rank 0 made `value` ns long, spaces keeping the line's length so the index holds."""
    with open(os.path.join(path, "ranks.jsonl")) as f:
        text = f.read()
    found = re.search(r'"burst_ns":([0-9][0-9.e+]{5,})', text)
    if found is None:
        fail(f"no burst written in 6 characters or more in {path}")
    text = text[:found.start(1)] + value.ljust(len(found.group(1))) + text[found.end(1):]
    with open(os.path.join(path, "ranks.jsonl"), "w") as f:
        f.write(text)


def short_index(path):
    """The rank index cut by one entry."""
    index = os.path.join(path, "ranks.index")
    with open(index, "rb") as f:
        data = f.read()
    with open(index, "wb") as f:
        f.write(data[:-8])


def header_edit(change):
    """An edit of the ST4NP's header (lt4nc.json), which no index points into."""
    def edit(path):
        with open(os.path.join(path, "lt4nc.json")) as f:
            h = json.load(f)
        change(h)
        with open(os.path.join(path, "lt4nc.json"), "w") as f:
            json.dump(h, f)
    return edit


def same_length_edit(pattern, value):
    """The first match of `pattern`'s group 1 in ranks.jsonl replaced by `value`, spaces keeping the line's length so
    that the index holds."""
    def edit(path):
        with open(os.path.join(path, "ranks.jsonl")) as f:
            text = f.read()
        found = re.search(pattern, text)
        if found is None or len(value) > len(found.group(1)):
            fail(f"no {pattern!r} to put {value!r} in, in {path}")
        text = text[:found.start(1)] + value.ljust(len(found.group(1))) + text[found.end(1):]
        with open(os.path.join(path, "ranks.jsonl"), "w") as f:
            f.write(text)
    return edit


def stuck(path):
    """The first receive of the trace waits for a tag no send carries: its digits changed, the first one only, so
    that the line keeps its length and the rank index holds."""
    with open(os.path.join(path, "ranks.jsonl")) as f:
        text = f.read()
    found = re.search(r'"kind":"i?recv","peer":\d+,"tag":(\d+)', text)
    if found is None:
        fail(f"no receive in {path}")
    digits = found.group(1)
    text = text[:found.start(1)] + str(int(digits[0]) % 9 + 1) + digits[1:] + text[found.end(1):]
    with open(os.path.join(path, "ranks.jsonl"), "w") as f:
        f.write(text)


def check_errors(a):
    model = fit(a)
    out = os.path.join(a.work, "result.json")
    if os.path.exists(out):
        os.remove(out)
    replay_fails(a, 4, crafted(a, model, "schema2", without_time), out, expect="no compute-time laws")
    replay_fails(a, 5, crafted(a, model, "half", half_n_peer), out, expect="is not a whole number at n = 5")
    mismatched = crafted(a, model, "mismatched", unmatched_tag)
    replay_fails(a, 4, mismatched, out, "--strict", expect="predicted at n = 4 is inconsistent")
    repaired = os.path.join(a.work, "repaired.json")
    r = run(launch(a, 4, a.replay, mismatched, "-o", repaired, "--force", "--min-time", 0), "repaired replay")
    if "repaired at n = 4" not in r.stdout:
        fail(f"p3s-replay does not note the repair:\n{r.stdout}")
    with open(repaired) as f:
        marked = [p["id"] for p in json.load(f)["phases"] if p["repaired"]]
    if not marked:
        fail(f"the result of a repaired replay marks no phase repaired: {repaired}")
    st4np = os.path.join(a.work, "st4np.np4")
    run([a.p3s, "predict", model, "--np", 4, "-o", st4np, "--force", "--strict"], "predict -o")
    replay_fails(a, 2, st4np, out, expect="a trace of 4 ranks, and the job has 2")
    # A range replay on a job smaller than its schedule needs, or with ranges larger than the run, is refused.
    replay_fails(a, 2, st4np, out, "--np", 4, "--ranges", 1, expect="this range replay needs")
    replay_fails(a, 1, st4np, out, "--np", 4, "--ranges", 5, "--schedule-only", expect="between 1 and the 4 ranks")
    replay_fails(a, 1, st4np, out, "--np", 4, expect="at the job's size")
    replay_fails(a, 4, edited(a, st4np, "unchecked", unchecked), out, expect="did not check")
    replay_fails(a, 4, edited(a, st4np, "stuck", stuck), out, "--watchdog", "3", expect="no progress")
    replay_fails(a, 4, edited(a, st4np, "zeroed", zeroed_index), out, expect="does not hold rank")
    replay_fails(a, 4, edited(a, st4np, "short", short_index), out, expect="not the 40 of 4 ranks")
    replay_fails(a, 4, edited(a, st4np, "huge", huge_message), out, expect="more than one MPI call carries")
    # What a trace cannot mean, each refused in one line rather than replayed as something else: a later schema, an
    # order with nothing (or a count below zero) in it, a burst no clock holds or below zero, a peer outside the
    # job, a call no MPI function p3s knows, ranks that disagree on a collective's size.
    for name, change, expect in (
            ("schema99", header_edit(lambda h: h.update(schema_version=99)), "written by a later p3s"),
            ("no_order", header_edit(lambda h: h.update(order=[])), "no instance of any phase"),
            ("zero_order", header_edit(lambda h: h.update(order=[[p, 0] for p, _ in h["order"]])),
             "no instance of any phase"),
            ("negative_order", header_edit(lambda h: h["order"][1].__setitem__(1, -1)), "whole numbers >= 0"),
            ("burst_1e19", same_length_edit(r'"burst_ns":([0-9][0-9.e+]{5,})', "1e19"), "no duration a replay"),
            ("negative_burst", same_length_edit(r'"burst_ns":([0-9][0-9.e+]{5,})', "-5"), "no duration a replay"),
            ("far_peer", same_length_edit(r'"kind":"irecv","peer":(\d+)', "9"), "outside the job's 4 ranks"),
            ("unknown_call", same_length_edit(r'"call":"(MPI_Isend)"', "MPI_Ixend"), "no MPI function p3s knows"),
            ("disagreeing", same_length_edit(r'"block":([1-9][0-9.]*),"bytes":[0-9.]+,"bytes_received":[0-9.]+,'
                                             r'"collective":"ALLREDUCE"', "9.0"), "disagree on its collectives")):
        replay_fails(a, 4, edited(a, st4np, name, change), out, expect=expect)
    # A burst longer than the watchdog's limit is no lack of progress: the replay ends normally.
    long_burst = edited(a, st4np, "long_burst", lambda path: longer_burst(path, "3.0e9"))
    run(launch(a, 4, a.replay, long_burst, "-o", os.path.join(a.work, "long_burst.json"), "--force", "--watchdog",
               "1", "--instances", 1, "--warmup", 0, "--min-time", 0), "a burst longer than --watchdog")
    logical = os.path.join(a.work, "lt4nc.np4")
    run([a.p3s, "predict", model, "--np", 4, "--logical", "-o", logical, "--force", "--strict"], "predict --logical")
    replay_fails(a, 4, logical, out, expect="logical trace without burst times")
    # Options and outputs refused before the replay, not after it: NaN, -o where no file can go or over an input,
    # --compare with a run at another n.
    replay_fails(a, 4, model, out, "--watchdog", "nan", expect="no number of seconds")
    replay_fails(a, 4, model, os.path.join(a.work, "missing", "result.json"), expect="does not exist")
    replay_fails(a, 4, model, a.work, expect="is a directory")
    with open(model, "rb") as f:
        before = f.read()
    replay_fails(a, 4, model, model, "--force", expect="the model the replay reads")
    replay_fails(a, 4, st4np, os.path.join(st4np, "lt4nc.json"), "--force", expect="inside the trace")
    with open(model, "rb") as f:
        if f.read() != before:
            fail("p3s-replay -o MODEL --force wrote over its model")
    # A FIFO given where a file is read: refused, not waited on for ever.
    fifo = os.path.join(a.work, "fifo")
    if os.path.exists(fifo):
        os.remove(fifo)
    os.mkfifo(fifo)
    replay_fails(a, 4, fifo, out, expect="not a regular file")
    for cmd in ([a.p3s, "predict", fifo, "--np", "4", "-o", os.path.join(a.work, "from_fifo")],
                [a.p3s, "model", fifo, fifo, fifo, "-o", os.path.join(a.work, "from_fifo.model")]):
        r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=60)
        if r.returncode != 1 or "not a regular file" not in r.stderr:
            fail(f"{cmd[1]} of a FIFO: exit {r.returncode}: {r.stderr[-500:]}")
    other = next(n for n in a.fit if n != 4)
    replay_fails(a, 4, model, out, "--compare", os.path.join(a.work, f"{a.name}.np{other}", "signature.json"),
                 expect="compare runs at the same n")
    if os.path.exists(out):
        fail(f"a failed replay left {out}")
    with open(out, "w") as f:
        f.write("kept\n")
    replay_fails(a, 4, model, out, expect="exists; add --force")
    with open(out) as f:
        if f.read() != "kept\n":
            fail(f"{out} was written over without --force")


def timed_run(cmd, what):
    start = time.monotonic()
    run(cmd, what)
    return time.monotonic() - start


def sweep(a, model):
    """The replay's cost against M, at the first --np: its wall time from its first phase to its last over the
    application's run time (MPI_Init included, as the signature has it), and the whole replay job's wall time over
    the whole untraced application job's; and the error."""
    n = a.np[0]
    real = os.path.join(a.work, f"{a.name}.np{n}" + (".0" if a.repeat > 1 else ""))
    with open(os.path.join(real, "signature.json")) as f:
        app_ns = json.load(f)["run_time_ns"]
    app_job = timed_run(launch(a, n, a.app, *a.app_args), f"{a.name} at {n}, untraced")
    print(f"{'app':12s} {'n':>4s} {'M':>7s} {'error':>8s} {'replay':>10s} {'app':>10s} {'cost':>7s} "
          f"{'replay job':>11s} {'app job':>8s} {'cost':>7s}")
    for m in [*a.sweep_instances, None]:
        out = os.path.join(a.work, f"replay.np{n}.m{m}.json")
        extra = ["--instances", m, "--min-time", 0] if m is not None else []
        job = timed_run(launch(a, n, a.replay, model, "--compute", a.compute, "-o", out, "--force", *extra,
                               "--compare", os.path.join(real, "signature.json")), f"replay at {n}, M = {m}")
        with open(out) as f:
            r = json.load(f)
        label = str(m) if m is not None else "default"
        print(f"{a.name:12s} {n:4d} {label:>7s} {100 * r['comparison']['main_error']:+7.1f}% "
              f"{r['replay_wall_ns'] / 1e6:7.1f} ms {app_ns / 1e6:7.1f} ms {100 * r['replay_wall_ns'] / app_ns:6.1f}% "
              f"{job:9.2f} s {app_job:6.2f} s {100 * job / app_job:6.1f}%")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=["calls", "time", "errors", "handwritten"])
    p.add_argument("name")
    p3s_launch.add_options(p)
    p.add_argument("--p3s", required=True)
    p.add_argument("--replay", required=True)
    p.add_argument("--app", required=True)
    p.add_argument("--app-args", default="", help="the app's arguments, as one string")
    p.add_argument("--work", required=True)
    p.add_argument("--fit", type=int, nargs="+")
    p.add_argument("--np", type=int, nargs="+")
    p.add_argument("--limit", type=float, default=0.10)
    p.add_argument("--compute-limit", type=float, default=0.05)
    p.add_argument("--range-limit", type=float, default=0.35,
                   help="time: how far the range replay's main loop may be from the full replay's")
    p.add_argument("--range-size", type=int, default=8,
                   help="time: also a range replay at each --np in ranges of this many ranks (0: none)")
    p.add_argument("--compute", choices=["sleep", "spin"], default="sleep",
                   help="time: how the replay emulates bursts (sleep for the sleep-mode apps, spin for real computation)")
    p.add_argument("--repeat", type=int, default=1,
                   help="time: real runs and replays at each --np, alternating; their medians are compared")
    p.add_argument("--sweep-instances", type=int, nargs="*", default=[],
                   help="time: also replay at the first --np with each of these M and print cost and error")
    a = p.parse_args()
    a.app_args = shlex.split(a.app_args)
    a.fit = a.fit or ([2, 4, 8, 16] if a.mode == "time" else [4, 8, 16])
    a.np = a.np or ([8] if a.mode == "calls" else [32, 48])
    os.makedirs(a.work, exist_ok=True)
    {"calls": check_calls, "time": check_time, "errors": check_errors, "handwritten": check_handwritten}[a.mode](a)


if __name__ == "__main__":
    main()
