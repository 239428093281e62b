# SPDX-License-Identifier: BSD-3-Clause
"""The intact inputs both fuzzers damage: the ring's signatures at 4, 8 and 16 ranks, and where their model goes."""
import gzip
import os


def intact_signatures(data, work):
    """Unpacks tests/data/models/ring/np{4,8,16}.json.gz into WORK; their paths."""
    sigs = []
    for n in (4, 8, 16):
        sig = os.path.join(work, f"ring{n}.json")
        with gzip.open(os.path.join(data, "models", "ring", f"np{n}.json.gz"), "rb") as f, open(sig, "wb") as out:
            out.write(f.read())
        sigs.append(sig)
    return sigs


def fresh_model(work):
    """WORK/ring.model, with no model or fit report of an earlier run left there."""
    model = os.path.join(work, "ring.model")
    for f in (model, model + ".report.json"):
        if os.path.exists(f):
            os.remove(f)
    return model
