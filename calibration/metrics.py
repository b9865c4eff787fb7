"""Calibration metrics. ECE as in the paper (appendix D.4, Guo et al. 2017): 10 equal-width
confidence bins; the bin-size-weighted mean of |mean predicted P(true) - share true|.

Bins are closed on the right, ``(lo, hi]``, as in Guo et al.'s code and LM-Polygraph's
``ECE`` (``lm_polygraph/ue_metrics/ece.py``): a probability exactly on an edge (isotonic
calibrators often output 0.1, 0.2, ...) belongs to the bin below it; the first bin is
``[0, hi]`` so that 0 counts (LM-Polygraph's choice; Guo et al.'s loop leaves an exact 0 out
of every bin while still counting it in N)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from calibration.base import as_labels, as_probabilities


@dataclass(frozen=True)
class CalibrationBins:
    """Equal-width bins of [0, 1]; arrays of length ``n_bins``. Empty bins have count 0
    and NaN means."""
    edges: np.ndarray        # n_bins + 1 bin edges, 0 .. 1
    mean_p: np.ndarray       # mean predicted P(true) in the bin
    share_true: np.ndarray   # share of true labels in the bin
    count: np.ndarray        # predictions in the bin


def calibration_bins(p_true: Any, labels: Any, *, n_bins: int = 10) -> CalibrationBins:
    """The bins ECE is computed from: ``[0, e1], (e1, e2], ..., (e_{n-1}, 1]`` with the
    edges ``np.linspace(0, 1, n_bins + 1)`` (the module docstring says why)."""
    p = as_probabilities(p_true, "p_true")
    y = as_labels(labels, "labels", n=len(p))
    if not len(p):
        raise ValueError("'p_true' is empty: ECE needs at least one prediction")
    if not isinstance(n_bins, int) or isinstance(n_bins, bool) or n_bins < 1:
        raise ValueError(f"'n_bins' must be a positive integer, got {n_bins!r}")
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    bins = np.clip(np.searchsorted(edges, p, side="left") - 1, 0, n_bins - 1)
    count = np.bincount(bins, minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_p = np.bincount(bins, weights=p, minlength=n_bins) / count
        share_true = np.bincount(bins, weights=y, minlength=n_bins) / count
    return CalibrationBins(edges, mean_p, share_true, count)


def expected_calibration_error(p_true: Any, labels: Any, *, n_bins: int = 10) -> float:
    """ECE of probabilities ``p_true`` against binary ``labels`` (1 = true)."""
    b = calibration_bins(p_true, labels, n_bins=n_bins)
    m = b.count > 0
    return float(np.sum(b.count[m] * np.abs(b.mean_p[m] - b.share_true[m])) / b.count.sum())


def ece_floor(p_true: Any, *, n_bins: int = 10, n_sim: int = 1000, seed: int = 0) -> tuple[float, float]:
    """The ECE a perfectly calibrated predictor shows on a set this size: labels drawn as
    Bernoulli(``p_true``) ``n_sim`` times, the median and 95th percentile of their ECE. An
    observed ECE near the median is what sampling alone gives; a target below it cannot be
    told apart on this many claims (200 claims spread over (0, 1) floor at about .08)."""
    p = as_probabilities(p_true, "p_true")
    rng = np.random.default_rng(seed)
    values = [expected_calibration_error(p, (rng.random(len(p)) < p).astype(float), n_bins=n_bins)
              for _ in range(n_sim)]
    return float(np.median(values)), float(np.quantile(values, 0.95))


def brier_score(p_true: Any, labels: Any) -> float:
    p = as_probabilities(p_true, "p_true")
    y = as_labels(labels, "labels", n=len(p))
    return float(np.mean((p - y) ** 2))


@dataclass(frozen=True)
class ThresholdRow:
    """What a verdict threshold ``T`` does to a set of labelled claims: a claim is flagged
    ``likely_false`` when its P(true) is below ``T``.

    ``precision``     share of the flagged claims that are false (NaN when none is flagged)
    ``caught``        share of the false claims that are flagged (recall; NaN when none is false)
    ``flagged``       share of all claims flagged
    ``false_alarm``   share of the true claims flagged (NaN when none is true)
    """
    threshold: float
    precision: float
    caught: float
    flagged: float
    false_alarm: float
    n_flagged: int


def threshold_row(p_true: Any, labels: Any, threshold: float) -> ThresholdRow:
    """:class:`ThresholdRow` of one threshold."""
    p = as_probabilities(p_true, "p_true")
    y = as_labels(labels, "labels", n=len(p))
    flag = p < threshold
    n_flag, n_false, n_true = int(flag.sum()), int((y == 0).sum()), int((y == 1).sum())
    hit = int((flag & (y == 0)).sum())
    nan = float("nan")
    return ThresholdRow(float(threshold), hit / n_flag if n_flag else nan, hit / n_false if n_false else nan,
                        n_flag / len(p) if len(p) else nan, (n_flag - hit) / n_true if n_true else nan, n_flag)


def threshold_table(p_true: Any, labels: Any, thresholds: Any = None) -> list[ThresholdRow]:
    """One :class:`ThresholdRow` per threshold (default 0.1, 0.2, ..., 0.9)."""
    ts = np.round(np.arange(1, 10) / 10, 2) if thresholds is None else np.asarray(thresholds, dtype=np.float64)
    return [threshold_row(p_true, labels, float(t)) for t in ts]


def candidate_thresholds(p_true: Any) -> np.ndarray:
    """Every threshold that flags a different set of claims: just above each distinct P(true)
    (the midpoint to the next one; the last one plus a hair, capped at 1), in increasing order."""
    u = np.unique(as_probabilities(p_true, "p_true"))
    if not len(u):
        return u
    return np.append((u[:-1] + u[1:]) / 2, min(1.0, u[-1] + 1e-9))


def pick_threshold(p_true: Any, labels: Any, *, target_precision: float | None = None,
                   target_false_alarm: float | None = None) -> ThresholdRow | None:
    """The threshold that catches the most false claims while the flagged claims are false at
    least ``target_precision`` of the time, or while at most ``target_false_alarm`` of the true
    claims are flagged (exactly one of the two). None when no threshold meets the target."""
    if (target_precision is None) == (target_false_alarm is None):
        raise ValueError("give exactly one of 'target_precision' and 'target_false_alarm'")
    target = target_precision if target_false_alarm is None else target_false_alarm
    if isinstance(target, bool) or not isinstance(target, (int, float)) or not 0.0 <= target <= 1.0:
        raise ValueError(f"the target must be a number in [0, 1], got {target!r}")
    best = None
    for t in candidate_thresholds(p_true):
        row = threshold_row(p_true, labels, float(t))
        ok = (row.precision >= target_precision if target_precision is not None
              else row.false_alarm <= target_false_alarm)
        if ok and row.n_flagged and (best is None or row.caught >= best.caught):
            best = row
    return best
