#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Traces one test app and checks the archive against what the app says it did.

Steps (each failure exits non-zero with a message naming the step):
  1. run the app untraced and traced (LD_PRELOAD through `env`, so only the ranks load the recorder);
     the traced run must exit like the untraced one and print the same lines (sorted: ranks interleave);
  2. `otf2-print` must read the archive and resolve every message peer to a location;
  3. `p3s summary --json` must report, per rank, exactly the messages (op, world peer, tag, bytes, count),
     collective counts and call counts of the app's `P3S-EXPECT` lines, with no unresolved peer.
"""
import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys

import p3s_launch

EXPECT = re.compile(r"^P3S-EXPECT (\d+) (send|recv|coll|calls) (.+)$")


def fail(step, msg):
    print(f"FAIL [{step}]: {msg}", file=sys.stderr)
    sys.exit(1)


def run(cmd, env=None, timeout=120):
    try:
        return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        fail("run", f"timed out after {timeout}s: {' '.join(cmd)}")


def launcher(args):
    return p3s_launch.launch(args, args.np)


def parse_expectations(stdout):
    """rank -> {'messages': Counter, 'coll': {name: n}, 'calls': {name: n}}"""
    out = collections.defaultdict(lambda: {"messages": collections.Counter(), "coll": {}, "calls": {}})
    for line in stdout.splitlines():
        m = EXPECT.match(line)
        if not m:
            continue
        rank, kind, rest = int(m.group(1)), m.group(2), m.group(3).split()
        if kind in ("send", "recv"):
            peer, tag, nbytes, count = (int(x) for x in rest)
            out[rank]["messages"][(kind, peer, tag, nbytes)] += count
        else:
            out[rank][kind][rest[0]] = out[rank][kind].get(rest[0], 0) + int(rest[1])
    return out


def check_callsites(printed, module):
    """Every MPI call carries a call site in the app's own module (the first frame outside the recorder)."""
    lines = printed.splitlines()
    enters = [i for i, l in enumerate(lines) if l.startswith("ENTER ")]
    marker = f'"P3S_CALLSITE"'
    missing = [lines[i] for i in enters
               if i + 1 >= len(lines) or marker not in lines[i + 1] or f"[{module}+0x" not in lines[i + 1]]
    if not enters or missing:
        fail("callsite", f"{len(missing)} of {len(enters)} calls lack a call site in {module}, e.g. {missing[:1]}")


def check_otf2_print(otf2_print, archive):
    r = run([otf2_print, archive], timeout=300)
    if r.returncode != 0:
        fail("otf2-print", f"exit {r.returncode}: {r.stderr.strip()[:500]}")
    unresolved = [l for l in r.stdout.splitlines()
                  if re.search(r"(Receiver|Sender): \d+ \((?!\")", l)]
    if unresolved:
        fail("otf2-print", f"{len(unresolved)} peers not resolved to a location, e.g. {unresolved[0]}")
    return r.stdout


def compare(expected, summary, np):
    if summary["processes"] != np:
        fail("summary", f"archive says {summary['processes']} processes, expected {np}")
    if not summary["complete"]:
        fail("summary", "archive is marked incomplete")
    ranks = {r["rank"]: r for r in summary["ranks"]}
    if sorted(ranks) != list(range(np)):
        fail("summary", f"ranks in archive: {sorted(ranks)}")
    total = 0
    for rank in range(np):
        got, want = ranks[rank], expected.get(rank)
        if want is None:
            fail("expect", f"the app printed no P3S-EXPECT lines for rank {rank}")
        if got["unresolved_peers"]:
            fail("summary", f"rank {rank}: {got['unresolved_peers']} unresolved peers")
        msgs = collections.Counter()
        for m in got["messages"]:
            msgs[(m["op"], m["peer"], m["tag"], m["bytes"])] += m["count"]
        if msgs != want["messages"]:
            missing = want["messages"] - msgs
            extra = msgs - want["messages"]
            fail("messages", f"rank {rank}: missing from trace {dict(missing)}; not expected {dict(extra)}")
        for name, n in want["coll"].items():
            if got["collectives"].get(name, 0) != n:
                fail("collectives", f"rank {rank}: {name} x{got['collectives'].get(name, 0)} in trace, app did {n}")
        for name, n in want["calls"].items():
            if got["calls"].get(name, 0) != n:
                fail("calls", f"rank {rank}: {name} x{got['calls'].get(name, 0)} in trace, app did {n}")
        total += sum(msgs.values()) + sum(got["calls"].values())
    if total == 0:
        fail("summary", "the trace holds no MPI calls at all: the recorder did not see the app")


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p3s_launch.add_options(p, required=True)
    p.add_argument("--np", type=int, required=True)
    p.add_argument("--preload", required=True)
    p.add_argument("--p3s", required=True)
    p.add_argument("--otf2-print", default="otf2-print")
    p.add_argument("--work", required=True, help="scratch directory of this test")
    p.add_argument("--env", action="append", default=[], help="extra NAME=value for the traced run")
    p.add_argument("--expect-callsite", default="", help="module every call site must lie in")
    p.add_argument("app", nargs=argparse.REMAINDER)
    args = p.parse_args()
    app = [a for a in args.app if a != "--"]

    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    trace_dir = os.path.join(args.work, "trace")
    env = dict(os.environ)

    plain = run(launcher(args) + app, env=env)
    if plain.returncode != 0:
        fail("untraced", f"the app failed untraced (exit {plain.returncode}): {plain.stderr.strip()[:500]}")
    traced = run(launcher(args) + ["env", f"LD_PRELOAD={args.preload}", f"P3S_TRACE_DIR={trace_dir}"]
                 + args.env + app, env=env)
    if traced.returncode != plain.returncode:
        fail("transparency", f"exit {traced.returncode} traced vs {plain.returncode}: {traced.stderr.strip()[:800]}")
    if sorted(traced.stdout.splitlines()) != sorted(plain.stdout.splitlines()):
        fail("transparency", "the app's output differs with the recorder:\n--- untraced\n" + plain.stdout[:1500]
             + "\n--- traced\n" + traced.stdout[:1500])
    if "p3s[" in traced.stderr or "p3s:" in traced.stderr:
        fail("warnings", f"the recorder complained: {traced.stderr.strip()[:800]}")

    archive = os.path.join(trace_dir, "traces.otf2")
    if not os.path.exists(archive):
        fail("archive", f"no {archive}; stderr: {traced.stderr.strip()[:800]}")
    if os.path.exists(os.path.join(trace_dir, "p3s-raw")):
        fail("archive", "raw logs were left behind after a complete run")
    printed = check_otf2_print(args.otf2_print, archive)
    if args.expect_callsite:
        check_callsites(printed, args.expect_callsite)

    s = run([args.p3s, "summary", "--json", trace_dir])
    if s.returncode != 0:
        fail("summary", f"p3s summary failed: {s.stderr.strip()}")
    compare(parse_expectations(plain.stdout), json.loads(s.stdout), args.np)
    print(f"ok: {' '.join(app)} at {args.np} ranks")


if __name__ == "__main__":
    main()
