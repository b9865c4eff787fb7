"""Calibration metrics. ECE as in the paper (appendix D.4, Guo et al. 2017): 10 equal-width
confidence bins; the bin-size-weighted mean of |mean predicted P(true) - share true|."""
from __future__ import annotations

from typing import Any

import numpy as np

from calibration.base import as_labels, as_probabilities


def expected_calibration_error(p_true: Any, labels: Any, *, n_bins: int = 10) -> float:
    """ECE of probabilities ``p_true`` against binary ``labels`` (1 = true). The last bin
    is closed on the right, so a probability of exactly 1 falls in it."""
    p = as_probabilities(p_true, "p_true")
    y = as_labels(labels, "labels", n=len(p))
    if not len(p):
        raise ValueError("'p_true' is empty: ECE needs at least one prediction")
    if not isinstance(n_bins, int) or n_bins < 1:
        raise ValueError(f"'n_bins' must be a positive integer, got {n_bins!r}")
    bins = np.minimum((p * n_bins).astype(int), n_bins - 1)
    total = 0.0
    for b in np.unique(bins):
        m = bins == b
        total += m.sum() * abs(p[m].mean() - y[m].mean())
    return float(total / len(p))


def brier_score(p_true: Any, labels: Any) -> float:
    p = as_probabilities(p_true, "p_true")
    y = as_labels(labels, "labels", n=len(p))
    return float(np.mean((p - y) ** 2))
