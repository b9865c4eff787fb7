"""The faithfulness protocol: P(claim supported by the passages).

One method, called by the pipeline for every preset::

    class MyBackend:
        name = "my-backend-v1"      # stable id, recorded in results and calibrator files
        needs = frozenset()         # evidence kinds it reads besides the text (franq.evidence)
        def predict(self, pairs, evidence=None) -> np.ndarray: ...

``pairs[k]`` is ``(context, statement)``: the passages joined by blank lines, and the
claim (long form) or "question answer" (short form). ``evidence[k]`` is the claim's
:class:`~franq.evidence.ClaimEvidence`: text-only backends ignore it; a backend that reads
the token passes (``needs = {"passes"}``) raises :class:`NeedsPassesError` without it.

A backend that tells "the passages contradict the claim" from "the passages do not
mention it" (the ``verifier``) also defines, optionally::

        def predict_conditions(self, pairs, evidence=None) -> Conditions: ...

returning P_supported, P_contradicted and P_not_mentioned per claim (summing to 1) and the
passage window each was read from; its ``predict`` is ``p_supported``. The pipeline calls
``predict_conditions`` when a backend has it (:func:`predict_conditions`) and ``predict``
otherwise; for those backends P_contradicted and P_not_mentioned are unknown (None).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class FaithfulnessBackend(Protocol):
    name: str
    needs: frozenset[str]

    def predict(self, pairs: Sequence[tuple[str, str]], evidence: Sequence | None = None) -> np.ndarray:
        """P(statement supported by context) in [0, 1] for each ``(context, statement)`` pair."""
        ...


@dataclass(frozen=True)
class Conditions:
    """Per claim, the three conditions of the passages towards it (each row sums to 1) and
    the evidence window (:class:`~franq.types.EvidenceWindow`, None where there was none)."""

    p_supported: np.ndarray
    p_contradicted: np.ndarray
    p_not_mentioned: np.ndarray
    windows: tuple = ()


class NeedsPassesError(ValueError):
    """A backend that reads the token passes was called on text alone."""


def predict_faithfulness(backend, evidence: Sequence) -> np.ndarray:
    """P(supported) for each :class:`~franq.evidence.ClaimEvidence`, checked and clipped to [0, 1].
    A claim of an answer given no passages (retrieval returned nothing) is supported by
    nothing: 0, without asking the backend (so P(true) is UQ_unfaith, the closed-book term)."""
    out = np.zeros(len(evidence), dtype=np.float64)
    given = [i for i, e in enumerate(evidence) if e.context.strip()]
    if not given:
        return out
    batch = [evidence[i] for i in given]
    p = np.asarray(backend.predict([e.pair for e in batch], batch), dtype=np.float64)
    if p.shape != (len(batch),):
        raise ValueError(f"faithfulness backend {backend.name!r} returned shape {p.shape}, "
                         f"expected ({len(batch)},)")
    out[given] = np.clip(p, 0.0, 1.0)
    return out


def has_conditions(backend) -> bool:
    return callable(getattr(backend, "predict_conditions", None))


def predict_conditions(backend, evidence: Sequence) -> Conditions | None:
    """The backend's :class:`Conditions` for each claim, checked (None when the backend
    gives P(supported) only). A claim of an answer given no passages is not mentioned by
    them: (0, 0, 1) and no window, without asking the backend."""
    if not has_conditions(backend):
        return None
    n = len(evidence)
    arrays = [np.zeros(n), np.zeros(n), np.ones(n)]
    windows: list = [None] * n
    given = [i for i, e in enumerate(evidence) if e.context.strip()]
    if not given:
        return Conditions(*arrays, tuple(windows))
    batch = [evidence[i] for i in given]
    out = backend.predict_conditions([e.pair for e in batch], batch)
    for k, field in enumerate(("p_supported", "p_contradicted", "p_not_mentioned")):
        a = np.clip(np.asarray(getattr(out, field), dtype=np.float64), 0.0, 1.0)
        if a.shape != (len(batch),):
            raise ValueError(f"faithfulness backend {backend.name!r}: {field} has shape {a.shape}, "
                             f"expected ({len(batch)},)")
        arrays[k][given] = a
    got = tuple(out.windows) if out.windows else (None,) * len(batch)
    if len(got) != len(batch):
        raise ValueError(f"faithfulness backend {backend.name!r}: {len(got)} evidence windows for "
                         f"{len(batch)} claims")
    for i, w in zip(given, got):
        windows[i] = w
    return Conditions(*arrays, tuple(windows))
