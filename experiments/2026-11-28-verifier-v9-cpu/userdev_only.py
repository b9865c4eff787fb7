"""The user-style dev set alone, read as benchmarks/bench_verifier_heldout.py reads it (the
verifier's windows and aggregation, claims given), for verifiers whose long-evidence sets are
read elsewhere:

    OMP_NUM_THREADS=1 python experiments/2026-11-28-verifier-v9-cpu/userdev_only.py DIR ...
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from bench_verifier_heldout import _userdev, _verified, userdev_items

from franq.verifier import Verifier

items, labels, kinds = userdev_items()
for model in sys.argv[1:]:
    v = Verifier(model)
    print(json.dumps({"name": v.name, "userdev": _userdev(_verified(v, items), labels, kinds)}), flush=True)
