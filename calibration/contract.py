"""What every calibrator reads and returns (the FRANQ variants of :mod:`calibration.franq`,
:class:`~calibration.three_condition.ThreeConditionCalibrator`,
:class:`~calibration.boosted.XGBoostCalibrator`): one input, :class:`ClaimInputs`, the raw
values of a batch of claims; one output, :class:`CalibratedClaims`, whose fields say what
they hold. Each calibrator follows :class:`Calibrator`::

    cal.fit(ClaimInputs(p_faithful, uq_faith, uq_unfaith), is_true)
    cal.predict_components(inputs).p_true      # == cal.predict(inputs)

and declares what it reads (``needs_conditions``: P_contradicted and P_not_mentioned), so
that its caller never asks which class it is.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

import numpy as np

from calibration.base import as_probabilities


@dataclass(frozen=True)
class ClaimInputs:
    """The raw values of a batch of claims, one entry per claim (probabilities: "higher =
    more likely true").

    ``p_faithful``       P(the passages support the claim), the faithfulness backend's
    ``uq_faith``         UQ_faith as a probability: the model's confidence with the passages
    ``uq_unfaith``       UQ_unfaith as a probability: its confidence without them
    ``p_contradicted``   P(the passages contradict the claim), None unless the backend tells
    ``p_not_mentioned``  the three conditions apart (the verifier); then the three sum to 1
    ``signals``          every raw scorer signal by name (what an XGBoost model reads)
    """

    p_faithful: Any
    uq_faith: Any
    uq_unfaith: Any
    p_contradicted: Any = None
    p_not_mentioned: Any = None
    signals: Mapping[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.p_faithful)

    @property
    def has_conditions(self) -> bool:
        """Whether P_contradicted and P_not_mentioned are given."""
        return self.p_contradicted is not None and self.p_not_mentioned is not None

    def checked(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(p_faithful, uq_faith, uq_unfaith)`` as checked arrays of one length."""
        p_f = as_probabilities(self.p_faithful, "p_faithful")
        n = len(p_f)
        return p_f, as_probabilities(self.uq_faith, "uq_faith", n=n), as_probabilities(self.uq_unfaith,
                                                                                          "uq_unfaith", n=n)

    def features(self, names: Iterable[str]) -> np.ndarray:
        """A feature matrix, one column per name: ``p_faithful`` (and ``p_contradicted`` /
        ``p_not_mentioned`` when given) or a signal's name."""
        given = {"p_faithful": self.p_faithful, **({"p_contradicted": self.p_contradicted,
                                                     "p_not_mentioned": self.p_not_mentioned}
                                                    if self.has_conditions else {}), **self.signals}
        names = list(names)
        missing = [n for n in names if n not in given]
        if missing:
            raise ValueError(f"needs feature(s) {missing}, which these claims do not carry (they have "
                             f"{sorted(given)})")
        return np.column_stack([np.asarray(given[n], dtype=np.float64) for n in names])


@dataclass(frozen=True)
class KnowledgeSignal:
    """What a calibrator knows of its knowledge map (P(true | not mentioned) of a
    three-condition calibrator, P(true | not supported) of a binary one): the map's
    ``base_rate`` (its training claims' share of true ones, (K + 1) / (N + 2)), and per claim
    the 90% credible interval ``low`` / ``high`` of its step (None for a map without step
    counts, a file of franq 0.2), and ``check``, how well its score ranked the natural claims
    it was fitted on (:func:`calibration.knowledge_check.knowledge_check`: ``auroc``, ``low``,
    ``high``; None for files fitted before the check). What the ``uncertain`` verdict reads."""

    base_rate: float | None
    low: np.ndarray | None = None
    high: np.ndarray | None = None
    check: Mapping | None = None


def knowledge_signal(m: Any, counts: Mapping | None, log_scores: np.ndarray, check: Mapping | None = None
                     ) -> KnowledgeSignal | None:
    """The :class:`KnowledgeSignal` of isotonic map ``m`` (None: no map) at ``log_scores``;
    ``counts`` (the calibrator file's counts of that condition: ``true``, ``weight``) gives
    the base rate of a map without step counts; ``check``: its fit-time ranking check."""
    if m is None:
        return None
    base = m.base_rate
    if base is None and counts and counts.get("weight"):
        base = (float(counts["true"]) + 1) / (float(counts["weight"]) + 2)
    interval = m.predict_interval(log_scores)
    return KnowledgeSignal(base, *(interval or (None, None)), check=check)


@dataclass(frozen=True)
class CalibratedClaims:
    """Calibrated values of a batch of claims; ``None`` where the calibrator has no such part.

    ``p_true``                   calibrated P(true): the number to threshold
    ``p_true_if_supported``      P(true | the passages support the claim): UQ_faith mapped
    ``p_true_if_unfaithful``     binary FRANQ only: P(true | not supported), UQ_unfaith mapped
    ``p_true_if_contradicted``   three-condition only: P(true | contradicted)
    ``p_true_if_not_mentioned``  three-condition only: P(true | not mentioned)
    ``p_faithful``               calibrated P_faithful, only when the calibrator fits it
    ``knowledge``                the knowledge map's base rate and intervals (:class:`KnowledgeSignal`)
    """

    p_true: np.ndarray
    p_true_if_supported: np.ndarray | None = None
    p_true_if_unfaithful: np.ndarray | None = None
    p_true_if_contradicted: np.ndarray | None = None
    p_true_if_not_mentioned: np.ndarray | None = None
    p_faithful: np.ndarray | None = None
    knowledge: KnowledgeSignal | None = None


class Calibrator(Protocol):
    """What every calibrator offers (scikit-learn style: the constructor stores its
    arguments, ``fit`` sets the attributes ending in ``_``, using it unfitted raises
    :class:`~calibration.base.NotFittedError`)."""

    needs_conditions: ClassVar[bool]
    """Whether it reads P_contradicted and P_not_mentioned (:attr:`ClaimInputs.has_conditions`)."""
    fitted_for: dict[str, str] | None

    @property
    def name(self) -> str: ...  # the variant, e.g. "condition", "three-soft", "xgboost"

    def fit(self, X: ClaimInputs, y: Any, *, sample_weight: Any = None) -> Calibrator: ...

    def predict(self, X: ClaimInputs) -> np.ndarray: ...

    def predict_components(self, X: ClaimInputs) -> CalibratedClaims: ...

    def output_range_warning(self) -> str | None: ...

    def mismatches(self, stack: dict[str, str]) -> list[str]: ...

    def to_json(self, path) -> None: ...
