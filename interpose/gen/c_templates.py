# SPDX-License-Identifier: BSD-3-Clause
"""C wrapper templates, selected by the spec's `kind` and filled from parameter roles.

Every wrapper has the same four steps:
  1. reentrancy guard: `Scope` is inactive when nested or not recording, and the call goes straight to PMPI;
  2. timestamps (taken by Scope and done()) around the PMPI call;
  3. the roles are handed to a recorder function (recorder.hpp), where every MPI corner case lives;
  4. the PMPI result is returned unchanged.
"""

PROLOGUE = """// The C entry points of libp3s-interpose: one wrapper per function of spec/mpi.json.
#include <mpi.h>

#include "recorder.hpp"
#include "regions.hpp"

using p3s::interpose::Region;

"""

# Order of the CollArgs members (designated initialisers must follow declaration order).
COLL_FIELDS = ["sbuf", "scount", "sdtype", "scounts", "rbuf", "rcount", "rdtype", "rcounts", "root", "comm"]
# Roles shared by both directions of a rooted or symmetric collective.
COLL_ALIASES = {"count": ["scount", "rcount"], "dtype": ["sdtype", "rdtype"]}


def _decl(fn):
    return ", ".join(f"{t} {n}" for t, n, _, _ in fn["params"])


def _role(fn, role):
    for _, name, _, r in fn["params"]:
        if r == role:
            return name
    return None


def _call(fn, rename=None):
    rename = rename or {}
    names = ", ".join(rename.get(n, n) for _, n, _, _ in fn["params"])
    return f"P{fn['name']}({names})"


def _p2p(fn):
    return ("p3s::interpose::P2P{.peer = %s, .tag = %s, .comm = %s, .count = %s, .dtype = %s}"
            % (_role(fn, "peer"), _role(fn, "tag"), _role(fn, "comm"), _role(fn, "count"), _role(fn, "dtype")))


def _coll_args(fn):
    fields = {}
    for _, name, _, role in fn["params"]:
        for field in COLL_ALIASES.get(role, [role]):
            if field in COLL_FIELDS:
                fields[field] = name
    inits = ", ".join(f".{f} = {fields[f]}" for f in COLL_FIELDS if f in fields)
    return "p3s::interpose::CollArgs{%s}" % inits


def _status_subst(fn):
    """MPI_STATUS(ES)_IGNORE is replaced by local storage, so the actual source, tag and size are known."""
    pre, rename = "", {}
    st = _role(fn, "status")
    if st:
        pre += ("  MPI_Status p3s_status_local;\n"
                f"  MPI_Status* const p3s_st = ({st} == MPI_STATUS_IGNORE) ? &p3s_status_local : {st};\n")
        rename[st] = "p3s_st"
    sts = _role(fn, "statuses")
    if sts:
        pre += (f"  MPI_Status* const p3s_sts =\n      ({sts} == MPI_STATUSES_IGNORE) ? "
                f"p3s::interpose::scratch_statuses({_role(fn, 'n')}) : {sts};\n")
        rename[sts] = "p3s_sts"
    return pre, rename


def _completion(fn):
    """Pre-call copies of the request handles (PMPI resets completed ones) and the per-kind completion call."""
    req, reqs, n = _role(fn, "req"), _role(fn, "reqs"), _role(fn, "n")
    flag, index, outcount = _role(fn, "flag"), _role(fn, "index"), _role(fn, "outcount")
    if req:
        pre = f"  const MPI_Request p3s_before = *{req};\n"
        post = "p3s::interpose::on_completed(p3s_scope, p3s_rc, p3s_before, p3s_st);"
    else:
        pre = f"  const MPI_Request* const p3s_before = p3s::interpose::save_requests({n}, {reqs});\n"
        if index:
            post = f"p3s::interpose::on_completed_any(p3s_scope, p3s_rc, p3s_before, *{index}, p3s_st);"
        elif outcount:
            post = (f"p3s::interpose::on_completed_some(p3s_scope, p3s_rc, p3s_before, *{outcount}, "
                    f"{_role(fn, 'indices')}, p3s_sts);")
        else:
            post = f"p3s::interpose::on_completed_all(p3s_scope, p3s_rc, {n}, p3s_before, p3s_sts);"
    if flag:
        post = f"if (*{flag} != 0) {post}"
    return pre, "  " + post + "\n"


def _record(fn):
    """Returns (code before the PMPI call, argument renames, the recorder call after it)."""
    kind, name = fn["kind"], fn["name"]
    pre, rename = _status_subst(fn)
    scope = "p3s_scope, p3s_rc"
    if kind == "send":
        rec = f"p3s::interpose::on_send({scope}, {_p2p(fn)});"
    elif kind == "isend":
        rec = f"p3s::interpose::on_isend({scope}, {_p2p(fn)}, {_role(fn, 'req')});"
    elif kind == "recv":
        rec = f"p3s::interpose::on_recv({scope}, {_role(fn, 'comm')}, p3s_st);"
    elif kind == "irecv":
        rec = f"p3s::interpose::on_irecv({scope}, {_p2p(fn)}, {_role(fn, 'req')});"
    elif kind == "sendrecv":
        rec = f"p3s::interpose::on_sendrecv({scope}, {_p2p(fn)}, p3s_st);"
    elif kind == "send_init":
        rec = f"p3s::interpose::on_send_init({scope}, {_p2p(fn)}, {_role(fn, 'req')});"
    elif kind == "recv_init":
        rec = f"p3s::interpose::on_recv_init({scope}, {_p2p(fn)}, {_role(fn, 'req')});"
    elif kind == "start":
        if _role(fn, "req"):
            rec = f"p3s::interpose::on_start({scope}, 1, {_role(fn, 'req')});"
        else:
            rec = f"p3s::interpose::on_start({scope}, {_role(fn, 'n')}, {_role(fn, 'reqs')});"
    elif kind == "complete":
        cpre, post = _completion(fn)
        return pre + cpre, rename, post
    elif kind == "cancel":
        rec = f"p3s::interpose::on_cancel({scope}, *{_role(fn, 'req')});"
    elif kind == "request_free":
        pre += f"  const MPI_Request p3s_before = *{_role(fn, 'req')};\n"
        rec = f"p3s::interpose::on_request_free({scope}, p3s_before);"
    elif kind == "coll":
        rec = f"p3s::interpose::on_collective({scope}, OTF2_COLLECTIVE_OP_{fn['coll']}, {_coll_args(fn)});"
    elif kind == "icoll":
        rec = (f"p3s::interpose::on_icollective({scope}, OTF2_COLLECTIVE_OP_{fn['coll']}, {_coll_args(fn)}, "
               f"{_role(fn, 'req')});")
    elif kind == "comm_new":
        sync_new = "true" if fn.get("sync", "parent") == "new" else "false"
        rec = (f"p3s::interpose::on_comm_new({scope}, {_role(fn, 'comm')}, {_role(fn, 'newcomm')}, "
               f"/*sync_on_new=*/{sync_new});")
    elif kind == "comm_free":
        pre += f"  const MPI_Comm p3s_before = *{_role(fn, 'comm_ptr')};\n"
        pre += "  const std::uint32_t p3s_local = p3s::interpose::comm_forget(p3s_before);\n"
        rec = f"p3s::interpose::on_comm_free({scope}, p3s_before, p3s_local);"
    elif kind == "probe":
        rec = None
    else:
        raise ValueError(f"{name}: kind '{kind}' has no C template")
    return pre, rename, ("  " + rec + "\n") if rec else ""


def render(fn):
    name, decl = fn["name"], _decl(fn)
    if fn["kind"] == "init":
        required = _role(fn, "required") or "MPI_THREAD_SINGLE"
        provided = _role(fn, "provided") or "nullptr"
        return (f"extern \"C\" [[gnu::visibility(\"default\")]] int {name}({decl}) {{\n"
                "  const p3s::interpose::InitEnter p3s_enter = p3s::interpose::init_enter();\n"
                f"  const int p3s_rc = {_call(fn)};\n"
                f"  p3s::interpose::on_init(p3s_rc, Region::{name}, p3s_enter, {required}, {provided});\n"
                "  return p3s_rc;\n}\n\n")
    if fn["kind"] in ("finalize", "abort"):
        return (f"extern \"C\" [[gnu::visibility(\"default\")]] int {name}({decl}) {{\n"
                f"  p3s::interpose::on_{fn['kind']}(Region::{name});\n"
                f"  return {_call(fn)};\n}}\n\n")
    pre, rename, post = _record(fn)
    return (f"extern \"C\" [[gnu::visibility(\"default\")]] int {name}({decl}) {{\n"
            f"  p3s::interpose::Scope p3s_scope(Region::{name});\n"
            f"  if (!p3s_scope) return {_call(fn)};\n"
            f"{pre}"
            f"  const int p3s_rc = {_call(fn, rename)};\n"
            "  p3s_scope.done();\n"
            f"{post}"
            "  return p3s_rc;\n}\n\n")
