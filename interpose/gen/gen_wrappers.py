#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Generate the MPI wrappers of libp3s-interpose from interpose/spec/mpi.json.

Usage: gen_wrappers.py SPEC OUTDIR [--fortran]

Writes into OUTDIR:
  regions.hpp / regions.cpp  the OTF2 role of each function's region (region ids are vocabulary values)
  wrappers_c.cpp             one C wrapper per function, with the exact signature of mpi.h
  wrappers_f.cpp             (--fortran) one translator per function plus its four Fortran manglings

Python >= 3.8 standard library only. The spec is validated before anything is written, and every
file is written whole (to a temporary name, then renamed), so a failed run leaves no half output.
"""
import os
import sys

import c_templates
import fortran_templates
from spec import REGION_ROLES, SpecError, load, write_whole

HEADER = "// GENERATED from spec/mpi.json by gen_wrappers.py — do not edit\n"


def guard(fn, body):
    """Wrap code for functions newer than MPI-1 in a version check, so older MPIs still build."""
    if fn["since"] <= 1:
        return body
    return f"#if MPI_VERSION >= {fn['since']}\n{body}#endif\n"


def regions(spec):
    """The OTF2 role of every function's region; region ids are the vocabulary's Function values."""
    fns = spec["functions"]
    hpp = (HEADER + "// The regions p3s records: one per wrapped MPI function, its id the function's vocabulary value.\n"
           "#pragma once\n\n#include <cstdint>\n\n#include <otf2/OTF2_Definitions.h>\n\n"
           "#include \"p3s/mpi/vocabulary.hpp\"\n\n"
           "namespace p3s::interpose {\n\n"
           "/// Region id of each wrapped MPI function, also its OTF2 region reference: the function itself.\n"
           "using Region = mpi::Function;\n\n"
           "inline constexpr std::uint16_t kRegionCount = mpi::kFunctionCount;\n\n"
           "/// Indexed by Region: the OTF2 role of its region.\n"
           "extern const OTF2_RegionRole kRegionRoles[kRegionCount];\n\n"
           "}  // namespace p3s::interpose\n")
    rows = "".join(f"    {REGION_ROLES[fn['region']]},  // {fn['name']}\n" for fn in fns)
    cpp = (HEADER + "#include \"regions.hpp\"\n\nnamespace p3s::interpose {\n\n"
           "const OTF2_RegionRole kRegionRoles[kRegionCount] = {\n" + rows + "};\n\n}  // namespace p3s::interpose\n")
    return hpp, cpp


def main(argv):
    if len(argv) < 3:
        print("usage: gen_wrappers.py SPEC OUTDIR [--fortran]", file=sys.stderr)
        return 2
    spec_path, outdir = argv[1], argv[2]
    fortran = "--fortran" in argv[3:]
    try:
        spec = load(spec_path)
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
