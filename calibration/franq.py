"""The FRANQ calibration variants (paper section 2.3; appendix D table 14).

FRANQ mixes P(true) = P_f * UQ_faith + (1 - P_f) * UQ_unfaith. The two UQ scores live on
different scales, so each is mapped through its own :class:`IsotonicCalibrator` fitted on
claims labelled true/false:

``none``
    no calibration: the raw mix.
``calibrated``
    UQ_faith and UQ_unfaith are each fitted on all training claims.
``condition``
    UQ_faith is fitted on the faithful claims, UQ_unfaith on the unfaithful ones (the
    paper's primary method). A claim is faithful by its gold label when it has one, else
    when P_faithful > ``faithful_threshold`` (0.5).
``soft``
    our extension: every claim is used for both fits, weighted by P_faithful (UQ_faith)
    and 1 - P_faithful (UQ_unfaith), so no hard split is needed.

``calibrate_faithfulness=True`` also fits P_faithful itself on the gold faithfulness
labels (paper table 14; off by default because it lowered PRR there).

``hard_mix_threshold=T`` is the thresholded variant of any of them (paper appendix D.1,
table 13, ``T = 0.5``): P_faithful is replaced by ``1(P_faithful > T)`` before the mix, so
each claim takes exactly one (calibrated) UQ branch; the condition split of training
claims without gold labels uses the same cut. Off (``None``) by default: the paper's
continuous versions did better.

Inputs are probabilities ("higher = more likely true"). The UQ calibrators are fitted on
``log(max(p, 1e-300))``: isotonic regression depends only on the order of the scores,
but interpolation between breakpoints is more sensible in log space for claim
probabilities that span many orders of magnitude.

The file records what it was fitted for (``fitted_for``: model, faithfulness backend,
scorers, prompt version, mode); :meth:`FranqCalibrator.mismatches` lists differences
from the stack it is about to be applied to.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from calibration.base import (CalibratorFileError, NotFittedError, as_labels, as_probabilities, as_weights,
                              calibrator_header, evaluation_record, fit_record, number, read_evaluation, read_json,
                              write_json)
from calibration.contract import CalibratedClaims, ClaimInputs, knowledge_signal
from calibration.isotonic import IsotonicCalibrator
from calibration.knowledge_check import NOT_MADE, check_record, fit_check, read_check
from calibration.metrics import expected_calibration_error
from calibration.mix import franq_mix
from calibration.prior import (MIX_RULE, MovesWithPrior, check_prior, fitted_share, implied_prior_of, prior_record,
                              read_implied_prior, read_prior, shift_knowledge,
                               shift_probabilities)

FORMAT = "franq-calibrator"
VERSION = 1
VARIANTS = ("none", "calibrated", "condition", "soft")
LOG_FLOOR = 1e-300
MIN_PER_CONDITION = 30
COLLAPSE_MIN_DISTINCT = 3
COLLAPSE_MIN_SPREAD = 0.05


def log_scores(p: np.ndarray) -> np.ndarray:
    return np.log(np.maximum(p, LOG_FLOOR))


def as_optional_labels(values: Any, field: str, *, n: int) -> np.ndarray:
    """Labels that may be missing: True/False/1/0, or None/NaN for unknown -> float with NaN."""
    if values is None:
        return np.full(n, np.nan)
    out = np.array([np.nan if v is None else v for v in values], dtype=np.float64)
    if out.shape != (n,):
        raise ValueError(f"'{field}' has {len(out)} values, expected {n} (one per claim)")
    known = ~np.isnan(out)
    bad = known & (out != 0) & (out != 1)
    if bad.any():
        raise ValueError(f"'{field}' must be true, false or null; got {out[bad][:3].tolist()}")
    return out


def prediction_spread(p_true: np.ndarray) -> dict:
    """How many distinct values calibrated predictions take, and their range."""
    p = np.asarray(p_true, dtype=np.float64)
    return {"distinct": int(len(np.unique(np.round(p, 6)))), "min": float(p.min()), "max": float(p.max())}


def collapse_warning(spread: dict, where: str) -> str | None:
    """A warning when calibrated predictions collapse (``spread`` from
    :func:`prediction_spread`): fewer than 3 distinct values, or all within 0.05 of each
    other. Such a calibrator cannot rank or threshold claims."""
    if spread["distinct"] < COLLAPSE_MIN_DISTINCT or spread["max"] - spread["min"] < COLLAPSE_MIN_SPREAD:
        return (f"{where}: calibrated P(true) collapses to {spread['distinct']} distinct value(s) between "
                f"{spread['min']:.3f} and {spread['max']:.3f}; it cannot rank or threshold claims (the inputs "
                f"carry little signal, or the training claims are too few or all of one label)")
    return None


def stack_mismatches(fitted_for: dict[str, str], stack: dict[str, str]) -> list[str]:
    """One line per key whose value differs between ``fitted_for`` and ``stack``."""
    return [f"{key}: fitted for {fitted_for.get(key)!r}, running {stack.get(key)!r}"
            for key in sorted(set(fitted_for) | set(stack)) if fitted_for.get(key) != stack.get(key)]


class FranqCalibrator(MovesWithPrior):
    """Scikit-learn-style calibrator for FRANQ's three components.

    >>> cal = FranqCalibrator(variant="condition", fitted_for={"model": "...", ...})
    >>> cal.fit(ClaimInputs(p_faithful, uq_faith, uq_unfaith), is_true, is_faithful=gold)
    >>> p_true = cal.predict(ClaimInputs(p_faithful, uq_faith, uq_unfaith))
    >>> cal.to_json("calibrator.json")

    Reads P_faithful alone (``needs_conditions`` is False): a claim is supported or not.
    """

    needs_conditions = False

    def __init__(self, *, variant: str = "condition", calibrate_faithfulness: bool = False,
                 faithful_threshold: float = 0.5, min_per_condition: int = MIN_PER_CONDITION,
                 fitted_for: dict[str, str] | None = None, description: str = "",
                 hard_mix_threshold: float | None = None, threshold: float | None = None,
                 prior: float | None = None, evaluation: dict | None = None):
        self.variant = variant
        self.evaluation = evaluation
        """How the fitted calibrator does on held-apart dev sets (:func:`calibration.base.evaluation_record`),
        set by whoever measured it (a shipped file's recipe), or None."""
        self.prior = prior
        """The deployment's share of true claims, when it differs from the fitting claims'
        (:mod:`calibration.prior`): the UQ maps' outputs move on the logit scale, or, for
        variant ``none`` (no UQ map), P(true) itself. None = the fitting claims' own."""
        self.threshold = threshold
        """The verdict threshold chosen at fit time (``--target-precision``), or None."""
        self.hard_mix_threshold = hard_mix_threshold
        self.calibrate_faithfulness = calibrate_faithfulness
        self.faithful_threshold = faithful_threshold
        self.min_per_condition = min_per_condition
        self.fitted_for = fitted_for
        self.description = description
        """Free text saved with the calibrator, e.g. what data it was fitted on."""

    # ------------------------------------------------------------------ fitting
    def _validate_options(self) -> None:
        if self.variant not in VARIANTS:
            raise ValueError(f"'variant' must be one of {list(VARIANTS)}, got {self.variant!r}")
        if not isinstance(self.calibrate_faithfulness, bool):
            raise ValueError(f"'calibrate_faithfulness' must be True or False, got {self.calibrate_faithfulness!r}")
        if not 0.0 < self.faithful_threshold < 1.0:
            raise ValueError(f"'faithful_threshold' must lie in (0, 1), got {self.faithful_threshold!r}")
        if self.threshold is not None and (isinstance(self.threshold, bool) or not isinstance(
                self.threshold, (int, float)) or not 0.0 <= self.threshold <= 1.0):
            raise ValueError(f"'threshold' must be a probability in [0, 1], got {self.threshold!r}")
        t = self.hard_mix_threshold
        if t is not None and (isinstance(t, bool) or not isinstance(t, (int, float)) or not 0.0 <= t < 1.0):
            raise ValueError(f"'hard_mix_threshold' must be null or lie in [0, 1), got {t!r}")
        if self.fitted_for is not None and not (isinstance(self.fitted_for, dict) and all(
                isinstance(k, str) and isinstance(v, str) for k, v in self.fitted_for.items())):
            raise ValueError(f"'fitted_for' must map strings to strings, got {self.fitted_for!r}")
        if self.prior is not None:
            check_prior(self.prior)

    def fit(self, X: ClaimInputs, y: Any, *, is_faithful: Any = None, sample_weight: Any = None, groups: Any = None,
            natural: Any = None) -> FranqCalibrator:
        """Fit on scored training claims ``X`` (:class:`~calibration.contract.ClaimInputs`).
        ``y``: is_true, binary labels; ``is_faithful`` (optional): gold faithfulness per
        claim, None/NaN where unknown. ``groups`` / ``natural``: as for the three-condition
        calibrator, the answers and the claims of the knowledge map's ranking check."""
        self._validate_options()
        p_f = p_f_raw = as_probabilities(X.p_faithful, "p_faithful")
        n = len(p_f)
        if n == 0:
            raise ValueError("no training claims: 'p_faithful' is empty")
        _, a, b = X.checked()
        y = as_labels(y, "is_true", n=n)
        gold = as_optional_labels(is_faithful, "is_faithful", n=n)
        w = as_weights(sample_weight, "sample_weight", n=n)
        warnings: list[str] = []

        self.faithfulness_ = None
        if self.calibrate_faithfulness:
            known = ~np.isnan(gold)
            if not known.any():
                raise ValueError("calibrate_faithfulness=True needs gold 'is_faithful' labels; none of the "
                                 f"{n} training claims has one")
            self.faithfulness_ = IsotonicCalibrator().fit(p_f[known], gold[known], w[known])
            p_f = self.faithfulness_.predict(p_f)
        p_f = self._cut(p_f)

        has_gold = ~np.isnan(gold)
        faithful = np.where(has_gold, gold == 1, p_f > self.faithful_threshold)
        if self.variant == "soft":
            w_faith, w_unfaith = w * p_f, w * (1.0 - p_f)
        elif self.variant == "condition":
            w_faith, w_unfaith = w * faithful, w * ~faithful
        else:
            w_faith = w_unfaith = w

        counts = {}
        for cond, wc in (("faithful", w_faith), ("unfaithful", w_unfaith)):
            used = wc > 0
            counts[cond] = {"n": int(used.sum()), "weight": round(float(wc.sum()), 3),
                            "true": round(float((wc * y).sum()), 3),
                            "false": round(float((wc * (1 - y)).sum()), 3)}
        counts["split"] = {"gold": int(has_gold.sum()), "threshold": int((~has_gold).sum())}
        self.counts_ = counts

        self.uq_faith_ = self.uq_unfaith_ = None
        if self.variant != "none":
            for cond, wc, scores, attr in (("faithful", w_faith, a, "uq_faith_"),
                                           ("unfaithful", w_unfaith, b, "uq_unfaith_")):
                c = counts[cond]
                if c["n"] == 0 or c["weight"] <= 0:
                    raise ValueError(
                        f"variant {self.variant!r}: no {cond} training claims to fit "
                        f"UQ_{'faith' if cond == 'faithful' else 'unfaith'}; use variant 'calibrated' or 'soft'")
                if c["weight"] < self.min_per_condition:
                    warnings.append(f"{cond} condition: only {c['weight']:g} (weighted) training claims, fewer "
                                    f"than {self.min_per_condition}; its calibrator may be unreliable")
                if min(c["true"], c["false"]) == 0:
                    warnings.append(f"{cond} condition: all training claims are "
                                    f"{'true' if c['false'] == 0 else 'false'}; its calibrator is constant")
                setattr(self, attr, IsotonicCalibrator().fit(log_scores(scores), y, wc))
        self.knowledge_check_ = None
        if self.uq_unfaith_ is not None:
            self.knowledge_check_ = fit_check(log_scores(b), y, w_unfaith, groups, natural)
            warnings += [] if self.knowledge_check_ else [NOT_MADE]
        self.n_samples_ = n
        self.implied_prior_ = None  # the unmoved mix on the fit claims: the prior it implies
        fitted = self._predict(p_f_raw, a, b, shift=0.0)[3]
        self.implied_prior_ = implied_prior_of(fitted, w)
        if self.prior is not None:  # a deployment prior given at fit time: the fit's outputs, moved to it
            fitted = self._predict(p_f_raw, a, b)[3]
        self.fit_spread_ = prediction_spread(fitted)
        collapsed = collapse_warning(self.fit_spread_, "on its training claims")
        if collapsed:
            warnings.append(collapsed)
        self.warnings_ = tuple(warnings)
        self.train_ece_ = {"before": expected_calibration_error(franq_mix(p_f_raw, a, b), y),
                           "after": expected_calibration_error(fitted, y)}
        return self

    # ------------------------------------------------------------------ prediction
    def _check_fitted(self) -> None:
        if not hasattr(self, "n_samples_"):
            raise NotFittedError(
                "this FranqCalibrator is not fitted yet: fit one with `franq fit calibrator TRAIN.jsonl -o "
                "calibrator.json` (or FranqCalibrator(...).fit(...)) and load it with FranqCalibrator.from_json")

    def _cut(self, p_f: np.ndarray) -> np.ndarray:
        """``1(P_faithful > T)`` for the thresholded variant, else P_faithful itself."""
        if self.hard_mix_threshold is None:
            return p_f
        return (np.asarray(p_f) > self.hard_mix_threshold).astype(np.float64)

    @property
    def base_rate(self) -> float | None:
        """The share of true claims the fit saw (weighted; None when unknown): of all claims
        for variant ``none``, of the two conditions' fits otherwise."""
        c = getattr(self, "counts_", {}) or {}
        return fitted_share([c.get("faithful")] if self.variant == "none" else [c.get("faithful"), c.get("unfaithful")])

    @property
    def prior_rule(self) -> str:
        """What a prior moves, as the file's ``prior.rule`` and ``franq fit prior`` say it."""
        if getattr(self, "implied_prior_", None) is not None:
            return MIX_RULE
        return "P(true): logit + logit_shift" if self.variant == "none" else "each UQ map's output: logit + logit_shift"

    def _predict(self, p_f, a, b, shift: float | None = None):
        """``(P_faithful, T_faith, T_unfaith, P(true))`` moved by ``shift`` (default:
        :meth:`prior_shift`): P(true) as a whole, or, for a file without ``implied_prior``,
        each UQ map before mixing (P(true) itself for variant ``none``)."""
        shift = self.prior_shift() if shift is None else shift
        per_map = getattr(self, "implied_prior_", None) is None and self.variant != "none"
        if self.faithfulness_ is not None:
            p_f = self.faithfulness_.predict(p_f)
        p_f = self._cut(p_f)
        a = a if self.uq_faith_ is None else self.uq_faith_.predict(log_scores(a))
        b = b if self.uq_unfaith_ is None else self.uq_unfaith_.predict(log_scores(b))
        moved = [x if m is None else shift_probabilities(x, shift) for x, m in ((a, self.uq_faith_), (b, self.uq_unfaith_))]
        if per_map:
            return (p_f, *moved, franq_mix(p_f, *moved))
        return (p_f, *moved, shift_probabilities(franq_mix(p_f, a, b), shift))

    def predict_components(self, X: ClaimInputs) -> CalibratedClaims:
        """Calibrated P(true), P(true | supported) (UQ_faith mapped), P(true | not supported)
        (UQ_unfaith mapped) and, when fitted, P_faithful (after the cut of the thresholded variant)."""
        self._check_fitted()
        inputs = X.checked()
        c_f, a, b, p = self._predict(*inputs)
        knowledge = shift_knowledge(knowledge_signal(self.uq_unfaith_, self.counts_.get("unfaithful"),
                                                     log_scores(inputs[2]), self.knowledge_check_), self.prior_shift())
        return CalibratedClaims(p, p_true_if_supported=a, p_true_if_unfaithful=b,
                                p_faithful=c_f if self.faithfulness_ is not None else None, knowledge=knowledge)

    def predict(self, X: ClaimInputs) -> np.ndarray:
        """Calibrated FRANQ P(true) per claim."""
        return self.predict_components(X).p_true

    def output_range_warning(self) -> str | None:
        """The collapse check at load time: from the predictions on the training claims,
        saved at fit time; for files written before that, from the UQ maps alone (the
        calibrated mix lies between their smallest and largest values)."""
        self._check_fitted()
        if self.fit_spread_ is not None:
            return collapse_warning(self.fit_spread_, "on its training claims")
        maps = [m for m in (self.uq_faith_, self.uq_unfaith_) if m is not None]
        if not maps:
            return None
        values = np.concatenate([m.y_thresholds_ for m in maps])
        spread = {"distinct": COLLAPSE_MIN_DISTINCT, "min": float(values.min()), "max": float(values.max())}
        return collapse_warning(spread, "its UQ maps")

    def mismatches(self, stack: dict[str, str]) -> list[str]:
        """Differences between what this calibrator was fitted for and ``stack``, e.g.
        ``["faithfulness: fitted for 'lexical-v1', running 'alignscore'"]``."""
        return stack_mismatches(self.fitted_for or {}, stack)

    # ------------------------------------------------------------------ persistence
    def to_dict(self) -> dict:
        self._check_fitted()
        return {
            "format": FORMAT, "version": VERSION, "variant": self.variant,
            "fitted_for": self.fitted_for or {}, "description": self.description,
            "faithful_threshold": self.faithful_threshold,
            **({} if self.hard_mix_threshold is None else {"hard_mix_threshold": self.hard_mix_threshold}),
            "uq_transform": "log",
            "faithfulness": self.faithfulness_.to_dict() if self.faithfulness_ is not None else None,
            "uq_faith": self.uq_faith_.to_dict() if self.uq_faith_ is not None else None,
            "uq_unfaith": self.uq_unfaith_.to_dict() if self.uq_unfaith_ is not None else None,
            "n_samples": self.n_samples_, "counts": self.counts_, "fit_spread": self.fit_spread_,
            **({} if self.threshold is None else {"threshold": self.threshold}),
            **({} if self.implied_prior_ is None else {"implied_prior": self.implied_prior_}),
            **({} if self.prior is None else {"prior": prior_record(
                self.base_rate, self.prior, self.prior_rule, self.implied_prior_)}),
            **check_record(self.knowledge_check_), **evaluation_record(self.evaluation),
        }

    @classmethod
    def from_dict(cls, obj: Any, *, where: str = "calibrator") -> FranqCalibrator:
        """A calibrator file's object (files of franq 0.1 name the hard-mix cut ``p_faithful_threshold``)."""
        fitted_for, description = calibrator_header(obj, FORMAT, VERSION, where)
        cal = cls(variant=obj.get("variant"), faithful_threshold=number(obj, "faithful_threshold", where, 0.5),
                  fitted_for=fitted_for, description=description,
                  hard_mix_threshold=_hard_mix_threshold(obj, where), threshold=obj.get("threshold"),
                  prior=read_prior(obj, where), evaluation=read_evaluation(obj, where))
        try:
            cal._validate_options()
        except ValueError as exc:
            raise CalibratorFileError(f"{where}: {exc}") from None
        parts = {}
        for key in ("faithfulness", "uq_faith", "uq_unfaith"):
            part = obj.get(key)
            parts[key] = None if part is None else IsotonicCalibrator.from_dict(part, where=f"{where}: '{key}'")
        if cal.variant != "none" and (parts["uq_faith"] is None or parts["uq_unfaith"] is None):
            raise CalibratorFileError(f"{where}: variant {cal.variant!r} needs 'uq_faith' and 'uq_unfaith'")
        cal.calibrate_faithfulness = parts["faithfulness"] is not None
        cal.faithfulness_, cal.uq_faith_, cal.uq_unfaith_ = (parts["faithfulness"], parts["uq_faith"],
                                                              parts["uq_unfaith"])
        cal.n_samples_, cal.counts_, cal.fit_spread_ = fit_record(obj, where)
        cal.knowledge_check_ = read_check(obj, where)
        cal.implied_prior_ = read_implied_prior(obj, where)
        cal.warnings_ = ()
        return cal

    def to_json(self, path: str | Path) -> None:
        write_json(self.to_dict(), path)

    @classmethod
    def from_json(cls, path: str | Path) -> FranqCalibrator:
        return cls.from_dict(read_json(path), where=f"calibrator {path}")

    @property
    def name(self) -> str:
        """The label for ``AnswerScore.calibration``, e.g. ``"condition"``, ``"condition+faithfulness"``
        or ``"condition+T=0.5"`` (the thresholded variant)."""
        return (self.variant + ("+faithfulness" if self.calibrate_faithfulness else "")
                + ("" if self.hard_mix_threshold is None else f"+T={self.hard_mix_threshold:g}"))


def _hard_mix_threshold(obj: dict, where: str) -> float | None:
    key = "hard_mix_threshold" if "hard_mix_threshold" in obj else "p_faithful_threshold"  # 0.1's name
    return None if obj.get(key) is None else number(obj, key, where, None)
