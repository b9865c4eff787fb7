"""Claim-level evaluation measures (paper section 4.1; ECE: appendix D.4): the project's one
PR-AUC, PRR, AUROC, balanced accuracy, ECE and bootstrap. Benchmarks, scripts and apps use
these; ECE itself is computed in :mod:`calibration.metrics` (the leaf package) and used from
there.

Every metric takes ``p_true`` (higher = more likely true) and ``is_true`` (1 = the claim
is true, 0 = false). PR-AUC, PRR and AUROC accept any real scores with that direction
(e.g. negative entropy); ECE needs probabilities in [0, 1]. The ranking measures return
NaN when ``is_true`` holds one class only: they are undefined there.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
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


def balanced_accuracy(p_true: Any, is_true: Any, *, threshold: float = 0.5) -> float:
    """Mean of the true and the false class's accuracy when ``p_true > threshold`` is read
    as "true" (the faithfulness benchmarks' BAcc at 0.5); NaN when one class only."""
    p, y = _check(p_true, is_true)
    if not _both_classes(y):
        return math.nan
    hat = p > threshold
    return float((np.mean(hat[y == 1]) + np.mean(~hat[y == 0])) / 2)


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


# ---- bootstrap --------------------------------------------------------------------------

def resample_indices(n: int, *, n_boot: int, seed: int = 0) -> np.ndarray:
    """``(n_boot, n)`` indices of a nonparametric bootstrap over ``n`` items, one resample
    per row (``numpy.random.default_rng(seed)``; drawn at once or row by row, the same)."""
    return np.random.default_rng(seed).integers(0, n, size=(n_boot, n))


def percentile_interval(values: Any, *, level: float = 0.95, alpha: float | None = None) -> tuple[float, float]:
    """The percentile interval of bootstrap ``values``: quantiles ``(1 - level) / 2`` and
    ``(1 + level) / 2``. ``alpha`` instead gives percentiles ``50 alpha`` and ``100 - 50 alpha``
    (the paper tables' convention, :func:`bootstrap_cis`); the two differ only in the last
    bits of the lower quantile and are kept apart so that no committed number moves."""
    if alpha is not None:
        lo, hi = np.percentile(values, [50 * alpha, 100 - 50 * alpha])
    else:
        lo, hi = np.quantile(values, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def bootstrap(statistic: Callable[..., float], *arrays: Any, n_boot: int = 1000, seed: int = 0,
              level: float = 0.95, alpha: float | None = None, groups: Any = None,
              rowwise: Callable[..., np.ndarray] | None = None) -> tuple[float, float, float]:
    """``(statistic(*arrays), low, high)``: a percentile bootstrap interval over items (the
    same rows of every array resampled together, :func:`resample_indices`). Resamples where
    the statistic is not finite are dropped; (point, nan, nan) when all are. ``groups`` (one
    key per item) resamples the groups instead, each with all its items (a cluster bootstrap,
    e.g. answers by question). ``rowwise`` is the statistic over 2-D arrays, one resample per
    row (a faster path, same values). ``level`` / ``alpha``: :func:`percentile_interval`."""
    arrays = tuple(np.asarray(a) for a in arrays)
    n = len(arrays[0])
    point = float(statistic(*arrays))
    if groups is not None:
        keys = sorted(set(groups))
        members = [[i for i, g in enumerate(groups) if g == k] for k in keys]
        idx = [np.array([i for g in row for i in members[g]], dtype=np.int64)
               for row in resample_indices(len(keys), n_boot=n_boot, seed=seed)]
    else:
        idx = resample_indices(n, n_boot=n_boot, seed=seed)
    if rowwise is not None and groups is None:
        values = np.asarray(rowwise(*(a[idx] for a in arrays)), dtype=np.float64)
    else:
        values = np.array([statistic(*(a[i] for a in arrays)) for i in idx], dtype=np.float64)
    values = values[np.isfinite(values)]
    if not len(values):
        return point, math.nan, math.nan
    return (point, *percentile_interval(values, level=level, alpha=alpha))


def _check_boot(n_boot: int, alpha: float) -> None:
    if isinstance(n_boot, bool) or not isinstance(n_boot, int) or n_boot < 1:
        raise ValueError(f"'n_boot' must be a positive integer, got {n_boot!r}")
    if not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise ValueError(f"'alpha' must be in (0, 1), got {alpha!r}")


def bootstrap_cis(p_true: Any, is_true: Any, *, metrics: Mapping[str, Metric] = METRICS,
                  n_boot: int = 1000, seed: int = 0, alpha: float = 0.05) -> dict[str, tuple[float, float]]:
    """:func:`bootstrap` intervals over claims for several metrics at once, all from the same
    resampled indices (row-wise metrics from :data:`ROWWISE`, in chunks of ~2M cells).
    Resamples where a metric is NaN (one class only) are skipped for that metric;
    (nan, nan) when every resample is."""
    _check_boot(n_boot, alpha)
    p = as_scores(p_true, "p_true")
    y = as_labels(is_true, "is_true", n=len(p))
    if not len(p):
        raise ValueError("'p_true' is empty: a bootstrap needs at least one claim")
    idx = resample_indices(len(p), n_boot=n_boot, seed=seed)
    chunks = np.array_split(np.arange(n_boot), max(1, n_boot * len(p) // 2_000_000))
    out = {}
    for name, metric in metrics.items():
        if metric in ROWWISE:
            vals = np.concatenate([ROWWISE[metric](p[idx[c]], y[idx[c]]) for c in chunks])
        else:
            vals = np.array([metric(p[i], y[i]) for i in idx])
        vals = vals[np.isfinite(vals)]
        out[name] = percentile_interval(vals, alpha=alpha) if len(vals) else (math.nan, math.nan)
    return out
