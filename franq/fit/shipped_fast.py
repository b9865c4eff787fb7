"""The ``fast`` preset's shipped calibrator (issue 46.3): P(true) = an isotonic map of the
verifier's P_supported, fitted with the calibration code every calibrator uses
(:class:`calibration.franq.FranqCalibrator`, variant ``none`` with the faithfulness map: the
mix with UQ_faith = 1 and UQ_unfaith = 0 is P_supported, so the calibrated P(true) is the
map of P_supported, fitted on the labels). Rebuilt by ``franq fit shipped
calibrator-fast-verifier.json`` (:mod:`franq.fit.shipped`); ``--evaluate`` adds the table of
:func:`evaluate_fast`.

Fitted on (:data:`TRAIN`, natural claims only, each scored by the ``fast`` preset: the
shipped verifier on each claim's closest passage windows, no causal LM):

- ``expertqa-train``: the human claims of ``datasets/expertqa/train.jsonl`` (ExpertQA
  rand_val + domain_val) with a truth label (``is_true``), their ``[n]`` citation markers
  stripped from the claims and the answer (a marker is a cue of support, not the method);
- ``nq-open-train``: the embedded model's attempted greedy answers to the 300 committed
  nq-open train questions (``datasets/generations/short-nq-open.*``, clean and corrupted
  passage lists; label: normalized match), each a short answer, so one claim read with its
  question;
- ``wice-fit``: the WiCE fit split's claims (``datasets/wice/fit.jsonl``), labelled for
  support only (WiCE claims are Wikipedia sentences checked against their cited pages): the
  label is ``is_faithful``.

Checked on the natural dev sets, never fitted on (:data:`DEV`): ExpertQA held out
(``expertqa_held_out``: rand_test less the answers also in train), WiCE held out (support
label) and the nq-open test questions 1-500. Never the userdev set, never a test split for
fitting.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

NAME = "calibrator-fast-verifier.json"
"""The shipped file (franq/data/)."""
TRAIN = ("expertqa-train", "nq-open-train", "wice-fit")
"""The labelled sets the shipped fast calibrator is fitted on (:func:`labelled_sets`)."""
DEV = ("expertqa-heldout", "wice-heldout", "nq-open-test")
"""The natural dev sets its calibration is reported on."""
NQ_TRAIN, NQ_TEST = 300, 500


def fast_franq(faithfulness=None):
    """The ``fast`` pipeline with no calibrator (raw P_supported), on the shipped verifier
    or the given backend."""
    from franq.config import FranqConfig
    from franq.pipeline import Franq

    config = FranqConfig.from_dict({"mode": "fast", "calibration": {"calibrator": "none"}})
    return Franq(config, None, faithfulness=faithfulness)


def _uncited(text: str) -> str:
    from franq.fit.verifier.data import CITATION_RE

    return CITATION_RE.sub("", text).strip()


def _records(path: Path, label: str, records=None) -> list[tuple[dict, list]]:
    """Each record of a franq JSONL file (or ``records``) with its given claims and their
    labels (``label``: is_true or is_faithful); ``[n]`` citation markers stripped."""
    from franq.fit.generations import read_jsonl

    out = []
    for rec in read_jsonl(path) if records is None else records:
        claims = rec.get("claims") or []
        out.append(({"question": rec["question"], "passages": rec["passages"], "answer": _uncited(rec["answer"]),
                     "claims": [_uncited(c["text"]) for c in claims]}, [c.get(label) for c in claims]))
    return out


def _nq(datasets: Path, split: str, n: int) -> list[tuple[dict, object]]:
    from franq.evaluation.common import attempted, is_correct
    from franq.fit.generations import short_observed
    from franq.lm.load import EMBEDDED_NAME

    rows, _ = short_observed(datasets, EMBEDDED_NAME, split, n)
    out = []
    for it, rec, _ in rows:
        text = rec["greedy"]["text"]
        correct = is_correct(text, it.answers) if attempted(text) else None
        if correct is not None:
            out.append(({"question": it.question, "passages": [p.text for p in it.passages], "answer": text},
                        bool(correct)))
    return out


def labelled_sets(datasets: Path, names) -> dict[str, list[tuple[dict, object]]]:
    """``name -> [(record, labels)]``: ``labels`` is one label per given claim, or (nq-open:
    the answer is split by the preset, a short answer being one claim) one label for every
    claim of the answer."""
    from franq.evaluation.data import expertqa_held_out

    out = {}
    for name in names:
        if name == "expertqa-train":
            out[name] = _records(datasets / "expertqa" / "train.jsonl", "is_true")
        elif name == "expertqa-heldout":
            out[name] = _records(Path(), "is_true", expertqa_held_out(datasets))
        elif name in ("wice-fit", "wice-heldout"):
            out[name] = _records(datasets / "wice" / f"{name.split('-')[1]}.jsonl", "is_faithful")
        elif name in ("nq-open-train", "nq-open-test"):
            out[name] = _nq(datasets, *(("train", NQ_TRAIN) if name == "nq-open-train" else ("test", NQ_TEST)))
        else:
            raise ValueError(f"unknown labelled set {name!r}; known: {list(TRAIN + DEV)}")
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


def set_arrays(datasets: Path, names, fr=None) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """``name -> (P_supported, label)`` of every labelled claim of each named set under the
    fast pipeline ``fr`` (default: :func:`fast_franq`)."""
    fr = fr or fast_franq()
    return {name: scored_claims(fr, rows) for name, rows in labelled_sets(datasets, names).items()}


def fit_fast(parts: dict[str, tuple[np.ndarray, np.ndarray]], stack: dict[str, str]):
    """The fast calibrator: P(true) = isotonic map of P_supported fitted on the pooled labels
    of ``parts`` (name -> (P_supported, label))."""
    from calibration.contract import ClaimInputs
    from calibration.franq import FranqCalibrator

    p = np.concatenate([v[0] for v in parts.values()])
    y = np.concatenate([v[1] for v in parts.values()])
    shares = ", ".join(f"{name} {len(v[1])} claims ({v[1].mean():.0%} true)" for name, v in parts.items())
    n = len(y)
    cal = FranqCalibrator(variant="none", calibrate_faithfulness=True, fitted_for=dict(stack), description=(
        f"fast preset calibrator: isotonic map of P_supported ({stack['faithfulness']}) to P(true), fitted on "
        f"{shares}; recipe: franq fit shipped {NAME} (franq/fit/shipped_fast.py)"))
    return cal.fit(ClaimInputs(p, np.ones(n), np.zeros(n)), y, is_faithful=y)


def fast_calibrator(datasets: Path, out: Path, raw=None) -> Path:
    """Fit and write the fast calibrator of the shipped verifier (``franq fit shipped``)."""
    fr = fast_franq()
    cal = fit_fast(set_arrays(datasets, TRAIN, fr), fr.preset("fast").stack)
    path = out / NAME
    cal.to_json(path)
    return path


def calibrated(path: Path, p: np.ndarray) -> np.ndarray:
    """The calibrated fast P(true) of raw P_supported ``p`` under the calibrator file ``path``."""
    from calibration.contract import ClaimInputs
    from calibration.franq import FranqCalibrator

    return FranqCalibrator.from_json(path).predict(ClaimInputs(p, np.ones(len(p)), np.zeros(len(p))))


def dev_table(path: Path, parts: dict[str, tuple[np.ndarray, np.ndarray]]) -> str:
    """ECE (raw and calibrated), Brier and AUROC of the fast P(true) on each set of ``parts``."""
    from calibration.metrics import brier_score, expected_calibration_error
    from franq.evaluation.common import auroc

    lines = ["| dev set (label) | claims | share true | ECE raw P_s | ECE calibrated | Brier | Brier of the "
             "base rate | AUROC |", "|---|---|---|---|---|---|---|---|"]
    for name, (p, y) in parts.items():
        q = calibrated(path, p)
        label = "is_faithful" if name.startswith("wice") else "is_true"
        base = float(np.mean((y - y.mean()) ** 2))
        lines.append(f"| {name} ({label}) | {len(y)} | {y.mean():.3f} | {expected_calibration_error(p, y):.3f} | "
                     f"{expected_calibration_error(q, y):.3f} | {brier_score(q, y):.3f} | {base:.3f} | "
                     f"{auroc(q, y):.3f} |")
    return "\n".join(lines)


def evaluate_fast(datasets: Path, path: Path) -> str:
    """The dev table (:func:`dev_table`) of the calibrator file ``path`` on :data:`DEV`."""
    return dev_table(path, set_arrays(datasets, DEV))
