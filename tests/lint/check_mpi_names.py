#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Checks that no stage decides on an MPI function by its name.

Usage: check_mpi_names.py SOURCE_DIR

The stages share a typed vocabulary generated from interpose/spec/mpi.json (vocabulary/): mpi::Function and what
each function is. Only the vocabulary maps names to functions. In the C++ sources of every other library and of
the CLI (tests and the vocabulary itself left out), with comments removed, this flags:
  - a string literal that is an MPI function's name or a prefix of one ("MPI_Isend", "MPI_Wait", "MPI_"): a
    name list or a prefix test;
  - a character test on a call's name (call[4], name[4]);
  - an action kind or collective compared with text (kind == "send", a search for " root").
Names in prose (an error message that mentions MPI_Finalize) are not literals of their own and pass; OTF2 record
and communicator names are upper case (MPI_SEND, MPI_COMM_WORLD) and pass. Exit 1 when anything is flagged.
"""
import os
import re
import sys

SCANNED = ("analyzer", "modeler", "cli", "common", "interpose", "replay")
EXTENSIONS = (".c", ".h", ".cpp", ".hpp")
# A literal that is a function name (MPI_ + a capitalised word: MPI_Send, MPI_Comm_split) or a prefix of one.
NAME_LITERAL = re.compile(r'"MPI_(?:[A-Z][a-z][A-Za-z0-9_]*)?"')
CHAR_TEST = re.compile(r'\b(?:call|name|function_name)\s*\[\s*\d+\s*\]')
# An action kind or collective compared with text ("send", "coll", a search for " root"): they are vocabulary enums.
KIND_NAMES = ("send|recv|coll|icoll|icoll_complete|irecv|isend_complete|cancelled|BARRIER|BCAST|GATHERV?|SCATTERV?|"
              "ALLGATHERV?|ALLTOALL[VW]?|ALLREDUCE|REDUCE|REDUCE_SCATTER(?:_BLOCK)?|SCAN|EXSCAN|CREATE_HANDLE|"
              "DESTROY_HANDLE")
KIND_TEXT = re.compile(r'[!=]=\s*"(?:' + KIND_NAMES + r')"|"(?:' + KIND_NAMES + r')"\s*[!=]=|\.find\(\s*" root"')


def strip_comments(text):
    """Comments out, string literals kept (a // inside a literal is not a comment)."""
    out, pos = [], 0
    for m in re.finditer(r'"(?:\\.|[^"\\\n])*"|//[^\n]*|/\*.*?\*/', text, re.S):
        out.append(text[pos:m.start()])
        # A comment becomes the newlines it spanned, so line numbers stay right.
        out.append(m.group(0) if m.group(0).startswith('"') else "\n" * m.group(0).count("\n"))
        pos = m.end()
    out.append(text[pos:])
    return "".join(out)


def check(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        code = strip_comments(f.read())
    problems = []
    for lineno, line in enumerate(code.split("\n"), 1):
        for m in NAME_LITERAL.finditer(line):
            problems.append(f"{path}:{lineno}: MPI function name {m.group(0)} as a literal; decide on mpi::Function "
                            "(p3s/mpi/vocabulary.hpp) instead")
        for m in CHAR_TEST.finditer(line):
            problems.append(f"{path}:{lineno}: character test '{m.group(0)}' on a name; decide on mpi::Function")
        for m in KIND_TEXT.finditer(line):
            problems.append(f"{path}:{lineno}: '{m.group(0)}' compares an action kind or collective as text; use "
                            "mpi::ActionKind / mpi::Collective")
    return problems


def main(argv):
    if len(argv) != 2:
        print("usage: check_mpi_names.py SOURCE_DIR", file=sys.stderr)
        return 2
    root = argv[1]
    problems, files = [], 0
    for top in SCANNED:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for f in sorted(filenames):
                if f.endswith(EXTENSIONS):
                    files += 1
                    problems += check(os.path.join(dirpath, f))
    if files == 0:
        print(f"check_mpi_names.py: no sources under '{root}'", file=sys.stderr)
        return 1
    for p in problems:
        print(os.path.relpath(p, root) if p.startswith(root) else p)
    print(f"{files} files checked, {len(problems)} places decide on an MPI function's name")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
