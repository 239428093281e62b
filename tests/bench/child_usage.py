# SPDX-License-Identifier: BSD-3-Clause
"""Time and peak memory of one command, from the kernel's accounting of that child (the benchmarks share it)."""
import os
import sys
import time


def run_quietly(cmd):
    """Runs cmd with its output discarded; returns (seconds, peak RSS in MiB). Exits on failure."""
    t = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.execvp(cmd[0], cmd)
    _, status, usage = os.wait4(pid, 0)
    elapsed = time.perf_counter() - t
    if status != 0:
        sys.exit(f"benchmark command failed: {' '.join(cmd)}")
    return elapsed, usage.ru_maxrss / 1024.0
