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


def brier_score(p_true: Any, labels: Any) -> float:
    p = as_probabilities(p_true, "p_true")
    y = as_labels(labels, "labels", n=len(p))
    return float(np.mean((p - y) ** 2))
