#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Checks that no stage decides on an MPI function by its name.

Usage: check_mpi_names.py SOURCE_DIR [--spec SPEC]

The stages share a typed vocabulary generated from interpose/spec/mpi.json (vocabulary/): mpi::Function and what
each function is. Only the vocabulary maps names to functions. In the C++ sources of every other library and of
the CLI (tests and the vocabulary itself left out), with comments removed, this flags:
  - a string literal that is an MPI function's name or a prefix of one ("MPI_Isend", "MPI_Wait", "MPI_"): a
    name list or a prefix test;
  - a character test on a call's name (call[4], name[4]);
  - an action kind or collective compared with text (kind == "send", a search for " root").
The names come from the spec itself: a literal equal to a function's name, to its name without "MPI_"
("Waitall"), or to a prefix of a name ("MPI_Wait", "MPI_I") is flagged. Names in prose (an error message that
mentions MPI_Finalize) are not literals of their own and pass; OTF2 record and communicator names are upper case
(MPI_SEND, MPI_COMM_WORLD) and pass. Exit 1 when anything is flagged.
"""
import json
import os
import re
import sys

SCANNED = ("analyzer", "modeler", "cli", "common", "interpose", "replay")
EXTENSIONS = (".c", ".h", ".cpp", ".hpp")
STRING_LITERAL = re.compile(r'"((?:\\.|[^"\\\n])*)"')
CHAR_TEST = re.compile(r'\b(?:call|name|function_name)\s*\[\s*\d+\s*\]')
# An action kind or collective compared with text ("send", "coll", a search for " root"): they are vocabulary enums.
KIND_NAMES = ("send|recv|coll|icoll|icoll_complete|irecv|isend_complete|cancelled|BARRIER|BCAST|GATHERV?|SCATTERV?|"
              "ALLGATHERV?|ALLTOALL[VW]?|ALLREDUCE|REDUCE|REDUCE_SCATTER(?:_BLOCK)?|SCAN|EXSCAN|CREATE_HANDLE|"
              "DESTROY_HANDLE")
KIND_TEXT = re.compile(r'[!=]=\s*(?:std::string(?:_view)?\()?"(?:' + KIND_NAMES + r')"|"(?:' + KIND_NAMES +
                       r')"\)?\s*[!=]=|\.compare\(\s*"(?:' + KIND_NAMES + r')"|\.find\(\s*" root"')


def function_names(spec):
    """Every function of the wrapper spec: full names, and their names without the MPI_ prefix."""
    with open(spec, encoding="utf-8") as f:
        names = [fn["name"] for fn in json.load(f)["functions"]]
    return set(names), {n[len("MPI_"):] for n in names}


# Any MPI function's name, in the spec or not (MPI_ + a capitalised word: MPI_Mrecv, MPI_Comm_split).
FUNCTION_NAME = re.compile(r'MPI_[A-Z][a-z][A-Za-z0-9_]*')


def names_a_function(text, full, short):
    """A literal that is a function's name (in the spec or shaped like one), its short name, or a prefix of a name
    of the spec ("MPI_Wait", "MPI_I", "MPI_")."""
    if text in short or FUNCTION_NAME.fullmatch(text):
        return True
    return text.startswith("MPI_") and any(n.startswith(text) for n in full)


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


def check(path, full, short):
    with open(path, encoding="utf-8", errors="replace") as f:
        code = strip_comments(f.read())
    problems = []
    for lineno, line in enumerate(code.split("\n"), 1):
        for m in STRING_LITERAL.finditer(line):
            if names_a_function(m.group(1), full, short):
                problems.append(f"{path}:{lineno}: MPI function name {m.group(0)} as a literal; decide on "
                                "mpi::Function (p3s/mpi/vocabulary.hpp) instead")
        for m in CHAR_TEST.finditer(line):
            problems.append(f"{path}:{lineno}: character test '{m.group(0)}' on a name; decide on mpi::Function")
        for m in KIND_TEXT.finditer(line):
            problems.append(f"{path}:{lineno}: '{m.group(0)}' compares an action kind or collective as text; use "
                            "mpi::ActionKind / mpi::Collective")
    return problems


def main(argv):
    if len(argv) not in (2, 4) or (len(argv) == 4 and argv[2] != "--spec"):
        print("usage: check_mpi_names.py SOURCE_DIR [--spec SPEC]", file=sys.stderr)
        return 2
    root = argv[1]
    spec = argv[3] if len(argv) == 4 else os.path.join(root, "interpose", "spec", "mpi.json")
    full, short = function_names(spec)
    problems, files = [], 0
    for top in SCANNED:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for f in sorted(filenames):
                if f.endswith(EXTENSIONS):
                    files += 1
                    problems += check(os.path.join(dirpath, f), full, short)
    if files == 0:
        print(f"check_mpi_names.py: no sources under '{root}'", file=sys.stderr)
        return 1
    for p in problems:
        print(os.path.relpath(p, root) if p.startswith(root) else p)
    print(f"{files} files checked, {len(problems)} places decide on an MPI function's name")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
