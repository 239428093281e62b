#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The model and the executable trace (ST4NP) against structural damage: valid-looking JSON with one thing wrong.

    fuzz_structured.py --p3s BIN --replay BIN --data TESTS_DATA --work DIR [--cases N] [--seed S] [--only CASE]
                       [--jobs J] [--mpi-share F] [--watchdog S] [--mpiexec M --np-flag F --preflag P]

Inputs (all real): the model `p3s model` fits to the signatures of tests/data/models/ring, and the ST4NPs `p3s
predict -o` writes from it at 1 and 2 ranks (lt4nc.json, ranks.jsonl and ranks.index, the n + 1 little-endian
uint64 offsets of each rank's lines). Targets, in turn:
  model         the model, read by `p3s predict MODEL --np K` (K in 1 3 5 8 64 1000; with -o DIR, -o DIR --logical
                or neither);
  st4np-header  lt4nc.json, read by p3s-replay;
  st4np-lines   one line of ranks.jsonl, the index rewritten to the lines' new offsets or left as it was;
  st4np-index   ranks.index;
  replay-model  the model, read by p3s-replay (sometimes with --strict).
p3s-replay runs as an MPI singleton on the 1-rank trace, and for a share of the cases (--mpi-share) under the
launcher at 2 ranks on the 2-rank trace (so that ranks that disagree are covered), with --min-time 0 --instances 1
--warmup 0. Each case damages one fresh copy once: on the parsed JSON, one node drawn at random becomes an array
nested 100,000 deep, an odd number (NaN, Infinity, -0, 1e308, 1e-320, -1, 2^63, 2^64, a huge negative, 0.5 where an
integer belongs), a value of another type, an object with a key twice, an object without one of its keys, an empty
array or object, a 1 MB string, a string (or key) with bytes that are no UTF-8; a line of ranks.jsonl can also be
deleted, doubled or swapped with another; the index is cut, zeroed, made to decrease, to point past the end, to
swap two entries, or given an entry more or less; and a share of the cases gets the byte damages of
fuzz_readers.py (truncate, flip, random). Each reader runs under a memory limit (1 GiB of address space, no core
dumps) and a time limit (30 s).

A case passes when the reader exits 0 (the damage did not matter) or 1 with exactly one line on stderr (from
p3s-replay, a line starting "p3s-replay: "); a signal, any other exit status, a second line, a library's exception
id ("[json.exception...") or a timeout fails it. Open MPI's own messages are not p3s-replay's and are set aside
first: its help blocks (the text between two lines of dashes, as mpiexec prints when a rank exits non-zero, or
MPI_Abort in a singleton) and its "[host:pid] N more processes have sent help message" / "Set MCA parameter"
lines; a help block that reports a signal fails the case. One exit != 0 is p3s-replay's by design: with an ST4NP
(which p3s predict checked when it wrote it, and which the damage edited since) a replay stuck in a receive is
stopped by the watchdog, exit 3 with its line "p3s-replay: rank R has made no progress ..." (a second rank's too
where the launcher takes over a second to stop the job); such a case passes and is counted apart (with a model,
where p3s-replay checks the prediction itself, it fails).

The cases are drawn from a fixed seed, each case from its own generator: a failure reproduces with the same
--seed and --only CASE; the failing case's files, command and stderr are kept under WORK/failed-N. Prints the
cases by target and damage, then one summary line; exits 1 listing the failures.
"""
import argparse
import concurrent.futures
import json
import os
import random
import re
import resource
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mpi"))
import p3s_launch  # noqa: E402

import fuzz_inputs  # noqa: E402

MEMORY = 1 << 30
TIMEOUT = 30
TARGETS = ["model", "st4np-header", "st4np-lines", "st4np-index", "replay-model"]
JSON_DAMAGES = ["deep-nesting", "odd-number", "other-type", "duplicate-key", "deleted-key", "empty-container",
                "long-string", "non-utf8"]
LINE_DAMAGES = ["line-delete", "line-duplicate", "line-swap"]
INDEX_DAMAGES = ["index-truncate", "index-zero", "index-decreasing", "index-past-end", "index-swap", "index-count"]
BYTE_DAMAGES = ["truncate", "flip", "random"]
BYTE_SHARE = 0.15  # the cases damaged byte by byte, as fuzz_readers.py does
ODD_NUMBERS = [b"NaN", b"Infinity", b"-Infinity", b"-0", b"1e308", b"1e-320", b"-1", b"9223372036854775808",
               b"18446744073709551616", b"-9223372036854775809", b"-1e308", b"0.5"]
# Values of each JSON type, to put where another type belongs.
OF_TYPE = {"number": [b"0", b"1", b"-1", b"3.5"], "string": [b'""', b'"x"', b'"MPI_Send"', b'"1"'],
           "bool": [b"true", b"false"], "null": [b"null"], "object": [b"{}", b'{"x":1}'],
           "array": [b"[]", b"[0]", b'["a"]']}
NOT_UTF8 = [b"\xff", b"\xfe\xff", b"\xc3", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80", b"\x80"]
DEPTH = 100_000
LONG = 1 << 20
MARK = "\x00p3s-fuzz\x00"  # a string no input holds: its JSON text is replaced by the damaged text
MARK_TEXT = json.dumps(MARK).encode()
OMPI_BLOCK_RULE = re.compile(r"^-{20,}$")
OMPI_LINE = re.compile(r"^\[[^\]]*:\d+\] (\d+ more process(es)? ha(s|ve) sent help message|"
                       r"Set MCA parameter \"orte_base_help_aggregate\")")
WATCHDOG = re.compile(r"^p3s-replay: rank \d+ has made no progress for .*; stopping the replay$")


def limit():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run(cmd, env):
    """(exit status or "timeout", stderr); the command in a session of its own, so that a launcher's ranks end
    with it on a timeout."""
    try:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=limit,
                             start_new_session=True, env=env)
    except OSError as e:
        return f"not started ({e.strerror})", ""
    try:
        _, err = p.communicate(timeout=TIMEOUT)
        return p.returncode, err.decode(errors="replace")
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        _, err = p.communicate()
        return "timeout", err.decode(errors="replace")


# --- JSON damage -------------------------------------------------------------------------------------------------

def kind_of(v):
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if v is None:
        return "null"
    return "object" if isinstance(v, dict) else "array"


def nodes(v, path=()):
    yield path, v
    if isinstance(v, dict):
        for k, x in v.items():
            yield from nodes(x, path + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from nodes(x, path + (i,))


def at(doc, path):
    for p in path:
        doc = doc[p]
    return doc


def splice(doc, path, raw, dump):
    """doc's text with the value at `path` written as the bytes `raw`."""
    if not path:
        return raw
    parent = at(doc, path[:-1])
    old = parent[path[-1]]
    parent[path[-1]] = MARK
    try:
        text = dump(doc).encode()
    finally:
        parent[path[-1]] = old
    return text.replace(MARK_TEXT, raw, 1)


def splice_key(doc, path, key, raw_key, dump):
    """doc's text with the key `key` of the object at `path` written as the bytes `raw_key` (a quoted string)."""
    obj = at(doc, path)
    renamed = {(MARK if k == key else k): v for k, v in obj.items()}
    if path:
        parent = at(doc, path[:-1])
        parent[path[-1]] = renamed
        try:
            text = dump(doc).encode()
        finally:
            parent[path[-1]] = obj
    else:
        text = dump(renamed).encode()
    return text.replace(MARK_TEXT, raw_key, 1)


def compact(v):
    return json.dumps(v, separators=(",", ":")).encode()


def other_value(v, rng):
    """Text of a value that is not v: another number for a number, else one of another type."""
    if kind_of(v) == "number":
        return str(rng.choice([x for x in (v + 1, 0, -v, 2 * v + 1, 7) if x != v])).encode()
    return rng.choice(OF_TYPE[rng.choice([t for t in OF_TYPE if t != kind_of(v)])])


def damage_json(doc, how, dump, rng):
    """The text of `doc` with one node damaged as `how` says; (text, where)."""
    every = list(nodes(doc))
    inner = [(p, v) for p, v in every if p] or every
    objects = [(p, v) for p, v in every if isinstance(v, dict) and v]
    pick = lambda xs: rng.choice(xs)
    if how == "deep-nesting":
        path, _ = pick(inner)
        return splice(doc, path, b"[" * DEPTH + b"]" * DEPTH, dump), path
    if how == "odd-number":
        raw = rng.choice(ODD_NUMBERS)
        ints = [x for x in inner if kind_of(x[1]) == "number" and isinstance(x[1], int)]
        numbers = [x for x in inner if kind_of(x[1]) == "number"]
        path, _ = pick((ints if raw == b"0.5" else numbers) or numbers or inner)
        return splice(doc, path, raw, dump), f"{path} = {raw.decode()}"
    if how == "other-type":
        path, v = pick(inner)
        raw = rng.choice(OF_TYPE[rng.choice([t for t in OF_TYPE if t != kind_of(v)])])
        return splice(doc, path, raw, dump), f"{path} = {raw.decode()}"
    if how == "duplicate-key":
        path, obj = pick(objects)
        items = [compact(k) + b":" + compact(v) for k, v in obj.items()]
        j = rng.randrange(len(items))
        key = list(obj)[j]
        twice = compact(key) + b":" + other_value(obj[key], rng)
        items.insert(rng.choice([j, j + 1, len(items)]), twice)
        return splice(doc, path, b"{" + b",".join(items) + b"}", dump), f"{path} key {key!r} twice"
    if how == "deleted-key":
        path, obj = pick(objects)
        key = rng.choice(list(obj))
        old = dict(obj)
        del obj[key]
        try:
            return dump(doc).encode(), f"{path} without {key!r}"
        finally:
            obj.clear()
            obj.update(old)
    if how == "empty-container":
        containers = [x for x in inner if isinstance(x[1], (dict, list))]
        path, _ = pick(containers if containers and rng.random() < 0.8 else inner)
        raw = rng.choice([b"[]", b"{}"])
        return splice(doc, path, raw, dump), f"{path} = {raw.decode()}"
    if how in ("long-string", "non-utf8"):
        if objects and rng.random() < 0.25:  # a key
            path, obj = pick(objects)
            key = rng.choice(list(obj))
            if how == "long-string":
                raw = b'"' + b"k" * LONG + b'"'
            else:
                text = json.dumps(key).encode()[1:-1]
                cut = rng.randrange(len(text) + 1)
                raw = b'"' + text[:cut] + rng.choice(NOT_UTF8) + text[cut:] + b'"'
            return splice_key(doc, path, key, raw, dump), f"{path} key {key!r}"
        strings = [x for x in inner if isinstance(x[1], str)]
        path, v = pick(strings or inner)
        if how == "long-string":
            unit = v if isinstance(v, str) and v else "x"
            raw = json.dumps((unit * (LONG // len(unit) + 1))[:LONG]).encode()
        else:
            text = json.dumps(v if isinstance(v, str) else "").encode()[1:-1]
            cut = rng.randrange(len(text) + 1)
            raw = b'"' + text[:cut] + rng.choice(NOT_UTF8) + text[cut:] + b'"'
        return splice(doc, path, raw, dump), f"{path}"
    raise ValueError(how)


def damage_bytes(data, how, rng):
    """fuzz_readers.py's damages: cut at a random length, flip 1 to 4 bits, or overwrite 100 bytes at random."""
    data = bytearray(data)
    if not data:
        how = "random"
    if how == "truncate":
        data = data[:rng.randrange(len(data))]
    elif how == "flip":
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(data))
            data[i] ^= 1 << rng.randrange(8)
    else:
        at_ = rng.randrange(len(data) + 1)
        data[at_:at_ + 100] = bytes(rng.randrange(256) for _ in range(100))
    return bytes(data), how


def damage_index(data, size, how, rng):
    """ranks.index (n + 1 offsets into a ranks.jsonl of `size` bytes) damaged as `how` says."""
    off = list(struct.unpack(f"<{len(data) // 8}Q", data))
    if how == "index-truncate":
        return data[:rng.randrange(len(data))]
    if how == "index-zero":
        if rng.random() < 0.5:
            return bytes(len(data))
        off[rng.randrange(len(off))] = 0
    elif how == "index-decreasing":
        if rng.random() < 0.5:
            off.reverse()
        else:
            i = rng.randrange(1, len(off))
            off[i] = rng.randrange(off[i - 1]) if off[i - 1] > 0 else 0
            off[i - 1] = max(off[i - 1], off[i] + 1)
    elif how == "index-past-end":
        i = rng.randrange(len(off))
        off[i] = rng.choice([size + 1, size + rng.randrange(1, 1 << 20), 1 << 40, 1 << 63, (1 << 64) - 1])
    elif how == "index-swap":
        i, j = rng.sample(range(len(off)), 2)
        off[i], off[j] = off[j], off[i]
    elif how == "index-count":  # an entry more, or one less
        if rng.random() < 0.5:
            off.append(rng.choice([size, off[-1], size + 100]))
        else:
            del off[rng.randrange(len(off))]
    return struct.pack(f"<{len(off)}Q", *off)


# --- the fuzzer --------------------------------------------------------------------------------------------------

class Fuzz:
    def __init__(self, a, env, model, traces):
        self.a, self.env, self.model, self.traces = a, env, model, traces
        self.failures = []
        self.cases = 0
        self.by_damage = {}
        self.by_outcome = {}
        self.log = None

    def launch(self, n, cmd):
        return cmd if n == 1 else p3s_launch.launch(self.a, n, *cmd)

    def replay(self, source, out, n, extra=()):
        return self.launch(n, [self.a.replay, source, "-o", out + ".json", "--min-time", "0", "--instances", "1",
                               "--warmup", "0", "--watchdog", str(self.a.watchdog), *extra])

    def damage_file(self, path, rng, dump, kinds):
        """Damages the JSON (or JSON-lines: dump None) file at `path`; returns (damage, where)."""
        with open(path, "rb") as f:
            data = f.read()
        if rng.random() < BYTE_SHARE:
            data, how = damage_bytes(data, rng.choice(BYTE_DAMAGES), rng)
            where = ""
        else:
            how = rng.choice(kinds)
            data, where = damage_json(json.loads(data), how, dump, rng)
        with open(path, "wb") as f:
            f.write(data)
        return how, where

    def damage_lines(self, trace, rng):
        """One line of ranks.jsonl damaged; the index rewritten to the new offsets (index fixed) or not (stale)."""
        lines_path, index_path = os.path.join(trace, "ranks.jsonl"), os.path.join(trace, "ranks.index")
        with open(lines_path, "rb") as f:
            data = f.read()
        with open(index_path, "rb") as f:
            off = struct.unpack(f"<{os.path.getsize(index_path) // 8}Q", f.read())
        blocks = [[x + b"\n" for x in data[off[r]:off[r + 1]].split(b"\n")[:-1]] for r in range(len(off) - 1)]
        trailer = data[off[-1]:]
        places = [(b, i) for b, block in enumerate(blocks) for i in range(len(block))]
        b, i = rng.choice(places)
        r = rng.random()
        if r < BYTE_SHARE:
            line, how = damage_bytes(blocks[b][i], rng.choice(BYTE_DAMAGES), rng)
            blocks[b][i] = line
        elif r < BYTE_SHARE + 0.15:
            how = rng.choice(LINE_DAMAGES)
            if how == "line-delete":
                del blocks[b][i]
            elif how == "line-duplicate":
                blocks[b].insert(i + 1, blocks[b][i])
            else:
                others = [p for p in places if p != (b, i)]
                c, j = rng.choice(others)
                blocks[b][i], blocks[c][j] = blocks[c][j], blocks[b][i]
        else:
            how = rng.choice(JSON_DAMAGES)
            text, _ = damage_json(json.loads(blocks[b][i]), how, lambda d: json.dumps(d, separators=(",", ":")), rng)
            blocks[b][i] = text + b"\n"
        with open(lines_path, "wb") as f:
            f.write(b"".join(x for block in blocks for x in block) + trailer)
        fixed = rng.random() < 0.5
        if fixed:
            new = [0]
            for block in blocks:
                new.append(new[-1] + sum(len(x) for x in block))
            with open(index_path, "wb") as f:
                f.write(struct.pack(f"<{len(new)}Q", *new))
        return how, f"rank block {b} line {i}, index {'fixed' if fixed else 'stale'}"

    def one(self, number):
        rng = random.Random(f"{self.a.seed}:{number}")
        target = TARGETS[number % len(TARGETS)]
        where = os.path.join(self.a.work, f"case-{number}")
        shutil.rmtree(where, ignore_errors=True)
        os.makedirs(where)
        out = os.path.join(where, "out")
        pretty = lambda d: json.dumps(d, indent=1)
        n = 2 if target != "model" and self.a.mpi_share > 0 and rng.random() < self.a.mpi_share else 1
        if target in ("model", "replay-model"):
            model = os.path.join(where, "ring.model")
            shutil.copy(self.model, model)
            how, detail = self.damage_file(model, rng, pretty, JSON_DAMAGES)
            if target == "model":
                k = str(rng.choice([1, 3, 5, 8, 64, 1000]))
                form = rng.choices([["-o", out], ["-o", out, "--logical"], []], weights=[3, 1, 1])[0]
                cmd = [self.a.p3s, "predict", model, "--np", k, *form]
            else:
                cmd = self.replay(model, out, n, ["--strict"] if rng.random() < 0.25 else [])
        else:
            trace = os.path.join(where, "st4np")
            shutil.copytree(self.traces[n], trace)
            if target == "st4np-header":
                how, detail = self.damage_file(os.path.join(trace, "lt4nc.json"), rng, pretty, JSON_DAMAGES)
            elif target == "st4np-lines":
                how, detail = self.damage_lines(trace, rng)
            else:
                index = os.path.join(trace, "ranks.index")
                with open(index, "rb") as f:
                    data = f.read()
                if rng.random() < BYTE_SHARE:
                    data, how = damage_bytes(data, rng.choice(BYTE_DAMAGES), rng)
                else:
                    how = rng.choice(INDEX_DAMAGES)
                    data = damage_index(data, os.path.getsize(os.path.join(trace, "ranks.jsonl")), how, rng)
                with open(index, "wb") as f:
                    f.write(data)
                detail = ""
            cmd = self.replay(trace, out, n)
        began = time.monotonic()
        rc, err = run(cmd, self.env)
        took = time.monotonic() - began
        outcome, why = judge(rc, err, replay=target != "model", st4np=target.startswith("st4np"))
        failure = None
        if outcome == "FAIL":
            kept = os.path.join(self.a.work, f"failed-{number}")
            shutil.rmtree(kept, ignore_errors=True)
            os.rename(where, kept)
            shown = shlex.join(c.replace(where, kept) for c in cmd)
            with open(os.path.join(kept, "command.txt"), "w") as f:
                f.write(shown + "\n")
            with open(os.path.join(kept, "stderr.txt"), "w") as f:
                f.write(err)
            lines = [x for x in err.splitlines() if x.strip()]
            failure = (f"case {number} ({target}, {how} {detail[:120]}; n = {n}): exit {rc}, {why}: "
                       f"{' | '.join(lines)[:400]} (kept in {kept}: {shown})")
        else:
            shutil.rmtree(where, ignore_errors=True)
        return {"number": number, "target": target, "how": how, "outcome": outcome, "failure": failure,
                "log": f"{number}\t{target}\t{how}\tn={n}\t{detail[:200]}\t{rc}\t{outcome}\t{took:.2f}\n"}

    def count(self, r):
        self.cases += 1
        self.by_damage[(r["target"], r["how"])] = self.by_damage.get((r["target"], r["how"]), 0) + 1
        self.by_outcome[(r["target"], r["outcome"])] = self.by_outcome.get((r["target"], r["outcome"]), 0) + 1
        if r["failure"]:
            self.failures.append(r["failure"])
        self.log.write(r["log"])


def judge(rc, err, replay, st4np):
    """("exit 0" | "refused" | "watchdog" | "FAIL", why)."""
    if "[json.exception" in err:
        return "FAIL", "a library's exception id"
    if rc == "timeout":
        return "FAIL", f"no end in {TIMEOUT} s"
    if isinstance(rc, str):
        return "FAIL", rc
    if isinstance(rc, int) and rc < 0:
        return "FAIL", f"signal {-rc}"
    lines = [x for x in err.splitlines() if x.strip()]
    if replay:
        own, in_block = [], False
        for x in lines:
            if OMPI_BLOCK_RULE.match(x.strip()):
                in_block = not in_block
            elif in_block:
                if re.search(r"signal|core dumped", x, re.I):
                    return "FAIL", "Open MPI reports a signal"
            elif not OMPI_LINE.match(x):
                own.append(x)
        lines = own
    if rc == 0:
        return "exit 0", ""
    # The ranks report one after another, a second apart, and the first report ends the job: where the launcher
    # takes longer than that to stop the others, a second rank's line follows the first.
    if rc == 3 and replay and st4np and lines and all(WATCHDOG.match(x) for x in lines):
        return "watchdog", ""
    if rc != 1:
        return "FAIL", f"exit {rc}"
    if len(lines) != 1:
        return "FAIL", f"{len(lines)} lines"
    if replay and not lines[0].startswith("p3s-replay: "):
        return "FAIL", "not p3s-replay's line"
    return "refused", ""


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--p3s", required=True)
    p.add_argument("--replay", required=True, help="p3s-replay")
    p.add_argument("--data", required=True, help="tests/data")
    p.add_argument("--work", required=True)
    p.add_argument("--cases", type=int, default=500, help="damaged inputs in all")
    p.add_argument("--seed", type=int, default=20261127)
    p.add_argument("--only", type=int, action="append", help="run only this case (repeatable)")
    p.add_argument("--mpi-share", type=float, default=0.2,
                   help="share of p3s-replay's cases run at 2 ranks under the launcher (0: singletons only)")
    p.add_argument("--jobs", type=int, default=1, help="cases run at once")
    p.add_argument("--watchdog", type=float, default=5, help="p3s-replay --watchdog")
    p3s_launch.add_options(p)
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    a.work = os.path.abspath(a.work)
    for d in os.listdir(a.work):  # the cases of an earlier run
        if re.fullmatch(r"(case|failed)-\d+", d):
            shutil.rmtree(os.path.join(a.work, d))
    env = dict(os.environ)
    # Open MPI as root in a container, when not run by ctest (which sets these for the mpi tests).
    for k, v in (("OMPI_ALLOW_RUN_AS_ROOT", "1"), ("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"),
                 ("OMPI_MCA_rmaps_base_oversubscribe", "1")):
        env.setdefault(k, v)

    # The intact inputs, and a check that each reader accepts them.
    sigs = fuzz_inputs.intact_signatures(a.data, a.work)
    model = fuzz_inputs.fresh_model(a.work)
    rc, err = run([a.p3s, "model", *sigs, "--no-holdout", "-q", "-o", model], env)
    if rc != 0:
        sys.exit(f"FAIL: the intact signatures do not fit: {err}")
    traces = {}
    for n in (1, 2) if a.mpi_share > 0 else (1,):
        traces[n] = os.path.join(a.work, f"st4np-np{n}")
        shutil.rmtree(traces[n], ignore_errors=True)
        rc, err = run([a.p3s, "predict", model, "--np", str(n), "-o", traces[n]], env)
        if rc != 0:
            sys.exit(f"FAIL: the intact model does not predict at {n}: {err}")
    f = Fuzz(a, env, model, traces)
    for n, source in [(n, s) for n in traces for s in (traces[n], model)]:
        out = os.path.join(a.work, "intact")
        if os.path.exists(out + ".json"):
            os.remove(out + ".json")
        rc, err = run(f.replay(source, out, n), env)
        if rc != 0:
            sys.exit(f"FAIL: p3s-replay at {n} does not replay the intact {source}: exit {rc}: {err[-1500:]}")

    started = time.monotonic()
    with open(os.path.join(a.work, "cases.tsv"), "w") as f.log, \
            concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        for r in pool.map(f.one, a.only or range(1, a.cases + 1)):
            f.count(r)
    targets = [t for t in TARGETS if any(k[0] == t for k in f.by_damage)]
    for t in targets:
        print(f"{t}: " + ", ".join(f"{how} {c}" for (u, how), c in sorted(f.by_damage.items()) if u == t))
    outcomes = "; ".join(f"{t} " + ", ".join(f"{o} {c}" for (u, o), c in sorted(f.by_outcome.items()) if u == t)
                         for t in targets)
    print(f"fuzz: {f.cases} cases (seed {a.seed}) in {time.monotonic() - started:.0f} s, {len(f.failures)} failed; "
          f"{outcomes}")
    if f.failures:
        print("FAIL:\n" + "\n".join(f.failures), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
