"""Near-relevant support (see README.md): v7's cached window probabilities aggregated by the
most supporting window among those within ``delta`` of the lowest P_not_mentioned.

    OMP_NUM_THREADS=1 python experiments/2026-11-29-near-relevant-support/run.py --cache CACHE

CACHE: the window cache ../2026-11-29-combiner-contrast-dev/run.py fills (v7 on every set).
"""
from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "experiments" / "2026-11-29-verifier-two-experts"))
DELTAS = (0.0, 0.02, 0.05, 0.1, 0.2, 0.3)


def near_relevant(p: np.ndarray, delta: float) -> np.ndarray:
    if not len(p):
        return np.array([0.0, 0.0, 1.0])
    near = np.flatnonzero(p[:, 2] <= p[:, 2].min() + delta)
    return p[near[np.argmax(p[near, 0])]]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", required=True)
    ap.add_argument("--out", default=str(HERE / "result.json"))
    args = ap.parse_args(argv)
    from bench_verifier_heldout import USER_SETS, _binary, _userdev, userdev_items
    from fit_slot_combiner import NATURAL_SETS, set_score
    from run import sets, windows_of

    from franq.verifier import Verifier, shipped_verifier_dir

    v7 = Verifier(shipped_verifier_dir())
    data = {k: v for k, v in sets().items() if k != "R userdev"}
    for s, path in USER_SETS.items():
        items, labels, kinds = userdev_items(path)
        data["R " + s] = (items, np.array(labels), np.array(kinds))
    result = {}
    for delta in DELTAS:
        res, fit_scores = {}, []
        for n, (items, y, kinds) in data.items():
            pw, off = windows_of(v7, n, items, Path(args.cache))  # read from the cache, as run there
            p3 = np.array([near_relevant(pw[a:b], delta) for a, b in itertools.pairwise(off)])
            if not n.startswith("R "):
                fit_scores.append(set_score(p3, y, n in NATURAL_SETS))
            elif n[2:] in USER_SETS:
                res[n[2:]] = _userdev(p3, list(y), list(kinds))
            else:
                res[n[2:]] = _binary(p3, y)
        res["fit_mean"] = round(float(np.mean(fit_scores)), 4)
        res["fit_sets"] = [round(float(s), 4) for s in fit_scores]
        result[str(delta)] = res
        print(delta, json.dumps(res), flush=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
