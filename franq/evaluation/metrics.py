"""Claim-level evaluation measures (paper section 4.1; ECE: appendix D.4).

Every function takes ``p_true`` (higher = more likely true) and ``is_true`` (1 = the claim
is true, 0 = false). PR-AUC, PRR and AUROC accept any real scores with that direction
(e.g. negative entropy); ECE needs probabilities in [0, 1]. The ranking measures return
NaN when ``is_true`` holds one class only: they are undefined there.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Literal

import numpy as np

from calibration.base import as_labels, as_probabilities, as_scores
from calibration.metrics import CalibrationBins, calibration_bins, expected_calibration_error
from franq.equivalence.normalized import normalize_answer  # noqa: F401 - SQuAD-style answer normalization, for exact match


def _check(p_true: Any, is_true: Any, *, probabilities: bool = False) -> tuple[np.ndarray, np.ndarray]:
    p = (as_probabilities if probabilities else as_scores)(p_true, "p_true")
    if not len(p):
        raise ValueError("'p_true' is empty: a metric needs at least one claim")
    return p, as_labels(is_true, "is_true", n=len(p))


def _both_classes(y: np.ndarray) -> bool:
    return 0 < y.sum() < len(y)


def pr_auc(p_true: Any, is_true: Any) -> float:
    """Average precision of detecting FALSE claims (the positive class, as in the paper)
    with ``-p_true`` as the detector score; NaN when one class only."""
    from sklearn.metrics import average_precision_score

    p, y = _check(p_true, is_true)
    if not _both_classes(y):
        return math.nan
    return float(average_precision_score(1 - y, -p))


def auroc(p_true: Any, is_true: Any) -> float:
    """ROC-AUC of ``p_true`` for the true class (the same as ROC-AUC of ``-p_true`` for
    the false class); NaN when one class only."""
    from sklearn.metrics import roc_auc_score

    p, y = _check(p_true, is_true)
    if not _both_classes(y):
        return math.nan
    return float(roc_auc_score(y, p))


def pr_auc_rows(p_true: np.ndarray, is_true: np.ndarray) -> np.ndarray:
    """``pr_auc`` of each row of 2-D arrays (unchecked; for the bootstrap): sklearn's
    step-wise average precision, one step per distinct score, vectorized over rows."""
    order = np.argsort(p_true, axis=1, kind="stable")           # least likely true first
    s = np.take_along_axis(p_true, order, axis=1)
    pos = 1 - np.take_along_axis(is_true, order, axis=1)        # false claims are positive
    tps = np.cumsum(pos, axis=1)
    end = np.ones(s.shape, dtype=bool)                          # last claim of each tied group
    end[:, :-1] = s[:, 1:] != s[:, :-1]
    at_end = np.maximum.accumulate(np.where(end, tps, 0), axis=1)
    prev = np.concatenate([np.zeros((len(s), 1)), at_end[:, :-1]], axis=1)
    gain = np.where(end, tps - prev, 0) * tps / np.arange(1, s.shape[1] + 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        ap = gain.sum(axis=1) / tps[:, -1]
    return np.where((tps[:, -1] > 0) & (tps[:, -1] < s.shape[1]), ap, np.nan)


def auroc_rows(p_true: np.ndarray, is_true: np.ndarray) -> np.ndarray:
    """``auroc`` of each row of 2-D arrays (unchecked; for the bootstrap): the
    Mann-Whitney statistic with average ranks for ties, vectorized over rows."""
    from scipy.stats import rankdata

    ranks = rankdata(p_true, axis=1)
    n1 = is_true.sum(axis=1)
    n0 = is_true.shape[1] - n1
    with np.errstate(invalid="ignore", divide="ignore"):
        auc = ((ranks * is_true).sum(axis=1) - n1 * (n1 + 1) / 2) / (n1 * n0)
    return np.where((n1 > 0) & (n0 > 0), auc, np.nan)


@dataclass(frozen=True)
class RejectionCurve:
    """Share of true claims among those retained after rejecting the least likely true
    first, at each rejection rate; ``oracle`` rejects by the labels, ``random`` is the
    expectation over random orders (the share of true claims, at every rate)."""
    rejection: np.ndarray
    method: np.ndarray
    oracle: np.ndarray
    random: np.ndarray


def _retained_quality(order_key: np.ndarray, y: np.ndarray, num_rej: int) -> np.ndarray:
    """Mean label of the retained claims after rejecting 0 .. num_rej - 1 claims with the
    lowest ``order_key``. Ties count at their group's mean label: the expectation over
    every order of the tied claims, so the result does not depend on input order."""
    order = np.argsort(-order_key, kind="stable")          # most likely true first
    key, ys = order_key[order], y[order]
    _, group, counts = np.unique(key, return_inverse=True, return_counts=True)
    ys = (np.bincount(group, weights=ys) / counts)[group]
    n = len(y)
    kept = np.arange(n, n - num_rej, -1)                   # n, n - 1, ..., n - num_rej + 1
    return np.cumsum(ys)[kept - 1] / kept


def _num_rejected(n: int, max_rejection: float) -> int:
    if isinstance(max_rejection, bool) or not isinstance(max_rejection, (int, float)) \
            or not 0 < max_rejection <= 1:
        raise ValueError(f"'max_rejection' must be a number in (0, 1], got {max_rejection!r}")
    return int(max_rejection * n)   # LM-Polygraph's count, float truncation included


def rejection_curve(p_true: Any, is_true: Any, *, max_rejection: float = 1.0,
                    points: int | None = None) -> RejectionCurve:
    """The prediction-rejection curve PRR averages: rejection rates k / n for
    k = 0 .. int(max_rejection * n) - 1. ``points`` keeps at most that many evenly
    spaced rates (for plots); None keeps all."""
    p, y = _check(p_true, is_true)
    num_rej = max(_num_rejected(len(p), max_rejection), 1)
    k = np.arange(num_rej)
    if points is not None:
        if isinstance(points, bool) or not isinstance(points, int) or points < 2:
            raise ValueError(f"'points' must be an integer >= 2 or None, got {points!r}")
        k = np.unique(np.linspace(0, num_rej - 1, min(points, num_rej)).round().astype(int))
    method = _retained_quality(p, y, num_rej)[k]
    oracle = _retained_quality(y, y, num_rej)[k]
    return RejectionCurve(k / len(p), method, oracle, np.full(len(k), y.mean()))


def prr(p_true: Any, is_true: Any, *, max_rejection: float = 0.5) -> float:
    """Prediction rejection ratio (LM-Polygraph; Vashurin et al. 2025): the mean
    retained quality over the rejection curve, as (method - random) / (oracle - random).

    Equals LM-Polygraph's ``PredictionRejectionArea(max_rejection)`` on uncertainty
    ``-p_true`` and target ``is_true``, normalized as its ``UEManager`` does (oracle =
    the metric on ``-is_true``), with the random score exact (the mean label) instead of
    its 1000-shuffle estimate. Ties in ``p_true`` count at their group's mean label
    (LM-Polygraph takes ``np.argsort`` order there). NaN when one class only.
    """
    p, y = _check(p_true, is_true)
    if not _both_classes(y):
        return math.nan
    c = rejection_curve(p, y, max_rejection=max_rejection)
    rand = y.mean()
    return float((c.method.mean() - rand) / (c.oracle.mean() - rand))


def reliability_bins(p_true: Any, is_true: Any, *, n_bins: int = 10) -> CalibrationBins:
    """Per-bin mean prediction, share true and count: the bins ECE uses."""
    p, y = _check(p_true, is_true, probabilities=True)
    return calibration_bins(p, y, n_bins=n_bins)


def ece(p_true: Any, is_true: Any, *, n_bins: int = 10) -> float:
    """Expected calibration error over ``n_bins`` equal-width bins (appendix D.4)."""
    p, y = _check(p_true, is_true, probabilities=True)
    return expected_calibration_error(p, y, n_bins=n_bins)


Metric = Callable[[Any, Any], float]
METRICS: dict[str, Metric] = {"PR-AUC": pr_auc, "PRR": prr, "AUROC": auroc, "ECE": ece}
# Row-wise versions the bootstrap uses instead (sklearn's per-call overhead is ~2-10 ms).
ROWWISE: dict[Metric, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {pr_auc: pr_auc_rows,
                                                                         auroc: auroc_rows}


def metric_direction(name: str) -> Literal["max", "min"]:
    """"min" for ECE (lower is better), "max" for the other metrics in ``METRICS``."""
    if name not in METRICS:
        raise ValueError(f"'name' must be one of {sorted(METRICS)}, got {name!r}")
    return "min" if name == "ECE" else "max"
