"""The ``fast`` preset's shipped calibrator (issue 46.3): P(true) = an isotonic map of the
verifier's P_supported, fitted on labelled claims of the committed data, with the calibration
code every calibrator uses (:class:`calibration.franq.FranqCalibrator`, variant ``none`` with
the faithfulness map: the mix with UQ_faith = 1 and UQ_unfaith = 0 is P_supported, so the
calibrated P(true) is the map of P_supported, fitted on the truth labels).

Fitted on (:data:`TRAIN`): the human claims of ``datasets/expertqa/train.jsonl`` labelled
``is_true`` and the attempted greedy answers of the 300 committed nq-open train questions
(``datasets/generations/short-nq-open.*``, clean and corrupted passage lists; label:
normalized match), each scored by the ``fast`` preset (the verifier on each claim and its
passages; no causal LM). Checked (:func:`evaluate_fast`, ``franq fit shipped --evaluate``)
on the natural dev sets, never fitted on: ExpertQA held out (``expertqa_held_out``: rand_test
less the answers also in train), WiCE heldout (its support label: WiCE claims are Wikipedia
sentences, labelled only for support) and the nq-open test questions 1-500.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

TRAIN = ("expertqa-train", "nq-open-train")
"""The labelled sets the shipped fast calibrator is fitted on (:func:`labelled_sets`)."""
DEV = ("expertqa-heldout", "wice-heldout", "nq-open-test")
"""The natural dev sets its ECE is reported on."""
NQ_TRAIN, NQ_TEST = 300, 500


def fast_franq(faithfulness=None):
    """The ``fast`` pipeline with no calibrator (raw P_supported), on the shipped verifier
    or the given backend."""
    from franq.config import FranqConfig
    from franq.pipeline import Franq

    config = FranqConfig.from_dict({"mode": "fast", "calibration": {"calibrator": "none"}})
    return Franq(config, None, faithfulness=faithfulness)


def _records(path: Path, label: str) -> list[tuple[dict, list]]:
    """Each record of a franq JSONL file with per-claim labels (``label``: is_true or is_faithful)."""
    from franq.fit.generations import read_jsonl

    out = []
    for rec in read_jsonl(path):
        claims = rec.get("claims") or []
        out.append(({k: v for k, v in rec.items() if k != "claims"} | {"claims": [c["text"] for c in claims]},
                    [c.get(label) for c in claims]))
    return out


def _nq(datasets: Path, split: str, n: int) -> list[tuple[dict, list]]:
    from franq.evaluation.common import attempted, is_correct
    from franq.fit.generations import short_observed
    from franq.lm.load import EMBEDDED_NAME

    rows, _ = short_observed(datasets, EMBEDDED_NAME, split, n)
    out = []
    for it, rec, _ in rows:
        text = rec["greedy"]["text"]
        if attempted(text):
            out.append(({"question": it.question, "passages": [p.text for p in it.passages], "answer": text},
                        None if is_correct(text, it.answers) is None else bool(is_correct(text, it.answers))))
    return out


def labelled_sets(datasets: Path, names) -> dict[str, list[tuple[dict, object]]]:
    """``name -> [(record, labels)]``: a record's ``labels`` is one label per given claim, or
    (nq-open: the answer is not split into given claims) one label for every claim of the answer."""
    from franq.evaluation.data import expertqa_held_out

    out = {}
    for name in names:
        if name == "expertqa-train":
            out[name] = _records(datasets / "expertqa" / "train.jsonl", "is_true")
        elif name == "expertqa-heldout":
            out[name] = [({k: v for k, v in rec.items() if k != "claims"} | {"claims": [c["text"] for c in rec["claims"]]},
                          [c.get("is_true") for c in rec["claims"]]) for rec in expertqa_held_out(datasets)]
        elif name in ("wice-fit", "wice-heldout"):
            out[name] = _records(datasets / "wice" / f"{name.split('-')[1]}.jsonl", "is_faithful")
        elif name == "nq-open-train":
            out[name] = _nq(datasets, "train", NQ_TRAIN)
        elif name == "nq-open-test":
            out[name] = _nq(datasets, "test", NQ_TEST)
        else:
            raise ValueError(f"unknown labelled set {name!r}")
    return out


def scored_claims(fr, rows) -> tuple[np.ndarray, np.ndarray]:
    """``(P_supported, label)`` of each scored, labelled claim of ``rows`` under ``fr``."""
    results = fr.score_many([rec for rec, _ in rows])
    p, y = [], []
    for (_, labels), res in zip(rows, results):
        for i, c in enumerate(res.claims):
            label = labels[i] if isinstance(labels, list) else labels
            if c.status == "scored" and label is not None:
                p.append(c.p_faithful)
                y.append(float(label))
    return np.array(p, dtype=np.float64), np.array(y, dtype=np.float64)


def fit_fast(p_supported: np.ndarray, y: np.ndarray, stack: dict[str, str], description: str):
    """The fast calibrator: P(true) = isotonic map of P_supported fitted on ``y``."""
    from calibration.contract import ClaimInputs
    from calibration.franq import FranqCalibrator

    n = len(y)
    cal = FranqCalibrator(variant="none", calibrate_faithfulness=True, fitted_for=dict(stack),
                          description=description)
    return cal.fit(ClaimInputs(p_supported, np.ones(n), np.zeros(n)), y, is_faithful=y)


def fast_calibrator(datasets: Path, out: Path, raw=None, *, faithfulness=None) -> Path:
    """Fit and write the fast calibrator of the shipped verifier (or ``faithfulness``)."""
    from franq.fit.shipped_calibrators import calibrator_name

    fr = fast_franq(faithfulness)
    stack = fr.preset("fast").stack
    parts = {name: scored_claims(fr, rows) for name, rows in labelled_sets(datasets, TRAIN).items()}
    p = np.concatenate([v[0] for v in parts.values()])
    y = np.concatenate([v[1] for v in parts.values()])
    shares = ", ".join(f"{name} {len(v[1])} claims ({v[1].mean():.0%} true)" for name, v in parts.items())
    cal = fit_fast(p, y, stack, f"fast preset calibrator: isotonic map of P_supported ({stack['faithfulness']}) "
                                f"to P(true), fitted on {shares}; recipe franq/fit/shipped_fast.py")
    path = out / calibrator_name("fast", stack)
    cal.to_json(path)
    return path


def evaluate_fast(datasets: Path, path: Path, *, faithfulness=None) -> str:
    """ECE, Brier and AUROC of the calibrated fast P(true) on each natural dev set (a Markdown table)."""
    from calibration.contract import ClaimInputs
    from calibration.franq import FranqCalibrator
    from calibration.metrics import brier_score, expected_calibration_error
    from franq.evaluation.common import auroc

    cal = FranqCalibrator.from_json(path)
    fr = fast_franq(faithfulness)
    lines = ["| dev set (label) | claims | share true | ECE raw | ECE calibrated | Brier | AUROC |",
             "|---|---|---|---|---|---|---|"]
    for name, rows in labelled_sets(datasets, DEV).items():
        p, y = scored_claims(fr, rows)
        q = cal.predict(ClaimInputs(p, np.ones(len(p)), np.zeros(len(p))))
        label = "is_faithful" if name.startswith("wice") else "is_true"
        lines.append(f"| {name} ({label}) | {len(y)} | {y.mean():.3f} | {expected_calibration_error(p, y):.3f} | "
                     f"{expected_calibration_error(q, y):.3f} | {brier_score(q, y):.3f} | {auroc(q, y):.3f} |")
    return "\n".join(lines)
