# SPDX-License-Identifier: BSD-3-Clause
"""A phase order as signature.json writes it (share/doc/signature-format.md): runs [phase, count] and loops
{"repeat": k, "runs": [...]}, nested; order_runs() gives the runs one after the other."""


def order_runs(order):
    """The runs of a written phase order, loops expanded: [(phase, count), ...]."""
    out = []
    for item in order:
        if isinstance(item, dict):
            body = order_runs(item["runs"])
            out.extend(body * item["repeat"])
        else:
            out.append((item[0], item[1]))
    return out
