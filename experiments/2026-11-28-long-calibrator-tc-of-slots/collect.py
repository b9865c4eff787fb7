"""Slot-check features of every claim of the long natural sets, in the cache's order:

    OMP_NUM_THREADS=1 python experiments/2026-11-28-long-calibrator-tc-of-slots/collect.py   # ~2 min

The sets are rebuilt by franq.fit.natural.compute_sets with a stub backend (named as the
cached verifier, returning zeros) that records each claim and its passages; the slot features
(franq.verifier.slots.features) are written to /tmp/tc-slots/features.json."""
import json
import sys
from pathlib import Path

import numpy as np

from franq.faithfulness.base import Conditions
from franq.fit import natural as nat
from franq.verifier import slots

NAME = "verifier:franq-verifier-minilm-v7:relevant:slots"


class Stub:
    name = NAME

    def __init__(self):
        self.items = []

    def predict_conditions(self, pairs, evidence=None):
        got = [([p.text for p in e.passages], e.statement) for e in evidence]
        self.items.extend(got)
        z = np.zeros(len(got))
        return Conditions(z, z, z + 1, tuple(None for _ in got))


from franq.fit.training_claims import _claim_labels, _left_out
from franq.stages.record import ClaimEvidence

KEPT = []
STUB = None
_arrays = nat._long_arrays


def _long_arrays(lines):
    """The cache's arrays, noting (passages, statement) of each claim they keep: from the
    lines' own inputs, or (the ExpertQA samples, whose lines carry no passages) from what
    the stub backend was given, in the scored claims' order."""
    KEPT.clear()
    given = STUB.items
    scored = [c for line in lines for c in line.result.claims if c.status == "scored"]
    k = 0
    for line in lines:
        own = line.example is not None and any(p.text.strip() for p in line.example.passages)
        for c, label in zip(line.result.claims, _claim_labels(line)):
            if own:
                ev = ClaimEvidence.of(c.claim, question=line.result.question, passages=line.example.passages,
                                      answer=line.result.answer)
                item = ([p.text for p in ev.passages], ev.statement)
            elif c.status == "scored":
                assert len(given) == len(scored), (len(given), len(scored))
                item = given[k]
            if c.status == "scored":
                k += 1
            if not _left_out(c, label):
                KEPT.append(item)
    return _arrays(lines)


nat._long_arrays = _long_arrays
out = {}
cache = nat.natural_sets(Path("datasets"), None, compute=False, echo=lambda m: None)
import franq.fit.shipped_verifier as sv
for name in nat.LONG_SETS:
    stub = STUB = Stub()
    sv_backend = sv.verifier_backend
    sv.verifier_backend = lambda v=None, stub=stub: stub
    try:
        arrays = nat.compute_sets(Path("datasets"), None, names=(name,), echo=print)[name]
    finally:
        sv.verifier_backend = sv_backend
    n = len(cache[name]["is_true"])
    assert len(arrays["is_true"]) == n and np.array_equal(np.asarray(arrays["is_true"]), cache[name]["is_true"]), name
    assert arrays["answer"] == list(cache[name]["answer"]), name
    items = list(KEPT)
    feats = [slots.features(c, ps).tolist() if any(p.strip() for p in ps) else [0.0] * len(slots.FEATURES)
             for ps, c in items]
    assert len(feats) == n, (name, len(feats), n)
    out[name] = {"features": feats, "claims": [c for _, c in items]}
    print(name, n, file=sys.stderr)
Path("/tmp/tc-slots").mkdir(exist_ok=True)
Path("/tmp/tc-slots/features.json").write_text(json.dumps({"names": slots.FEATURES, **out}))
