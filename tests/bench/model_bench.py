#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Modeler benchmark: time and peak memory of `p3s model` on the signatures of a 64-rank application at 8, 16, 32
and 64 processes (the 2-D stencil), against `p3s analyze` of the 64-rank run measured in the same session; the fit's
time on the NAS-kernel series whose shapes are dearest to find (luwave, the LU-SSOR pipeline, at 4 to 32 processes;
multipart, BT/SP's multi-partition, at 4, 9, 16 and 25), against `p3s analyze` of each series' largest run; and of
`p3s predict --logical` at 512 to 4096 processes, against a plain copy of the file it writes, with its peak memory,
which must not grow with n beyond a few bytes per rank (the LT4NC is streamed rank by rank).
"""
import argparse
import os
import shutil
import subprocess
import sys

from child_usage import run_quietly

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mpi"))
import p3s_launch  # noqa: E402


def best(cmd, repeat):
    runs = [run_quietly(cmd) for _ in range(repeat)]
    return min(r[0] for r in runs), max(r[1] for r in runs)


def record_series(a, name, app, args, counts):
    """Records and analyses the app at each count; returns the runs' directories."""
    runs = []
    for n in counts:
        d = os.path.join(a.work, f"{name}.np{n}")
        r = subprocess.run([a.p3s, "record", "-o", d, "--force", "--", *p3s_launch.launch(a, n), app, *args],
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"recording {name} at {n} failed: {r.stderr[-2000:]}")
        runs.append(d)
    r = subprocess.run([a.p3s, "analyze", *runs, "-q"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"analysing the {name} series failed: {r.stderr[-2000:]}")
    return runs


def fit_series(a, name, app, args, counts):
    """Times `p3s model` on a series against `p3s analyze` of its largest run alone."""
    runs = record_series(a, name, app, args, counts)
    model = os.path.join(a.work, f"{name}.model")
    t_model, rss_model = best([a.p3s, "model", *runs, "-o", model, "-q", "--force"], a.repeat)
    largest = os.path.join(a.work, f"{name}.largest")
    shutil.rmtree(largest, ignore_errors=True)
    shutil.copytree(runs[-1], largest)
    t_an, _ = best([a.p3s, "analyze", largest, "-q"], a.repeat)
    shown = " ".join(str(n) for n in counts)
    print(f"p3s model, {name} at {shown}: {t_model * 1000:.1f} ms, peak RSS {rss_model:.1f} MiB; "
          f"p3s analyze of its {counts[-1]}-rank run: {t_an * 1000:.1f} ms; ratio {t_model / t_an:.3f}")


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--p3s", required=True)
    p.add_argument("--app", required=True, help="the stencil2d test app")
    p.add_argument("--luwave", help="the luwave test app")
    p.add_argument("--multipart", help="the multipart test app")
    p3s_launch.add_options(p)
    p.add_argument("--work", required=True)
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    runs = []
    for n in (8, 16, 32, 64):
        d = os.path.join(a.work, f"np{n}")
        r = subprocess.run([a.p3s, "record", "-o", d, "--force", "--", *p3s_launch.launch(a, n), a.app, "20", "1920"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"recording at {n} failed: {r.stderr[-2000:]}")
        runs.append(d)
    t_an, rss_an = best([a.p3s, "analyze", runs[-1], "-q"], a.repeat)
    for d in runs[:-1]:
        subprocess.run([a.p3s, "analyze", d, "-q"], check=True)
    model = os.path.join(a.work, "stencil2d.model")
    t_model, rss_model = best([a.p3s, "model", *runs, "-o", model, "-q", "--force"], a.repeat)
    print(f"p3s model, 4 signatures (8..64 ranks): {t_model * 1000:.1f} ms, peak RSS {rss_model:.1f} MiB; "
          f"p3s analyze of the 64-rank run: {t_an * 1000:.1f} ms, {rss_an:.1f} MiB; ratio {t_model / t_an:.3f}")
    for name, app, args, counts in (("luwave", a.luwave, ["10", "120", "16", "5", "0"], (4, 8, 16, 32)),
                                     ("multipart", a.multipart, ["20", "60", "0"], (4, 9, 16, 25))):
        if app:
            fit_series(a, name, app, args, counts)
    print(f"{'n':>6} {'predict':>9} {'copy':>8} {'ratio':>6} {'us/rank':>8} {'RSS':>8} {'output':>9}")
    for n in (512, 1024, 2048, 4096):
        out = os.path.join(a.work, f"lt{n}")
        shutil.rmtree(out, ignore_errors=True)
        t_pred, rss = best([a.p3s, "predict", model, "--np", str(n), "--logical", "-o", out, "--force"], a.repeat)
        ranks = os.path.join(out, "ranks.jsonl")
        size = os.path.getsize(ranks)
        t_copy, _ = best(["cp", ranks, ranks + ".copy"], a.repeat)
        os.remove(ranks + ".copy")
        print(f"{n:6d} {t_pred:8.3f}s {t_copy:7.3f}s {t_pred / t_copy:6.1f} {1e6 * t_pred / n:8.1f} "
              f"{rss:7.1f}M {size / 2**20:8.1f}M")


if __name__ == "__main__":
    main()
