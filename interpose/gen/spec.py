# SPDX-License-Identifier: BSD-3-Clause
"""Reading and checking interpose/spec/mpi.json, for every generator that reads it (wrappers, vocabulary)."""
import json

KINDS = {"init", "finalize", "abort", "send", "isend", "recv", "irecv", "sendrecv", "probe", "send_init",
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
SEND_MODES = {"standard", "buffered", "synchronous", "ready"}
COMPLETES = {"one", "all", "any", "some"}
# OTF2_CollectiveOp names a collective may carry (OTF2_COLLECTIVE_OP_<name>).
COLLECTIVES = {"BARRIER", "BCAST", "GATHER", "GATHERV", "SCATTER", "SCATTERV", "ALLGATHER", "ALLGATHERV",
               "ALLTOALL", "ALLTOALLV", "ALLTOALLW", "ALLREDUCE", "REDUCE", "REDUCE_SCATTER", "SCAN", "EXSCAN",
               "REDUCE_SCATTER_BLOCK"}


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
        if fn["kind"] in ("coll", "icoll") and fn.get("coll") not in COLLECTIVES:
            raise SpecError(f"{where}: collectives need 'coll', one of {', '.join(sorted(COLLECTIVES))}")
        if fn["kind"] in ("send", "isend", "send_init") and fn.get("mode") not in SEND_MODES:
            raise SpecError(f"{where}: sends need 'mode', one of {', '.join(sorted(SEND_MODES))}")
        if fn["kind"] == "complete" and (fn.get("completes") not in COMPLETES or
                                         not isinstance(fn.get("test"), bool)):
            raise SpecError(f"{where}: completions need 'completes' ({', '.join(sorted(COMPLETES))}) and "
                            "'test' (true or false)")
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


def load(path):
    """The spec at `path`, checked. Raises OSError, ValueError (bad JSON) or SpecError."""
    with open(path, encoding="utf-8") as f:
        spec = json.load(f)
    validate(spec)
    return spec


def write_whole(path, text):
    """Writes `text` to a temporary name, then renames it: a failed run leaves no half file."""
    import os
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)
