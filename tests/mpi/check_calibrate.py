#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""`p3s calibrate` and a simulated ping-pong.

    check_calibrate.py --p3s BIN --app PINGPONG --work DIR [launcher options]

  - `p3s calibrate --quick` on 2 ranks writes a machine file: positive latency and bandwidth, SMPI's factors from 0
    bytes up, the ping-pong it was fitted to (times growing with the size from 4 KiB on), the collectives, a core's
    speed, the note that the network between nodes was not measured (one node); an existing file is refused without
    --force, a launcher that fails leaves no file and says where its output is, each in one line;
  - the ping-pong app recorded at 2, 4 and 8 ranks and modelled (`p3s scale`), simulated at 2 ranks on two described
    machines: an iteration takes 2 x (latency + size / bandwidth) within 2 % (one machine bound by latency, one by
    bandwidth); on the calibrated machine it takes what the calibration measured for that size (within 3 %, the
    recorded bursts of the two ranks apart);
  - `p3s scale --backend simulate --platform machine.json` on the same directory simulates the --predict n (2 and
    8, fitted counts: the model reads the pairs as a grid step, which at 16 is another exchange) without recording
    again, and the curve reads them as simulated predictions; --backend simulate without
    --platform is refused in one line.
Skipped (said) where SimGrid is not installed, but for the calibration.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

import p3s_launch

BYTES = 1048576  # a size the calibration measures


def fail(msg):
    sys.exit(f"FAIL: {msg}")


def run(cmd, want_rc=0):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=600)
    if r.returncode != want_rc:
        fail(f"exit {r.returncode} (expected {want_rc}): {' '.join(map(str, cmd))}\n{r.stdout[-2000:]}\n"
             f"{r.stderr[-2000:]}")
    return r


def one_line(r, words):
    if words not in r.stderr or len(r.stderr.strip().splitlines()) != 1:
        fail(f"expected one line saying {words!r}: {r.stderr!r}")


def check_machine(path):
    with open(path) as f:
        m = json.load(f)
    for key in ("latency_s", "bandwidth_Bps", "loopback_latency_s", "loopback_bandwidth_Bps", "flops"):
        if not m[key] > 0:
            fail(f"{key} is {m[key]}")
    sizes = [f["bytes"] for f in m["factors"]]
    if not sizes or sizes[0] != 0 or sizes != sorted(set(sizes)) or not all(f["latency"] > 0 and f["bandwidth"] > 0
                                                                         for f in m["factors"]):
        fail(f"factors {m['factors']}")
    points = m["measurements"]["inside_node"]
    large = [p["seconds"] for p in points if p["bytes"] >= 4096]
    if len(points) < 8 or large != sorted(large) or BYTES not in [p["bytes"] for p in points]:
        fail(f"the ping-pong inside the node: {points}")
    if len(m["measurements"]["collectives"]) < 8 or m["measurements"]["between_nodes"] != []:
        fail(f"collectives {m['measurements']['collectives']}, between nodes {m['measurements']['between_nodes']}")
    if not any("inside one node" in n for n in m["notes"]) or m["schema_version"] != 1:
        fail(f"notes {m['notes']}")
    print(f"calibrated: latency {m['latency_s'] * 1e6:.2f} us, {m['bandwidth_Bps'] / 1e9:.2f} GB/s, "
          f"{len(m['factors'])} factors, {m['flops'] / 1e9:.2f} Gflop/s")
    return m


def per_instance(a, model, machine, name):
    out = os.path.join(a.work, name + ".result.json")
    run([a.p3s, "simulate", model, "--np", 2, "--platform", machine, "-o", out, "--force"])
    with open(out) as f:
        res = json.load(f)
    loop = max(res["phases"], key=lambda p: p["weight"])
    return loop["time_ns"] * 1e-9, loop["compute_ns"] * 1e-9


def main():
    ap = argparse.ArgumentParser()
    p3s_launch.add_options(ap)
    ap.add_argument("--p3s", required=True)
    ap.add_argument("--app", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    machine = os.path.join(a.work, "machine.json")
    job = [a.mpiexec, a.np_flag, "2", *a.preflags]
    run([a.p3s, "calibrate", "-o", machine, "--quick", "--", *job])
    calibrated = check_machine(machine)
    one_line(run([a.p3s, "calibrate", "-o", machine, "--", *job], want_rc=1), "--force")
    broken = os.path.join(a.work, "broken.json")
    one_line(run([a.p3s, "calibrate", "-o", broken, "--", "false"], want_rc=1), "calibration job failed")
    if os.path.exists(broken):
        fail("a failed calibration left a machine file")
    print("refusals in one line: ok")
    if shutil.which("smpirun") is None:
        print("smpirun not found (SimGrid is not installed): the simulation is skipped")
        print("PASS")
        return
    scale = os.path.join(a.work, "scale")
    run([a.p3s, "scale", "-o", scale, "--fit", "2,4,8", "--predict", "2", "--",
         a.mpiexec, a.np_flag, "{n}", *a.preflags, a.app, 20, BYTES])
    model = os.path.join(scale, "app.model")
    for name, latency, bandwidth in (("latency", 1e-4, 1e9), ("bandwidth", 1e-6, 1e8)):
        path = os.path.join(a.work, name + ".json")
        with open(path, "w") as f:
            json.dump({"schema_version": 1, "latency_s": latency, "bandwidth_Bps": bandwidth, "cores_per_node": 1}, f)
        t, _ = per_instance(a, model, path, name)
        want = 2 * (latency + BYTES / bandwidth)
        print(f"{name}-bound machine: {t * 1e6:.1f} us per iteration, 2 x (latency + size / bandwidth) = "
              f"{want * 1e6:.1f} us ({(t / want - 1) * 100:+.2f} %)")
        if abs(t / want - 1) > 0.02:
            fail(f"the simulated ping-pong on the {name}-bound machine is off by more than 2 %")
    t, compute = per_instance(a, model, machine, "calibrated")
    measured = 2 * next(p["seconds"] for p in calibrated["measurements"]["inside_node"] if p["bytes"] == BYTES)
    print(f"calibrated machine: {t * 1e6:.1f} us per iteration, measured {measured * 1e6:.1f} us + bursts "
          f"{2 * compute * 1e6:.1f} us")
    if not 0.97 * measured <= t <= 1.03 * (measured + 2 * compute):
        fail("the simulated ping-pong on the calibrated machine is not what the calibration measured")
    check_scale_backend(a, scale, machine)
    print("PASS")


def check_scale_backend(a, scale, machine):
    """The same scale directory measured by simulation: the records and the model are reused."""
    command = ["--", a.mpiexec, a.np_flag, "{n}", *a.preflags, a.app, 20, BYTES]
    signature = os.path.join(scale, "runs", "np2", "signature.json")
    before = os.stat(signature).st_mtime_ns
    one_line(run([a.p3s, "scale", "-o", scale, "--fit", "2,4,8", "--predict", "2,8", "--backend", "simulate",
                  *command], want_rc=1), "--platform")
    run([a.p3s, "scale", "-o", scale, "--fit", "2,4,8", "--predict", "2,8", "--backend", "simulate", "--platform",
         machine, *command])
    if os.stat(signature).st_mtime_ns != before:
        fail("the simulate backend recorded the runs again")
    for n in (2, 8):
        with open(os.path.join(scale, "results", f"np{n}.json")) as f:
            tool = json.load(f)["tool"]
        if not tool.startswith("p3s simulate"):
            fail(f"results/np{n}.json was written by {tool!r}")
    with open(os.path.join(scale, "curve.json")) as f:
        rows = {r["n"]: r for r in json.load(f)["rows"]}
    if rows.get(8, {}).get("source") != "predicted" or rows[8].get("predicted_by") != "simulation":
        fail(f"the curve's row at 8: {rows.get(8)}")
    print("p3s scale --backend simulate: n = 2 and 8 simulated from the same records: ok")


if __name__ == "__main__":
    main()
