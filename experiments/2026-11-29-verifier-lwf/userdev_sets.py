"""Verifiers alone on the two hand-written user-style sets (datasets/userdev, datasets/userdev2),
read as benchmarks/bench_verifier_heldout.py reads userdev (the verifier's windows and
aggregation, claims given, no slot check), one JSON line per verifier:

    OMP_NUM_THREADS=1 python experiments/2026-11-29-verifier-lwf/userdev_sets.py DIR ...
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_verifier_heldout import _userdev, _verified, userdev_items

from franq.verifier import Verifier

if __name__ == "__main__":
    import torch

    torch.set_num_threads(1)
    sets = {name: userdev_items(ROOT / "datasets" / name / "answers.jsonl") for name in ("userdev", "userdev2")}
    for model in sys.argv[1:]:
        v = Verifier(model)
        print(json.dumps({"name": v.name, **{name: _userdev(_verified(v, items), labels, kinds)
                                            for name, (items, labels, kinds) in sets.items()}}), flush=True)
