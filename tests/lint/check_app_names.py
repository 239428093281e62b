#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Checks that the analyzer and the modeler name no application.

Usage: check_app_names.py SOURCE_DIR

Every rule of the phase finder and of the model is a property of MPI (how calls complete, how communicators
split, how sizes follow data), stated and tested on a synthetic case; a rule written for one code does not carry
to the next. So their sources (comments included: a comment that explains a rule by one code invites the next
rule for it) must not name an application, a benchmark suite or one of its inputs. The names are those of the
codes the project is measured on (tests/, the corpus) and of well-known benchmark suites; a word is matched
whole and case-insensitively. Exit 1 when any is found.
"""
import os
import re
import sys

SCANNED = ("analyzer", "modeler")
EXTENSIONS = (".c", ".h", ".cpp", ".hpp")
APPLICATIONS = ("LAMMPS", "MEEP", "HPCC", "HPL", "NPB", "NAS", "Sweep3D", "miniFE", "miniAMR", "LULESH",
                "GROMACS", "Quantum ESPRESSO", "OpenFOAM", "WRF", "stencil2d", "crack", "melt", "micelle",
                "waveguide", "rhodopsin")
PATTERN = re.compile(r'\b(?:' + "|".join(re.escape(a) for a in APPLICATIONS) + r')\b', re.I)


def sources(root):
    """The C and C++ files under the scanned stages (their tests live in tests/, not here)."""
    for stage in SCANNED:
        for dirpath, _, files in os.walk(os.path.join(root, stage)):
            for name in sorted(files):
                if name.endswith(EXTENSIONS):
                    yield os.path.join(dirpath, name)


def main(argv):
    if len(argv) != 2:
        sys.exit("usage: check_app_names.py SOURCE_DIR")
    root = argv[1]
    checked = found = 0
    for path in sources(root):
        checked += 1
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                for m in PATTERN.finditer(line):
                    found += 1
                    print(f"{os.path.relpath(path, root)}:{number}: names an application: {m.group(0)}")
    print(f"{checked} files checked, {found} places name an application")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
