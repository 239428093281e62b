# SPDX-License-Identifier: BSD-3-Clause
"""Signatures of a bundled series, altered to test how the modeler degrades (check_degrade.py, check_oversized.py)."""
import glob
import gzip
import json
import os
import shutil


def scattered_peer(rank, n, k):
    """A pseudo-random peer for call k of `rank` at n: one that no pattern of peers reproduces."""
    h = ((rank + 1) * 2654435761) ^ (n * 40503 + k * 97)
    return ((h & 0xFFFFFFFFFFFFFFFF) >> 7) % n


def write_altered(data, work, alter):
    """Writes each signature DATA/np<k>.json.gz, altered in place by `alter`, to WORK (emptied first) as np<k>.json.
    Returns the paths written and what `alter` returned for the last one."""
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    paths = []
    result = None
    for gz in sorted(glob.glob(os.path.join(data, "np*.json.gz"))):
        with gzip.open(gz, "rt") as f:
            signature = json.load(f)
        result = alter(signature)
        path = os.path.join(work, os.path.basename(gz)[:-3])
        with open(path, "w") as f:
            json.dump(signature, f)
        paths.append(path)
    return paths, result
