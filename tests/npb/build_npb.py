#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Builds NAS Parallel Benchmarks (MPI, Fortran) from their source archive, outside the source tree.

    build_npb.py --tarball NPB.tar.gz --dir BUILD_DIR --mpifc MPIF90 --mpicc MPICC cg.S lu.W ...

Extracts the archive into BUILD_DIR (once), points its config/make.def at the given MPI compiler wrappers, lets
gfortran 10 and later accept the benchmarks' calls of one MPI routine with several argument types, and makes each
benchmark for its class, one after the other (the benchmarks of one source folder share their objects).
BUILD_DIR/NPB3.4-MPI/bin/<name>.<class>.x are the binaries.
"""
import argparse
import os
import re
import subprocess
import sys
import tarfile


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tarball", required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--mpifc", required=True)
    p.add_argument("--mpicc", required=True)
    p.add_argument("targets", nargs="+", help="benchmark.class, e.g. lu.W")
    a = p.parse_args()
    root = os.path.join(a.dir, "NPB3.4-MPI")
    if not os.path.isdir(root):
        os.makedirs(a.dir, exist_ok=True)
        with tarfile.open(a.tarball) as t:
            t.extractall(a.dir, filter="data") if hasattr(tarfile, "data_filter") else t.extractall(a.dir)
    if not os.path.isdir(root):
        sys.exit(f"build_npb.py: {a.tarball} holds no NPB3.4-MPI folder")
    make_def = os.path.join(root, "config", "make.def")
    with open(make_def) as f:
        text = f.read()
    version = subprocess.run([a.mpifc, "-dumpversion"], capture_output=True, text=True).stdout.strip()
    major = int(re.match(r"\d+", version).group(0)) if re.match(r"\d+", version) else 0
    flags = "-O3 -fallow-argument-mismatch" if major >= 10 else "-O3"
    text = re.sub(r"^MPIFC\s*=.*$", f"MPIFC = {a.mpifc}", text, flags=re.M)
    text = re.sub(r"^MPICC\s*=.*$", f"MPICC = {a.mpicc}", text, flags=re.M)
    text = re.sub(r"^FFLAGS\s*=.*$", f"FFLAGS = {flags}", text, flags=re.M)
    with open(make_def, "w") as f:
        f.write(text)
    os.makedirs(os.path.join(root, "bin"), exist_ok=True)
    for target in a.targets:
        name, cls = target.split(".")
        binary = os.path.join(root, "bin", f"{name}.{cls}.x")
        if os.path.exists(binary):
            continue
        r = subprocess.run(["make", name, f"CLASS={cls}"], cwd=root, capture_output=True, text=True)
        if r.returncode != 0 or not os.path.exists(binary):
            sys.exit(f"build_npb.py: make {name} CLASS={cls} failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
        print(f"built {binary}")


if __name__ == "__main__":
    main()
