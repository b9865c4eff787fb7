"""A small fitted logistic map from named features to a probability, stored as JSON.

Used by the context-PMI and combined faithfulness backends. The JSON holds the feature
names, their standardization, the coefficients, and the stack the map was fitted for (LM,
prompt version, lexical backend), so a map is never applied silently to another stack.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from franq import files
from franq.errors import InputError


@dataclass(frozen=True)
class LogisticMap:
    """``p = sigmoid(intercept + sum_j coef_j * (x_j - mean_j) / scale_j)``."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    stack: dict = field(default_factory=dict)
    fitted_on: dict = field(default_factory=dict)

    def __post_init__(self):
        n = len(self.features)
        for key in ("mean", "scale", "coef"):
            if len(getattr(self, key)) != n:
                raise InputError(f"logistic map '{key}': expected {n} values (one per feature), "
                                 f"got {len(getattr(self, key))}")
        if any(s <= 0 for s in self.scale):
            raise InputError(f"logistic map 'scale': values must be positive, got {self.scale}")

    @classmethod
    def fit(cls, x: np.ndarray, y: np.ndarray, features: Sequence[str], *, c: float = 1.0,
            stack: dict | None = None, fitted_on: dict | None = None) -> LogisticMap:
        """L2-regularized logistic regression on standardized features (scikit-learn)."""
        from sklearn.linear_model import LogisticRegression

        x = np.asarray(x, dtype=np.float64).reshape(len(y), -1)
        y = np.asarray(y).astype(int)
        if x.shape[1] != len(features):
            raise ValueError(f"x has {x.shape[1]} columns but {len(features)} feature names were given")
        if len(set(y.tolist())) != 2:
            raise ValueError("y: both labels (0 and 1) are needed to fit a logistic map")
        mean, scale = x.mean(0), x.std(0)
        scale[scale == 0] = 1.0
        model = LogisticRegression(C=c, max_iter=1000).fit((x - mean) / scale, y)
        return cls(tuple(features), tuple(mean.tolist()), tuple(scale.tolist()),
                   tuple(model.coef_[0].tolist()), float(model.intercept_[0]),
                   dict(stack or {}), dict(fitted_on or {}))

    def predict(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64).reshape(-1, len(self.features))
        z = self.intercept + ((x - np.array(self.mean)) / np.array(self.scale)) @ np.array(self.coef)
        return 1.0 / (1.0 + np.exp(-z))

    def to_json(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(asdict(self), indent=1) + "\n", encoding="utf-8")

    @classmethod
    def from_json(cls, path_or_text: str | Path) -> LogisticMap:
        """A map from a JSON file (read within the ``artefact_bytes`` and ``json_depth``
        limits: :mod:`franq.files`) or from its JSON text; every field checked."""
        text = str(path_or_text)
        where = "logistic map"
        if not text.lstrip().startswith("{"):
            where = f"logistic map {path_or_text}"
            text = files.read_text(path_or_text, what="logistic map")
        data = files.load_json(text, where, max_int=files.INT64)
        known = {"features", "mean", "scale", "coef", "intercept", "stack", "fitted_on"}
        if not isinstance(data, dict) or not {"features", "coef", "intercept"} <= set(data):
            raise InputError(f"{where}: expected an object with 'features', 'coef' and 'intercept'")
        unknown = sorted(set(data) - known)
        if unknown:
            raise InputError(f"{where}: unknown key(s) {unknown}")
        features = data["features"]
        if not isinstance(features, list) or not all(isinstance(f, str) for f in features):
            raise InputError(f"{where}: 'features' must be a list of names")
        n = len(features)
        values = {k: data.get(k, [default] * n) for k, default in (("mean", 0.0), ("scale", 1.0), ("coef", None))}
        for key, v in values.items():
            if not isinstance(v, list) or not all(_is_number(x) for x in v):
                raise InputError(f"{where}: '{key}' must be a list of numbers")
        if not _is_number(data["intercept"]):
            raise InputError(f"{where}: 'intercept' must be a number, got {data['intercept']!r:.40}")
        for key in ("stack", "fitted_on"):
            if not isinstance(data.get(key, {}), dict):
                raise InputError(f"{where}: '{key}' must be an object")
        return cls(tuple(features), tuple(values["mean"]), tuple(values["scale"]), tuple(values["coef"]),
                   float(data["intercept"]), dict(data.get("stack", {})), dict(data.get("fitted_on", {})))


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)
