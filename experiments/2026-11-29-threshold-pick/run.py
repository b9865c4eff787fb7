"""How `--target-precision` picks its threshold (issue 45.3): the empirical precision of the
flagged claims (shipped), the precision the calibrated P(true) itself expects of them, or the
two averaged. See README.md.

    OMP_NUM_THREADS=1 python experiments/2026-11-29-threshold-pick/run.py [--repeats 20]

Reads the natural sets' cache of benchmarks/bench_calibration_natural.py (no model runs) and
benchmarks/bench_calibration_labels.py's own draws and checks (curve()), with
calibration.metrics.pick_threshold replaced per variant.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))


def picker(variant: str):
    from calibration.metrics import candidate_thresholds, threshold_row

    def pick(p_true, labels, *, target_precision=None, target_false_alarm=None):
        p = np.asarray(p_true, dtype=float)
        best = None
        for t in candidate_thresholds(p):
            row = threshold_row(p, labels, float(t))
            if not row.n_flagged:
                continue
            expected = float(np.mean(1.0 - p[p < t]))  # what calibrated P(true) says the flagged are
            est = {"empirical": row.precision, "expected": expected,
                   "average": (row.precision + expected) / 2}[variant]
            if est >= target_precision and (best is None or row.caught >= best.caught):
                best = row
        return best
    return pick


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=20)
    args = ap.parse_args()
    import bench_calibration_labels as bench

    import franq.fit.calibrator_cv as cv
    from franq.fit import natural as nat
    from franq.fit.calibrator import fit_three_condition_calibrator
    from franq.fit.generations import datasets_dir

    sets = nat.natural_sets(datasets_dir(), None, compute=False)
    sources = {"ExpertQA natural": (nat.join(sets["expertqa-train"], sets["expertqa-test"]), (0.1, 0.2)),
               "nq-open answers": (nat.join(sets["nq-train"], sets["nq-test"]), (0.9, 0.95))}
    data = {k: (nat.training_claims_of({**s, "answer": [str(a) for a in s["answer"]]}), t) for k, (s, t) in sources.items()}

    def fit(part):
        return fit_three_condition_calibrator(part, variant="soft", min_per_condition=0)[0]

    out = {}
    for variant in ("empirical", "expected", "average"):
        cv.pick_threshold = picker(variant)
        for name, (d, targets) in data.items():
            _, trows = bench.curve(d, fit, (100, 200, 400), args.repeats, targets)
            out.setdefault(name, {})[variant] = trows
            print(variant, name, *trows, sep="\n", flush=True)
    Path(__file__).with_name("result.json").write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
