# SPDX-License-Identifier: BSD-3-Clause
"""Fortran (mpif.h / use mpi) templates.

Open MPI's Fortran bindings call PMPI_* directly, so a C wrapper alone never sees a Fortran call. For each
spec entry this emits one translator that takes MPI_Fint* arguments, converts handles with the f2c/c2f
functions, maps the Fortran sentinels (MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS(ES)_IGNORE) and calls *our* C
wrapper, so events are recorded in exactly one place. Four exported aliases cover the usual manglings.
Conversions are chosen by C type first and role second.
"""

PROLOGUE = """// The Fortran entry points of libp3s-interpose: translators to the C wrappers, four manglings each.
#include <mpi.h>

#include "fortran_support.hpp"

namespace pf = p3s::interpose::fortran;

static_assert(sizeof(MPI_Fint) == sizeof(int), "p3s passes Fortran INTEGER arrays to C as int arrays");

"""
EPILOGUE = ""

HANDLE_F2C = {"MPI_Datatype": "PMPI_Type_f2c", "MPI_Comm": "PMPI_Comm_f2c", "MPI_Op": "PMPI_Op_f2c",
              "MPI_Group": "PMPI_Group_f2c", "MPI_Info": "PMPI_Info_f2c"}


def _role(fn, role):
    for _, name, _, r in fn["params"]:
        if r == role:
            return name
    return None


def _param(fn, ctype, name, direction, role):
    """Returns (fortran parameter declaration or None, pre-call code, C argument, post-call code)."""
    n = _role(fn, "n")
    if ctype in ("void*", "const void*"):
        return f"void* {name}", "", f"pf::buffer({name})", ""
    if ctype == "char***" or (fn["kind"] == "init" and ctype == "int*"
                              and role not in ("provided",)):
        return None, "", "nullptr", ""  # MPI_INIT has no argc/argv in Fortran
    decl = f"MPI_Fint* {name}"
    local = f"p3s_{name}"
    if ctype == "int":
        return decl, "", f"*{name}", ""
    if ctype == "const int*":
        return decl, "", f"pf::int_array({name})", ""
    if ctype == "int*":
        if role == "indices":
            outcount = f"p3s_{_role(fn, 'outcount')}"
            return decl, "", f"pf::int_array({name})", f"  pf::to_fortran_indices({name}, {outcount});\n"
        pre = f"  int {local} = 0;\n"
        if role == "flag":
            post = f"  *{name} = pf::logical({local});\n"
        elif role == "index":
            post = f"  *{name} = pf::to_fortran_index({local});\n"
        elif role in ("provided", "outcount"):
            post = f"  *{name} = {local};\n"
        else:
            raise ValueError(f"{fn['name']}: no Fortran conversion for int* role '{role}'")
        return decl, pre, f"&{local}", post
    if ctype in HANDLE_F2C:
        return decl, "", f"{HANDLE_F2C[ctype]}(*{name})", ""
    if ctype == "MPI_Comm*":
        init = "MPI_COMM_NULL" if direction == "out" else f"PMPI_Comm_f2c(*{name})"
        return (decl, f"  MPI_Comm {local} = {init};\n", f"&{local}",
                f"  *{name} = PMPI_Comm_c2f({local});\n")
    if ctype == "MPI_Request*" and role == "req":
        init = "MPI_REQUEST_NULL" if direction == "out" else f"PMPI_Request_f2c(*{name})"
        post = "" if direction == "in" else f"  *{name} = PMPI_Request_c2f({local});\n"
        return decl, f"  MPI_Request {local} = {init};\n", f"&{local}", post
    if ctype == "MPI_Request*" and role == "reqs":
        return (decl, f"  pf::Requests {local}({name}, *{n});\n", f"{local}.data()",
                f"  {local}.write_back();\n")
    if ctype == "MPI_Status*" and role == "status":
        return decl, f"  pf::Status {local}({name});\n", f"{local}.c()", f"  {local}.write_back();\n"
    if ctype == "MPI_Status*" and role == "statuses":
        outcount = _role(fn, "outcount")
        count = f"p3s_{outcount}" if outcount else f"*{n}"
        return (decl, f"  pf::Statuses {local}({name}, *{n});\n", f"{local}.c()",
                f"  {local}.write_back({count});\n")
    raise ValueError(f"{fn['name']}: no Fortran conversion for parameter '{name}' of type '{ctype}'")


def render(fn):
    name = fn["name"]
    decls, pres, args, posts = [], [], [], []
    for ctype, pname, direction, role in fn["params"]:
        decl, pre, arg, post = _param(fn, ctype, pname, direction, role)
        if decl:
            decls.append(decl)
        pres.append(pre)
        args.append(arg)
        posts.append(post)
    decls.append("MPI_Fint* ierr")
    decl = ", ".join(decls)
    translator = f"p3s_f_{name}"
    out = (f"extern \"C\" [[gnu::visibility(\"default\")]] void {translator}({decl}) {{\n"
           + "".join(pres)
           + f"  *ierr = {name}({', '.join(args)});\n"
           + "".join(posts)
           + "}\n")
    lower = name.lower()
    for alias in (name.upper(), lower, lower + "_", lower + "__"):
        out += (f"extern \"C\" [[gnu::visibility(\"default\")]] void {alias}({decl})\n"
                f"    __attribute__((alias(\"{translator}\")));\n")
    return out + "\n"
