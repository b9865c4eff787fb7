"""Does `--prior` make the shipped long calibrator calibrated on natural answers? (issue 45.1, 45.4)

The shipped long-form calibrator (condition variant, fitted with 17% contradicted copies) moved to
a deployment share true P by `--prior P` (each map's output shifted in log-odds before mixing),
read on the natural sets' cached verifier pass (benchmarks/cache/natural-<verifier>.json, written
by benchmarks/bench_calibration_natural.py). See README.md beside this file.

    OMP_NUM_THREADS=1 python experiments/2026-11-29-long-calibrator-prior/run.py
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
CACHE = ROOT / "benchmarks" / "cache" / "natural-verifier:franq-verifier-minilm-v7:relevant:slots.json"
SHIPPED = ROOT / "franq" / "data" / "calibrator-long-embedded-SmolLM2-135M-Instruct.Q4-1-verifier.json"
SETS = {"expertqa-test": "ExpertQA rand_test (natural)", "expertqa-test-contra": "its contradicted copies (all false)",
        "wice-heldout": "WiCE held out (support label)"}
PRIORS = (None, 0.85, 0.90, 0.93, 0.948)


def main() -> int:
    from calibration.metrics import brier_score, expected_calibration_error
    from franq.calibrate import load_calibrator
    from franq.evaluation.common import auroc
    from franq.fit import natural as nat

    data = json.loads(CACHE.read_text(encoding="utf-8"))
    cal = load_calibrator(SHIPPED)
    lines = ["| --prior | set | claims | share true | mean P(true) | ECE | Brier | AUROC | read false (< .5) |",
             "|---|---|---|---|---|---|---|---|---|"]
    result = {"fitted share true": round(cal.base_rate, 4), "rows": []}
    for prior in PRIORS:
        cal.prior = prior
        for key, name in SETS.items():
            s = data[key]
            y = np.asarray(s["is_true"], dtype=float)
            q = cal.predict(nat.inputs(s))
            row = {"prior": prior, "set": name, "claims": len(y), "share_true": round(float(y.mean()), 4),
                   "mean": round(float(q.mean()), 4), "ece": round(expected_calibration_error(q, y), 4),
                   "brier": round(brier_score(q, y), 4),
                   "auroc": round(float(auroc(q, y)), 4) if 0 < y.mean() < 1 else None,
                   "read_false": round(float(np.mean(q < 0.5)), 4)}
            result["rows"].append(row)
            lines.append(f"| {'none' if prior is None else prior} | {name} | {len(y)} | {row['share_true']:.3f} | "
                         f"{row['mean']:.3f} | {row['ece']:.3f} | {row['brier']:.3f} | "
                         f"{'-' if row['auroc'] is None else format(row['auroc'], '.3f')} | {row['read_false']:.3f} |")
    (HERE / "result.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
