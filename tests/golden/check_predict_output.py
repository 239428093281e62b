#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""`p3s predict -o DIR` writes its trace alone, bounded, and leaves nothing half-written behind.

Usage: check_predict_output.py --p3s P3S --data DIR --work DIR

DIR holds the signatures of the ring app (np<k>.json.gz). With the model fitted from them:
  1. while another writer holds DIR's lock, `p3s predict -o DIR` refuses in one line and writes nothing; once it is
     released, the prediction is written and the lock file is gone;
  2. a count law of 10^7 calls is refused in one line within 1 GiB of address space, not made (it used to take the
     memory, then end in std::bad_alloc);
  3. a trace of more than 1 GB is announced before it is written, and a predict killed while it streams the trace
     (SIGTERM, SIGINT) leaves no temporary behind.
"""
import argparse
import fcntl
import gzip
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def limited():
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--p3s", required=True)
    p.add_argument("--data", required=True)
    p.add_argument("--work", required=True)
    a = p.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    sigs = []
    for n in (4, 8, 16):
        sig = os.path.join(a.work, f"np{n}.json")
        with gzip.open(os.path.join(a.data, f"np{n}.json.gz"), "rb") as f, open(sig, "wb") as out:
            out.write(f.read())
        sigs.append(sig)
    model = os.path.join(a.work, "ring.model")
    subprocess.run([a.p3s, "model", *sigs, "--no-holdout", "-q", "-o", model], check=True)

    # 1. A held lock.
    out = os.path.join(a.work, "locked")
    os.makedirs(out)
    with open(os.path.join(out, ".p3s-write.lock"), "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        r = subprocess.run([a.p3s, "predict", model, "--np", "8", "-o", out], capture_output=True, text=True)
        lines = r.stderr.splitlines()
        if r.returncode != 1 or len(lines) != 1 or "another p3s is writing" not in r.stderr:
            fail(f"predict into a locked directory: exit {r.returncode}: {r.stderr}")
        if os.path.exists(os.path.join(out, "lt4nc.json")) or os.path.exists(os.path.join(out, "ranks.jsonl")):
            fail("predict into a locked directory wrote into it")
    print(f"REFUSED while locked: {lines[0]}")
    r = subprocess.run([a.p3s, "predict", model, "--np", "8", "-o", out], capture_output=True, text=True)
    if r.returncode != 0 or not os.path.exists(os.path.join(out, "lt4nc.json")):
        fail(f"predict once the lock was released: exit {r.returncode}: {r.stderr}")
    if os.path.exists(os.path.join(out, ".p3s-write.lock")):
        fail("predict left its lock file behind")

    # `-o=X` is CLI11's short option with the value "=X": refused as a usage error, no directory "=X" made.
    r = subprocess.run([a.p3s, "predict", model, "--np", "4", "-o=X"], capture_output=True, text=True, cwd=a.work)
    if r.returncode != 2 or "begins with '='" not in r.stderr or os.path.exists(os.path.join(a.work, "=X")):
        fail(f"-o=X: exit {r.returncode}: {r.stderr}")

    # 2. A count law far past any run.
    with open(model) as f:
        m = json.load(f)
    group = next(g for ph in m["phases"] for g in ph["groups"] if g["role"] == "p2p")
    group["pattern"]["cases"][0]["terms"][0]["count"] = {"a": 0, "b": 10000000, "basis": "1", "kind": "exact"}
    huge = os.path.join(a.work, "huge_count.model")
    with open(huge, "w") as f:
        json.dump(m, f)
    r = subprocess.run([a.p3s, "predict", huge, "--np", "5", "-o", os.path.join(a.work, "huge")],
                       capture_output=True, text=True, preexec_fn=limited, timeout=300)
    lines = r.stderr.splitlines()
    if r.returncode != 1 or len(lines) != 1 or "more than p3s predicts for one rank" not in r.stderr:
        fail(f"a count of 10^7 calls: exit {r.returncode}: {r.stderr[-600:]}")
    print(f"REFUSED a count of 10^7: {lines[0]}")

    # 3. A large trace: announced, and a predict killed while it writes leaves no temporary.
    for sig in (signal.SIGTERM, signal.SIGINT):
        big = os.path.join(a.work, f"big-{sig.name}")
        shutil.rmtree(big, ignore_errors=True)
        proc = subprocess.Popen([a.p3s, "predict", model, "--np", "700000", "-o", big], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        seen = None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            temps = [x for x in os.listdir(big) if x.startswith("ranks.jsonl.")] if os.path.isdir(big) else []
            if temps and os.path.getsize(os.path.join(big, temps[0])) > 20_000_000:
                seen = temps[0]
                break
            time.sleep(0.05)
        if seen is None:
            proc.kill()
            fail(f"predict --np 700000 ended (exit {proc.poll()}) before its trace's temporary reached 20 MB")
        proc.send_signal(sig)
        stdout, _ = proc.communicate(timeout=60)
        if "writing about" not in stdout:
            fail(f"a trace of more than 1 GB was not announced before it was written: {stdout!r}")
        left = [x for x in os.listdir(big) if x.startswith("ranks.")] if os.path.isdir(big) else []
        if left:
            fail(f"predict killed by {sig.name} left {left} in {big}")
        print(f"KILLED by {sig.name} while writing {seen}: nothing left; announced: {stdout.splitlines()[-1]}")
        shutil.rmtree(big, ignore_errors=True)
    print("PASS")


if __name__ == "__main__":
    main()
