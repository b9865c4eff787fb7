"""FRANQ with three conditions (issue 25): the passages support the claim, contradict it,
or do not mention it::

    P(true) = P_s * T_s + P_c * T_c + P_n * T_n

The binary FRANQ (:mod:`calibration.franq`, paper section 2.3) cannot tell "the passages
say otherwise" (strong evidence of a false claim) from "the passages do not say" (the
model's own knowledge decides). Here each condition has its own isotonic map:

``T_s``  UQ_faith (p(c|x,r)) fitted on supported claims: P(true | supported)
``T_c``  UQ_faith fitted on contradicted claims: P(true | contradicted), the model reading
         passages that contradict what it wrote; mostly low
``T_n``  UQ_unfaith (p(c|x)) fitted on not-mentioned claims: P(true | not mentioned)

Variants:

``none``       raw: T_s = T_c = UQ_faith, T_n = UQ_unfaith (no fitted map)
``condition``  each claim is assigned to one condition: its gold three-way label where
               present (``condition``), else the argmax of the verifier's P_s, P_c, P_n
``soft``       every claim is used for all three fits, weighted by P_s, P_c and P_n

``flat``: conditions whose map ignores the UQ score: the weighted share of true claims of
that condition (a one-level map). For T_c on few contradicted claims, where the UQ score
(a claim's summed log-probability) mostly measures the claim's length: an isotonic map on
long training claims sends every short claim to its top level.

As in the binary calibrator the UQ maps are fitted on ``log(max(p, 1e-300))``. With
P_c = 0 this is the binary mix with P_faithful = P_s (:func:`calibration.mix.franq_mix3`).
A leaf module: it never imports ``franq``. The file's format is ``franq-calibrator-3``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from calibration.base import (CalibratorFileError, NotFittedError, as_labels, as_probabilities, as_weights,
                              calibrator_header, evaluation_record, fit_record, read_evaluation, read_json,
                              write_json)
from calibration.contract import CalibratedClaims, ClaimInputs, knowledge_signal
from calibration.franq import (MIN_PER_CONDITION, collapse_warning, log_scores, prediction_spread,
                               stack_mismatches)
from calibration.isotonic import PRIOR_STRENGTH, IsotonicCalibrator
from calibration.knowledge_check import NOT_MADE, check_record, fit_check, read_check
from calibration.metrics import expected_calibration_error
from calibration.mix import franq_mix3
from calibration.prior import (MIX_RULE, MovesWithPrior, check_prior, fitted_share, implied_prior_of, prior_record,
                              read_implied_prior, read_prior, shift_knowledge,
                               shift_probabilities)

FORMAT = "franq-calibrator-3"
VERSION = 1
VARIANTS = ("none", "condition", "soft")
CONDITIONS = ("supported", "contradicted", "not_mentioned")
MAPS = (("supported", "uq_supported", "faith"), ("contradicted", "uq_contradicted", "faith"),
        ("not_mentioned", "uq_not_mentioned", "unfaith"))
"""(condition, attribute / JSON key, which UQ score it maps)."""


def as_conditions(p_s: Any, p_c: Any, p_n: Any, *, n: int | None = None) -> np.ndarray:
    """``(n, 3)`` rows of P_s, P_c, P_n, each in [0, 1], renormalised to sum to 1 (a row of
    zeros is "not mentioned")."""
    cols = [as_probabilities(v, f, n=n) for v, f in ((p_s, "p_faithful"), (p_c, "p_contradicted"),
                                                     (p_n, "p_not_mentioned"))]
    k = len(cols[0])
    for col, f in zip(cols[1:], ("p_contradicted", "p_not_mentioned")):
        if len(col) != k:
            raise ValueError(f"'{f}' has {len(col)} values, expected {k} (one per claim)")
    p = np.column_stack(cols) if k else np.zeros((0, 3))
    total = p.sum(axis=1, keepdims=True)
    zero = total[:, 0] <= 0
    p[zero] = (0.0, 0.0, 1.0)
    total[zero] = 1.0
    return p / total


def as_condition_labels(values: Any, n: int) -> list[str | None]:
    if values is None:
        return [None] * n
    out = list(values)
    if len(out) != n:
        raise ValueError(f"'condition' has {len(out)} values, expected {n} (one per claim)")
    bad = [v for v in out if v is not None and v not in CONDITIONS]
    if bad:
        raise ValueError(f"'condition' must be one of {list(CONDITIONS)} or null; got {bad[:3]}")
    return out


class ThreeConditionCalibrator(MovesWithPrior):
    """Scikit-learn-style calibrator of three-condition FRANQ.

    >>> X = ClaimInputs(p_s, uq_faith, uq_unfaith, p_contradicted=p_c, p_not_mentioned=p_n)
    >>> cal = ThreeConditionCalibrator(variant="condition", fitted_for={...}).fit(X, is_true, condition=gold)
    >>> p_true = cal.predict(X)
    >>> cal.to_json("calibrator.json")

    Reads P_contradicted and P_not_mentioned besides P_supported (``needs_conditions``).
    """

    needs_conditions = True

    def __init__(self, *, variant: str = "condition", min_per_condition: int = MIN_PER_CONDITION,
                 fitted_for: dict[str, str] | None = None, description: str = "", flat: tuple[str, ...] = (),
                 prior: float | None = None, threshold: float | None = None,
                 prior_strength: float = PRIOR_STRENGTH, evaluation: dict | None = None):
        self.variant = variant
        self.evaluation = evaluation
        """How the fitted calibrator does on held-apart dev sets (:func:`calibration.base.evaluation_record`),
        set by whoever measured it (a shipped file's recipe), or None."""
        self.prior_strength = prior_strength
        """Each map step's Beta prior, in pseudo-samples (:mod:`calibration.isotonic`): larger
        draws the steps of a map whose score carries little signal to its base rate."""
        self.prior = prior
        """The deployment base rate (share of true claims) the maps' outputs are moved to
        (:mod:`calibration.prior`); None = the fitting claims' own (:attr:`base_rate`)."""
        self.threshold = threshold
        """The verdict threshold chosen at fit time (``--target-precision``), or None."""
        self.flat = tuple(flat)
        self.min_per_condition = min_per_condition
        self.fitted_for = fitted_for
        self.description = description

    def _validate_options(self) -> None:
        if self.variant not in VARIANTS:
            raise ValueError(f"'variant' must be one of {list(VARIANTS)}, got {self.variant!r}")
        if any(c not in CONDITIONS for c in self.flat):
            raise ValueError(f"'flat' must name conditions among {list(CONDITIONS)}, got {list(self.flat)!r}")
        if self.prior is not None:
            check_prior(self.prior)
        if self.threshold is not None and (isinstance(self.threshold, bool) or not isinstance(
                self.threshold, (int, float)) or not 0.0 <= self.threshold <= 1.0):
            raise ValueError(f"'threshold' must be a probability in [0, 1], got {self.threshold!r}")
        if self.fitted_for is not None and not (isinstance(self.fitted_for, dict) and all(
                isinstance(k, str) and isinstance(v, str) for k, v in self.fitted_for.items())):
            raise ValueError(f"'fitted_for' must map strings to strings, got {self.fitted_for!r}")

    # ------------------------------------------------------------------ fitting
    def fit(self, X: ClaimInputs, y: Any, *, condition: Any = None, sample_weight: Any = None, groups: Any = None,
            natural: Any = None) -> ThreeConditionCalibrator:
        """Fit on scored training claims ``X`` (:class:`~calibration.contract.ClaimInputs` with
        P_contradicted and P_not_mentioned). ``y``: is_true, binary labels; ``condition``
        (optional): the gold three-way label per claim (``supported`` / ``contradicted`` /
        ``not_mentioned``, None where unknown). The knowledge map's ranking check
        (:mod:`calibration.knowledge_check`) reads the claims ``natural`` marks (a boolean
        mask; default: all; leave synthetic corruptions out), drawn by ``groups`` (answer ids;
        default: each claim its own)."""
        self._validate_options()
        p, a, b = self._inputs(X)
        n = len(p)
        if n == 0:
            raise ValueError("no training claims: 'p_faithful' is empty")
        scores = {"faith": a, "unfaith": b}
        y = as_labels(y, "is_true", n=n)
        gold = as_condition_labels(condition, n)
        w = as_weights(sample_weight, "sample_weight", n=n)
        assigned = np.array([CONDITIONS.index(g) if g is not None else int(np.argmax(p[i]))
                             for i, g in enumerate(gold)])
        if self.variant == "soft":
            weights = [w * p[:, k] for k in range(3)]
        else:
            weights = [w * (assigned == k) for k in range(3)]
        counts: dict[str, dict] = {}
        warnings: list[str] = []
        for name, wc in zip(CONDITIONS, weights):
            counts[name] = {"n": int((wc > 0).sum()), "weight": round(float(wc.sum()), 3),
                            "true": round(float((wc * y).sum()), 3), "false": round(float((wc * (1 - y)).sum()), 3)}
        counts["split"] = {"gold": sum(g is not None for g in gold), "argmax": sum(g is None for g in gold)}
        self.counts_ = counts
        for name, attr, _ in MAPS:
            setattr(self, attr + "_", None)
        if self.variant != "none":
            for (name, attr, score), wc in zip(MAPS, weights):
                c = counts[name]
                if c["n"] == 0 or c["weight"] <= 0:
                    raise ValueError(f"variant {self.variant!r}: no {name} training claims to fit P(true | {name}); "
                                     "give training data with such claims (gold 'condition' labels or a verifier "
                                     "that finds them)")
                if c["weight"] < self.min_per_condition:
                    warnings.append(f"{name} condition: only {c['weight']:g} (weighted) training claims, fewer "
                                    f"than {self.min_per_condition}; its map may be unreliable")
                if min(c["true"], c["false"]) == 0:
                    warnings.append(f"{name} condition: all training claims are "
                                    f"{'true' if c['false'] == 0 else 'false'}; its map is constant")
                x = np.zeros(n) if name in self.flat else log_scores(scores[score])
                setattr(self, attr + "_", IsotonicCalibrator(prior_strength=self.prior_strength).fit(x, y, wc))
        self.n_samples_ = n
        self.knowledge_check_ = None
        if self.uq_not_mentioned_ is not None and "not_mentioned" not in self.flat:
            self.knowledge_check_ = fit_check(log_scores(b), y, weights[2], groups, natural)
            warnings += [] if self.knowledge_check_ else [NOT_MADE]
        self.implied_prior_ = None  # the mix of the maps, unmoved, on the fit claims: the prior it implies
        fitted = self._predict(p, scores["faith"], scores["unfaith"], shift=0.0)[3]
        self.implied_prior_ = implied_prior_of(fitted, w)
        if self.prior is not None:  # a deployment prior given at fit time: the fit's outputs, moved to it
            fitted = self._predict(p, scores["faith"], scores["unfaith"])[3]
        raw = franq_mix3(p[:, 0], p[:, 1], p[:, 2], scores["faith"], scores["faith"], scores["unfaith"])
        self.fit_spread_ = prediction_spread(fitted)
        collapsed = collapse_warning(self.fit_spread_, "on its training claims")
        if collapsed:
            warnings.append(collapsed)
        self.warnings_ = tuple(warnings)
        self.train_ece_ = {"before": expected_calibration_error(raw, y), "after": expected_calibration_error(fitted, y)}
        return self

    # ------------------------------------------------------------------ prediction
    def _check_fitted(self) -> None:
        if not hasattr(self, "n_samples_"):
            raise NotFittedError("this ThreeConditionCalibrator is not fitted yet: fit one with `franq fit calibrator "
                                 "TRAIN.jsonl --three-condition -o calibrator.json` (or "
                                 "ThreeConditionCalibrator(...).fit(...)) and load it with from_json")

    @property
    def base_rate(self) -> float | None:
        """The share of true claims the maps were fitted on (their prior): the weighted true
        claims over the weighted claims of the three conditions' fits (None when unknown)."""
        c = getattr(self, "counts_", {}) or {}
        return fitted_share([c.get(name) for name in CONDITIONS])

    @property
    def prior_rule(self) -> str:
        """What a prior moves, as the file's ``prior.rule`` and ``franq fit prior`` say it."""
        return "each map's output: logit + logit_shift" if getattr(self, "implied_prior_", None) is None else MIX_RULE

    def _predict(self, p: np.ndarray, a: np.ndarray, b: np.ndarray, shift: float | None = None):
        """``(T_s, T_c, T_n, P(true))``, moved by ``shift`` (default: :meth:`prior_shift`): the mix as a
        whole, or, for a file without ``implied_prior``, each map before mixing."""
        shift = self.prior_shift() if shift is None else shift
        per_map = getattr(self, "implied_prior_", None) is None
        maps, shown = [], []
        for _, attr, score in MAPS:
            m, x = getattr(self, attr + "_"), a if score == "faith" else b
            out = x if m is None else m.predict(log_scores(x))
            maps.append(shift_probabilities(out, shift) if per_map and m is not None else out)
            shown.append(out if m is None else shift_probabilities(out, shift))
        mix = franq_mix3(p[:, 0], p[:, 1], p[:, 2], *maps)
        return (*shown, mix if per_map else shift_probabilities(mix, shift))

    @staticmethod
    def _inputs(X: ClaimInputs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(P_s, P_c, P_n)`` rows (:func:`as_conditions`), UQ_faith and UQ_unfaith."""
        if not X.has_conditions:
            raise ValueError("a three-condition calibrator needs P_contradicted and P_not_mentioned, which these "
                             "claims do not carry (score them with the 'verifier' faithfulness backend)")
        p = as_conditions(X.p_faithful, X.p_contradicted, X.p_not_mentioned)
        n = len(p)
        return p, as_probabilities(X.uq_faith, "uq_faith", n=n), as_probabilities(X.uq_unfaith, "uq_unfaith", n=n)

    def predict_components(self, X: ClaimInputs) -> CalibratedClaims:
        """P(true | supported / contradicted / not mentioned) (T_s, T_c, T_n) and their mix, P(true)."""
        self._check_fitted()
        inputs = self._inputs(X)
        t_s, t_c, t_n, p = self._predict(*inputs)
        knowledge = knowledge_signal(self.uq_not_mentioned_, self.counts_.get("not_mentioned"), log_scores(inputs[2]),
                                     self.knowledge_check_)
        knowledge = shift_knowledge(knowledge, self.prior_shift())  # on the scale of T_n, which the prior moved
        return CalibratedClaims(p, p_true_if_supported=t_s, p_true_if_contradicted=t_c, p_true_if_not_mentioned=t_n,
                                knowledge=knowledge)

    def predict(self, X: ClaimInputs) -> np.ndarray:
        """Calibrated three-condition P(true) per claim."""
        return self.predict_components(X).p_true

    def output_range_warning(self) -> str | None:
        self._check_fitted()
        return None if self.fit_spread_ is None else collapse_warning(self.fit_spread_, "on its training claims")

    def mismatches(self, stack: dict[str, str]) -> list[str]:
        return stack_mismatches(self.fitted_for or {}, stack)

    # ------------------------------------------------------------------ persistence
    def to_dict(self) -> dict:
        self._check_fitted()
        out = {"format": FORMAT, "version": VERSION, "variant": self.variant, "fitted_for": self.fitted_for or {},
               "description": self.description, "uq_transform": "log",
               "formula": "p_supported * uq_supported(uq_faith) + p_contradicted * uq_contradicted(uq_faith) "
                          "+ p_not_mentioned * uq_not_mentioned(uq_unfaith)"}
        if self.flat:  # only when used: files fitted before the option read back unchanged
            out["flat"] = list(self.flat)
        if self.implied_prior_ is not None:  # likewise
            out["implied_prior"] = self.implied_prior_
        if self.prior is not None:
            out["prior"] = prior_record(self.base_rate, self.prior, self.prior_rule, self.implied_prior_)
        if self.threshold is not None:
            out["threshold"] = self.threshold
        for _, attr, _ in MAPS:
            m = getattr(self, attr + "_")
            out[attr] = None if m is None else m.to_dict()
        out.update(n_samples=self.n_samples_, counts=self.counts_, fit_spread=self.fit_spread_,
                   **check_record(self.knowledge_check_), **evaluation_record(self.evaluation))
        return out

    @classmethod
    def from_dict(cls, obj: Any, *, where: str = "calibrator") -> ThreeConditionCalibrator:
        fitted_for, description = calibrator_header(obj, FORMAT, VERSION, where)
        flat = obj.get("flat", [])
        if not isinstance(flat, list) or not all(isinstance(c, str) for c in flat):
            raise CalibratorFileError(f"{where}: 'flat' must be a list of condition names, got {flat!r}")
        cal = cls(variant=obj.get("variant"), fitted_for=fitted_for, description=description, flat=tuple(flat),
                  prior=read_prior(obj, where), threshold=obj.get("threshold"),
                  evaluation=read_evaluation(obj, where))
        try:
            cal._validate_options()
        except ValueError as exc:
            raise CalibratorFileError(f"{where}: {exc}") from None
        for _, attr, _ in MAPS:
            part = obj.get(attr)
            if part is None and cal.variant != "none":
                raise CalibratorFileError(f"{where}: variant {cal.variant!r} needs '{attr}'")
            setattr(cal, attr + "_",
                    None if part is None else IsotonicCalibrator.from_dict(part, where=f"{where}: '{attr}'"))
        cal.n_samples_, cal.counts_, cal.fit_spread_ = fit_record(obj, where)
        cal.knowledge_check_ = read_check(obj, where)
        cal.implied_prior_ = read_implied_prior(obj, where)
        cal.warnings_ = ()
        return cal

    def to_json(self, path: str | Path) -> None:
        write_json(self.to_dict(), path)

    @classmethod
    def from_json(cls, path: str | Path) -> ThreeConditionCalibrator:
        return cls.from_dict(read_json(path), where=f"calibrator {path}")

    @property
    def name(self) -> str:
        """The label for ``AnswerScore.calibration``: ``three-condition``, ``three-soft``, ``three-none``."""
        return {"condition": "three-condition", "soft": "three-soft", "none": "three-none"}[self.variant]
