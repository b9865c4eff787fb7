"""Calibration benchmark: fit every FRANQ variant and the XGBoost baselines on scored
ExpertQA train, evaluate on scored ExpertQA test (held apart), write a Markdown table.

    python scripts/bench_calibration.py [--train-scored F] [--test-scored F] [--out benchmarks/results/issue6.md]

Metrics on test claims labelled is_true: ECE (10 equal-width bins, paper appendix D.4),
Brier score, ROC-AUC of P(true) for true claims, and PR-AUC for detecting false claims
(the paper's PR-AUC, positive class = false). Fit time = median of 5 fits; file size =
bytes of the saved calibrator.
"""
from __future__ import annotations

import argparse
import datetime
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from calibration_data import ROOT, scored_split

sys.path.insert(0, str(ROOT))

from calibration.metrics import brier_score, expected_calibration_error  # noqa: E402
from franq.calibrate import fit_franq_calibrator, fit_xgboost, read_scored, training_claims  # noqa: E402

REPEATS = 5


def metrics(p: np.ndarray, y: np.ndarray) -> dict[str, float]:
    from sklearn.metrics import average_precision_score, roc_auc_score

    return {"ece": expected_calibration_error(p, y), "brier": brier_score(p, y),
            "auroc": roc_auc_score(y, p), "prauc_false": average_precision_score(1 - y, 1 - p)}


def timed(fit) -> tuple[object, float]:
    times, out = [], None
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        out = fit()
        times.append(time.perf_counter() - t0)
    return out, statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--train-scored")
    ap.add_argument("--test-scored")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "issue6.md"))
    args = ap.parse_args()
    train = training_claims(read_scored(scored_split("train", args.train_scored)))
    test = training_claims(read_scored(scored_split("test", args.test_scored)))
    if train.stack != test.stack:
        raise SystemExit(f"train and test were scored by different stacks: {train.stack} vs {test.stack}")
    y = test.is_true
    rows = []
    base = float(train.is_true.mean())
    rows.append(("constant P(true) = train share true", metrics(np.full(len(y), base), y), None, None, ""))
    tmp = Path(tempfile.mkdtemp())
    variants = [("none", False), ("calibrated", False), ("condition", False), ("soft", False),
                ("calibrated", True), ("condition", True), ("soft", True)]
    for variant, cf in variants:
        (cal, report), secs = timed(lambda: fit_franq_calibrator(train, variant=variant, calibrate_faithfulness=cf))
        path = tmp / f"{cal.name}.json"
        cal.to_json(path)
        p = cal.predict(test.p_faithful, test.p_true_if_faithful, test.p_true_if_unfaithful)
        note = "; ".join(report["warnings"])
        label = f"FRANQ {cal.name}" if variant != "none" else "FRANQ none (raw mix)"
        rows.append((label, metrics(p, y), secs if variant != "none" else None,
                     path.stat().st_size if variant != "none" else None, note))
    for feats in ("franq", "all"):
        (cal, report), secs = timed(lambda: fit_xgboost(train, features=feats))
        path = tmp / f"xgb-{feats}.json"
        cal.to_json(path)
        p = cal.predict(test.features(cal.feature_names))
        rows.append((f"XGBoost ({feats} features: {', '.join(cal.feature_names)})", metrics(p, y), secs,
                     path.stat().st_size, ""))
    # the component scores alone, for reference (uncalibrated)
    for name, p in (("UQ_faith alone: claim_prob p(c|x,r)", test.p_true_if_faithful),
                    ("UQ_unfaith alone: parametric p(c|x)", test.p_true_if_unfaithful)):
        rows.append((name, metrics(p, y), None, None, ""))

    counts = (f"train: {len(train)} labelled claims ({int(train.is_true.sum())} true, "
              f"{int(len(train) - train.is_true.sum())} false; skipped {train.skipped}); "
              f"test: {len(test)} ({int(y.sum())} true, {int(len(y) - y.sum())} false; skipped {test.skipped})")
    lines = [
        "# Issue 6: calibration of FRANQ on ExpertQA (embedded stack)",
        "",
        f"- Date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC; machine: 2-core CPU, shared "
        f"({platform.processor() or platform.machine()}), Python {platform.python_version()}",
        f"- Command: `PYTHONPATH=$PWD python scripts/bench_calibration.py {' '.join(sys.argv[1:])}`",
        f"- Stack: {train.stack}",
        f"- Data: fitted on scored `datasets/expertqa/train.jsonl`, evaluated on held-apart "
        f"`datasets/expertqa/test.jsonl` (claims labelled is_true). {counts}",
        f"- Fit time: median of {REPEATS} fits on the full training set; size: bytes of the saved calibrator JSON.",
        "",
        "| method | test ECE ↓ | Brier ↓ | ROC-AUC ↑ | PR-AUC (false) ↑ | fit s | file bytes | notes |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label, m, secs, size, note in rows:
        lines.append(f"| {label} | {m['ece']:.4f} | {m['brier']:.4f} | {m['auroc']:.3f} | {m['prauc_false']:.3f} | "
                     f"{'' if secs is None else f'{secs:.3f}'} | {'' if size is None else size} | {note} |")
    lines.append("")
    lines.append(f"Share of false claims in test: {1 - y.mean():.3f} (PR-AUC of a random ranking ≈ that share).")
    text = "\n".join(lines) + "\n"
    print(text)
    out = Path(args.out)
    if out.exists():
        old = out.read_text(encoding="utf-8")
        marker = "\n## Notes"
        text = text + (old[old.index(marker):] if marker in old else "")
    out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
