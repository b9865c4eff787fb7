"""Held-out checks of the shipped three-condition calibrators (issue 25's targets), from the
committed generations and the shipped verifier (no causal-LM pass):

long    ExpertQA rand_test (217 answers, never fitted on): AUROC of P(true) for the truth
        labels, calibrated vs the raw three-condition mix vs the binary raw mix; the floors
        (lowest values) of the calibrator's maps.
short   nq-open test questions with the gold passage in the list (clean) and with it
        replaced (corrupted): the same AUROCs, and how many wrong answers the verifier finds
        contradicted by the passages get P(true) < 0.5.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from franq.evaluation.metrics import auroc


def _auc(p, y) -> str:
    y = np.asarray(y, dtype=int)
    return f"{auroc(np.asarray(p, dtype=float), y):.3f}" if 0 < y.sum() < len(y) else "n/a"


def map_floors(cal) -> dict[str, float]:
    """The lowest value each fitted UQ map can return (its first isotonic level)."""
    out = {}
    for key, attr in (("T_s", "uq_supported_"), ("T_c", "uq_contradicted_"), ("T_n", "uq_not_mentioned_")):
        m = getattr(cal, attr, None)
        if m is not None:
            out[key] = float(np.min(m.y_thresholds_))
    return out


def evaluate_long(datasets: Path, path: Path, verifier=None) -> str:
    from calibration.three_condition import ThreeConditionCalibrator
    from franq.fit.calibrator import training_claims
    from franq.fit.shipped_verifier import long_verifier_lines, verifier_backend

    test = [json.loads(x) for x in open(datasets / "expertqa" / "test.jsonl", encoding="utf-8")]
    data = training_claims(long_verifier_lines(datasets, verifier_backend(verifier), test))
    cal = ThreeConditionCalibrator.from_json(path)
    p_s, p_c, p_n, a, b, y = (data.p_faithful, data.p_contradicted, data.p_not_mentioned, data.uq_faith,
                              data.uq_unfaith, data.is_true)
    calibrated = cal.predict(p_s, p_c, p_n, a, b)
    raw3 = p_s * a + p_c * a + p_n * b
    raw2 = p_s * a + (1 - p_s) * b
    floors = ", ".join(f"{k} {v:.3f}" for k, v in map_floors(cal).items())
    return "\n".join([
        f"ExpertQA rand_test, {len(y)} claims labelled is_true ({int((1 - y).sum())} false); {path.name}",
        "", "| P(true) | AUROC |", "|---|---|",
        f"| calibrated (three conditions) | {_auc(calibrated, y)} |",
        f"| raw three-condition mix | {_auc(raw3, y)} |", f"| raw binary mix (P_faithful = P_s) | {_auc(raw2, y)} |",
        f"| P_s alone | {_auc(p_s, y)} |", f"| 1 - P_c alone | {_auc(1 - p_c, y)} |",
        "", f"Map floors (lowest calibrated value): {floors}.", ""])


def evaluate_short(datasets: Path, path: Path, verifier=None, *, n: int = 200) -> str:
    from calibration.three_condition import ThreeConditionCalibrator
    from franq.fit.shipped_verifier import short_verifier_results, verifier_backend

    cal = ThreeConditionCalibrator.from_json(path)
    _, rows = short_verifier_results(datasets, verifier_backend(verifier), n, split="test")
    lines = ["| passages | answers | wrong | AUROC calibrated | AUROC raw 3-cond. | wrong answers contradicted "
             "(P_c largest) | of those, P(true) < 0.5 | right answers with P(true) >= 0.5 |",
             "|---|---|---|---|---|---|---|---|"]
    for variant in ("clean", "corrupted"):
        sub = [(s.claims[0], y) for v, s, y in rows if v == variant and s.claims and s.claims[0].status == "scored"]
        if not sub:
            continue
        c = [x for x, _ in sub]
        y = np.array([t for _, t in sub], dtype=int)
        p_s, p_c, p_n = (np.array([getattr(x, k) for x in c]) for k in ("p_supported", "p_contradicted",
                                                                          "p_not_mentioned"))
        a, b = np.array([x.uq_faith for x in c]), np.array([x.uq_unfaith for x in c])
        calibrated = cal.predict(p_s, p_c, p_n, a, b)
        raw3 = p_s * a + p_c * a + p_n * b
        contradicted = (y == 0) & (p_c > np.maximum(p_s, p_n))
        lines.append(f"| {variant} | {len(y)} | {int((y == 0).sum())} | {_auc(calibrated, y)} | {_auc(raw3, y)} | "
                     f"{int(contradicted.sum())} | {int((calibrated[contradicted] < 0.5).sum())} | "
                     f"{int((calibrated[y == 1] >= 0.5).sum())} of {int(y.sum())} |")
    floors = ", ".join(f"{k} {v:.3f}" for k, v in map_floors(cal).items())
    return "\n".join([f"nq-open test, first {n} questions, attempted greedy answers of the embedded model; "
                      f"{path.name}", "", *lines, "", f"Map floors (lowest calibrated value): {floors}.", ""])
