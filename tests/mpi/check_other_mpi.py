#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The interposer and the pipeline against a second MPI: configure p3s with P3S_MPI=<mpi> in a tree of its own,
build there what the portable tests run (target p3s_portable), then run the MPI tests labelled `portable` there (the recorder on C and Fortran apps, one
record-analyze-model-predict pipeline, the modeler's MPI_Dims_create against the library's own).

    check_other_mpi.py --mpi mpich --source DIR --build DIR [--cmake cmake] [--ctest ctest]

A missing MPI is a failure, not a skip: the test is registered only where the MPI's compiler wrapper exists.
"""
import argparse
import subprocess
import sys


def step(what, cmd, timeout):
    print(f"== {what}: {' '.join(cmd)}", flush=True)
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        print(f"FAIL [{what}]: timed out after {timeout} s", file=sys.stderr)
        sys.exit(1)
    if r.returncode != 0:
        print(f"FAIL [{what}]: exit {r.returncode}\n{r.stdout[-6000:]}\n{r.stderr[-3000:]}", file=sys.stderr)
        sys.exit(1)
    return r.stdout


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mpi", required=True)
    p.add_argument("--source", required=True)
    p.add_argument("--build", required=True)
    p.add_argument("--cmake", default="cmake")
    p.add_argument("--ctest", default="ctest")
    a = p.parse_args()
    out = step("configure", [a.cmake, "-S", a.source, "-B", a.build, f"-DP3S_MPI={a.mpi}",
                             "-DCMAKE_BUILD_TYPE=RelWithDebInfo", "-DP3S_BUILD_BENCH=OFF", "-DP3S_NPB_DIR="], 600)
    if f"p3s: MPI" not in out or a.mpi not in out.lower():
        print(f"FAIL [configure]: the build did not select {a.mpi}:\n{out[-3000:]}", file=sys.stderr)
        sys.exit(1)
    step("build", [a.cmake, "--build", a.build, "--target", "p3s_portable", "-j2"], 1800)
    out = step("tests", [a.ctest, "--test-dir", a.build, "-L", "portable", "--output-on-failure", "-j2"], 1800)
    print(out[-4000:])
    if "No tests were found" in out:
        print("FAIL [tests]: no test is labelled portable", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
