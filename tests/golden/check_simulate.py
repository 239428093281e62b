#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""`p3s simulate`: the collectives app's model simulated by SimGrid's SMPI on machine files.

    check_simulate.py --p3s BIN --data DIR --work DIR [--np 16]

  - a machine file gives a result with the replay result's keys, PET = sum of weight x time, the platform named;
    `p3s curve` reads it as a prediction by simulation;
  - a slower network (10x the latency, a tenth of the bandwidth) gives a longer PET; another core speed the same
    PET (bursts are written for the cores' speed, so they keep their predicted time);
  - a bad machine file, a platform .xml without --hostfile and an existing result without --force are refused in
    one line; without smpirun the command says how to install SimGrid.
Skipped (said) where SimGrid is not installed, but for that last check.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

from altered import write_altered

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from handwritten_st4np import write_handwritten  # noqa: E402


def fail(msg):
    sys.exit(f"FAIL: {msg}")


def run(cmd, want_rc=0, env=None):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=600, env=env)
    if r.returncode != want_rc:
        fail(f"exit {r.returncode} (expected {want_rc}): {' '.join(map(str, cmd))}\n{r.stdout[-2000:]}\n"
             f"{r.stderr[-2000:]}")
    return r


def machine(work, name, **keys):
    m = {"schema_version": 1, "latency_s": 2e-6, "bandwidth_Bps": 1e10, "flops": 1e9, "cores_per_node": 4}
    m.update(keys)
    path = os.path.join(work, name)
    with open(path, "w") as f:
        json.dump(m, f)
    return path


def simulate(a, model, platform, out, *extra):
    run([a.p3s, "simulate", model, "--np", a.np, "--platform", platform, "-o", out, *extra])
    with open(out) as f:
        return json.load(f)


def one_line_refusal(r, words):
    if words not in r.stderr or len(r.stderr.strip().splitlines()) != 1:
        fail(f"expected one line saying {words!r}: {r.stderr!r}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--p3s", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--np", type=int, default=16)
    a = ap.parse_args()
    sigs, _ = write_altered(a.data, a.work, lambda signature: None)  # as bundled
    model = os.path.join(a.work, "app.model")
    run([a.p3s, "model", *sigs, "-o", model, "-q"])
    fast = machine(a.work, "fast.json")
    r = run([a.p3s, "simulate", model, "--np", a.np, "--platform", fast, "-o", os.path.join(a.work, "x.json")],
            want_rc=1, env={**os.environ, "PATH": "/nonexistent"})
    one_line_refusal(r, "apt-get install libsimgrid-dev")
    if shutil.which("smpirun") is None:
        print("smpirun not found (SimGrid is not installed): the simulation is skipped")
        print("PASS")
        return
    out = os.path.join(a.work, "fast.result.json")
    res = simulate(a, model, fast, out)
    if res["processes"] != a.np or not res["tool"].startswith("p3s simulate") or "4 nodes x 4 cores" not in \
            res["inputs"]["platform"]:
        fail(f"the result: {res['processes']} processes, tool {res['tool']!r}, platform {res['inputs']['platform']!r}")
    total = sum(p["weight"] * p["time_ns"] for p in res["phases"])
    if not res["pet_ns"] > 0 or abs(total - res["pet_ns"]) > 1e-9 * total:
        fail(f"PET {res['pet_ns']} is not the phases' weight x time ({total})")
    curve = run([a.p3s, "curve", out, "--json", os.path.join(a.work, "curve.json")]).stdout
    with open(os.path.join(a.work, "curve.json")) as f:
        rows = json.load(f)["rows"]
    if len(rows) != 1 or rows[0]["source"] != "predicted":
        fail(f"`p3s curve` did not read the simulation as a prediction:\n{curve}")
    slow = simulate(a, model, machine(a.work, "slow.json", latency_s=2e-5, bandwidth_Bps=1e9),
                    os.path.join(a.work, "slow.result.json"))
    if not slow["pet_ns"] > res["pet_ns"]:
        fail(f"a slower network gave PET {slow['pet_ns']}, the faster {res['pet_ns']}")
    quick = simulate(a, model, machine(a.work, "quick.json", flops=4e9), os.path.join(a.work, "quick.result.json"))
    if abs(quick["pet_ns"] - res["pet_ns"]) > 1e-3 * res["pet_ns"]:
        fail(f"cores of 4 Gflop/s gave PET {quick['pet_ns']}, of 1 Gflop/s {res['pet_ns']}: bursts must keep their time")
    print(f"n = {a.np}: PET {res['pet_ns'] / 1e6:.3f} ms, {slow['pet_ns'] / 1e6:.3f} ms on the slower network, "
          f"{quick['pet_ns'] / 1e6:.3f} ms with faster cores")
    one_line_refusal(run([a.p3s, "simulate", model, "--np", a.np, "--platform", fast, "-o", out], want_rc=1), "--force")
    bad = machine(a.work, "bad.json", latency_s=-1)
    one_line_refusal(run([a.p3s, "simulate", model, "--np", a.np, "--platform", bad, "-o", out, "--force"],
                         want_rc=1), "latency_s")
    xml = os.path.join(a.work, "fast.result.json.simulation", "platform.xml")
    one_line_refusal(run([a.p3s, "simulate", model, "--np", a.np, "--platform", xml, "-o", out, "--force"],
                         want_rc=1), "--hostfile")
    one_line_refusal(run([a.p3s, "simulate", model, "--platform", fast, "-o", out, "--force"], want_rc=1), "--np")
    print("refusals in one line: ok")
    check_st4np(a, fast)
    print("PASS")


def check_st4np(a, fast):
    """An executable trace written by hand, simulated at its own count: its phases with the weights of its order."""
    st4np = os.path.join(a.work, "handwritten")
    shutil.rmtree(st4np, ignore_errors=True)
    header, _ = write_handwritten(st4np, 8)
    out = os.path.join(a.work, "handwritten.result.json")
    run([a.p3s, "simulate", st4np, "--platform", fast, "-o", out, "--force"])
    with open(out) as f:
        res = json.load(f)
    weights = [p["weight"] for p in res["phases"]]
    if res["processes"] != 8 or weights != [p["weight"] for p in header["phases"]] or \
            res["inputs"]["application"] != "handwritten" or not all(p["time_ns"] > 0 for p in res["phases"]):
        fail(f"the hand-written ST4NP simulated: {res['processes']} processes, weights {weights}, phases "
             f"{[p['time_ns'] for p in res['phases']]}")
    ring = res["phases"][0]
    # 7 bursts and a tail of 36 us per instance on each rank: the simulated instance takes at least that.
    if not 36000 <= ring["time_ns"] < 2 * 36000:
        fail(f"the hand-written ring takes {ring['time_ns']:.0f} ns per instance simulated; its bursts are 36 us")
    print(f"hand-written ST4NP at 8: PET {res['pet_ns'] / 1e6:.3f} ms, ring {ring['time_ns'] / 1e3:.1f} us per "
          "instance")
    one_line_refusal(run([a.p3s, "simulate", st4np, "--np", 6, "--platform", fast, "-o", out, "--force"],
                         want_rc=1), "its own count")


if __name__ == "__main__":
    main()
