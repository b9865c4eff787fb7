"""Calibration benchmark: fit every FRANQ variant and the XGBoost baselines on scored
ExpertQA train, evaluate on scored ExpertQA test (held apart), write a Markdown table.
Run by ``franq bench calibration``:

    franq bench calibration [--train-scored F] [--test-scored F] [--out benchmarks/results/calibration-cv.md]
    franq bench calibration --cv 5 --cv-scored F   # grouped K-fold on one scored file

Metrics on claims labelled is_true: ECE (10 equal-width bins, paper appendix D.4), Brier
score, ROC-AUC of P(true) for true claims, and PR-AUC for detecting false claims (the
paper's PR-AUC, positive class = false). In --cv mode each method is fitted on K-1 folds
of answers and predicts the held-out fold; metrics are on the pooled held-out
predictions. Fit time = median of 5 fits on the full training data; file size = bytes
of the calibrator fitted on it.

The scored ExpertQA splits (franq score output with the claim labels passed through) come
from :func:`scored_split`: a cached file when given / present; otherwise it scores
``datasets/expertqa/{split}.jsonl`` itself with ``franq score --calibrator none``, so results
are reproducible from a clean checkout (slow on CPU: about an hour per split).
"""
from __future__ import annotations

import datetime
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from calibration.metrics import brier_score, expected_calibration_error
from franq.fit.calibrator import fit_franq_calibrator, fit_xgboost
from franq.fit.training_claims import read_scored, training_claims

REPEATS = 5
VARIANTS = [("none", False), ("calibrated", False), ("condition", False), ("soft", False),
            ("calibrated", True), ("condition", True), ("soft", True)]


def scored_split(root: Path, split: str, path: str | Path | None = None, *, stack: str = "embedded-lexical",
                 extra_args: tuple[str, ...] = ()) -> Path:
    """Path of the scored ``split`` ('train' or 'test'), scoring it first (under
    ``root/benchmarks/cache``) if needed."""
    out = Path(path) if path else Path(root) / "benchmarks" / "cache" / f"expertqa-{split}.{stack}.jsonl"
    if out.is_file() and out.stat().st_size:
        return out
    if path:
        raise SystemExit(f"{out}: no such scored file")
    out.parent.mkdir(parents=True, exist_ok=True)
    src = Path(root) / "datasets" / "expertqa" / f"{split}.jsonl"
    print(f"scoring {src} -> {out} (this takes a while on CPU)", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "franq", "score", str(src), "-o", str(out), "--calibrator", "none",
                    *extra_args], check=True, cwd=root)
    return out


def metrics(p: np.ndarray, y: np.ndarray) -> dict[str, float]:
    from franq.evaluation.metrics import auroc, pr_auc

    return {"ece": expected_calibration_error(p, y), "brier": brier_score(p, y),
            "auroc": auroc(p, y), "prauc_false": pr_auc(p - 1, y)}  # AP of false claims by 1 - p


def methods():
    """(label, fit(train) -> (model, report), predict(model, data) -> p_true)."""
    for variant, cf in VARIANTS:
        label = "FRANQ none (raw mix)" if variant == "none" else f"FRANQ {variant}" + ("+faithfulness" if cf else "")
        yield (label,
               lambda d, v=variant, c=cf: fit_franq_calibrator(d, variant=v, calibrate_faithfulness=c),
               lambda m, d: m.predict(d.inputs()))
    for feats in ("franq", "all"):
        yield (f"XGBoost ({feats} features)", lambda d, f=feats: fit_xgboost(d, features=f),
               lambda m, d: m.predict(d.inputs()))
    yield ("constant P(true) = train share true", lambda d: (float(d.is_true.mean()), {"warnings": []}),
           lambda m, d: np.full(len(d), m))
    yield ("UQ_faith alone: claim_prob p(c|x,r)", lambda d: (None, {"warnings": []}),
           lambda m, d: d.uq_faith)
    yield ("UQ_unfaith alone: parametric p(c|x)", lambda d: (None, {"warnings": []}),
           lambda m, d: d.uq_unfaith)


def size_and_time(fit, train, tmp: Path, label: str):
    times, model = [], None
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        model, report = fit(train)
        times.append(time.perf_counter() - t0)
    if not hasattr(model, "to_json") or label.startswith("FRANQ none"):
        return None, None, report
    path = tmp / f"m{abs(hash(label))}.json"
    model.to_json(path)
    return statistics.median(times), path.stat().st_size, report


def run(root: Path, *, train_scored: str | None = None, test_scored: str | None = None, cv: int = 0,
        cv_scored: str | None = None, out: Path | None = None, command: str = "franq bench calibration") -> str:
    """The table (printed, and written to ``out``, default ``root/benchmarks/results/calibration-cv.md``;
    hand-written sections below the table are kept)."""
    out = Path(out) if out is not None else Path(root) / "benchmarks" / "results" / "calibration-cv.md"
    tmp = Path(tempfile.mkdtemp())
    if cv:
        data = training_claims(read_scored(scored_split(root, "test", cv_scored)))
        rng = np.random.default_rng(0)
        answers = np.unique(data.groups)
        fold_of = dict(zip(rng.permutation(answers), np.arange(len(answers)) % cv))
        folds = np.array([fold_of[g] for g in data.groups])
        splits = [(data.subset(folds != k), data.subset(folds == k)) for k in range(cv)]
        full_train, y = data, np.concatenate([te.is_true for _, te in splits])
        setup = (f"grouped {cv}-fold cross-validation by answer on {len(answers)} answers / {len(data)} "
                 f"labelled claims ({int(data.is_true.sum())} true, {int(len(data) - data.is_true.sum())} false; "
                 f"skipped {data.skipped}); ECE and Brier on the pooled held-out predictions, ROC-AUC and "
                 f"PR-AUC averaged over the held-out folds")
    else:
        train = training_claims(read_scored(scored_split(root, "train", train_scored)))
        test = training_claims(read_scored(scored_split(root, "test", test_scored)))
        if train.stack != test.stack:
            raise SystemExit(f"train and test were scored by different stacks: {train.stack} vs {test.stack}")
        splits, full_train, y = [(train, test)], train, test.is_true
        setup = (f"fitted on scored `datasets/expertqa/train.jsonl` ({len(train)} labelled claims, "
                 f"{int(train.is_true.sum())} true, {int(len(train) - train.is_true.sum())} false; skipped "
                 f"{train.skipped}), evaluated on held-apart `datasets/expertqa/test.jsonl` ({len(test)} claims, "
                 f"{int(y.sum())} true, {int(len(y) - y.sum())} false; skipped {test.skipped})")
    rows = []
    for label, fit, predict in methods():
        preds = [predict(fit(tr)[0], te) for tr, te in splits]
        m = metrics(np.concatenate(preds), y)
        if len(splits) > 1:  # ranking metrics per fold, then averaged: pooling folds biases them
            per_fold = [metrics(p, te.is_true) for p, (_, te) in zip(preds, splits)]
            for k in ("auroc", "prauc_false"):
                m[k] = float(np.mean([f[k] for f in per_fold]))
        secs, size, report = size_and_time(fit, full_train, tmp, label)
        rows.append((label, m, secs, size, "; ".join(report["warnings"])))

    lines = [
        "# Issue 6: calibration of FRANQ on ExpertQA (embedded stack)",
        "",
        f"- Date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC; machine: 2-core CPU, shared "
        f"({platform.machine()}), Python {platform.python_version()}",
        f"- Command: `{command}`",
        f"- Stack: {full_train.stack}",
        f"- Data: {setup}.",
        f"- fit s: median of {REPEATS} fits on all the training data; bytes: size of the saved calibrator "
        f"(FRANQ: our JSON; XGBoost: XGBoost's JSON model, 100 trees of depth 3).",
        "",
        "| method | ECE ↓ | Brier ↓ | ROC-AUC ↑ | PR-AUC (false) ↑ | fit s | bytes | fit warnings |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label, m, secs, size, note in rows:
        lines.append(f"| {label} | {m['ece']:.4f} | {m['brier']:.4f} | {m['auroc']:.3f} | {m['prauc_false']:.3f} | "
                     f"{'' if secs is None else f'{secs:.3f}'} | {'' if size is None else size} | {note} |")
    lines += ["", f"Share of false claims among the evaluated claims: {1 - y.mean():.3f} (the PR-AUC of a "
              f"random ranking)."]
    text = "\n".join(lines) + "\n"
    print(text)
    old = out.read_text(encoding="utf-8") if out.exists() else ""
    if "\n## " in old:  # keep hand-written sections (notes, earlier runs) below the table
        text += old[old.index("\n## "):]
    out.write_text(text, encoding="utf-8")
    return text
