"""IsotonicCalibrator: a non-decreasing map from a score to P(label = 1) (paper section 2.3),
bounded away from 0 and 1 by what each step's data supports.

Fitting is isotonic regression by pool-adjacent-violators on the sorted scores (the steps
scikit-learn's ``IsotonicRegression`` finds), each step then valued by its Beta posterior
mean, bounded by the whole map's rule of succession::

    p0     = (K + 1) / (N + 2)                          the map's share of label 1, Laplace
    y_step = (k + s * p0) / (n + s)                     the step's Beta(s * p0, s * (1 - p0)) posterior mean
    y_step within [1 / (N + 2), 1 - 1 / (N + 2)]        never more certain than the map's own data

where ``n`` is the step's (weighted) number of training samples, ``k`` how many of them
are labelled 1, ``N`` and ``K`` the same over the whole map, and ``s`` the prior's
strength in pseudo-samples (``prior_strength``, default 1: a unit-information prior). A step of few samples is drawn
to the map's base rate, not to 0.5 (calibration on skewed data stays intact); a map of 118
samples all labelled 0 gives 1/120, never 0. Adjacent steps whose posterior means break
the order are pooled again, so the map stays monotone. The fitted function is kept as its
breakpoints (``x_thresholds_``, ``y_thresholds_``) with each breakpoint's step counts
(``step_n_``, ``step_k_``), evaluated by linear interpolation between breakpoints; inputs
below the smallest or above the largest breakpoint are clipped to the end values.

:meth:`IsotonicCalibrator.predict_interval` gives a credible interval per score from the
step counts (normal approximation of the step's Beta posterior, interpolated like the map).

Files written before the step counts (franq 0.2 and before) are read with a stated clamp
instead: every value within ``[1 / (n + 2), 1 - 1 / (n + 2)]``, ``n`` the map's training
weight (``weight_sum``, else ``n_samples``); such a map has no intervals. The file's
``bound`` field says which bound applies.

Persisted as a few hundred bytes of JSON (the breakpoints), never pickle; loading needs
only numpy.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from calibration.base import (CalibratorFileError, NotFittedError, as_labels, as_scores, as_weights, check_header,
                              float_list, number, read_json, write_json)

FORMAT = "franq-isotonic"
VERSION = 1
PRIOR_STRENGTH = 1.0
"""The pseudo-samples of each step's Beta prior, centred on the map's base rate."""
LEGACY_N = 998
"""The fit size assumed for the clamp of a file that records neither ``weight_sum`` nor ``n_samples``."""
_Z = {0.5: 0.674, 0.8: 1.2816, 0.9: 1.6449, 0.95: 1.96, 0.99: 2.5758}


class IsotonicCalibrator:
    """Scikit-learn-style isotonic calibrator; higher score = higher predicted probability
    (``increasing=True``) or the reverse. Every output lies strictly inside (0, 1).

    >>> cal = IsotonicCalibrator().fit(scores, labels)
    >>> cal.predict(new_scores)          # P(label = 1), strictly inside (0, 1)
    >>> cal.predict_interval(new_scores) # (low, high), 90% credible interval per score
    >>> cal.to_json("cal.json"); IsotonicCalibrator.from_json("cal.json")
    """

    def __init__(self, *, increasing: bool = True, y_min: float = 0.0, y_max: float = 1.0,
                 prior_strength: float = PRIOR_STRENGTH):
        self.increasing = increasing
        self.y_min = y_min
        self.y_max = y_max
        self.prior_strength = prior_strength

    # ------------------------------------------------------------------ fitting
    def _validate_options(self) -> float:
        if not isinstance(self.increasing, bool):
            raise ValueError(f"'increasing' must be True or False, got {self.increasing!r}")
        if not (0.0 <= self.y_min < self.y_max <= 1.0):
            raise ValueError(f"need 0 <= y_min < y_max <= 1, got y_min={self.y_min!r}, y_max={self.y_max!r}")
        s = self.prior_strength
        if isinstance(s, bool) or not isinstance(s, (int, float)) or not (math.isfinite(s) and s > 0):
            raise ValueError(f"'prior_strength' must be a number > 0, got {s!r}")
        return float(s)

    def fit(self, scores: Any, labels: Any, sample_weight: Any = None) -> IsotonicCalibrator:
        """Fit on ``scores`` (finite numbers) and binary ``labels``; ``sample_weight``
        (non-negative, optional) weighs each pair. Returns ``self``."""
        strength = self._validate_options()
        x = as_scores(scores, "scores")
        y = as_labels(labels, "labels", n=len(x))
        w = as_weights(sample_weight, "sample_weight", n=len(x))
        keep = w > 0
        if not keep.any():
            raise ValueError(f"cannot fit on {len(x)} samples: no sample has a positive weight")
        x, y, w = x[keep], y[keep], w[keep]
        sign = 1.0 if self.increasing else -1.0
        ux, inverse = np.unique(sign * x, return_inverse=True)
        n = np.bincount(inverse, weights=w, minlength=len(ux))
        k = np.bincount(inverse, weights=w * y, minlength=len(ux))
        points = [[xi, xi, ni, ki] for xi, ni, ki in zip(ux.tolist(), n.tolist(), k.tolist())]
        # the plain fit's steps (equal neighbours pooled), then pooled again where the prior breaks the order
        total, positives = float(w.sum()), float((w * y).sum())
        p0 = (positives + 1) / (total + 2)
        a, b = strength * p0, strength * (1 - p0)
        steps = _pool(_pool(points, 0.0, 0.0, pool_ties=True), a, b)  # [x_lo, x_hi, n, k]
        xs, ns, ks = [], [], []
        for lo, hi, sn, sk in steps:
            for v in ((lo,) if lo == hi else (lo, hi)):
                xs.append(v), ns.append(sn), ks.append(sk)
        xs, ns, ks = np.array(xs), np.array(ns), np.array(ks)
        if not self.increasing:
            xs, ns, ks = -xs[::-1], ns[::-1], ks[::-1]
        self.x_thresholds_ = xs
        self.step_n_, self.step_k_ = ns, ks
        low, high = max(self.y_min, 1 / (total + 2)), min(self.y_max, 1 - 1 / (total + 2))
        self.y_thresholds_ = np.clip((ks + a) / (ns + a + b), low, high)
        self.n_samples_ = int(keep.sum())
        self.weight_sum_, self.positives_ = total, positives
        self.bound_ = {"kind": "beta", "a": a, "b": b, "low": low, "high": high}
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "x_thresholds_"):
            raise NotFittedError(
                "this IsotonicCalibrator is not fitted yet: call .fit(scores, labels) or load one "
                "with IsotonicCalibrator.from_json(path)")

    # ------------------------------------------------------------------ prediction
    def predict(self, scores: Any) -> np.ndarray:
        """Calibrated probabilities for ``scores``; out-of-range inputs are clipped."""
        self._check_fitted()
        x = as_scores(scores, "scores")
        xp, fp = self.x_thresholds_, self.y_thresholds_
        return np.interp(np.clip(x, xp[0], xp[-1]), xp, fp)

    @property
    def has_step_counts(self) -> bool:
        """Whether the map knows each step's counts (fitted by this franq; not a file of franq 0.2)."""
        return getattr(self, "step_n_", None) is not None

    def predict_interval(self, scores: Any, *, level: float = 0.9) -> tuple[np.ndarray, np.ndarray] | None:
        """``(low, high)`` per score: the central ``level`` credible interval of the step's
        Beta(k + a, n - k + b) posterior (normal approximation, clipped to [0, 1]),
        interpolated between breakpoints like the map itself. None for a map without step
        counts (a file of franq 0.2 or before)."""
        self._check_fitted()
        if not self.has_step_counts:
            return None
        if level not in _Z:
            raise ValueError(f"'level' must be one of {sorted(_Z)}, got {level!r}")
        a, b = self.bound_["a"], self.bound_["b"]
        total = self.step_n_ + a + b
        sd = np.sqrt(self.y_thresholds_ * (1 - self.y_thresholds_) / (total + 1))
        lo, hi = np.clip(self.y_thresholds_ - _Z[level] * sd, 0, 1), np.clip(self.y_thresholds_ + _Z[level] * sd, 0, 1)
        x = np.clip(as_scores(scores, "scores"), self.x_thresholds_[0], self.x_thresholds_[-1])
        return np.interp(x, self.x_thresholds_, lo), np.interp(x, self.x_thresholds_, hi)

    @property
    def base_rate(self) -> float | None:
        """The share of label 1 over all its training samples, (K + 1) / (N + 2) (the centre
        of each step's prior); None for a map without step counts."""
        if not self.has_step_counts:
            return None
        return (self.positives_ + 1) / (self.weight_sum_ + 2)

    # ------------------------------------------------------------------ persistence
    def to_dict(self) -> dict:
        self._check_fitted()
        out = {"format": FORMAT, "version": VERSION, "increasing": self.increasing,
               "y_min": self.y_min, "y_max": self.y_max, "n_samples": self.n_samples_,
               "weight_sum": self.weight_sum_, "bound": dict(self.bound_),
               "x": self.x_thresholds_.tolist(), "y": self.y_thresholds_.tolist()}
        if self.has_step_counts:
            out.update(positives=self.positives_, step_n=self.step_n_.tolist(), step_k=self.step_k_.tolist())
        return out

    @classmethod
    def from_dict(cls, obj: Any, *, where: str = "isotonic calibrator") -> IsotonicCalibrator:
        """A map as written by :meth:`to_dict`; one without step counts (franq 0.2 and
        before) gets the clamp ``[1 / (n + 2), 1 - 1 / (n + 2)]`` (the module doc)."""
        check_header(obj, FORMAT, VERSION, where)
        x, y = float_list(obj, "x", where), float_list(obj, "y", where)
        if not x or len(x) != len(y):
            raise CalibratorFileError(f"{where}: 'x' and 'y' must be non-empty and of equal length, "
                                      f"got {len(x)} and {len(y)}")
        if any(b < a for a, b in zip(x, x[1:])):
            raise CalibratorFileError(f"{where}: 'x' must be sorted in increasing order")
        if any(not 0.0 <= v <= 1.0 for v in y):
            raise CalibratorFileError(f"{where}: 'y' values must lie in [0, 1]")
        increasing = obj.get("increasing", True)
        if not isinstance(increasing, bool):
            raise CalibratorFileError(f"{where}: 'increasing' must be true or false")
        if any((b < a) if increasing else (b > a) for a, b in zip(y, y[1:])):
            raise CalibratorFileError(f"{where}: 'y' must be {'non-decreasing' if increasing else 'non-increasing'} "
                                      f"along 'x', as 'increasing' = {str(increasing).lower()} says")
        y_min = number(obj, "y_min", where, 0.0, low=0.0, high=1.0)
        y_max = number(obj, "y_max", where, 1.0, low=y_min, high=1.0)
        cal = cls(increasing=increasing, y_min=y_min, y_max=y_max)
        cal.x_thresholds_ = np.asarray(x, dtype=np.float64)
        cal.n_samples_ = number(obj, "n_samples", where, 0, integer=True, low=0)
        cal.weight_sum_ = number(obj, "weight_sum", where, 0.0, low=0.0)
        if "step_n" in obj:
            cal.y_thresholds_ = np.asarray(y, dtype=np.float64)
            cal._read_steps(obj, where, len(x))
        else:
            n = cal.weight_sum_ or cal.n_samples_ or LEGACY_N
            low, high = 1.0 / (n + 2), 1.0 - 1.0 / (n + 2)
            cal.y_thresholds_ = np.clip(np.asarray(y, dtype=np.float64), low, high)
            cal.step_n_ = cal.step_k_ = None
            cal.bound_ = {"kind": "clamp", "low": low, "high": high, "n": n}
        return cal

    def _read_steps(self, obj: dict, where: str, size: int) -> None:
        n, k = float_list(obj, "step_n", where), float_list(obj, "step_k", where)
        if len(n) != size or len(k) != size:
            raise CalibratorFileError(f"{where}: 'step_n' and 'step_k' must have one value per breakpoint ({size}), "
                                      f"got {len(n)} and {len(k)}")
        if any(not 0 <= kk <= nn for nn, kk in zip(n, k)):
            raise CalibratorFileError(f"{where}: each step needs 0 <= step_k <= step_n")
        bound = obj.get("bound")
        if not (isinstance(bound, dict) and bound.get("kind") == "beta"):
            raise CalibratorFileError(f"{where}: a map with step counts needs 'bound' "
                                      "{'kind': 'beta', 'a', 'b', 'low', 'high'}")
        at = f"{where}: 'bound'"
        a, b = (number(bound, key, at, -1.0, low=1e-300) for key in ("a", "b"))
        low, high = (number(bound, key, at, -1.0, low=0.0, high=1.0) for key in ("low", "high"))
        if any(not low <= v <= high for v in self.y_thresholds_):
            raise CalibratorFileError(f"{where}: 'y' values must lie within the bound [{low:g}, {high:g}]")
        self.step_n_, self.step_k_ = np.asarray(n), np.asarray(k)
        self.positives_ = number(obj, "positives", where, float(sum(k)), low=0.0)
        self.bound_ = {"kind": "beta", "a": a, "b": b, "low": low, "high": high}
        self.prior_strength = a + b

    def to_json(self, path: str | Path) -> None:
        write_json(self.to_dict(), path)

    @classmethod
    def from_json(cls, path: str | Path) -> IsotonicCalibrator:
        return cls.from_dict(read_json(path), where=f"isotonic calibrator {path}")

    def __repr__(self) -> str:
        fitted = f", {len(self.x_thresholds_)} breakpoints" if hasattr(self, "x_thresholds_") else ", unfitted"
        return f"IsotonicCalibrator(increasing={self.increasing}{fitted})"


def _pool(points: list[list[float]], a: float, b: float, *, pool_ties: bool = False) -> list[list[float]]:
    """Pool-adjacent-violators over steps ``[x_lo, x_hi, n, k]`` in increasing score order:
    adjacent steps are merged (counts summed) until their means (k + a) / (n + a + b) do
    not decrease (with ``pool_ties``, until they increase: scikit-learn's maximal steps)."""
    steps: list[list[float]] = []
    for point in points:
        steps.append(list(point))
        while len(steps) > 1 and (_mean(steps[-2], a, b) > _mean(steps[-1], a, b)
                                  or pool_ties and _mean(steps[-2], a, b) == _mean(steps[-1], a, b)):
            last = steps.pop()
            prev = steps[-1]
            prev[1], prev[2], prev[3] = last[1], prev[2] + last[2], prev[3] + last[3]
    return steps


def _mean(step: list[float], a: float, b: float) -> float:
    return (step[3] + a) / (step[2] + a + b)
