#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Generate the typed MPI vocabulary every stage shares from interpose/spec/mpi.json.

Usage: gen_vocabulary.py SPEC OUTDIR

Writes into OUTDIR:
  include/p3s/mpi/functions.hpp  enum Function: one enumerator per spec entry, in spec order, then Other
  functions.cpp                  what each function is (kind, collective, send mode, completion) and the lookup of
                                 a function by its name: the one place where an MPI function is known by its name

Python >= 3.8 standard library only; files are written whole, after the spec was checked.
"""
import os
import sys

from spec import SpecError, load, write_whole

HEADER = "// GENERATED from spec/mpi.json by gen_vocabulary.py — do not edit\n"

KIND = {"init": "Init", "finalize": "Finalize", "abort": "Abort", "send": "Send", "isend": "Isend", "recv": "Recv",
        "irecv": "Irecv", "sendrecv": "Sendrecv", "probe": "Probe", "send_init": "SendInit",
        "recv_init": "RecvInit", "start": "Start", "complete": "Completion", "cancel": "Cancel",
        "request_free": "RequestFree", "coll": "Collective", "icoll": "NbCollective", "comm_new": "CommCreate",
        "comm_free": "CommFree"}
MODE = {None: "None", "standard": "Standard", "buffered": "Buffered", "synchronous": "Synchronous",
        "ready": "Ready"}
COMPLETES = {None: "None", "one": "One", "all": "All", "any": "Any", "some": "Some"}


def camel(otf2_name):
    """REDUCE_SCATTER_BLOCK -> ReduceScatterBlock (the Collective enumerators)."""
    return "".join(w.capitalize() for w in otf2_name.split("_"))


def functions_hpp(fns):
    enum = "".join(f"  {fn['name']} = {i},\n" for i, fn in enumerate(fns))
    return (HEADER + "// The MPI functions p3s knows by type: one per entry of interpose/spec/mpi.json, in spec order.\n"
            "#pragma once\n\n#include <cstdint>\n\nnamespace p3s::mpi {\n\n"
            "/// An MPI function. Its value is also the interposer's region id. `Other` stands for any MPI function\n"
            "/// outside the spec (another tracer records MPI_Comm_rank, MPI_Type_commit, ...): its name travels\n"
            "/// beside it.\n"
            "enum class Function : std::uint16_t {\n" + enum + f"  Other = {len(fns)},\n}};\n\n"
            "/// The number of functions in the spec (Other excluded).\n"
            f"inline constexpr std::uint16_t kFunctionCount = {len(fns)};\n\n"
            "}  // namespace p3s::mpi\n")


def functions_cpp(fns):
    rows = []
    for fn in fns:
        coll = f"Collective::{camel(fn['coll'])}" if "coll" in fn else "Collective::None"
        rows.append(f"    {{\"{fn['name']}\", CallKind::{KIND[fn['kind']]}, {coll}, "
                    f"SendMode::{MODE[fn.get('mode')]}, Completes::{COMPLETES[fn.get('completes')]}, "
                    f"{'true' if fn.get('test') else 'false'}, {fn['since']}}},\n")
    rows.append("    {\"\", CallKind::Other, Collective::None, SendMode::None, Completes::None, false, 0},\n")
    by_name = sorted(range(len(fns)), key=lambda i: fns[i]["name"])
    index = "".join(f"    Function::{fns[i]['name']},\n" for i in by_name)
    return (HEADER + "#include <algorithm>\n#include <array>\n\n#include \"p3s/mpi/vocabulary.hpp\"\n\n"
            "namespace p3s::mpi {\nnamespace {\n\n"
            "/// Indexed by Function (Other last).\n"
            "constexpr std::array<FunctionInfo, kFunctionCount + 1> kInfo = {{\n" + "".join(rows) + "}};\n\n"
            "/// The spec's functions sorted by name, for lookups by name.\n"
            "constexpr std::array<Function, kFunctionCount> kByName = {\n" + index + "};\n\n"
            "}  // namespace\n\n"
            "const FunctionInfo& info(Function f) noexcept {\n"
            "  const auto i = static_cast<std::size_t>(f);\n"
            "  return kInfo[i < kInfo.size() ? i : kInfo.size() - 1];\n}\n\n"
            "Function function_named(std::string_view name) noexcept {\n"
            "  const auto it = std::lower_bound(kByName.begin(), kByName.end(), name,\n"
            "                                   [](Function f, std::string_view n) { return info(f).name < n; });\n"
            "  return it != kByName.end() && info(*it).name == name ? *it : Function::Other;\n}\n\n"
            "}  // namespace p3s::mpi\n")


def main(argv):
    if len(argv) != 3:
        print("usage: gen_vocabulary.py SPEC OUTDIR", file=sys.stderr)
        return 2
    spec_path, outdir = argv[1], argv[2]
    try:
        fns = load(spec_path)["functions"]
        hpp, cpp = functions_hpp(fns), functions_cpp(fns)
    except (OSError, ValueError, SpecError, KeyError) as e:
        print(f"gen_vocabulary.py: {spec_path}: {e}", file=sys.stderr)
        return 1
    os.makedirs(os.path.join(outdir, "include", "p3s", "mpi"), exist_ok=True)
    write_whole(os.path.join(outdir, "include", "p3s", "mpi", "functions.hpp"), hpp)
    write_whole(os.path.join(outdir, "functions.cpp"), cpp)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
