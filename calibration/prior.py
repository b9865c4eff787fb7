"""A calibrator moved to a new base rate without new labels (issue 45 item 4).

A calibrator fitted where a share ``P`` of claims is true gives posteriors for that prior.
Where claims are true a share ``P'`` of the time, and what the scores look like for a true
(or a false) claim is unchanged (label shift), Bayes' rule moves every posterior by the same
amount on the logit scale::

    logit p' = logit p + log(P' / (1 - P')) - log(P / (1 - P))

The posterior is the calibrated P(true) itself, the mix, so a calibrator fitted by this franq
moves the mix, from the prior its own outputs imply: the mean P(true) it gives its fit claims
(``implied_prior`` in the file; weighted as fitted), so that moving it to that share changes
nothing and EM on its own fit claims stays where it starts. The maps (T_s, T_c, T_n) and the
knowledge term move by the same shift, as what they say under the new prior. A file written
before it records ``implied_prior`` keeps the earlier rule: each map's output moves before
mixing, from the fit claims' share true. That rule leaves a map near 0 near 0: the shipped long
calibrator told natural ExpertQA's share stayed at ECE .154 under it, and reaches .011 under the
mix rule (experiments/2026-11-29-prior-on-output; benchmarks/results/prior-shift.md). An output
of exactly 0 or 1 stays put: no prior moves a certainty.

The deployment prior ``P'`` need not be known: :func:`em_prior` estimates it from unlabelled
scored claims by expectation-maximisation (Saerens, Latinne & Decaestecker 2002, "Adjusting
the outputs of a classifier to new a priori probabilities", Neural Computation 14): start at
``P``, adjust the posteriors to the current estimate, take their mean as the next estimate,
repeat until it stops moving.

Both calibrator families take a ``prior`` and record ``implied_prior`` when fitted: the
three-condition calibrator and the binary FRANQ one (:class:`calibration.franq.FranqCalibrator`).
Under the earlier rule a three-condition file moves each of its three maps, a binary one its UQ
maps, or, for variant ``none`` (no UQ map: the fast preset's map of P_supported), its P(true).
The helpers below are what they share. A leaf module: numpy and calibration.base.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from calibration.base import CalibratorFileError


def check_prior(value: Any, field: str = "prior") -> float:
    """``value`` as a base rate strictly between 0 and 1, or a ValueError naming ``field``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 < float(value) < 1.0:
        raise ValueError(f"'{field}' must be a share of true claims strictly between 0 and 1, got {value!r}")
    return float(value)


def logit_shift(from_prior: float, to_prior: float) -> float:
    """``log(P'/(1-P')) - log(P/(1-P))``: what moving from base rate ``from_prior`` (P) to
    ``to_prior`` (P') adds to each posterior's logit."""
    p, q = check_prior(from_prior, "from_prior"), check_prior(to_prior, "to_prior")
    return float(np.log(q / (1 - q)) - np.log(p / (1 - p)))


def shift_probabilities(p: Any, shift: float) -> np.ndarray:
    """``sigmoid(logit(p) + shift)`` elementwise; 0 and 1 stay 0 and 1."""
    p = np.asarray(p, dtype=np.float64)
    if shift == 0.0:
        return p.copy()
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        odds = p / (1.0 - p) * np.exp(shift)
        out = odds / (1.0 + odds)
    out = np.where(p >= 1.0, 1.0, out)
    return np.where(p <= 0.0, 0.0, out)


EM_BOUNDS = (1e-4, 1 - 1e-4)
"""Where an EM estimate is kept. One that ends on a bound found no share inside (0, 1) at which
the posteriors' mean equals the share (:func:`at_bound`)."""


def at_bound(estimate: float) -> bool:
    """Whether an EM estimate ran to :data:`EM_BOUNDS`: the claims' mean P(true) stayed above (or
    below) every share tried, so EM estimated no share; it is not a measurement."""
    return estimate <= EM_BOUNDS[0] or estimate >= EM_BOUNDS[1]


def em_prior(predict_at: Callable[[float], np.ndarray], train_prior: float, *, tol: float = 1e-6,
             max_iter: int = 1000) -> tuple[float, int]:
    """The deployment base rate by EM (Saerens et al. 2002): ``predict_at(P')`` gives the
    posteriors of the unlabelled claims adjusted to base rate ``P'``; the estimate is the
    fixed point of ``P' = mean(predict_at(P'))``, starting from ``train_prior``. Returns
    ``(estimate, iterations)``. The estimate is kept within :data:`EM_BOUNDS`.

    Near a bound EM slows down without stopping (each step shrinks with the share), so its
    step can fall below ``tol`` short of the bound. Where it stops, the mean is read once
    more a logit unit further on: if it still moves on there, EM did not meet a fixed point
    and goes on from that probe, until it meets one or the bound (:func:`at_bound`)."""
    prior = start = check_prior(train_prior, "train_prior")
    done = 0
    while True:
        prior, it = _em_steps(predict_at, prior, tol, max_iter - done)
        done += it
        direction = float(np.sign(prior - start))
        if direction == 0.0 or at_bound(prior) or done >= max_iter:
            return prior, done
        probe = float(np.clip(shift_probabilities(prior, direction), *EM_BOUNDS))
        if (_mean(predict_at(probe), clip=False) - probe) * direction <= 0.0:
            return prior, done  # past it the mean moves back: a fixed point
        prior = probe


def _mean(p: Any, clip: bool = True) -> float:
    p = np.asarray(p, dtype=np.float64)
    if not len(p):
        raise ValueError("EM needs at least one unlabelled claim")
    return float(np.clip(p.mean(), *EM_BOUNDS)) if clip else float(p.mean())


def _em_steps(predict_at: Callable[[float], np.ndarray], prior: float, tol: float, max_iter: int) -> tuple[float, int]:
    """EM's plain iteration from ``prior``: until a step is below ``tol`` or ``max_iter`` steps."""
    for it in range(1, max_iter + 1):
        new = _mean(predict_at(prior))
        if abs(new - prior) < tol:
            return new, it
        prior = new
    return prior, max_iter


def em_prior_of(posteriors: Any, train_prior: float, **kw) -> tuple[float, int]:
    """:func:`em_prior` for a fixed vector of posteriors at ``train_prior`` (the classic setting)."""
    p = np.asarray(posteriors, dtype=np.float64)
    return em_prior(lambda q: shift_probabilities(p, logit_shift(train_prior, q)), train_prior, **kw)


def fitted_share(parts: list) -> float | None:
    """The share of true claims over a calibrator's fit counts (each ``{"true", "weight"}``,
    weighted), None when a part is missing or carries no weight."""
    if not all(isinstance(x, dict) and "true" in x and "weight" in x for x in parts):
        return None
    weight = sum(x["weight"] for x in parts)
    return float(sum(x["true"] for x in parts) / weight) if weight > 0 else None


def prior_shift_of(base_rate: float | None, prior: float | None) -> float:
    """The logit shift a calibrator fitted at ``base_rate`` needs for deployment ``prior``
    (0 with no prior); a ValueError when the fitted share is unknown."""
    if prior is None:
        return 0.0
    if base_rate is None or not 0.0 < base_rate < 1.0:
        raise ValueError(f"cannot move this calibrator to prior {prior:g}: the share of true claims it "
                         f"was fitted on is unknown or not strictly between 0 and 1 ({base_rate!r})")
    return logit_shift(base_rate, prior)


MIX_RULE = "P(true), the mix: logit + logit_shift, from the fit's mean P(true) (implied_prior)"
"""What a prior moves in a calibrator that records ``implied_prior`` (the module doc)."""


def prior_record(base_rate: float | None, prior: float, rule: str, implied: float | None = None) -> dict:
    """The ``prior`` object a calibrator file carries once moved: the fit's share true, the
    deployment's, the shift (from ``implied``, the fit's mean P(true), where recorded) and the rule."""
    return {"fitted": base_rate, **({} if implied is None else {"implied": implied}), "deployment": prior,
            "logit_shift": prior_shift_of(base_rate if implied is None else implied, prior), "rule": rule}


class MovesWithPrior:
    """What both calibrator families (:class:`~calibration.franq.FranqCalibrator`,
    :class:`~calibration.three_condition.ThreeConditionCalibrator`) share under a new base
    rate: the prior they move from and the logit shift to :attr:`prior`. Needs ``prior``,
    ``base_rate`` and (from a fit or a file) ``implied_prior_``."""

    @property
    def prior_anchor(self) -> float | None:
        """The prior a new one moves from: :attr:`implied_prior_`, the mean P(true) on the fit
        claims, or, for files written before it, :attr:`base_rate`."""
        implied = getattr(self, "implied_prior_", None)
        return self.base_rate if implied is None else implied

    def prior_shift(self) -> float:
        """What :attr:`prior` adds to the logit of P(true) and of each map (0 when no prior is set)."""
        return prior_shift_of(self.prior_anchor, self.prior)


def implied_prior_of(p_true: Any, weights: Any) -> float:
    """The prior a calibrator's outputs imply on its fit claims: their weighted mean P(true),
    kept strictly inside (0, 1)."""
    p, w = np.asarray(p_true, dtype=np.float64), np.asarray(weights, dtype=np.float64)
    return float(np.clip(np.sum(w * p) / np.sum(w), 1e-6, 1 - 1e-6))


def read_implied_prior(obj: dict, where: str) -> float | None:
    """A calibrator file's ``implied_prior`` (None for files written before it)."""
    value = obj.get("implied_prior")
    if value is None:
        return None
    try:
        return check_prior(value, "implied_prior")
    except ValueError as exc:
        raise CalibratorFileError(f"{where}: {exc}") from None


def read_prior(obj: dict, where: str) -> float | None:
    """The deployment prior of a calibrator file's object (None when it has none)."""
    prior = obj.get("prior")
    if prior is not None and not (isinstance(prior, dict) and "deployment" in prior):
        raise CalibratorFileError(f"{where}: 'prior' must be an object with 'deployment', got {prior!r}")
    return None if prior is None else prior["deployment"]


def shift_knowledge(knowledge, shift: float):
    """A knowledge signal (:class:`calibration.contract.KnowledgeSignal`: base rate, interval
    bounds) moved with the map it describes; itself when there is nothing to move."""
    if knowledge is None or not shift:
        return knowledge
    moved = {k: None if v is None else float(shift_probabilities(v, shift)) if isinstance(v, float)
             else shift_probabilities(v, shift)
             for k, v in (("base_rate", knowledge.base_rate), ("low", knowledge.low), ("high", knowledge.high))}
    return dataclasses.replace(knowledge, **moved)  # its ranking check does not move with the prior
