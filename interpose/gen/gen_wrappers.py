#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Generate the MPI wrappers of libp3s-interpose from interpose/spec/mpi.json.

Usage: gen_wrappers.py SPEC OUTDIR [--fortran]

Writes into OUTDIR:
  regions.hpp / regions.cpp  the region table (one entry per wrapped function, in spec order)
  wrappers_c.cpp             one C wrapper per function, with the exact signature of mpi.h
  wrappers_f.cpp             (--fortran) one translator per function plus its four Fortran manglings

Python >= 3.8 standard library only. The spec is validated before anything is written, and every
file is written whole (to a temporary name, then renamed), so a failed run leaves no half output.
"""
import json
import os
import sys

import c_templates
import fortran_templates

HEADER = "// GENERATED from spec/mpi.json by gen_wrappers.py — do not edit\n"

KINDS = {"init", "finalize", "abort", "send", "isend", "recv", "irecv", "sendrecv", "plain", "send_init",
         "recv_init", "start", "complete", "cancel", "request_free", "coll", "icoll", "comm_new",
         "comm_free"}
REGION_ROLES = {
    "function": "OTF2_REGION_ROLE_FUNCTION",
    "p2p": "OTF2_REGION_ROLE_POINT2POINT",
    "barrier": "OTF2_REGION_ROLE_BARRIER",
    "one2all": "OTF2_REGION_ROLE_COLL_ONE2ALL",
    "all2one": "OTF2_REGION_ROLE_COLL_ALL2ONE",
    "all2all": "OTF2_REGION_ROLE_COLL_ALL2ALL",
    "other": "OTF2_REGION_ROLE_COLL_OTHER",
}
ROLES = {"-", "buf", "count", "dtype", "peer", "tag", "comm", "req", "reqs", "status", "statuses",
         "root", "rbuf", "rcount", "rdtype", "rpeer", "rtag", "sbuf", "scount", "sdtype", "scounts",
         "rcounts", "n", "flag", "index", "outcount", "indices", "newcomm", "comm_ptr", "required",
         "provided", "logical", "logicals"}
DIRS = {"in", "out", "inout"}


class SpecError(Exception):
    pass


def validate(spec):
    seen = set()
    for i, fn in enumerate(spec["functions"]):
        where = f"spec entry {i} ({fn.get('name', '?')})"
        for key in ("name", "ret", "since", "group", "kind", "region", "params"):
            if key not in fn:
                raise SpecError(f"{where}: missing '{key}'")
        if fn["name"] in seen:
            raise SpecError(f"{where}: duplicate function")
        seen.add(fn["name"])
        if fn["kind"] not in KINDS:
            raise SpecError(f"{where}: unknown kind '{fn['kind']}' (known: {', '.join(sorted(KINDS))})")
        if fn["region"] not in REGION_ROLES:
            raise SpecError(f"{where}: unknown region role '{fn['region']}'")
        if fn["kind"] in ("coll", "icoll") and "coll" not in fn:
            raise SpecError(f"{where}: collectives need 'coll' (the OTF2 collective operation)")
        for p in fn["params"]:
            if len(p) != 4:
                raise SpecError(f"{where}: parameter {p} is not [c_type, name, dir, role]")
            if p[2] not in DIRS:
                raise SpecError(f"{where}: parameter {p[1]} has direction '{p[2]}'")
            if p[3] not in ROLES:
                raise SpecError(f"{where}: parameter {p[1]} has unknown role '{p[3]}'")
        roles = [p[3] for p in fn["params"] if p[3] != "-"]
        if len(roles) != len(set(roles)):
            raise SpecError(f"{where}: a role appears twice")


def write_whole(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def guard(fn, body):
    """Wrap code for functions newer than MPI-1 in a version check, so older MPIs still build."""
    if fn["since"] <= 1:
        return body
    return f"#if MPI_VERSION >= {fn['since']}\n{body}#endif\n"


def regions(spec):
    fns = spec["functions"]
    enum = "".join(f"  {fn['name']} = {i},\n" for i, fn in enumerate(fns))
    hpp = (HEADER + "// The regions p3s records: one per wrapped MPI function, ids fixed by spec order.\n"
           "#pragma once\n\n#include <cstdint>\n\n#include <otf2/OTF2_Definitions.h>\n\n"
           "namespace p3s::interpose {\n\n"
           "/// Region id of each wrapped MPI function; also its OTF2 region reference.\n"
           "enum class Region : std::uint16_t {\n" + enum + "};\n\n"
           f"inline constexpr std::uint16_t kRegionCount = {len(fns)};\n\n"
           "/// Name and OTF2 role of a region.\nstruct RegionInfo {\n  const char* name;\n"
           "  OTF2_RegionRole role;\n};\n\n"
           "/// Indexed by Region.\nextern const RegionInfo kRegions[kRegionCount];\n\n"
           "}  // namespace p3s::interpose\n")
    rows = "".join(f"    {{\"{fn['name']}\", {REGION_ROLES[fn['region']]}}},\n" for fn in fns)
    cpp = (HEADER + "#include \"regions.hpp\"\n\nnamespace p3s::interpose {\n\n"
           "const RegionInfo kRegions[kRegionCount] = {\n" + rows + "};\n\n}  // namespace p3s::interpose\n")
    return hpp, cpp


def main(argv):
    if len(argv) < 3:
        print("usage: gen_wrappers.py SPEC OUTDIR [--fortran]", file=sys.stderr)
        return 2
    spec_path, outdir = argv[1], argv[2]
    fortran = "--fortran" in argv[3:]
    try:
        with open(spec_path, encoding="utf-8") as f:
            spec = json.load(f)
        validate(spec)
        hpp, cpp = regions(spec)
        cwrap = HEADER + c_templates.PROLOGUE + "".join(
            guard(fn, c_templates.render(fn)) for fn in spec["functions"])
        fwrap = None
        if fortran:
            fwrap = HEADER + fortran_templates.PROLOGUE + "".join(
                guard(fn, fortran_templates.render(fn)) for fn in spec["functions"]
                if fn.get("fortran", True)) + fortran_templates.EPILOGUE
    except (OSError, ValueError, SpecError, KeyError) as e:
        print(f"gen_wrappers.py: {spec_path}: {e}", file=sys.stderr)
        return 1
    os.makedirs(outdir, exist_ok=True)
    write_whole(os.path.join(outdir, "regions.hpp"), hpp)
    write_whole(os.path.join(outdir, "regions.cpp"), cpp)
    write_whole(os.path.join(outdir, "wrappers_c.cpp"), cwrap)
    if fwrap is not None:
        write_whole(os.path.join(outdir, "wrappers_f.cpp"), fwrap)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
