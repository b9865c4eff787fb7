"""IsotonicCalibrator: a non-decreasing map from a score to P(label = 1) (paper section 2.3).

Fitting is isotonic regression (scikit-learn's pool-adjacent-violators) minimizing the
weighted squared error to binary labels; the fitted function is kept as its breakpoints
(``x_thresholds_``, ``y_thresholds_``) and evaluated by linear interpolation between
them, exactly as ``sklearn.isotonic.IsotonicRegression(out_of_bounds="clip")`` does.
Inputs below the smallest or above the largest breakpoint are clipped to the end values.

Persisted as a few hundred bytes of JSON (the breakpoints), never pickle; loading needs
only numpy.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from calibration.base import (CalibratorFileError, NotFittedError, as_labels, as_scores, as_weights, check_header,
                              float_list, number, read_json, write_json)

FORMAT = "franq-isotonic"
VERSION = 1


class IsotonicCalibrator:
    """Scikit-learn-style isotonic calibrator; higher score = higher predicted probability
    (``increasing=True``) or the reverse.

    >>> cal = IsotonicCalibrator().fit(scores, labels)
    >>> cal.predict(new_scores)          # P(label = 1), in [y_min, y_max]
    >>> cal.to_json("cal.json"); IsotonicCalibrator.from_json("cal.json")
    """

    def __init__(self, *, increasing: bool = True, y_min: float = 0.0, y_max: float = 1.0):
        self.increasing = increasing
        self.y_min = y_min
        self.y_max = y_max

    # ------------------------------------------------------------------ fitting
    def fit(self, scores: Any, labels: Any, sample_weight: Any = None) -> IsotonicCalibrator:
        """Fit on ``scores`` (finite numbers) and binary ``labels``; ``sample_weight``
        (non-negative, optional) weighs each pair. Returns ``self``."""
        if not isinstance(self.increasing, bool):
            raise ValueError(f"'increasing' must be True or False, got {self.increasing!r}")
        if not (0.0 <= self.y_min < self.y_max <= 1.0):
            raise ValueError(f"need 0 <= y_min < y_max <= 1, got y_min={self.y_min!r}, y_max={self.y_max!r}")
        x = as_scores(scores, "scores")
        y = as_labels(labels, "labels", n=len(x))
        w = as_weights(sample_weight, "sample_weight", n=len(x))
        keep = w > 0
        if not keep.any():
            raise ValueError(f"cannot fit on {len(x)} samples: no sample has a positive weight")
        from sklearn.isotonic import IsotonicRegression

        iso = IsotonicRegression(y_min=self.y_min, y_max=self.y_max, increasing=self.increasing,
                                 out_of_bounds="clip")
        iso.fit(x[keep], y[keep], sample_weight=w[keep])
        self.x_thresholds_ = np.asarray(iso.X_thresholds_, dtype=np.float64)
        self.y_thresholds_ = np.asarray(iso.y_thresholds_, dtype=np.float64)
        self.n_samples_ = int(keep.sum())
        self.weight_sum_ = float(w[keep].sum())
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

    # ------------------------------------------------------------------ persistence
    def to_dict(self) -> dict:
        self._check_fitted()
        return {"format": FORMAT, "version": VERSION, "increasing": self.increasing,
                "y_min": self.y_min, "y_max": self.y_max, "n_samples": self.n_samples_,
                "weight_sum": self.weight_sum_,
                "x": self.x_thresholds_.tolist(), "y": self.y_thresholds_.tolist()}

    @classmethod
    def from_dict(cls, obj: Any, *, where: str = "isotonic calibrator") -> IsotonicCalibrator:
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
        cal.y_thresholds_ = np.asarray(y, dtype=np.float64)
        cal.n_samples_ = number(obj, "n_samples", where, 0, integer=True, low=0)
        cal.weight_sum_ = number(obj, "weight_sum", where, 0.0, low=0.0)
        return cal

    def to_json(self, path: str | Path) -> None:
        write_json(self.to_dict(), path)

    @classmethod
    def from_json(cls, path: str | Path) -> IsotonicCalibrator:
        return cls.from_dict(read_json(path), where=f"isotonic calibrator {path}")

    def __repr__(self) -> str:
        fitted = f", {len(self.x_thresholds_)} breakpoints" if hasattr(self, "x_thresholds_") else ", unfitted"
        return f"IsotonicCalibrator(increasing={self.increasing}{fitted})"
