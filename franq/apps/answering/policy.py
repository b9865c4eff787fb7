"""Decision policies fitted on labelled data and saved as small JSON files.

:class:`ThresholdPolicy` (paper 000 section 6): answer when the answer check's score is at
least ``threshold``, else take the fallback. :meth:`ThresholdPolicy.fit` picks the
threshold that maximizes the mean utility (answer's correctness, or the fallback's
utility) and estimates what it gains by k-fold cross-validation: for each fold, the
threshold is fitted on the other folds and applied to it (000: "5-fold cross-validation,
optimizing the threshold on four folds and evaluating performance on the fifth"); the
out-of-fold decisions give the CV accuracy and, bootstrapped, its 95% interval. The saved
threshold is refitted on all the data.

:class:`SelectivePolicy` (paper 003 section 5.1): a logistic regression over named
signals (FRANQ P(true), P_faithful, sufficiency, self-rated P(True), ...) predicts
whether the answer is correct; answer when its probability is at least ``threshold``,
chosen for a target coverage. Fit reports out-of-fold (k-fold) selective-accuracy AUC
and accuracy at the target coverage, so the numbers are not in-sample.

Both write ``{"kind": ..., "version": 1, ...}`` JSON; :func:`load_policy` reads either.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from franq.apps.answering import decision_metrics
from franq import InputError
from franq.io import atomic_write, read_json_file
from franq.evaluation.metrics import bootstrap

THRESHOLD_KIND = "franq.threshold-policy"
SELECTIVE_KIND = "franq.selective-policy"


def _folds(n: int, k: int, seed: int) -> list[np.ndarray]:
    if k < 2 or n < k:
        raise InputError(f"folds: need at least k = {k} >= 2 items, got {n}")
    order = np.random.default_rng(seed).permutation(n)
    return [np.sort(f) for f in np.array_split(order, k)]


def best_threshold(scores, utility_answer, utility_fallback) -> float:
    """The threshold (``answer if score >= t``) with the highest mean utility; among ties
    the one that answers most. Candidates: every distinct score and +inf (always fall back)."""
    s = np.asarray(scores, dtype=np.float64)
    ua, uf = np.asarray(utility_answer, dtype=np.float64), np.asarray(utility_fallback, dtype=np.float64)
    candidates = np.r_[np.unique(s), np.inf]
    means = [np.where(s >= t, ua, uf).mean() for t in candidates]
    best = max(means)
    return float(min(t for t, m in zip(candidates, means) if m >= best - 1e-12))


@dataclass(frozen=True)
class ThresholdPolicy:
    verify: str
    fallback: str
    threshold: float
    cv: dict = field(default_factory=dict)
    kind: str = THRESHOLD_KIND
    version: int = 1

    def answers(self, score: float) -> bool:
        return bool(score >= self.threshold)

    @classmethod
    def fit(cls, scores, correct, fallback_utility, *, verify: str, fallback: str, k: int = 5, seed: int = 0,
            n_boot: int = 1000) -> ThresholdPolicy:
        """``correct[i]``: the answer's utility (1 correct, 0 not); ``fallback_utility[i]``:
        the fallback's (a closed-book answer's correctness, or a constant for abstention)."""
        s = np.asarray(scores, dtype=np.float64)
        ua = np.asarray(correct, dtype=np.float64)
        uf = np.broadcast_to(np.asarray(fallback_utility, dtype=np.float64), s.shape).copy()
        if not (len(s) == len(ua) == len(uf)):
            raise InputError("scores, correct and fallback_utility must have the same length")
        oof = np.zeros(len(s), dtype=bool)  # True = answered
        fold_t = []
        for test in _folds(len(s), k, seed):
            train = np.setdiff1d(np.arange(len(s)), test)
            t = best_threshold(s[train], ua[train], uf[train])
            fold_t.append(t)
            oof[test] = s[test] >= t
        util = np.where(oof, ua, uf)
        gain, lo, hi = bootstrap(lambda u, a: float(u.mean() - a.mean()), util, ua, n_boot=n_boot, seed=seed)
        cv = {"k": k, "seed": seed, "n": int(len(s)), "base_accuracy": float(ua.mean()),
              "fallback_accuracy": float(uf.mean()), "cv_accuracy": float(util.mean()),
              "cv_gain": gain, "cv_gain_95": [lo, hi], "cv_fallback_rate": float(1 - oof.mean()),
              "fold_thresholds": [None if not np.isfinite(t) else t for t in fold_t]}
        t = best_threshold(s, ua, uf)
        return cls(verify, fallback, t if np.isfinite(t) else float("inf"), cv)

    def to_json(self, path: str | Path) -> None:
        d = asdict(self)
        d["threshold"] = None if not np.isfinite(self.threshold) else self.threshold  # JSON has no inf
        atomic_write(str(path), json.dumps(d, indent=2) + "\n")


@dataclass(frozen=True)
class SelectivePolicy:
    features: tuple[str, ...]
    coef: tuple[float, ...]
    intercept: float
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    threshold: float
    coverage: float
    cv: dict = field(default_factory=dict)
    kind: str = SELECTIVE_KIND
    version: int = 1
    combiner: str = "logistic"
    """``logistic`` (003 5.1) or ``xgboost`` (000 E.3: an XGBoost classifier, 3-fold out-of-fold scores)."""
    model: dict | None = None
    """The XGBoost booster as its JSON model (xgboost's own format, never a pickle)."""

    def _matrix(self, rows) -> np.ndarray:
        if isinstance(rows, dict):
            rows = [rows]
        try:
            x = np.array([[float(r[f]) for f in self.features] for r in rows], dtype=np.float64)
        except KeyError as exc:
            raise InputError(f"selective policy: signal {exc.args[0]!r} missing; the policy reads "
                             f"{list(self.features)}") from None
        return x.reshape(len(rows), len(self.features))

    def probability(self, rows) -> np.ndarray:
        """P(correct) for each row (a dict of signal values by name)."""
        if self.combiner == "xgboost":
            return _xgb_predict(_xgb_booster(self.model), self._matrix(rows))
        z = (self._matrix(rows) - np.asarray(self.mean)) / np.asarray(self.scale)
        return 1.0 / (1.0 + np.exp(-(z @ np.asarray(self.coef) + self.intercept)))

    def answers(self, row: dict) -> bool:
        return bool(self.probability(row)[0] >= self.threshold)

    @classmethod
    def fit(cls, rows, correct, *, features, coverage: float = 0.5, k: int | None = None, seed: int = 0,
            n_boot: int = 1000, combiner: str = "logistic") -> SelectivePolicy:
        """Logistic regression (or, ``combiner="xgboost"``, 000's XGBoost classifier with
        xgboost's default hyperparameters, which 000 does not state) of ``correct`` on
        ``features`` of ``rows``; the threshold answers the top ``coverage`` share. ``cv``
        holds out-of-fold metrics over ``k`` folds (default 5; 3 for xgboost, as 000 E.3)."""
        from sklearn.linear_model import LogisticRegression

        if combiner not in COMBINERS:
            raise InputError(f"combiner: expected one of {list(COMBINERS)}, got {combiner!r}")
        k = k if k is not None else (3 if combiner == "xgboost" else 5)

        features = tuple(features)
        probe = cls(features, (0.0,) * len(features), 0.0, (0.0,) * len(features), (1.0,) * len(features), 0.5, coverage)
        x, y = probe._matrix(list(rows)), np.asarray(correct, dtype=np.int64)
        if not 0 < coverage <= 1:
            raise InputError(f"coverage: expected a share in (0, 1], got {coverage}")
        if len(np.unique(y)) < 2:
            raise InputError("selective fit: the labels are all one class; nothing to learn")

        def fit_one(xt, yt):
            mu, sd = xt.mean(0), xt.std(0)
            sd = np.where(sd > 0, sd, 1.0)
            if len(np.unique(yt)) < 2:
                return mu, sd, np.zeros(len(features)), float(np.log((yt.mean() + 1e-9) / (1 - yt.mean() + 1e-9)))
            m = LogisticRegression(max_iter=1000).fit((xt - mu) / sd, yt)
            return mu, sd, m.coef_[0], float(m.intercept_[0])

        oof = np.zeros(len(y))
        for test in _folds(len(y), k, seed):
            train = np.setdiff1d(np.arange(len(y)), test)
            if combiner == "xgboost":
                oof[test] = _xgb_predict(_xgb_fit(x[train], y[train], seed), x[test])
                continue
            mu, sd, w, b = fit_one(x[train], y[train])
            oof[test] = 1 / (1 + np.exp(-(((x[test] - mu) / sd) @ w + b)))
        model = None
        if combiner == "xgboost":
            booster = _xgb_fit(x, y, seed)
            full, model = _xgb_predict(booster, x), json.loads(bytes(booster.save_raw("json")))
            mu, sd, w, b = np.zeros(len(features)), np.ones(len(features)), np.zeros(len(features)), 0.0
        else:
            mu, sd, w, b = fit_one(x, y)
            full = 1 / (1 + np.exp(-(((x - mu) / sd) @ w + b)))
        kth = max(1, int(np.ceil(coverage * len(y) - 1e-9)))
        threshold = float(np.sort(full)[::-1][kth - 1])
        auc = bootstrap(decision_metrics.selective_auc, oof, y, n_boot=n_boot, seed=seed)
        at = bootstrap(lambda s, c: decision_metrics.accuracy_at_coverage(s, c, coverage), oof, y,
                               n_boot=n_boot, seed=seed)
        cv = {"k": k, "seed": seed, "n": int(len(y)), "accuracy": float(y.mean()),
              "oof_selective_auc": auc[0], "oof_selective_auc_95": list(auc[1:]),
              "oof_accuracy_at_coverage": at[0], "oof_accuracy_at_coverage_95": list(at[1:])}
        cv["combiner"] = combiner
        policy = cls(features, tuple(map(float, w)), b, tuple(map(float, mu)), tuple(map(float, sd)),
                     threshold, coverage, cv, combiner=combiner, model=model)
        object.__setattr__(policy, "_oof", oof)
        return policy

    @property
    def out_of_fold(self) -> np.ndarray | None:
        """The k-fold out-of-fold P(correct) of the rows :meth:`fit` saw (None once loaded)."""
        return getattr(self, "_oof", None)

    def to_json(self, path: str | Path) -> None:
        atomic_write(str(path), json.dumps(asdict(self), indent=2) + "\n")


COMBINERS = ("logistic", "xgboost")


def _xgb_fit(x, y, seed: int):
    import xgboost

    if len(np.unique(y)) < 2:  # a fold with one class: a constant model at that class
        x, y = np.r_[x, x[:1]], np.r_[y, 1 - y[:1]]
    return xgboost.XGBClassifier(n_jobs=1, random_state=seed).fit(x, y).get_booster()


def _xgb_booster(model: dict):
    import xgboost

    booster = xgboost.Booster()
    booster.load_model(bytearray(json.dumps(model).encode("utf-8")))
    return booster


def _xgb_predict(booster, x) -> np.ndarray:
    import xgboost

    return np.asarray(booster.predict(xgboost.DMatrix(x)), dtype=np.float64)


def load_policy(path: str | Path) -> ThresholdPolicy | SelectivePolicy:
    """A policy JSON written by :meth:`ThresholdPolicy.to_json` or :meth:`SelectivePolicy.to_json`,
    read within franq's limits (:func:`franq.io.read_json_file`) and checked field by field."""
    d = read_json_file(path, what="policy")
    kind = d.get("kind") if isinstance(d, dict) else None
    where = f"policy {path}"
    if kind == THRESHOLD_KIND:
        t = d.get("threshold")
        return ThresholdPolicy(_text(d, "verify", where), _text(d, "fallback", where),
                               float("inf") if t is None else _number(d, "threshold", where), _object(d, "cv", where))
    if kind == SELECTIVE_KIND:
        features = d.get("features")
        if not isinstance(features, list) or not features or not all(isinstance(f, str) for f in features):
            raise InputError(f"{where}: 'features' must be a non-empty list of names")
        n = len(features)
        return SelectivePolicy(tuple(features), _numbers(d, "coef", where, n), _number(d, "intercept", where),
                               _numbers(d, "mean", where, n), _numbers(d, "scale", where, n),
                               _number(d, "threshold", where), _number(d, "coverage", where), _object(d, "cv", where),
                               combiner=_combiner(d, where), model=_model(d, where))
    raise InputError(f"policy: {path} is not a franq policy file (its 'kind' is {kind!r:.40}; expected "
                     f"{THRESHOLD_KIND!r} or {SELECTIVE_KIND!r})")


def _combiner(d: dict, where: str) -> str:
    combiner = d.get("combiner", "logistic")
    if combiner not in ("logistic", "xgboost"):
        raise InputError(f"{where}: 'combiner' must be 'logistic' or 'xgboost', got {combiner!r:.40}")
    return combiner


def _model(d: dict, where: str):
    model = d.get("model")
    if model is not None and not isinstance(model, (dict, str)):
        raise InputError(f"{where}: 'model' must be the xgboost model (an object) or null")
    return model


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and np.isfinite(v)


def _number(d: dict, key: str, where: str) -> float:
    if not _is_number(d.get(key)):
        raise InputError(f"{where}: '{key}' must be a finite number, got {d.get(key)!r:.40}")
    return float(d[key])


def _numbers(d: dict, key: str, where: str, n: int) -> tuple[float, ...]:
    v = d.get(key)
    if not isinstance(v, list) or len(v) != n or not all(_is_number(x) for x in v):
        raise InputError(f"{where}: '{key}' must be a list of {n} finite numbers (one per feature)")
    return tuple(float(x) for x in v)


def _text(d: dict, key: str, where: str) -> str:
    if not isinstance(d.get(key), str):
        raise InputError(f"{where}: '{key}' must be a string, got {type(d.get(key)).__name__}")
    return d[key]


def _object(d: dict, key: str, where: str) -> dict:
    v = d.get(key, {})
    if not isinstance(v, dict):
        raise InputError(f"{where}: '{key}' must be an object, got {type(v).__name__}")
    return v
