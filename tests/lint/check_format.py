#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Checks that every C, C++ and header file of the source tree is formatted as .clang-format says.

Usage: check_format.py CLANG_FORMAT SOURCE_DIR

Walks SOURCE_DIR (build directories and tests/data left out), runs `CLANG_FORMAT --dry-run -Werror` on each
file, and lists the files that would change with the command that fixes them. Exit 1 when any would.
"""
import os
import subprocess
import sys

EXTENSIONS = (".c", ".h", ".cpp", ".hpp")
SKIP_DIRS = {".git", "tests/data"}


def sources(root):
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        dirnames[:] = sorted(d for d in dirnames
                             if not d.startswith("build") and os.path.normpath(os.path.join(rel, d)) not in SKIP_DIRS)
        for f in sorted(filenames):
            if f.endswith(EXTENSIONS):
                yield os.path.join(dirpath, f)


def main(argv):
    if len(argv) != 3:
        print("usage: check_format.py CLANG_FORMAT SOURCE_DIR", file=sys.stderr)
        return 2
    clang_format, root = argv[1], argv[2]
    files = list(sources(root))
    if not files:
        print(f"check_format.py: no sources under '{root}'", file=sys.stderr)
        return 1
    bad = []
    for path in files:
        r = subprocess.run([clang_format, "--dry-run", "-Werror", path], capture_output=True, text=True)
        if r.returncode != 0:
            bad.append(os.path.relpath(path, root))
    print(f"{len(files)} files checked, {len(bad)} not formatted")
    for b in bad:
        print(f"  {b}")
    if bad:
        print(f"fix with: {clang_format} -i " + " ".join(bad))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
