# SPDX-License-Identifier: BSD-3-Clause
"""An executable trace (ST4NP, share/doc/lt4nc-format.md) written by hand, every size and peer known: what the
replay (tests/mpi/check_replay.py) and the time-independent export (tests/golden/check_tit.py) are checked on."""
import json
import os


def handwritten(n):
    """An ST4NP written by hand, every size and peer known: a ring exchange completed with MPI_Waitany (one call per
    receive) and MPI_Testsome (the sends), then an MPI_Allreduce on pairs of ranks (blocks of 2) and an MPI_Bcast
    from each column's first rank (stride 2), then a blocking MPI_Sendrecv along the ring and an MPI_Alltoall; then a
    halo exchange on an n/2 x 2 grid that is not periodic (Irecv and Isend to each neighbour a rank has, rows of
    256 bytes up and down, columns of 96 bytes left and right, one MPI_Waitall), where boundary ranks skip calls."""
    comms = [{"id": 0, "kind": "world", "param": None, "color": "0", "key": "r", "size": n, "created_by": "MPI_Init"},
             {"id": 1, "kind": "block", "param": 2, "color": "r / 2", "key": "r", "size": 2,
              "created_by": "MPI_Comm_split"},
             {"id": 2, "kind": "strided", "param": 2, "color": "r mod 2", "key": "r", "size": n // 2,
              "created_by": "MPI_Comm_split"}]
    lines = []
    for r in range(n):
        left, right = (r - 1) % n, (r + 1) % n
        p2p = lambda kind, peer, tag, size, **x: dict(kind=kind, peer=peer, tag=tag, bytes=size, comm=0, comm_size=n, **x)
        coll = lambda op, comm, size, block, root=-1: dict(kind="coll", collective=op, root=root, comm=comm,
                                                           comm_size=size, bytes=block * size, bytes_received=block * size,
                                                           block=block)
        call = lambda name, ns, *acts: {"call": name, "burst_work": 0, "burst_ns": ns, "actions": list(acts)}
        ring = [call("MPI_Irecv", 20000, p2p("irecv", left, 1, 64)),
                call("MPI_Irecv", 1000, p2p("irecv", right, 2, 32)),
                call("MPI_Isend", 1000, p2p("send", right, 1, 64)),
                call("MPI_Isend", 1000, p2p("send", left, 2, 32)),
                call("MPI_Waitany", 1000, p2p("recv", left, 1, 64, started=0)),
                call("MPI_Waitany", 1000, p2p("recv", right, 2, 32, started=1)),
                call("MPI_Testsome", 1000, dict(kind="isend_complete", comm=0, comm_size=n, started=2),
                     dict(kind="isend_complete", comm=0, comm_size=n, started=3))]
        colls = [call("MPI_Allreduce", 30000, coll("ALLREDUCE", 1, 2, 16)),
                 call("MPI_Bcast", 1000, coll("BCAST", 2, n // 2, 24, root=r % 2)),
                 call("MPI_Sendrecv", 5000, p2p("send", right, 7, 128), p2p("recv", left, 7, 128)),
                 call("MPI_Alltoall", 1000, coll("ALLTOALL", 0, n, 8))]
        lines.append({"rank": r, "phase": 0, "calls": ring, "tail_work": 0, "tail_ns": 10000})
        lines.append({"rank": r, "phase": 1, "calls": colls})
        lines.append({"rank": r, "phase": 2, "calls": grid_exchange(r, n, p2p, call)})
    header = {"schema_version": 4, "kind": "st4np", "tool": "check_replay.py", "processes": n, "consistency": "checked",
              "inputs": {"application": "handwritten", "model_runs": []}, "work_metric": "cputime_ns",
              "dims_rule": "openmpi", "communicators": comms, "order": [[0, 10], [1, 3], [2, 4]],
              "phases": [{"id": 0, "calls": "MPI_Irecv MPI_Isend MPI_Testsome MPI_Waitany", "weight": 10},
                         {"id": 1, "calls": "MPI_Allreduce MPI_Alltoall MPI_Bcast MPI_Sendrecv", "weight": 3},
                         {"id": 2, "calls": "MPI_Irecv MPI_Isend MPI_Waitall", "weight": 4}],
              "limits": {}, "ranks_file": "ranks.jsonl", "index_file": "ranks.index"}
    return header, lines


def grid_exchange(r, n, p2p, call):
    """Rank r's calls of one halo exchange on the n/2 x 2 grid (row-major, not periodic)."""
    row, col = divmod(r, 2)
    neighbours = [(peer, size) for peer, size, there in ((r - 2, 256, row > 0), (r + 2, 256, row < n // 2 - 1),
                                                         (r - 1, 96, col > 0), (r + 1, 96, col < 1)) if there]
    calls = [call("MPI_Irecv", 2000, p2p("irecv", peer, 3, size)) for peer, size in neighbours]
    calls += [call("MPI_Isend", 1000, p2p("send", peer, 3, size)) for peer, size in neighbours]
    done = [p2p("recv", peer, 3, size, started=k) for k, (peer, size) in enumerate(neighbours)]
    done += [dict(kind="isend_complete", comm=0, comm_size=n, started=len(neighbours) + k)
             for k in range(len(neighbours))]
    return calls + [call("MPI_Waitall", 50000, *done)]


def write_handwritten(directory, n, edit=None):
    """Writes handwritten(n) into `directory` (made), as `p3s predict -o` writes an ST4NP; returns (header, lines).
    `edit`, when given, may change the lines (a list of dicts) before they are written."""
    os.makedirs(directory)
    header, lines = handwritten(n)
    if edit is not None:
        edit(lines)
    offsets, text = [], b""
    for r in range(n):
        offsets.append(len(text))
        text += b"".join((json.dumps(x) + "\n").encode() for x in lines if x["rank"] == r)
    offsets.append(len(text))
    with open(os.path.join(directory, "ranks.jsonl"), "wb") as f:
        f.write(text)
    with open(os.path.join(directory, "ranks.index"), "wb") as f:
        f.write(b"".join(o.to_bytes(8, "little") for o in offsets))
    with open(os.path.join(directory, "lt4nc.json"), "w") as f:
        json.dump(header, f)
    return header, lines
