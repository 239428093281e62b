#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""`p3s scale` end to end on a sleep-mode app: one command from an empty directory, then resumed.

    check_scale.py --p3s BIN --app PATH --work DIR [--app-args "ARGS"] [--fit 2 4 8] [--predict 16]
                   [--validate 16] [launcher options]

1. From an empty directory: exit 0, one progress line per step on stderr (stderr is no terminal), the curve on
   stdout with the recommended n, curve.json with a row per fitted and predicted n (the predicted ones from the
   replay; a real run recorded beside each --validate n, and the error), curve.csv, the plots (time, speedup,
   phases; SVG and PNG), and report.html, which headless chromium renders with no console message into a
   screenshot that is not blank (a page with a script error is caught by the same check).
2. The same command again: every step but the curve done before, nothing recomputed (the archives, model and
   results keep their modification times).
3. Another --predict: only the new n is replayed; --backend range then replays every n again, on fewer ranks than
   n (ranges of 4), and nothing else.
4. Another command into the same directory: refused in one line without --force.
5. Stopped by SIGTERM while recording its second run: exit 128 + 15, no process of the job left, the first run
   kept; the same command again records only what is missing and ends as in 1.
"""
import argparse
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
import zlib
from pathlib import Path

import p3s_launch


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def scale_cmd(a, work, predict, app_args=None, backend=()):
    launcher = [a.mpiexec, a.np_flag, "{n}", *a.preflags]
    return [a.p3s, "scale", "-o", str(work), "--fit", ",".join(map(str, a.fit)),
            "--predict", ",".join(map(str, predict)), "--compute", "sleep", *backend,
            *(["--validate", ",".join(map(str, a.validate))] if a.validate else []), "--",
            *launcher, a.app, *shlex.split(app_args if app_args is not None else a.app_args)]


def run(cmd, expect=0):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if r.returncode != expect:
        fail(f"{shlex.join(cmd)}: exit {r.returncode}, expected {expect}\n{r.stdout}\n{r.stderr}")
    return r


def mtimes(work):
    """Modification times of what the steps leave."""
    out = {}
    for p in [*work.glob("runs/*/traces.otf2"), *work.glob("runs/*/signature.json"), work / "app.model",
              *work.glob("results/*.json"), *work.glob("checks/*/traces.otf2")]:
        out[str(p)] = p.stat().st_mtime_ns
    return out


def check_outputs(a, work, r, predict):
    steps = [l for l in r.stderr.splitlines() if l.startswith("[")]
    expected = len(a.fit) + 3 + len(predict) + 2 * len(a.validate)
    if len(steps) != expected:
        fail(f"{len(steps)} progress lines, expected {expected}:\n{r.stderr}")
    if "recommended n = " not in r.stdout:
        fail(f"no recommendation in the output:\n{r.stdout}")
    curve = json.loads((work / "curve.json").read_text())
    rows = {row["n"]: row for row in curve["rows"]}
    if sorted(rows) != sorted(set(a.fit + predict + a.validate)):
        fail(f"curve rows at {sorted(rows)}, expected {sorted(set(a.fit + predict + a.validate))}")
    for n in a.fit:
        if rows[n]["source"] != "measured":
            fail(f"row {n}: {rows[n]['source']}")
    for n in predict:
        if rows[n]["source"] != "predicted" or not rows[n]["predicted_ns"] > 0:
            fail(f"row {n}: {rows[n]}")
    for n in a.validate:
        if not rows[n]["measured_ns"] or (n in predict and rows[n]["error"] is None):
            fail(f"row {n} has no real run beside it: {rows[n]}")
    if curve["recommendation"]["n"] not in rows:
        fail(f"recommended n {curve['recommendation']['n']} is no point of the curve")
    if len((work / "curve.csv").read_text().splitlines()) != len(rows) + 1:
        fail("curve.csv does not have a line per n")
    for name in ("time", "speedup", "phases"):
        png = work / "plots" / f"{name}.png"
        if not png.exists() or png.stat().st_size < 2000:
            fail(f"{png} missing or nearly empty")
        if "<svg" not in (work / "plots" / f"{name}.svg").read_text():
            fail(f"{name}.svg is no SVG")
    return curve


def extrap_messages(a, work, n):
    """`p3s curve DIR --extrap`: per phase, the messages the replay made at n are those of the real run there."""
    out = work.parent / "extrap.json"
    run([a.p3s, "curve", str(work), "--extrap", str(out), "--force"])
    measurements = json.loads(out.read_text())["measurements"]
    sig = json.loads((work / "checks" / f"np{n}" / "signature.json").read_text())
    compared = 0
    for phase in sig["phases"]:
        sent = sum(1 for r in phase["ranks"] for e in r["events"] for x in e.get("actions", [])
                   if x.get("kind") == "send" and x.get("peer", -1) >= 0) * phase["weight"]
        points = measurements.get(f"run->phase {phase['id']}", {}).get("messages", [])
        predicted = [p["values"][0] for p in points if p["point"] == [n]]
        if not predicted or abs(predicted[0] - sent) > 0.5:
            fail(f"phase {phase['id']} at n = {n}: the replay sent {predicted} messages, the real run {sent}")
        compared += sent > 0
    if compared == 0:
        fail(f"no phase at n = {n} sends a message to compare")
    print(f"Extra-P export at n = {n}: the replay's messages per phase are the real run's: ok")


def png_pixels(path):
    """(width, height, rows of RGB(A) bytes) of an 8-bit RGB or RGBA PNG, decoded here (no imaging library)."""
    data = Path(path).read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail(f"{path} is no PNG")
    pos, idat, width, height, channels = 8, b"", 0, 0, 0
    while pos < len(data):
        length = int.from_bytes(data[pos:pos + 4], "big")
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height = int.from_bytes(body[0:4], "big"), int.from_bytes(body[4:8], "big")
            if body[8] != 8 or body[9] not in (2, 6):
                fail(f"{path}: a PNG this check does not decode (depth {body[8]}, colour type {body[9]})")
            channels = 3 if body[9] == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, stride, rows, prev = zlib.decompress(idat), width * channels, [], bytearray(width * channels)
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b, c = prev[i], prev[i - channels] if i >= channels else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, channels, rows


def in_browser(page, shot):
    """Opens `page` in headless chromium: its screenshot, and the console messages it logged."""
    r = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        "--window-size=1280,1600", f"--screenshot={shot}", "--enable-logging=stderr",
                        "--log-level=0", f"file://{Path(page).resolve()}"],
                       capture_output=True, text=True, timeout=120)
    if not Path(shot).exists():
        fail(f"chromium wrote no screenshot of {page}:\n{r.stderr[-2000:]}")
    return [l for l in r.stderr.splitlines() if ":CONSOLE" in l]


def check_report(work):
    """The report in a real browser: not blank, no console message; a page with a script error is caught."""
    if shutil.which("chromium") is None:
        fail("chromium is not installed (Debian: apt-get install chromium): the report cannot be checked")
    bad = work.parent / "broken.html"
    bad.write_text("<!DOCTYPE html><html><body><p>x</p><script>no_such_function();</script></body></html>")
    if not in_browser(bad, work.parent / "broken.png"):
        fail("the browser check does not catch a page's script error")
    shot = work.parent / "report.png"
    console = in_browser(work / "report.html", shot)
    if console:
        fail(f"the report logged in the browser: {console}")
    width, height, channels, rows = png_pixels(shot)
    pixels = [row[i:i + 3] for row in rows[::8] for i in range(0, len(row), channels * 8)]
    dark = sum(1 for p in pixels if sum(p) < 384)
    colours = len(set(pixels))
    if dark < len(pixels) // 200 or colours < 20:
        fail(f"the report's screenshot looks blank: {dark} dark samples of {len(pixels)}, {colours} colours")
    html = (work / "report.html").read_text()
    for needed in ("Recommended", "data:image/svg+xml;base64,", "The phases and their laws", "core-seconds"):
        if needed not in html:
            fail(f"the report has no '{needed}'")
    if "http://" in html.replace("http://www.w3.org", "") or "https://" in html:
        fail("the report refers to the network")
    print(f"report rendered by chromium: {width}x{height}, {dark} dark samples, {colours} colours, no console "
          f"message: ok")


def tracing_into(work):
    """The processes whose recorder writes into `work` (P3S_TRACE_DIR in their environment)."""
    out = []
    for proc in Path("/proc").iterdir():
        try:
            env = (proc / "environ").read_bytes().split(b"\0")
        except (OSError, ValueError):
            continue
        if any(e.startswith(b"P3S_TRACE_DIR=" + str(work).encode()) for e in env):
            out.append(proc.name)
    return out


def interrupted(a, work):
    """Stops a scale in its second recording; the same command then resumes."""
    cmd = scale_cmd(a, work, a.predict)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    state = work / "scale-state.json"
    deadline = time.time() + 300
    while time.time() < deadline:
        if state.exists() and f"record np{a.fit[0]}" in state.read_text() and (work / "logs" / f"record.np{a.fit[1]}.log").exists():
            break
        if p.poll() is not None:
            fail(f"scale ended before it could be stopped:\n{p.stderr.read()}")
        time.sleep(0.05)
    time.sleep(0.5)
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=120)
    if p.returncode != 128 + signal.SIGTERM:
        fail(f"stopped scale: exit {p.returncode}, expected {128 + signal.SIGTERM}\n{err}")
    if "interrupted" not in err:
        fail(f"stopped scale does not say it was interrupted:\n{err}")
    time.sleep(1)
    left = tracing_into(work)
    if left:
        fail(f"processes of the stopped job are left: {left}")
    kept = (work / "runs" / f"np{a.fit[0]}" / "traces.otf2").stat().st_mtime_ns
    r = run(cmd)
    if f"record n = {a.fit[0]}: done before" not in r.stderr:
        fail(f"the resumed scale recorded n = {a.fit[0]} again:\n{r.stderr}")
    if (work / "runs" / f"np{a.fit[0]}" / "traces.otf2").stat().st_mtime_ns != kept:
        fail("the resumed scale replaced the first run's archive")
    check_outputs(a, work, r, a.predict)
    print("stopped by SIGTERM in the second recording and resumed: ok")


def summary(a, archive):
    return json.loads(run([a.p3s, "summary", "--json", str(archive)]).stdout)


def otf2_export(a, work, n):
    """`p3s predict --format otf2` timed by the replay at n: otf2-print reads it without a warning; p3s's reader
    finds each rank's calls, messages and collectives of the real run at n; its phases, analyzed again, have the
    prediction's weights and the replay's time per instance, and the archive lasts the PET."""
    result_path = work / "results" / f"np{n}.json"
    result = json.loads(result_path.read_text())
    out = work.parent / f"predicted.np{n}"
    cmd = [a.p3s, "predict", str(work / "app.model"), "--np", str(n), "-o", str(out), "--format", "otf2",
           "--times", str(result_path)]
    run(cmd + ["--force"])
    r = run(cmd, expect=1)
    if "--force" not in r.stderr or len(r.stderr.strip().splitlines()) != 1:
        fail(f"an existing archive was not refused in one line:\n{r.stderr}")
    r = run([*cmd[:4], str(n // 2), *cmd[5:], "--force"], expect=1)
    if f"not {n // 2}" not in r.stderr:
        fail(f"a replay at another n was taken as the times:\n{r.stderr}")
    r = run([*cmd[:-1], str(work / "curve.json"), "--force"], expect=1)  # JSON, but no replay result
    if "is no replay result" not in r.stderr or len(r.stderr.strip().splitlines()) != 1:
        fail(f"a file that is no replay result was not refused in one line:\n{r.stderr}")
    printed = subprocess.run(["otf2-print", str(out / "traces.otf2")], capture_output=True, text=True)
    if printed.returncode != 0 or printed.stderr.strip():
        fail(f"otf2-print: exit {printed.returncode}: {printed.stderr[-800:]}")
    if sum(line.startswith("MPI_ISEND ") or line.startswith("MPI_SEND ") for line in printed.stdout.splitlines()) == 0:
        fail("otf2-print shows no send in the predicted run")
    predicted, real = summary(a, out), summary(a, work / "checks" / f"np{n}")
    if abs(predicted["processes"] - n) or not predicted["complete"]:
        fail(f"the predicted archive: {predicted['processes']} processes, complete {predicted['complete']}")
    for rp, rr in zip(predicted["ranks"], real["ranks"]):
        for what in ("calls", "collectives"):
            if rp[what] != rr[what]:
                fail(f"rank {rp['rank']}'s {what}: predicted {rp[what]}, real {rr[what]}")
        key = lambda m: (m["op"], m["peer"], m["tag"], m["bytes"], m["count"])
        if sorted(map(key, rp["messages"])) != sorted(map(key, rr["messages"])):
            fail(f"rank {rp['rank']}'s messages: predicted {rp['messages'][:4]}, real {rr['messages'][:4]}")
    sig_path = work.parent / f"predicted.np{n}.json"
    run([a.p3s, "analyze", "-q", "--force", "-o", str(sig_path), str(out)])
    phases = json.loads(sig_path.read_text())["phases"]
    replayed = [p for p in result["phases"] if p["replayed"]]
    if [p["weight"] for p in phases] != [p["weight"] for p in replayed]:
        fail(f"the predicted archive's phases weigh {[p['weight'] for p in phases]}, the prediction's "
             f"{[p['weight'] for p in replayed]}")
    for got, want in zip(phases, replayed):
        if abs(got["time_ns"]["mean"] - want["time_ns"]) > 1e-4 * want["time_ns"] + 10:
            fail(f"phase {want['id']}: an instance lasts {got['time_ns']['mean']} ns in the archive, "
                 f"{want['time_ns']} in the replay")
    print(f"OTF2 export at n = {n}: read by otf2-print and p3s, the real run's calls and messages on every rank, "
          f"the prediction's phases and the replay's times: ok")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--p3s", required=True)
    ap.add_argument("--app", required=True)
    ap.add_argument("--app-args", default="")
    ap.add_argument("--work", required=True, type=Path)
    ap.add_argument("--fit", type=int, nargs="+", default=[2, 4, 8])
    ap.add_argument("--predict", type=int, nargs="+", default=[16])
    ap.add_argument("--validate", type=int, nargs="*", default=[])
    p3s_launch.add_options(ap)
    a = ap.parse_args()
    subprocess.run(["rm", "-rf", str(a.work)], check=True)
    a.work.mkdir(parents=True)
    work = a.work / "scale"

    r = run(scale_cmd(a, work, a.predict))
    curve = check_outputs(a, work, r, a.predict)
    print(r.stdout)
    print(f"from an empty directory: ok (recommended n = {curve['recommendation']['n']})")
    for n in a.validate:
        extrap_messages(a, work, n)
        otf2_export(a, work, n)
    check_report(work)

    before = mtimes(work)
    r = run(scale_cmd(a, work, a.predict))
    done = [l for l in r.stderr.splitlines() if l.endswith(": done before")]
    if len(done) != len(a.fit) + 2 + len(a.predict) + 2 * len(a.validate):
        fail(f"the same command again redid steps:\n{r.stderr}")
    if mtimes(work) != before:
        fail("the same command again replaced outputs")
    print("the same command again: nothing recomputed: ok")

    more = a.predict + [2 * a.predict[-1]]
    r = run(scale_cmd(a, work, more))
    redone = [l for l in r.stderr.splitlines() if l.startswith("[") and not l.endswith(": done before")]
    if len(redone) != 2 or f"replay n = {more[-1]}" not in redone[0]:
        fail(f"another --predict redid more than its replay:\n{r.stderr}")
    check_outputs(a, work, r, more)
    print("another --predict replays only the new n: ok")

    r = run(scale_cmd(a, work, more, backend=("--backend", "range", "--ranges", "4")))
    redone = [l for l in r.stderr.splitlines() if l.startswith("[") and not l.endswith(": done before")]
    if len(redone) != len(more) + 1 or any("range replay" not in l for l in redone[:-1]):
        fail(f"the range backend redid more than the replays:\n{r.stderr}")
    for n in more:
        result = json.loads((work / "results" / f"np{n}.json").read_text())
        ranks = result.get("range", {}).get("job_ranks", 0)
        if not 0 < ranks < n or result["processes"] != n:
            fail(f"the range replay at n = {n} ran on {ranks} ranks: {result.get('range')}")
    check_outputs(a, work, r, more)
    print("the range backend replays each n on fewer ranks, reusing the runs and the model: ok")

    r = run(scale_cmd(a, work, a.predict, app_args=a.app_args + " 1"), expect=1)
    if "another command" not in r.stderr or len(r.stderr.strip().splitlines()) != 1:
        fail(f"another command into the directory:\n{r.stderr}")
    print("another command into the same directory refused: ok")

    interrupted(a, a.work / "stopped")
    print("PASS")


if __name__ == "__main__":
    main()
