"""Question: which training sets should the fast mode's long-claim calibrator be fitted on?
The shipped one pools ExpertQA train (truth label, 93% true) with WiCE fit (support label,
35% supported): two labels of different meaning at very different base rates on one curve
of P_supported. Fits, each on the fast mode's uncalibrated P_supported of the TRAIN sets'
split claims (the short-answer calibrator is the shipped one in every row), evaluated on the
dev sets (never fitted on): ECE and Brier of the calibrated P(true) per set.

    OMP_NUM_THREADS=1 PYTHONPATH=. python experiments/2026-11-28-fast-calibrator-sets/run.py
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from calibration.metrics import brier_score, expected_calibration_error
from franq.fit import shipped_fast as fast

ROOT = Path(__file__).resolve().parents[2]
VARIANTS = {"pooled: ExpertQA train + WiCE fit (+ the 75 split nq claims; shipped)": None,
            "ExpertQA train only": ("expertqa-train",),
            "WiCE fit only": ("wice-fit",)}


def main() -> str:
    datasets = ROOT / "datasets"
    fr = fast.fast_franq()
    train = fast.set_arrays(datasets, fast.TRAIN, fr)
    dev = fast.set_arrays(datasets, fast.DEV, fast.calibrated_franq())
    stack = fr.preset("fast").stack
    rows = ["| long-claim calibrator fitted on | " + " | ".join(f"{n} ECE / Brier" for n in dev) + " |",
            "|---|" + "---|" * len(dev)]
    for label, names in VARIANTS.items():
        parts = train if names is None else {n: train[n] for n in names}
        cal = fast.fit_fast(parts, "fast", stack)
        cells = []
        for a in dev.values():
            q = a["q"].copy()
            long = a["preset"] == "fast"
            q[long] = _predict(cal, a["p"][long])
            cells.append(f"{expected_calibration_error(q, a['y']):.3f} / {brier_score(q, a['y']):.3f}")
        rows.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def _predict(cal, p: np.ndarray) -> np.ndarray:
    from calibration.contract import ClaimInputs

    return cal.predict(ClaimInputs(p, np.ones(len(p)), np.zeros(len(p))))


if __name__ == "__main__":
    print(main())
