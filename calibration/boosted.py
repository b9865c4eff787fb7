"""XGBoost baselines (paper section 3, "XGBoost methods"): a gradient-boosted classifier
trained on factuality labels from a feature set, e.g. the FRANQ features (P_faithful,
UQ_faith, UQ_unfaith) or all available UQ features. Saved in XGBoost's own JSON model
format (feature names and what it was fitted for are stored in the model), never pickle.

Needs the optional ``xgboost`` package (``pip install 'franq[eval]'``).
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from calibration.base import CalibratorFileError, MissingDependencyError, NotFittedError, as_labels, as_weights
from calibration.contract import CalibratedClaims, ClaimInputs
from calibration.franq import stack_mismatches

FITTED_FOR_ATTR = "franq_fitted_for"


def require_xgboost():
    try:
        import xgboost
    except ImportError:
        raise MissingDependencyError("the XGBoost baselines need the xgboost package, which is not installed: "
                                     "pip install 'franq[eval]'") from None
    return xgboost


class XGBoostCalibrator:
    """P(true) from features of the claims (:meth:`ClaimInputs.features
    <calibration.contract.ClaimInputs.features>`, one per name in ``feature_names``:
    ``p_faithful`` or a scorer signal). It gives P(true) alone, no per-condition parts."""

    needs_conditions = False
    name = "xgboost"

    def __init__(self, *, feature_names: Sequence[str], n_estimators: int = 100, max_depth: int = 3,
                 learning_rate: float = 0.1, seed: int = 0, n_threads: int = 2,
                 fitted_for: dict[str, str] | None = None):
        self.feature_names = feature_names
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.learning_rate = learning_rate
        self.seed = seed
        self.n_threads = n_threads
        self.fitted_for = fitted_for

    def _matrix(self, X: Any) -> np.ndarray:
        try:
            m = np.asarray(X, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError("'X' must be a 2-D array of numbers") from None
        names = list(self.feature_names)
        if m.ndim != 2 or m.shape[1] != len(names):
            raise ValueError(f"'X' must have shape (n_claims, {len(names)}) for features {names}, got {m.shape}")
        return m

    def fit(self, X: ClaimInputs, y: Any, *, sample_weight: Any = None) -> XGBoostCalibrator:
        """Fit on scored training claims ``X``; ``y``: is_true, binary labels."""
        names = list(self.feature_names)
        if not names or not all(isinstance(n, str) and n for n in names) or len(set(names)) != len(names):
            raise ValueError(f"'feature_names' must be distinct non-empty strings, got {names!r}")
        m = self._matrix(X.features(names))
        if not len(m):
            raise ValueError("no training claims: 'X' is empty")
        y = as_labels(y, "labels", n=len(m))
        w = as_weights(sample_weight, "sample_weight", n=len(m))
        xgb = require_xgboost()
        dtrain = xgb.DMatrix(m, label=y, weight=w, feature_names=names)
        params = {"objective": "binary:logistic", "max_depth": self.max_depth, "eta": self.learning_rate,
                  "seed": self.seed, "nthread": self.n_threads, "eval_metric": "logloss"}
        self.booster_ = xgb.train(params, dtrain, num_boost_round=self.n_estimators)
        self.booster_.set_attr(**{FITTED_FOR_ATTR: json.dumps(self.fitted_for or {}, sort_keys=True)})
        self.n_samples_ = len(m)
        return self

    def predict(self, X: ClaimInputs) -> np.ndarray:
        if not hasattr(self, "booster_"):
            raise NotFittedError("this XGBoostCalibrator is not fitted yet: call .fit(X, labels) or load one "
                                 "with XGBoostCalibrator.from_json(path)")
        m = self._matrix(X.features(self.feature_names))
        xgb = require_xgboost()
        return self.booster_.predict(xgb.DMatrix(m, feature_names=list(self.feature_names))).astype(np.float64)

    def predict_components(self, X: ClaimInputs) -> CalibratedClaims:
        """P(true) alone: a boosted model has no per-condition parts."""
        return CalibratedClaims(self.predict(X))

    def output_range_warning(self) -> str | None:
        """None: the collapse check reads the fit's spread, which an XGBoost file does not record."""
        return None

    def mismatches(self, stack: dict[str, str]) -> list[str]:
        return stack_mismatches(self.fitted_for or {}, stack)

    def to_json(self, path: str | Path) -> None:
        if not hasattr(self, "booster_"):
            raise NotFittedError("this XGBoostCalibrator is not fitted yet: nothing to save")
        if not str(path).endswith(".json"):
            raise ValueError(f"XGBoost models are saved as JSON: the path must end in '.json', got {path}")
        self.booster_.save_model(str(path))

    @classmethod
    def from_json(cls, path: str | Path) -> XGBoostCalibrator:
        xgb = require_xgboost()
        if not Path(path).is_file():
            raise CalibratorFileError(f"XGBoost model: {path} does not exist")
        booster = xgb.Booster()
        try:
            booster.load_model(str(path))
        except xgb.core.XGBoostError as exc:
            raise CalibratorFileError(f"XGBoost model {path}: cannot load ({str(exc).splitlines()[0]})") from None
        if not booster.feature_names:
            raise CalibratorFileError(f"XGBoost model {path}: has no feature names; fit it with franq")
        try:
            fitted_for = json.loads(booster.attr(FITTED_FOR_ATTR) or "{}")
        except ValueError:
            raise CalibratorFileError(f"XGBoost model {path}: attribute '{FITTED_FOR_ATTR}' is not JSON") from None
        cal = cls(feature_names=list(booster.feature_names), fitted_for=fitted_for)
        cal.booster_ = booster
        cal.n_samples_ = 0
        return cal
