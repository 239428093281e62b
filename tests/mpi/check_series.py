#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Signatures of one strong-scaling app at several process counts: what the modeler relies on.

    check_series.py APP --p3s BIN --app PATH --work DIR [--np 4 8 16] [--iters T] [launcher options]

Records APP (one of the scaling apps in tests/apps: stencil2d, hypercube, wavefront, master_static, collectives,
growing, swaps2d; or ring, whose messages keep their size) with `p3s record` at every process count, keeping each run under WORK/<app>.np<n> (traces.otf2 and
signature.json, so later pipeline tests can reuse them), analyzes the runs together with `p3s analyze DIR...` (one
phase method for the series, as a user analyzes one), and checks, per run:
  - the run completed and the app printed its summary line;
  - the phases are the expected ones in id order (those of the method that found them, where the methods
    differ), each with the weight given by the app's law in (n, T);
  - the run-length-encoded order, counts stripped, is the app's expected skeleton (the same at every n), and
    its counts add up to the weights;
  - phase occurrences cover every tick (phases of the run's ticks), coverage >= 95 %, no phase is a work variant (split_from); the apps
    have none, but with the CPU-time metric a loaded machine can make a few consecutive iterations one, so
    such a run is recorded again, up to --attempts recordings per process count;
  - every rank appears in each checked phase with no mismatched instance;
  - rank 0's calls in the checked phases: MPI function, messages (kind, peer as world rank, bytes) and
    collectives (operation, root, communicator size, bytes sent and received as Score-P counts them);
  - (a note only, not a failure) each phase's burst attribution, leading or trailing, is the same at every n.
The laws are in APPS below and in each app's header comment.
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import time

import p3s_launch
from p3s_order import order_runs

D = 8  # bytes per double


def fail(step, msg):
    print(f"FAIL [{step}]: {msg}", file=sys.stderr)
    sys.exit(1)


class WorkSplit(Exception):
    """A phase split off by work: with the CPU-time metric, a loaded machine can slow a few consecutive
    iterations enough to make them a work population of their own, so such a run (at n processes) is recorded
    again."""

    def __init__(self, msg, n):
        super().__init__(msg)
        self.n = n


def split_alone(a, where, report):
    """Raises WorkSplit for a run of the series with a work variant, in the series' analysis or alone, when a check
    of `where` fails. A work split in one run makes its iterations differ from the other runs': the series may then
    take coarser phases than the app's (every run's outermost loops, analyze_series.cpp), or keep finer ones that
    no longer correspond, so the check that fails is not always on the run that was split."""
    for n in a.np:
        path = os.path.join(a.work, f"{a.name}.np{n}", "signature.json")
        with open(path) as f:
            series = json.load(f)["phases"]
        alone = os.path.join(a.work, f"{a.name}.np{n}.alone.json")
        r = run([a.p3s, "analyze", "-q", "--force", "-o", alone, os.path.join(a.work, f"{a.name}.np{n}")])
        if r.returncode != 0:
            fail("analyze", f"{a.name} np {n} alone: exit {r.returncode}: {r.stderr.strip()}")
        with open(alone) as f:
            phases = json.load(f)["phases"]
        for how, ps in (("in the series", series), ("alone", phases)):
            for p in ps:
                if "split_from" in p:
                    raise WorkSplit(f"{a.name} np {n}: {how}, phase {p['id']} (weight {p['weight']}) is a work "
                                    f"variant of phase {p['split_from']} ({where} then fails)\n{report}", n)


def dims_create(n):
    """MPI_Dims_create(n, 2): the most square factorisation, larger factor first."""
    px = n
    for f in range(int(math.isqrt(n)), 0, -1):
        if n % f == 0:
            px = n // f
            break
    return px, n // px


def block(total, parts, i):
    return total // parts + (1 if i < total % parts else 0)


def log2(n):
    return n.bit_length() - 1


# Rank 0's expected calls: (MPI function, [action, ...]); an action is
#   ("send" | "recv" | "irecv", peer world rank, bytes)   a message
#   ("isend_complete",)                                   a Wait completing an Isend
#   ("coll", OPERATION, root, comm size, bytes sent, bytes received)
# Collective bytes follow Score-P (share/doc/trace-format.md): a rooted operation's root counts its own block both
# ways, the all-to-all kinds count one block per member each way.
def coll(op, count_bytes, size, root=-1, me_root=False):
    c = count_bytes
    sent, recv = {
        "BCAST": (c * size, c) if me_root else (0, c),
        "SCATTER": (c * size, c) if me_root else (0, c),
        "GATHER": (c, c * size) if me_root else (c, 0),
        "REDUCE": (c, c * size) if me_root else (c, 0),
        "ALLREDUCE": (c * size, c * size),
        "ALLGATHER": (c * size, c * size),
        "ALLTOALL": (c * size, c * size),
    }[op]
    return ("coll", op, root, size, sent, recv)


def stencil2d_rank0(n, t, a):
    big_n = a[1]
    px, py = dims_create(n)
    nx, ny = block(big_n, px, 0), block(big_n, py, 0)
    # Rank 0 is the top-left corner: up and left are MPI_PROC_NULL (calls made, no message); so are down and right
    # along a side of 1 (2 processes: 2 x 1).
    down = [("send", py, ny * D)] if px > 1 else []
    right = [("send", 1, nx * D)] if py > 1 else []
    recv = lambda sends, kind: [(kind, p, b) for _, p, b in sends]
    return [("MPI_Irecv", []), ("MPI_Irecv", recv(down, "irecv")), ("MPI_Irecv", []),
            ("MPI_Irecv", recv(right, "irecv")), ("MPI_Isend", down), ("MPI_Isend", []), ("MPI_Isend", right),
            ("MPI_Isend", []),
            ("MPI_Waitall", recv(down, "recv") + recv(right, "recv") + [("isend_complete",)] * len(down + right)),
            ("MPI_Allreduce", [coll("ALLREDUCE", D, n)])]


def grid2d_rank0(n, t, a):
    big_n, column_major, use_null = a[1], a[2], a[4]
    rows, cols = dims_create(n)
    # Rank 0 is the (0, 0) corner: up and left are off the grid (calls with MPI_PROC_NULL, or none).
    down, right = (1, rows) if column_major else (cols, 1)
    sizes = [block(big_n, cols, 0) * D] * 2 + [block(big_n, rows, 0) * D] * 2
    peers = [None, down, None, right]
    irecv = [("MPI_Irecv", [] if p is None else [("irecv", p, b)]) for p, b in zip(peers, sizes)
             if p is not None or use_null]
    isend = [("MPI_Isend", [] if p is None else [("send", p, b)]) for p, b in zip(peers, sizes)
             if p is not None or use_null]
    wait = [("recv", p, b) for p, b in zip(peers, sizes) if p is not None] + [("isend_complete",)] * 2
    return irecv + isend + [("MPI_Waitall", wait), ("MPI_Allreduce", [coll("ALLREDUCE", D, n)])]


def sendrecv(peer_out, bytes_out, peer_in, bytes_in):
    return ("MPI_Sendrecv", [("send", peer_out, bytes_out), ("recv", peer_in, bytes_in)])


def swaps2d_rank0(n, t, a):
    big_n = a[1]
    rows, cols = dims_create(n)
    # Rank 0 is the (0, 0) corner: toward -1 along either dimension nothing arrives and nothing leaves.
    down = cols if rows > 1 else None
    right = 1 if cols > 1 else None
    across = {0: (down, block(big_n, cols, 0) * D), 1: (right, block(big_n, rows, 0) * D)}

    def swap(d, direction):
        peer, size = across[d]
        if peer is None:
            return []
        if direction < 0:  # from +1: a receive and its wait
            return [("MPI_Irecv", [("irecv", peer, size)]), ("MPI_Wait", [("recv", peer, size)])]
        return [("MPI_Send", [("send", peer, size)])]

    calls = []
    for d, direction in ((0, -1), (0, 1), (1, -1), (1, 1), (1, 1), (1, -1), (0, 1), (0, -1)):
        calls += swap(d, direction)
    return calls + [("MPI_Allreduce", [coll("ALLREDUCE", D, n)])]


def hypercube_rank0(n, t, a):
    m = a[1] // n
    return [sendrecv(1 << k, size, 1 << k, size) for size in (m * D, D, 2 * D) for k in range(log2(n))]


def wavefront_rank0(n, t, a):
    big_n, nz, k = a[1], a[2], a[3]
    px, py = dims_create(n)
    nx, ny = block(big_n, px, 0), block(big_n, py, 0)
    fx, fy = ny * (nz // k) * D, nx * (nz // k) * D  # x faces go to rank +-py, y faces to rank +-1
    # Rank 0 is the (-x, -y) corner: per sweep, what it receives from upstream and sends downstream.
    per_block = [
        [("MPI_Send", [("send", py, fx)]), ("MPI_Send", [("send", 1, fy)])],  # (+,+): sends only
        [("MPI_Recv", [("recv", py, fx)]), ("MPI_Send", [("send", 1, fy)])],  # (-,+)
        [("MPI_Recv", [("recv", 1, fy)]), ("MPI_Send", [("send", py, fx)])],  # (+,-)
        [("MPI_Recv", [("recv", py, fx)]), ("MPI_Recv", [("recv", 1, fy)])],  # (-,-): receives only
    ]
    calls = [c for sweep in per_block for _ in range(k) for c in sweep]
    return calls + [("MPI_Allreduce", [coll("ALLREDUCE", D, n)])]


def master_rank0(n, t, a):
    w = n - 1
    sends = [("MPI_Send", [("send", i, block(a[1], w, i - 1) * D)]) for i in range(1, n)]
    recvs = [("MPI_Recv", [("recv", i, block(a[1], w, i - 1) * D)]) for i in range(1, n)]
    return sends + recvs


def collectives_rank0(n, t, a):
    big_n = a[1]
    px, py = dims_create(n)
    b, pair = big_n // n * D, big_n // n // n * D
    return [("MPI_Bcast", [coll("BCAST", big_n * D, n, 0, True)]),
            ("MPI_Scatter", [coll("SCATTER", b, n, 0, True)]),
            ("MPI_Allgather", [coll("ALLGATHER", b, n)]),
            ("MPI_Alltoall", [coll("ALLTOALL", pair, n)]),
            ("MPI_Reduce", [coll("REDUCE", b, n, n - 1, False)]),
            ("MPI_Gather", [coll("GATHER", b, n, 0, True)]),
            ("MPI_Allreduce", [coll("ALLREDUCE", big_n // px * D, py)]),  # row communicator: py members
            ("MPI_Allreduce", [coll("ALLREDUCE", big_n // py * D, px)]),  # column communicator: px members
            ("MPI_Bcast", [coll("BCAST", big_n // px * D, py, 0, True)])]


def growing_ring(n, t, a):
    b = a[1] // n * D
    return [sendrecv(1 % n, b, (n - 1) % n, b)]


def growing_glue(n, t, a):
    steps = [sendrecv(n >> k, a[1] // (1 << k) * D, n >> k, a[1] // (1 << k) * D) for k in range(1, log2(n) + 1)]
    return steps + [("MPI_Allreduce", [coll("ALLREDUCE", D, n)])]


def pow2(n):
    return n >= 1 and n & (n - 1) == 0


def cg_grid(n):
    """cgrows' 2^floor(k/2) x 2^ceil(k/2) grid of n = 2^k ranks: rows, columns, log2(columns)."""
    k = log2(n)
    return 1 << (k // 2), 1 << ((k + 1) // 2), (k + 1) // 2


def cg_step(partner, send_doubles, recv_doubles):
    return [("MPI_Irecv", [("irecv", partner, recv_doubles * D)]),
            ("MPI_Send", [("send", partner, send_doubles * D)]),
            ("MPI_Wait", [("recv", partner, recv_doubles * D)])]


def cgrows_matvec_rank0(n, t, a):
    # Rank 0 is at row 0, column 0: the halving partners are ranks 2^j, j downwards; its transposed position is
    # itself (an exchange with itself, as the real code makes).
    rows, cols, steps = cg_grid(n)
    calls = []
    for s in range(steps):
        j = steps - 1 - s
        calls += cg_step(1 << j, max(block(a[1], cols, 0) >> s, 1), max(block(a[1], cols, 1 << j) >> s, 1))
    return calls + cg_step(0, block(a[1], cols, 0), block(a[1], cols, 0))


def cgrows_dot_rank0(n, t, a):
    return [c for j in range(cg_grid(n)[2]) for c in cg_step(1 << j, 1, 1)]


def multipart_rank0(n, t, a):
    # Rank 0 is at row 0, column 0 of the q x q grid; its cell c lies at (c, c, c), whose sides are the c-th block
    # of N points over q (the first N % q blocks one point longer), so every face of cell c has b(c)^2 points.
    big_n, q = a[1], math.isqrt(n)
    b = [big_n // q + (1 if c < big_n % q else 0) for c in range(q)]
    at = [(1, 0), (-1, 0), (0, 1), (0, -1), (-1, -1), (1, 1)]  # +x, -x, +y, -y, +z, -z as (row, column) steps
    nbr = [(dr % q) * q + dc % q for dr, dc in at]
    face = sum(x * x for x in b) * 5 * D
    calls = [("MPI_Irecv", [("irecv", p, face)]) for p in nbr] + [("MPI_Isend", [("send", p, face)]) for p in nbr]
    calls.append(("MPI_Waitall", [("recv", p, face) for p in nbr] + [("isend_complete",)] * 6))
    for axis in range(3):
        succ, pred = nbr[2 * axis], nbr[2 * axis + 1]
        for s in range(q):  # forward: receive from the predecessor, wait for the last send, send on
            if s > 0:
                calls += [("MPI_Recv", [("recv", pred, b[s] ** 2 * 10 * D)]), ("MPI_Wait", [("isend_complete",)])]
            if s < q - 1:
                calls.append(("MPI_Isend", [("send", succ, b[s] ** 2 * 10 * D)]))
        for s in range(q - 1, -1, -1):  # backward
            if s < q - 1:
                calls += [("MPI_Recv", [("recv", succ, b[s] ** 2 * 5 * D)]), ("MPI_Wait", [("isend_complete",)])]
            if s > 0:
                calls.append(("MPI_Isend", [("send", pred, b[s] ** 2 * 5 * D)]))
    return calls


def mg3d_rank0(n, t, a):
    # Rank 0 is at (0, 0, 0) of the app's px x py x pz grid (sides doubled x, y, z in turn) and holds data at every
    # level; the V-cycle visits the levels 1 .. L-1, L-1, L-2 .. 0, 0, then the residual norm's Allreduce.
    ng, levels = a[1], a[2]
    p = [1, 1, 1]
    for d in range(log2(n)):
        p[d % 3] *= 2
    calls = []
    for level in list(range(1, levels)) + [levels - 1] + list(range(levels - 2, -1, -1)) + [0]:
        g = ng >> level
        stride = [1 if g >= p[x] else p[x] // g for x in range(3)]
        side = [g // p[x] if g >= p[x] else 1 for x in range(3)]
        for axis in range(3):
            if p[axis] // stride[axis] < 2:
                continue  # one rank holds the data along this axis: no exchange
            face = side[(axis + 1) % 3] * side[(axis + 2) % 3] * D
            c_minus, c_plus = [0, 0, 0], [0, 0, 0]
            c_minus[axis], c_plus[axis] = p[axis] - stride[axis], stride[axis] % p[axis]
            minus = c_minus[0] + p[0] * (c_minus[1] + p[1] * c_minus[2])
            plus = c_plus[0] + p[0] * (c_plus[1] + p[1] * c_plus[2])
            calls += [("MPI_Irecv", [("irecv", minus, face)]), ("MPI_Irecv", [("irecv", plus, face)]),
                      ("MPI_Send", [("send", plus, face)]), ("MPI_Send", [("send", minus, face)]),
                      ("MPI_Wait", [("recv", minus, face)]), ("MPI_Wait", [("recv", plus, face)])]
    return calls + [("MPI_Allreduce", [coll("ALLREDUCE", D, n)])]


def box_cut(n, length):
    """boxgrid's process grid: of the factorisations of n, the least surface per rank, the first in order."""
    best = None
    for px in range(1, n + 1):
        if n % px:
            continue
        for py in range(1, n // px + 1):
            if (n // px) % py:
                continue
            pz = n // px // py
            a, b, c = length[0] / px, length[1] / py, length[2] / pz
            surface = a * b + b * c + a * c
            if best is None or surface < best[0] * (1 - 1e-12):
                best = (surface, (px, py, pz))
    return best[1]


def boxgrid_rank0(n, t, a):
    # Rank 0 is at (0, 0, 0): per axis of side > 1, receives from the - and + neighbours, sends to the + and -.
    length = a[1:4]
    p = box_cut(n, length)
    side = [block(length[x], p[x], 0) for x in range(3)]
    calls = []
    for axis in range(3):
        if p[axis] < 2:
            continue
        face = side[(axis + 1) % 3] * side[(axis + 2) % 3] * D
        step = [1, p[0], p[0] * p[1]][axis]
        minus, plus = (p[axis] - 1) * step, step
        calls += [("MPI_Irecv", [("irecv", minus, face)]), ("MPI_Irecv", [("irecv", plus, face)]),
                  ("MPI_Isend", [("send", plus, face)]), ("MPI_Isend", [("send", minus, face)]),
                  ("MPI_Waitall", [("recv", minus, face), ("recv", plus, face), ("isend_complete",),
                                   ("isend_complete",)])]
    return calls + [("MPI_Allreduce", [coll("ALLREDUCE", D, n)])]


# Per app: default arguments (argument 0 is the iteration count T), which n it accepts, the expected phases in id
# order as (what the phase is, weight law, rank 0's calls or None when not checked), and the expected order
# skeleton (phase ids of the run-length-encoded order).
APPS = {
    "ring": dict(
        args=[20, 16], accepts=lambda n: n >= 2, summary="ring: iterations",
        phases=[("init", lambda n, t: 1, None),
                ("Irecv/Isend both ways around a periodic ring, Waitall, Allreduce", lambda n, t: t, None),
                ("finalize", lambda n, t: 1, None)],
        order=lambda n, t: [0, 1, 2]),
    "stencil2d": dict(
        args=[20, 1920], accepts=lambda n: n >= 2,
        phases=[("set-up", lambda n, t: 1, None),
                ("halo exchange + Jacobi + Allreduce", lambda n, t: t, stencil2d_rank0),
                ("final reduce", lambda n, t: 1, None)],
        order=lambda n, t: [0, 1, 2]),
    "hypercube": dict(
        args=[20, 491520], accepts=lambda n: pow2(n) and n >= 4,
        phases=[("set-up", lambda n, t: 1, None),
                ("SpMV, butterfly, dot product, fused dot products (3 log2 n exchanges)", lambda n, t: t,
                 hypercube_rank0),
                ("finalize", lambda n, t: 1, None)],
        order=lambda n, t: [0, 1, 2]),
    # Arguments: T, N, column-major, MPI_Cart_create, MPI_PROC_NULL at the boundary (--app-args sets the last three).
    "grid2d": dict(
        args=[20, 1920, 0, 0, 0], accepts=lambda n: min(dims_create(n)) >= 2,
        phases=[("init and barrier", lambda n, t: 1, None),
                ("halo exchange on the app's own grid + Allreduce", lambda n, t: t, grid2d_rank0),
                ("finalize", lambda n, t: 1, None)],
        order=lambda n, t: [0, 1, 2]),
    # Arguments: T, N.
    "swaps2d": dict(
        args=[20, 1920], accepts=lambda n: n >= 2,
        phases=[("init and barrier", lambda n, t: 1, None),
                ("ghost swaps forward and back on a non-periodic grid + Allreduce", lambda n, t: t, swaps2d_rank0),
                ("finalize", lambda n, t: 1, None)],
        order=lambda n, t: [0, 1, 2]),
    # Arguments: T, NX, NZ, the residual interval, sleep mode (bursts sleep: an oversubscribed machine does not
    # stretch them unevenly). NX = 120 divides evenly on the grids of 4-64 and 6-48 processes.
    "luwave": dict(
        args=[10, 120, 16, 5, 0], accepts=lambda n: min(dims_create(n)) >= 2,
        phases=[("barrier", lambda n, t: 1, None),
                ("5 iterations: lower and upper sweeps, face exchange, one residual Allreduce",
                 lambda n, t: t // 5, None),
                ("final reduce", lambda n, t: 1, None)],
        order=lambda n, t: [0, 1, 2]),
    # Arguments: T, NA, sleep mode. Per outer iteration 3 CG steps, each a phase instance (matrix-vector product,
    # reduce-scatter by recursive halving along the row, transpose exchange) followed by two of the dot-product
    # phase (a recursive doubling along the row), then the residual Allreduce.
    "cgrows": dict(
        args=[15, 14000, 0], accepts=lambda n: pow2(n) and n >= 4,
        phases=[("init and barrier", lambda n, t: 1, None),
                ("matvec, halving along the row (ceil(log2 n / 2) steps), transpose", lambda n, t: 3 * t,
                 cgrows_matvec_rank0),
                ("dot product: recursive doubling along the row", lambda n, t: 6 * t, cgrows_dot_rank0),
                ("residual Allreduce", lambda n, t: t, lambda n, t, a: [("MPI_Allreduce", [coll("ALLREDUCE", D, n)])]),
                ("final reduce", lambda n, t: 1, None)],
        order=lambda n, t: [0] + ([1, 2] * 3 + [3]) * t + [4]),
    # Arguments: T, N, sleep mode. n = q^2; N = 60 divides evenly for q = 2 .. 6. The iteration's sweeps pipeline
    # through q cells (q - 1 messages each way per axis): one stage per sweep at q = 2, so that the series takes the
    # outermost loop's iteration as its phase at every n.
    "multipart": dict(
        args=[20, 60, 0], accepts=lambda n: math.isqrt(n) ** 2 == n and n >= 4,
        phases=[("init and barrier", lambda n, t: 1, None),
                ("face exchange, then x, y and z sweeps through the q cells", lambda n, t: t, multipart_rank0),
                ("final Allreduce", lambda n, t: 1, None)],
        order=lambda n, t: [0, 1, 2]),
    # Arguments: T, NG, levels, sleep mode. A V-cycle on an NG^3 periodic grid over the app's own 3-D process grid;
    # with NG = 64 and 6 levels the coarsest grid has 2^3 points: from 16 ranks on, only every other rank along a
    # side of 4 holds data there, exchanging with the rank 2 away, and the others skip the level.
    "mg3d": dict(
        args=[10, 64, 6, 0], accepts=lambda n: pow2(n) and n >= 4,
        phases=[("init and barrier", lambda n, t: 1, None),
                ("V-cycle: ghost exchanges level by level, residual Allreduce", lambda n, t: t, mg3d_rank0),
                ("finalize", lambda n, t: 1, None)],
        order=lambda n, t: [0, 1, 2]),
    # Arguments: T, NX, NY, NZ, sleep mode. A halo exchange on a 4:2:1 box over the grid the app cuts to the least
    # surface per rank (8 -> 4x2x1, 48 -> 6x4x2, 64 -> 8x4x2), not MPI_Dims_create's.
    "boxgrid": dict(
        args=[20, 192, 96, 48, 0], accepts=lambda n: n >= 2,
        phases=[("init and barrier", lambda n, t: 1, None),
                ("halo exchange along the sides longer than 1, stencil, Allreduce", lambda n, t: t, boxgrid_rank0),
                ("final reduce", lambda n, t: 1, None)],
        order=lambda n, t: [0, 1, 2]),
    "wavefront": dict(
        args=[6, 480, 8, 2], accepts=lambda n: min(dims_create(n)) >= 2,
        phases=[("set-up", lambda n, t: 1, None),
                ("4 sweeps x K blocks + Allreduce", lambda n, t: t, wavefront_rank0),
                ("finalize", lambda n, t: 1, None)],
        order=lambda n, t: [0, 1, 2]),
    "master_static": dict(
        args=[20, 19530], accepts=lambda n: n >= 2,
        phases=[("set-up", lambda n, t: 1, None),
                ("one round: tasks out, results in", lambda n, t: t, master_rank0),
                ("stop broadcast", lambda n, t: 1, None)],
        order=lambda n, t: [0, 1, 2]),
    "collectives": dict(
        args=[20, 16384], accepts=lambda n: min(dims_create(n)) >= 2 and 16384 // n // n >= 1,
        phases=[("init", lambda n, t: 1, None),
                ("the two Comm_split", lambda n, t: 2, None),
                ("9 collectives", lambda n, t: t, collectives_rank0),
                ("final reduce", lambda n, t: 1, None)],
        order=lambda n, t: [0, 1, 2, 3],
        # Each rank's calls do not repeat the Comm_split as a loop that computes: the set-up is one stretch.
        by_rank=dict(phases=[("init and the two Comm_split", lambda n, t: 1, None),
                             ("9 collectives", lambda n, t: t, collectives_rank0),
                             ("final reduce", lambda n, t: 1, None)],
                     order=lambda n, t: [0, 1, 2])),
    # The ring's n - 1 steps are a loop inside the outer iteration whose trip count follows n: the iteration is the
    # phase at every n (weight T), not the steps (weight T (n - 1)).
    "growing": dict(
        args=[10, 61440], accepts=lambda n: pow2(n) and n >= 4,
        phases=[("set-up", lambda n, t: 1, None),
                ("outer iteration: ring allgather (n - 1 steps), recursive halving (log2 n steps), Allreduce",
                 lambda n, t: t, lambda n, t, a: growing_ring(n, t, a) * (n - 1) + growing_glue(n, t, a)),
                ("finalize", lambda n, t: 1, None)],
        order=lambda n, t: [0, 1, 2]),
}


def run(cmd, timeout=600):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        fail("run", f"timed out: {' '.join(cmd)}")


def observed_actions(event):
    out = []
    for act in event["actions"]:
        kind = act["kind"]
        if kind in ("send", "recv", "irecv"):
            out.append((kind, act["peer"], act["bytes"]))
        elif kind == "coll":
            out.append(("coll", act["collective"], act["root"], act["comm_size"], act["bytes"],
                        act["bytes_received"]))
        else:
            out.append((kind,))
    return out


def check_rank0(app, n, pid, phase, expected):
    r0 = next((r for r in phase["ranks"] if r["rank"] == 0), None)
    if r0 is None:
        fail("rank 0", f"{app} np {n}: phase {pid} has no rank 0")
    got = [(e["call"], observed_actions(e)) for e in r0["events"]]
    want = [(call, list(acts)) for call, acts in expected]  # JSON bytes are floats: 3840 == 3840.0
    if got != want:
        for i in range(max(len(got), len(want))):
            g = got[i] if i < len(got) else None
            w = want[i] if i < len(want) else None
            if g != w:
                fail("rank 0", f"{app} np {n}: phase {pid}, rank 0's call {i} is {g}, expected {w} "
                               f"({len(got)} calls, {len(want)} expected)")


def record_run(a, spec, n, app_args):
    name = a.name
    trace = os.path.join(a.work, f"{name}.np{n}")
    shutil.rmtree(trace, ignore_errors=True)
    start = time.monotonic()
    r = run([a.p3s, "record", "-o", trace, "--", *p3s_launch.launch(a, n), a.app,
             *[str(x) for x in app_args]])
    rec_s = time.monotonic() - start
    if r.returncode != 0:
        fail("record", f"{name} np {n}: exit {r.returncode}: {r.stderr.strip()[-800:]}")
    summary = spec.get("summary", f"{name}: n {n} ")
    if not any(line.startswith(summary) for line in r.stdout.splitlines()):
        fail("record", f"{name} np {n}: no summary line from rank 0 in {r.stdout!r}")
    return rec_s


def analyze_series(a, ns):
    """The runs analyzed together (`p3s analyze DIR...`), as a user analyzes a series: one phase method for all."""
    traces = [os.path.join(a.work, f"{a.name}.np{n}") for n in ns]
    r = run([a.p3s, "analyze", *traces])
    if r.returncode != 0:
        fail("analyze", f"{a.name} np {' '.join(map(str, ns))}: exit {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def check_run(a, spec, n, t, app_args, report, rec_s):
    name = a.name
    sig_path = os.path.join(a.work, f"{name}.np{n}", "signature.json")
    with open(sig_path) as f:
        sig = json.load(f)
    where = f"{name} np {n}"
    if sig["processes"] != n or not sig["complete"]:
        fail("run", f"{where}: {sig['processes']} processes, complete={sig['complete']}")
    phases = sig["phases"]
    if sig["phase_method"] == "by-rank":
        spec = {**spec, **spec.get("by_rank", {})}
    expected = spec["phases"]
    for p in phases:
        if "split_from" in p:
            raise WorkSplit(f"{where}: phase {p['id']} (weight {p['weight']}) is a work variant of phase "
                            f"{p['split_from']} (work metric {sig['work_metric']})\n{report}", n)
    if len(phases) != len(expected):
        split_alone(a, where, report)
        fail("phases", f"{where}: {len(phases)} phases, expected {len(expected)} "
                       f"({', '.join(e[0] for e in expected)})\n{report}")
    for pid, (what, law, _) in enumerate(expected):
        p = phases[pid]
        if p["id"] != pid:
            fail("phases", f"{where}: phases are not listed by id")
        if p["weight"] != law(n, t):
            split_alone(a, where, report)
            fail("weight", f"{where}: phase {pid} ({what}) weighs {p['weight']}, expected {law(n, t)}\n{report}")
    skeleton = [pid for pid, _ in order_runs(sig["order"])]
    if skeleton != spec["order"](n, t):
        split_alone(a, where, report)
        fail("order", f"{where}: order skeleton {skeleton}, expected {spec['order'](n, t)}\n{report}")
    counts = [0] * len(phases)
    for pid, k in order_runs(sig["order"]):
        counts[pid] += k
    if counts != [p["weight"] for p in phases]:
        fail("order", f"{where}: the order's counts {counts} do not add up to the weights")
    if sig["phase_method"] == "global-ticks" and sum(p["weight"] * p["ticks"] for p in phases) != sig["ticks"]:
        fail("ticks", f"{where}: phase occurrences do not cover the {sig['ticks']} ticks")
    if sig["coverage"] < 0.95:
        fail("coverage", f"{where}: coverage {sig['coverage']:.3f} < 0.95\n{report}")
    for pid, (what, _, rank0) in enumerate(expected):
        if rank0 is None:
            continue
        p = phases[pid]
        if sorted(r["rank"] for r in p["ranks"]) != list(range(n)):
            fail("sipt", f"{where}: phase {pid} ({what}) has events for {len(p['ranks'])} of {n} ranks")
        bad = [r["rank"] for r in p["ranks"] if r["mismatched_instances"]]
        if bad:
            fail("sipt", f"{where}: phase {pid} ({what}): ranks {bad[:8]} have instances unlike the representative")
        check_rank0(name, n, pid, p, rank0(n, t, app_args))
    weights = " ".join(f"{p['id']}:{p['weight']}x{p['ticks']}/{p['attribution'][0].upper()}" for p in phases)
    print(f"{name} np {n:3d}: record {rec_s:5.1f} s, {len(phases)} phases (id:weight x ticks/Leading|Trailing: "
          f"{weights}), {len(order_runs(sig['order']))} order runs, coverage {100 * sig['coverage']:.1f} %")
    return skeleton, [p["attribution"] for p in phases]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("name", choices=sorted(APPS), help="which scaling app")
    p3s_launch.add_options(p)
    p.add_argument("--p3s", required=True)
    p.add_argument("--app", required=True, help="the app's binary")
    p.add_argument("--np", type=int, nargs="+", default=[4, 8, 16], help="process counts")
    p.add_argument("--iters", type=int, help="iteration count T (default: the app's)")
    p.add_argument("--size", type=int, help="the problem size (default: the app's)")
    p.add_argument("--app-args", type=int, nargs="+", default=[],
                   help="the app's arguments after T and the problem size (a variant of the app)")
    p.add_argument("--work", required=True)
    p.add_argument("--attempts", type=int, default=3, help="recordings per process count when a work split occurs")
    a = p.parse_args()
    spec = APPS[a.name]
    app_args = list(spec["args"])
    if len(a.app_args) > len(app_args) - 2:
        fail("usage", f"{a.name} takes {len(app_args) - 2} arguments after T and the size")
    app_args[2:2 + len(a.app_args)] = a.app_args
    if a.iters is not None:
        if a.iters < 2:
            fail("usage", "--iters must be >= 2 so that the loop repeats")
        app_args[0] = a.iters
    if a.size is not None:
        app_args[1] = a.size
    for n in a.np:
        if not spec["accepts"](n):
            fail("usage", f"{a.name} is not checked at {n} processes")
    os.makedirs(a.work, exist_ok=True)
    skeletons, attributions = {}, {}
    rec_s = {n: record_run(a, spec, n, app_args) for n in a.np}
    recordings = {n: 1 for n in a.np}
    while True:
        report = analyze_series(a, a.np)
        split = None
        for n in a.np:
            try:
                skeletons[n], attributions[n] = check_run(a, spec, n, app_args[0], app_args, report, rec_s[n])
            except WorkSplit as e:
                split = (e.n, e)
                break
        if split is None:
            break
        # The budget is per process count: noise that splits one count does not use up another's.
        if recordings[split[0]] == a.attempts:
            fail("work split", f"np {split[0]} in all {a.attempts} recordings; the last: {split[1]}")
        recordings[split[0]] += 1
        print(f"note: {str(split[1]).splitlines()[0]}; recording np {split[0]} again", file=sys.stderr)
        rec_s[split[0]] = record_run(a, spec, split[0], app_args)
    if len({tuple(s) for s in skeletons.values()}) != 1:
        fail("same phases", f"order skeletons differ across process counts: {skeletons}")
    # Not a failure (yet): which side of an instance boundary a burst is charged to is decided from wall-clock
    # burst times, and flips from run to run on an oversubscribed machine.
    for pid in range(len(spec["phases"])):
        modes = {n: attributions[n][pid] for n in a.np}
        if len(set(modes.values())) > 1:
            print(f"note: phase {pid}'s burst attribution differs across process counts: {modes}")
    print(f"ok: {a.name} at {', '.join(map(str, a.np))} processes")


if __name__ == "__main__":
    main()
