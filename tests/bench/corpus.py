#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Corpus benchmark: the whole pipeline on the real codes of ../shared/corpus (README.md there), one row each.

    corpus.py --p3s BIN --corpus DIR --work DIR [--only NAME[,NAME]] [--reuse] [--timeout 1200] [--json FILE]
              [--floors FILE] [launcher options]

Per workload, in a scratch folder WORK/NAME holding its inputs (copied from the system or the corpus folder):
1. `p3s record` at the fitted counts and the target (2, 4, 8 -> 16; LAMMPS's melt 2, 4, 8, 16 -> 32);
2. `p3s analyze` of the runs together, timed, its peak memory as the kernel counts it (ru_maxrss of the child);
3. `p3s model FIT --validate-with TARGET`, timed, its peak memory, and its report's validation (where it refuses
   a series whose phases do not all correspond, again with --allow-missing, the refusal noted in the row);
4. `p3s predict MODEL --np TARGET`: whether it answers or refuses;
5. with --scale, `p3s scale` of the command from an empty folder (WORK/NAME/scale: recording the fitted counts
   anew, bursts replayed as sleeps) to the target: whether it answers (`scale`: ok, or its one-line reason).
The row holds the phases at each n; the weight of the time step (the target run's phases that the analysis marks as
one time step each, the step and its kinds, added; where it marks none, the repeated phase of 3 instances or more of
the largest weight x mean instance time) against the code's own step count (the sum of a LAMMPS input's
`run` commands, meep's time steps, none for HPCC); of the target run's time in phases (`accounted_ns`), the share
spent in phases predicted exact in pattern, communications and weight (a phase's time: weight x mean instance time,
from the target's signature; a kind of the time step is exact in weight where the model's kinds add up to the
run's steps, `time_step` of the validation: which kind a step is is the run's data) and the share in phases exact in pattern and communications whatever their weight
(`pattern_time_share`: a weight the run's data decides is exact only by chance), and the share of the run's time
(`run_time_ns`) outside every phase (`outside_ns`: on each rank, before its first MPI call and after its last; the
launcher starting the ranks one after the other, which no model of the code holds); the target's relevant phases (>= 1 % of the time) predicted exact, out of all; the
communications of an instance (sends and collectives of all ranks) predicted, summed over the model's phases, and
real, summed over the target's phases (those the model lacks or cannot evaluate included); the volume error of each
relevant phase evaluated (its bytes per instance, all ranks, predicted against real: `volume_error_total`), mean and
max over them (the errors message by message, which sizes that follow each rank's data make large, in the JSON);
`p3s analyze`'s peak memory per MPI call recorded in the series (`p3s summary`'s counts); `p3s
model`'s time and peak memory; and predict's answer. A step that fails or runs past --timeout ends the workload's row
with its one-line reason, and the other workloads go on (--no-keep-going stops there); predict's refusal is its
answer.
--json writes the table for comparison with a later run. --floors FILE (JSON: per workload, and under "every" for
all, a list of [figure, "<=" or ">=" or "==", value], a figure being a column of --json or one of `answers` (the model
and predict answered without a flag, and scale where --scale ran it), `main_per_step` (main_weight / steps) and
`relevant_missed` (relevant phases not exact)) makes the run fail, naming each figure that fell short, where a
workload run misses one.

The model's phases are related to the target run's as `p3s model` relates them (compare.cpp): a longest common
subsequence of the two lists of phases, a phase being the set of MPI functions it calls, and the target's phases
without a counterpart merged into the related phase of the same functions (phase_kinds.cpp); the time step's weight
is the merged ones' where the analysis marks no step (where it does, the marked phases of the target run as
analysed: the kinds the model relates to other phases do not move the code's steps).
"""
import argparse
import json
import multiprocessing
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mpi"))
import p3s_launch  # noqa: E402

MELT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mpi", "in.melt")
LAMMPS_EXAMPLES = "/usr/share/lammps/examples"
FIT = (2, 4, 8)


@dataclass
class Workload:
    name: str
    steps: int | None  # the code's own step count (None: HPCC, whose tests have none)
    example: str = ""  # LAMMPS: the folder of examples/ and the input in it
    runs: int | None = None  # LAMMPS: every `run` command of the input cut to this many steps
    fit: tuple = FIT
    target: int = 16


# Steps: the sum of the input's `run` commands as run here (LAMMPS), 25 time units at resolution 20 and Courant
# factor 0.5 (meep-waveguide.ctl).
WORKLOADS = (
    Workload("lammps-melt", 200, fit=(2, 4, 8, 16), target=32),
    Workload("lammps-crack", 1000, "crack/in.crack", runs=1000),
    Workload("lammps-flow", 5000, "flow/in.flow.couette", runs=5000),
    Workload("lammps-indent", 60000, "indent/in.indent"),
    Workload("lammps-micelle", 2000, "micelle/in.micelle"),
    Workload("lammps-pour", 10000, "pour/in.pour", runs=5000),
    Workload("meep-waveguide", 1000),
    Workload("hpcc", None),
)


class StepFailed(Exception):
    """A step of the pipeline that failed, refused or timed out: its one-line reason."""

    def __init__(self, step, reason=""):
        super().__init__(f"{step}: {reason}" if reason else step)
        self.reason = reason or step


@dataclass
class Measured:
    stdout: str
    stderr: str
    wall: float
    peak_mb: float


@dataclass
class Row:
    name: str
    fit: list
    target: int
    steps: int | None
    phases: dict = field(default_factory=dict)  # n -> phases in the signature
    main_weight: int | None = None
    exact_time_share: float | None = None  # of the time in phases
    pattern_time_share: float | None = None  # of the time in phases: exact but for the weight
    outside_share: float | None = None  # of the run's time: outside every phase
    relevant_exact: int | None = None
    relevant: int | None = None
    comms_predicted: int | None = None
    comms_actual: int | None = None
    volume_error_mean: float | None = None
    volume_error_max: float | None = None
    message_volume_error_mean: float | None = None  # message by message
    message_volume_error_max: float | None = None
    calls: int | None = None  # MPI calls recorded in the series (p3s summary)
    operations: int | None = None  # the series' operations as its signatures count them (polling runs folded)
    record_s: float = 0.0  # recording, all counts (0 for runs kept by --reuse)
    analyze_bytes_per_call: float | None = None
    analyze_s: float | None = None
    analyze_mb: float | None = None
    model_s: float | None = None
    model_mb: float | None = None
    predict: str | None = None
    scale: str | None = None  # with --scale: "ok", or why p3s scale gave no answer
    model_refused: str | None = None  # why p3s model refused the series without --allow-missing
    failed: str | None = None
    wall_s: float = 0.0


def first_line(text):
    lines = [x.strip() for x in text.splitlines() if x.strip()]
    return lines[0] if lines else ""


def measure(cmd, what, timeout, cwd=None, env=None):
    """Runs cmd in its own session; returns Measured (peak RSS of the child as the kernel counts it). Raises
    StepFailed on a non-zero exit (with the first line of its stderr) or past `timeout` (the job killed whole)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.monotonic()
        try:
            proc = subprocess.Popen([str(c) for c in cmd], stdout=out, stderr=err, text=True, cwd=cwd, env=env,
                                    start_new_session=True)
        except OSError as e:
            raise StepFailed(what, f"cannot start {cmd[0]}: {e.strerror}") from None
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid != 0:
                break
            if time.monotonic() - start > timeout:
                os.killpg(proc.pid, signal.SIGKILL)
                os.wait4(proc.pid, 0)
                raise StepFailed(what, f"timed out after {timeout:.0f} s")
            time.sleep(0.05)
        wall = time.monotonic() - start
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise StepFailed(what, f"exit {code}: {first_line(stderr) or first_line(stdout) or '(no output)'}")
    return Measured(stdout, stderr, wall, usage.ru_maxrss / 1024)


# --- the workloads' commands -----------------------------------------------------------------------------------


def cut_runs(path, steps):
    """Rewrites every `run N` command of a LAMMPS input as `run steps`."""
    with open(path) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write(re.sub(r"^(\s*run\s+)\d+", rf"\g<1>{steps}", text, flags=re.MULTILINE))


def program(package, *names):
    """The first of `names` on PATH; else the step fails, naming the Debian package that installs it."""
    for name in names:
        path = shutil.which(name)
        if path is not None:
            return path
    raise StepFailed(f"{package} is not installed (apt-get install {package})")


def lammps_input(a, w, scratch):
    """Copies the input (its example folder: data files) into scratch/input; returns (command, cwd, env)."""
    lmp = program("lammps", "lmp", "lmp_openmpi")
    folder = os.path.join(scratch, "input")
    shutil.rmtree(folder, ignore_errors=True)
    if w.example:
        source = os.path.join(LAMMPS_EXAMPLES, os.path.dirname(w.example))
        if not os.path.isdir(source):
            raise StepFailed(f"{source} is not there (apt-get install lammps-examples)")
        shutil.copytree(source, folder)
        name = os.path.basename(w.example)
        if w.runs is not None:
            cut_runs(os.path.join(folder, name), w.runs)
        return [lmp, "-in", name, "-log", "none", "-screen", "none"], folder, None
    os.makedirs(folder)
    shutil.copy(MELT, folder)
    return [lmp, "-in", "in.melt", "-var", "L", "20", "-log", "none", "-screen", "none"], folder, None


def meep_input(a, w, scratch):
    meep = program("meep-openmpi", "meep", "meep-openmpi")
    folder = os.path.join(scratch, "input")
    os.makedirs(folder, exist_ok=True)
    shutil.copy(os.path.join(a.corpus, "meep-waveguide.ctl"), folder)
    return [meep, "meep-waveguide.ctl"], folder, None


def hpcc_input(a, w, scratch):
    """hpccinf.sh writes an input per count (N = 500, NB = 64); run.sh starts hpcc in the one for the job's size."""
    program("hpcc", "hpcc")
    folder = os.path.join(scratch, "input")
    os.makedirs(folder, exist_ok=True)
    for script in ("hpccinf.sh", "run.sh"):
        shutil.copy(os.path.join(a.corpus, "hpcc", script), folder)
    measure(["sh", os.path.join(folder, "hpccinf.sh"), folder, 500, 64, *w.fit, w.target], "hpccinf.sh", 60)
    return ["sh", os.path.join(folder, "run.sh")], folder, {**os.environ, "HPCC_DIR": folder}


def workload_input(a, w, scratch):
    if w.name.startswith("lammps-"):
        return lammps_input(a, w, scratch)
    return meep_input(a, w, scratch) if w.name == "meep-waveguide" else hpcc_input(a, w, scratch)


# --- the pipeline ----------------------------------------------------------------------------------------------


def record(a, row, scratch, n, command, cwd, env):
    """Records the command at n ranks into scratch/npN (kept with --reuse when recorded by the same command)."""
    trace = os.path.join(scratch, f"np{n}")
    cmd = [a.p3s, "record", "-o", trace, "--force", "--", *p3s_launch.launch(a, n, *command)]
    stamp = trace + ".command"
    if a.reuse and os.path.exists(os.path.join(trace, "traces.otf2")) and os.path.exists(stamp):
        with open(stamp) as f:
            if f.read() == " ".join(map(str, cmd)):
                return trace
    shutil.rmtree(trace, ignore_errors=True)
    if os.path.exists(stamp):
        os.remove(stamp)
    row.record_s += measure(cmd, f"record {n}", a.timeout, cwd=cwd, env=env).wall
    if not os.path.exists(os.path.join(trace, "traces.otf2")):
        raise StepFailed(f"record {n}", "no archive written")
    with open(stamp, "w") as f:
        f.write(" ".join(map(str, cmd)))
    return trace


def phase_calls(phase):
    """The MPI functions a phase calls, as `p3s model` names a phase to relate it (analyzer::phase_calls)."""
    return " ".join(sorted({e["call"] for r in phase["ranks"] for e in r["events"]}))


def communications(phase):
    """The communications of a phase's instance (sends and collectives, all ranks), as the validation counts them."""
    return sum(1 for r in phase["ranks"] for e in r["events"] for x in e["actions"] if x["kind"] in ("send", "coll"))


def signature_summary(trace):
    """What the row needs of a run's signature (read once: a large run's signature takes hundreds of MB)."""
    with open(os.path.join(trace, "signature.json")) as f:
        s = json.load(f)
    return {"run_time_ns": s["run_time_ns"], "accounted_ns": s["accounted_ns"], "outside_ns": s["outside_ns"],
            "operations": s["operations"],
            "relevance": s["inputs"]["options"].get("relevance", 0.01),
            "phases": [{"weight": p["weight"], "time_ns": p["weight"] * p["time_ns"]["mean"], "share": p["share"],
                        "split_from": p.get("split_from"), "step": p.get("step", False),
                        "relevant": p["relevant"], "calls": phase_calls(p), "comms": communications(p)}
                       for p in s["phases"]]}


def signature_summaries(traces):
    return [signature_summary(t) for t in traces]


def relate(ours, theirs):
    """For each of `ours`, the index of the equal element of `theirs` on a longest common subsequence, or None:
    modeler/src/align.hpp's alignment, its ties broken the same way, then relate_phase_lists()'s gaps of one."""
    a, b = len(ours), len(theirs)
    best = [[0] * (b + 1) for _ in range(a + 1)]
    for i in range(a - 1, -1, -1):
        for j in range(b - 1, -1, -1):
            paired = best[i + 1][j + 1] + 1 if ours[i] == theirs[j] else 0
            best[i][j] = max(best[i + 1][j], best[i][j + 1], paired)
    out = [None] * a
    i = j = 0
    while i < a or j < b:
        if i < a and j < b and ours[i] == theirs[j] and best[i][j] == best[i + 1][j + 1] + 1:
            out[i] = j
            i, j = i + 1, j + 1
        elif i < a and (j == b or best[i + 1][j] >= best[i][j + 1]):
            i += 1
        else:
            j += 1
    # Between two related phases (or an end), one left on each side, the calls of one including the other's: related (as
    # relate_phase_lists() does: the same place in the program, whose calls change with n).
    anchors = [(-1, -1)] + [(i, j) for i, j in enumerate(out) if j is not None] + [(a, b)]
    for (i0, j0), (i1, j1) in zip(anchors, anchors[1:]):
        x, y = (set(ours[i0 + 1].split()), set(theirs[j0 + 1].split())) if i1 - i0 == 2 and j1 - j0 == 2 else ({0}, {1})
        if x <= y or y <= x:
            out[i0 + 1] = j0 + 1
    return out


def relate_keys(ours, theirs):
    """relate() on (calls, step) keys as modeler/src/series.cpp's relate_phase_keys(): where both sides mark kinds of
    the time step, the kinds among the kinds and the others among the others, then the rest by relate()."""
    out = [None] * len(ours)
    taken = [False] * len(theirs)

    def among(keep_ours, keep_theirs):
        a = [i for i, k in enumerate(ours) if out[i] is None and keep_ours(k)]
        b = [j for j, k in enumerate(theirs) if not taken[j] and keep_theirs(k)]
        for x, y in enumerate(relate([ours[i][0] for i in a], [theirs[j][0] for j in b])):
            if y is not None:
                out[a[x]] = b[y]
                taken[b[y]] = True

    if any(k[1] for k in ours) and any(k[1] for k in theirs):
        among(lambda k: k[1], lambda k: k[1])
        among(lambda k: not k[1], lambda k: not k[1])
    among(lambda k: True, lambda k: True)
    return out


def pattern_exact(check):
    return not check.get("error") and check["pattern_exact"] and check["comms_predicted"] == check["comms_actual"]


def exact(check, kinds=frozenset()):
    """Exact in pattern, communications and weight; a kind of the time step (in `kinds`, where the model predicts
    the run's steps) is exact in weight where the steps are: which kind a step is is the run's data."""
    weight = check["weight_predicted"] == check["weight_actual"] or check["phase"] in kinds
    return pattern_exact(check) and weight


def step_kinds(validation):
    """The model's kinds of the time step where it predicts the run's steps exactly; else none."""
    step = validation.get("time_step")
    return frozenset(step["kinds"]) if step and step["predicted"] == step["actual"] else frozenset()


def merge_kinds(phases, related, relevance):
    """The phases with their kinds merged as modeler/src/phase_kinds.cpp merges them: a phase that is not related
    and calls the same functions as a related one joins the work variant's base, else the nearest such before it,
    else after it; a kind of the time step with no such phase joins the heaviest related kind whose functions include
    its own (weights, times and shares add up, relevance anew; its communications are its calls' union with
    the kinds' where they differ only by messages left out, else its own: between the fewest of one of them and all
    of theirs added, `comms_range`); None where none joins."""
    is_related = [False] * len(phases)
    for j in related:
        if j is not None:
            is_related[j] = True
    into = list(range(len(phases)))
    for j, p in enumerate(phases):
        same = [t for t in range(len(phases)) if is_related[t] and phases[t]["calls"] == p["calls"]]
        if not is_related[j] and same:
            before = [t for t in same if t < j]
            into[j] = p["split_from"] if p["split_from"] in same else before[-1] if before else same[0]
        elif not is_related[j] and p["step"]:
            including = [t for t in range(len(phases)) if is_related[t] and phases[t]["step"]
                         and set(phases[t]["calls"].split()) >= set(p["calls"].split())]
            if including:
                into[j] = max(including, key=lambda t: (phases[t]["weight"], -t))
    if into == list(range(len(phases))):
        return None
    kept = {t: dict(phases[t]) for t in range(len(phases)) if into[t] == t}
    for j, t in enumerate(into):
        if t != j:
            for key in ("weight", "time_ns", "share"):
                kept[t][key] += phases[j][key]
            low, high = kept[t].get("comms_range", (kept[t]["comms"], kept[t]["comms"]))
            low2, high2 = phases[j].get("comms_range", (phases[j]["comms"], phases[j]["comms"]))
            kept[t]["comms_range"] = (min(low, low2), high + high2)
            kept[t]["relevant"] = kept[t]["relevant"] or kept[t]["share"] >= relevance
    order = sorted(kept)
    renumbered = {t: i for i, t in enumerate(order)}
    for t in order:
        base = kept[t]["split_from"]
        if base is not None and base < len(phases):
            kept[t]["split_from"] = None if into[base] == t else renumbered[into[base]]
    return [kept[t] for t in order]


def main_phase(phases):
    """The time step's repeated phase (3 instances or more, as the analysis counts iterations) of the most time."""
    return max((p for p in phases if p["weight"] >= 3), key=lambda p: p["time_ns"], default=None)


def step_weight(phases):
    """The time step's weight: where the analysis marks the phases that are one time step each (the signature's
    `step`: the step and its kinds), their weights added; else the main phase's."""
    if any(p["step"] for p in phases):
        return sum(p["weight"] for p in phases if p["step"])
    return main["weight"] if (main := main_phase(phases)) else None


def accuracy(report_path, target):
    """The accuracy columns, from the model's validation against the target run, phase by phase."""
    with open(report_path) as f:
        report = json.load(f)
    v = report.get("validation")
    if v is None:
        raise StepFailed("model", "its report has no validation")
    # The target's phases as the validation sees them: the kinds of the phases related to the model's merged.
    phases = target["phases"]
    with open(report_path.removesuffix(".report.json")) as f:
        steps = {p["id"]: p.get("step", False) for p in json.load(f)["phases"]}
    ours = [(p["calls"], steps.get(p["id"], False)) for p in report["phases"]]
    related = relate_keys(ours, [(p["calls"], p["step"]) for p in phases])
    while (merged := merge_kinds(phases, related, target["relevance"])) is not None:
        phases = merged
        related = relate_keys(ours, [(p["calls"], p["step"]) for p in phases])
    checks = {c["phase"]: c for c in v["phases"]}
    kinds = step_kinds(v)
    exact_phases, pattern_phases, evaluated = set(), set(), []
    for model_phase, j in zip(report["phases"], related):
        c = checks.get(model_phase["id"])
        if j is None or c is None:
            continue
        low, high = phases[j].get("comms_range", (phases[j]["comms"], phases[j]["comms"]))
        if not c.get("error") and (c["weight_actual"] != phases[j]["weight"] or not low <= c["comms_actual"] <= high):
            raise StepFailed("relating phases", f"model phase {model_phase['id']} is not the target's phase {j}: "
                             f"weight {c['weight_actual']}, {c['comms_actual']} communications against "
                             f"{phases[j]['weight']}, {low}-{high}")
        if not c.get("error") and "comms_range" in phases[j]:  # kinds united: the validation counts the union
            phases[j] = dict(phases[j], comms=c["comms_actual"])
        if exact(c, kinds):
            exact_phases.add(j)
        if pattern_exact(c):
            pattern_phases.add(j)
        if not c.get("error") and phases[j]["relevant"]:
            evaluated.append(c)
    relevant = [j for j, p in enumerate(phases) if p["relevant"]]
    columns = {"exact_time_share": sum(phases[j]["time_ns"] for j in exact_phases) / target["accounted_ns"],
               "pattern_time_share": sum(phases[j]["time_ns"] for j in pattern_phases) / target["accounted_ns"],
               "outside_share": target["outside_ns"] / target["run_time_ns"],
               "relevant": len(relevant), "relevant_exact": len([j for j in relevant if j in exact_phases]),
               "comms_predicted": sum(c["comms_predicted"] for c in v["phases"]),
               "comms_actual": sum(p["comms"] for p in phases),  # the phases the model lacks or cannot evaluate too
               # The steps as the analysis marks them in the target run, else the main phase merged as the model relates
               "main_weight": step_weight(target["phases"] if any(p["step"] for p in target["phases"]) else phases)}
    if evaluated:
        columns["volume_error_mean"] = sum(c["volume_error_total"] for c in evaluated) / len(evaluated)
        columns["volume_error_max"] = max(c["volume_error_total"] for c in evaluated)
        columns["message_volume_error_mean"] = sum(c["volume_error_mean"] for c in evaluated) / len(evaluated)
        columns["message_volume_error_max"] = max(c["volume_error_max"] for c in evaluated)
    return columns


def in_child(fn, *args):
    """fn(*args) in a forked process. A large run's signatures take GBs in Python, and this process's peak memory
    would pass to every command measured after it (ru_maxrss is kept across fork and exec)."""
    with multiprocessing.get_context("fork").Pool(1) as pool:
        return pool.apply(fn, args)


def recorded_calls(a, trace):
    """The MPI calls an archive holds, all ranks (`p3s summary`): a signature's operations count a run of polling
    calls as one."""
    ranks = json.loads(measure([a.p3s, "summary", trace, "--json"], "summary", a.timeout).stdout)["ranks"]
    return sum(sum(r["calls"].values()) for r in ranks)


def analyze(a, row, traces):
    m = measure([a.p3s, "analyze", *traces.values(), "-q"], "analyze", a.timeout)
    row.analyze_s, row.analyze_mb = m.wall, m.peak_mb
    sigs = dict(zip(traces, in_child(signature_summaries, list(traces.values()))))
    row.phases = {n: len(s["phases"]) for n, s in sigs.items()}
    row.operations = sum(s["operations"] for s in sigs.values())
    row.calls = sum(recorded_calls(a, t) for t in traces.values())
    row.analyze_bytes_per_call = m.peak_mb * 2**20 / row.calls if row.calls else None
    target = sigs[row.target]
    # Until the model relates them (accuracy()), the target's phases as analysed.
    row.main_weight = step_weight(target["phases"])
    return target


def model(a, row, scratch, traces):
    """Fits the model; where p3s refuses a series whose phases do not all correspond, fits it again with
    --allow-missing (the phases left out are then the validation's unrelated ones) and notes the refusal."""
    path = os.path.join(scratch, f"{row.name}.model")
    cmd = [a.p3s, "model", *[traces[n] for n in row.fit], "--validate-with", traces[row.target], "-o", path, "--force"]
    try:
        m = measure(cmd, "model", a.timeout)
    except StepFailed as e:
        if "--allow-missing" not in e.reason:
            raise
        row.model_refused = e.reason.removeprefix("exit 1: ")
        m = measure([*cmd, "--allow-missing"], "model --allow-missing", a.timeout)
    row.model_s, row.model_mb = m.wall, m.peak_mb
    return path


def predict(a, row, scratch, path):
    out = os.path.join(scratch, f"predict.np{row.target}")
    try:
        measure([a.p3s, "predict", path, "--np", row.target, "-o", out, "--force"], "predict", a.timeout)
        row.predict = "ok"
    except StepFailed as e:  # exit 1: p3s refused, with its reason
        row.predict = "refused: " + e.reason.removeprefix("exit 1: ") if e.reason.startswith("exit 1: ") else e.reason


def scale(a, row, scratch, command, cwd, env):
    """`p3s scale` from an empty folder to the target, as a user would run it: an answer, or its reason."""
    out = os.path.join(scratch, "scale")
    shutil.rmtree(out, ignore_errors=True)
    cmd = [a.p3s, "scale", "-o", out, "--fit", ",".join(map(str, row.fit)), "--predict", row.target,
           "--compute", "sleep", "--", *p3s_launch.launch(a, "{n}", *command)]
    try:
        measure(cmd, "scale", a.timeout, cwd=cwd, env=env)
        row.scale = "ok"
    except StepFailed as e:
        row.scale = e.reason


def bench(a, w):
    """One workload through the pipeline; a step that fails ends the row with its reason."""
    row = Row(w.name, list(w.fit), w.target, w.steps)
    scratch = os.path.join(a.work, w.name)
    os.makedirs(scratch, exist_ok=True)
    start = time.monotonic()
    try:
        command, cwd, env = workload_input(a, w, scratch)
        traces = {n: record(a, row, scratch, n, command, cwd, env) for n in (*w.fit, w.target)}
        target = analyze(a, row, traces)
        path = model(a, row, scratch, traces)
        predict(a, row, scratch, path)
        if a.scale:
            scale(a, row, scratch, command, cwd, env)
        for key, value in in_child(accuracy, path + ".report.json", target).items():
            setattr(row, key, value)
    except StepFailed as e:
        row.failed = str(e)
    row.wall_s = time.monotonic() - start
    return row


# --- the table -------------------------------------------------------------------------------------------------

HEADER = (f"{'workload':<15} {'n':<11} {'phases at n':<19} {'step/steps':>11} {'exact t':>7} {'patt t':>7} "
          f"{'outside':>7} "
          f"{'rel ex':>6} {'comms pred/real':>17} {'vol err mn/mx':>14} {'analyze':>8} {'peak':>7} {'B/call':>6} "
          f"{'model':>7} {'peak':>6} {'wall':>6}  predict")
LEGEND = """\
step/steps: the weight of the target run's time step (its kinds added) / the code's steps; exact t: of the target run's time in
phases, the share in phases exact in pattern, communications and weight (a kind of the time step in weight where the
steps are); patt t: exact but maybe for the weight
(a weight the run's data decides, as how often a step re-neighbours, is exact only by chance); outside: the share of
its run time outside every phase (ranks started one after the other); rel ex: its relevant phases exact / all;
comms: per instance, summed over the phases; vol err: each relevant phase's volume, mean/max over them; analyze, peak, B/call: p3s analyze of the
series, its peak memory, per MPI call recorded; model, peak: p3s model; wall: the workload end to end (recording
included); [model with --allow-missing: ...]: p3s model refused the series for that reason, and was run again with
--allow-missing"""


def cell(value, fmt, width, unit=""):
    return f"{'-' if value is None else format(value, fmt) + unit:>{width}}"


def clipped(text, width=150):
    """A reason as the table shows it (the JSON holds it whole)."""
    return text if len(text) <= width else text[:width - 3] + "..."


def ratio(a, b):
    return "-" if b is None else f"{'-' if a is None else a}/{b}"


def row_line(r):
    counts = f"{','.join(map(str, r.fit))}>{r.target}"
    phases = "/".join(str(r.phases[n]) for n in (*r.fit, r.target) if n in r.phases) or "-"
    main = "-" if r.main_weight is None else f"{r.main_weight}/{'-' if r.steps is None else r.steps}"
    share = None if r.exact_time_share is None else 100 * r.exact_time_share
    pattern = None if r.pattern_time_share is None else 100 * r.pattern_time_share
    outside = None if r.outside_share is None else 100 * r.outside_share
    volume = "-" if r.volume_error_mean is None else \
        f"{100 * r.volume_error_mean:.1f}/{100 * r.volume_error_max:.1f}%"
    answer = "-" if r.predict is None else clipped(r.predict)
    if r.scale is not None:
        answer += f", scale {clipped(r.scale, 90)}"
    if r.model_refused:
        answer = f"[model with --allow-missing: {clipped(r.model_refused, 90)}] {answer}"
    if r.failed:
        answer = f"FAILED {clipped(r.failed)}" if r.predict is None else f"{answer}; FAILED {clipped(r.failed)}"
    return (f"{r.name:<15} {counts:<11} {phases:<19} {main:>11} {cell(share, '.1f', 7, '%')} "
            f"{cell(pattern, '.1f', 7, '%')} "
            f"{cell(outside, '.1f', 7, '%')} "
            f"{ratio(r.relevant_exact, r.relevant):>6} {ratio(r.comms_predicted, r.comms_actual):>17} {volume:>14} "
            f"{cell(r.analyze_s, '.1f', 8, 's')} {cell(r.analyze_mb, '.0f', 7, 'MB')} "
            f"{cell(r.analyze_bytes_per_call, '.0f', 6)} {cell(r.model_s, '.1f', 7, 's')} "
            f"{cell(r.model_mb, '.0f', 6, 'MB')} {r.wall_s:5.0f}s  {answer}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--p3s", required=True)
    p.add_argument("--corpus", required=True, help="../shared/corpus: meep-waveguide.ctl, hpcc/")
    p.add_argument("--work", required=True, help="scratch folders, one per workload")
    p3s_launch.add_options(p)
    p.add_argument("--only", help="NAME[,NAME]: these workloads only")
    p.add_argument("--reuse", action="store_true", help="keep the runs already recorded by the same command")
    p.add_argument("--scale", action="store_true", help="also run p3s scale from an empty folder to the target")
    p.add_argument("--keep-going", action=argparse.BooleanOptionalAction, default=True,
                   help="go on with the next workload after a failed step (default); --no-keep-going stops")
    p.add_argument("--timeout", type=float, default=1200, help="seconds a step may take")
    p.add_argument("--json", help="write the table as JSON to this file")
    p.add_argument("--floors", help="JSON: the figures each workload must reach (see above); exit 1 where one misses")
    a = p.parse_args()
    names = [w.name for w in WORKLOADS]
    floors = {}
    if a.floors:
        try:
            with open(a.floors) as f:
                floors = json.load(f)
        except (OSError, ValueError) as e:
            p.error(f"--floors {a.floors}: {e}")
        if not isinstance(floors, dict) or not all(isinstance(v, (list, str)) for v in floors.values()):
            p.error(f"--floors {a.floors}: not an object of lists")
        floors.pop("why", None)  # what the floors are for, in words
        known = [*Row.__dataclass_fields__, "answers", "main_per_step", "relevant_missed"]
        bad = [k for k in floors if k != "every" and k not in names] + \
              [c for k in floors for c in floors[k] if not isinstance(c, list) or len(c) != 3 or
               c[0] not in known or c[1] not in ("<=", ">=", "==")]
        if bad:
            p.error(f"--floors {a.floors}: not a workload or not [figure, op, value] of a known figure: {bad}")
    only = a.only.split(",") if a.only else names
    unknown = [x for x in only if x not in names]
    if unknown:
        p.error(f"unknown workloads {unknown}; known: {', '.join(names)}")
    a.work = os.path.abspath(a.work)
    os.makedirs(a.work, exist_ok=True)
    print(HEADER, flush=True)
    rows = []
    for w in (w for w in WORKLOADS if w.name in only):
        rows.append(bench(a, w))
        print(row_line(rows[-1]), flush=True)
        if a.json:  # after every row, so that an interrupted run keeps what it measured
            write_json(a, rows)
        if rows[-1].failed and not a.keep_going:
            break
    print(LEGEND)
    missed = short_of_floors(floors, rows)
    if missed:
        print("FAIL: below the floors of " + a.floors + ":\n  " + "\n  ".join(missed), file=sys.stderr)
        sys.exit(1)
    if a.floors:
        print(f"every floor of {a.floors} held")


def figure(row, name):
    """A figure of a row by name: a column of --json, or one derived from them."""
    if name == "answers":
        return row.predict == "ok" and row.scale in (None, "ok") and not row.model_refused and not row.failed
    if name == "main_per_step":
        return None if row.main_weight is None or not row.steps else row.main_weight / row.steps
    if name == "relevant_missed":
        return None if row.relevant is None or row.relevant_exact is None else row.relevant - row.relevant_exact
    return getattr(row, name)


def short_of_floors(floors, rows):
    """Each floor a run workload misses, in words."""
    missed = []
    for row in rows:
        for name, op, value in floors.get("every", []) + floors.get(row.name, []):
            got = figure(row, name)
            held = got is not None and {"<=": lambda: got <= value, ">=": lambda: got >= value,
                                        "==": lambda: got == value}[op]()
            if not held:
                missed.append(f"{row.name}: {name} is {got}, not {op} {value}")
    return missed


def write_json(a, rows):
    with open(a.json, "w") as f:
        json.dump({"date": time.strftime("%Y-%m-%dT%H:%M:%S"), "p3s": a.p3s, "workloads": [vars(r) for r in rows]}, f,
                  indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
