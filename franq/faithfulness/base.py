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
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class FaithfulnessBackend(Protocol):
    name: str
    needs: frozenset[str]

    def predict(self, pairs: Sequence[tuple[str, str]], evidence: Sequence | None = None) -> np.ndarray:
        """P(statement supported by context) in [0, 1] for each ``(context, statement)`` pair."""
        ...


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
