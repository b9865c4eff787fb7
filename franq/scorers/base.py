"""The scorer protocol: what the pipeline calls, and what a scorer declares.

A scorer reads a batch of :class:`~franq.stages.record.ClaimEvidence` (one per claim, a
view of its answer's record: ``claim``, ``question``, ``passages``, ``statement`` and the
evidence the preset gathered, ``rag_logprobs`` / ``closed_logprobs``, ``samples`` /
``closed_samples``, ``internals``; what the preset does not gather is ``None``) and
returns named raw values, one array per declared :class:`Signal`. The declarations are
the contract between the pipeline, calibration and evaluation: the first signal is the scorer's *primary* value
(the one the FRANQ mix and the calibrator use, through :meth:`Scorer.probability`), and
each signal states its scale and direction, so nobody downstream needs to know a string
key or guess whether higher means more uncertain.

A new scorer is one file with one class, plus one line in :mod:`franq.registry` (or a
``franq.scorers`` entry point in another package)::

    class MyScorer:
        name = "my_scorer"                       # stable id, recorded in results
        needs = frozenset({"passes"})            # evidence kinds (franq.evidence)
        signals = (Signal("log_p_my", "log_prob", higher_is_true=True, doc="..."),)
        def score(self, batch): return {"log_p_my": np.array([...])}
        def probability(self, primary): return np.exp(primary)
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from claims.types import Claim

SCALES = ("log_prob", "prob", "uncertainty", "count")


@dataclass(frozen=True)
class Signal:
    """One raw value a scorer produces per claim.

    ``scale``: ``log_prob`` (a log-probability, <= 0), ``prob`` ([0, 1]), ``uncertainty``
    (unbounded, LM-Polygraph's convention) or ``count``. ``higher_is_true`` is the
    direction: ``True`` when a higher value means the claim is more likely true.
    """

    name: str
    scale: str
    higher_is_true: bool
    doc: str = ""

    def __post_init__(self):
        if self.scale not in SCALES:
            raise ValueError(f"Signal {self.name!r}: scale must be one of {list(SCALES)}, got {self.scale!r}")

    def as_true_score(self, values: np.ndarray) -> np.ndarray:
        """The values oriented so that higher = more likely true (for ranking metrics)."""
        v = np.asarray(values, dtype=np.float64)
        return v if self.higher_is_true else -v


@runtime_checkable
class Scorer(Protocol):
    name: str
    needs: frozenset[str]
    signals: tuple[Signal, ...]

    def score(self, batch: Sequence) -> dict[str, np.ndarray]:
        """Raw values for a batch of :class:`~franq.stages.record.ClaimEvidence`: one array of
        shape ``(len(batch),)`` per declared signal, keyed by the signal's name."""
        ...

    def probability(self, primary: np.ndarray) -> np.ndarray:
        """The primary signal mapped monotonically to [0, 1], higher = more likely true:
        the value the uncalibrated FRANQ mix uses and the calibrator is fitted on. A map of
        the signal alone: it reads no state of the scorer (:func:`probability_of`)."""
        ...


def primary(scorer) -> Signal:
    """The signal a scorer's :meth:`~Scorer.probability` reads."""
    return scorer.signals[0]


def probability_of(scorer, values) -> np.ndarray:
    """``scorer``'s :meth:`~Scorer.probability` of its primary signal's ``values``, for a scorer
    instance or class. A class is not built (its constructor may need a model or a server, as
    ``ccp`` and ``chat_p_true`` do): the map reads no state, so a bare instance serves."""
    if isinstance(scorer, type):
        scorer = object.__new__(scorer)
    return scorer.probability(np.asarray(values))


def check_output(scorer, values: dict[str, np.ndarray], n: int) -> dict[str, np.ndarray]:
    """``values`` as float arrays, after checking they match the scorer's declarations."""
    declared = [s.name for s in scorer.signals]
    if sorted(values) != sorted(declared):
        raise ValueError(f"scorer {scorer.name!r} returned {sorted(values)}, but declares {declared}")
    out = {}
    for name in declared:
        v = np.asarray(values[name], dtype=np.float64)
        if v.shape != (n,):
            raise ValueError(f"scorer {scorer.name!r}: signal {name!r} has shape {v.shape}, expected ({n},)")
        out[name] = v
    return out


def claim_logprob(logprobs: np.ndarray, claim: Claim) -> float:
    """Sum of the claim's token log-probabilities (the log of paper eq. 1 / eq. 3)."""
    if not claim.token_positions:
        raise ValueError(f"claim {claim.text!r} has no aligned tokens; it cannot be scored")
    return float(np.sum(logprobs[list(claim.token_positions)]))
