"""The faithfulness protocols: P(supported) for (context, claim) pairs.

Text-only backends (lexical, AlignScore, NLI, judge) implement :class:`FaithfulnessBackend`.
Backends that also read the two teacher-forced passes FRANQ already runs (the claim's
token log-probabilities with and without the passages, paper eq. 1 and 3) implement
:class:`PassAwareFaithfulness`; the pipeline calls :func:`predict_faithfulness`, which
hands those passes only to backends that declare they want them.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from franq.scorers.base import ClaimContext


@runtime_checkable
class FaithfulnessBackend(Protocol):
    name: str  # stable id recorded in results and calibrator files

    def predict(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """P(claim supported by context) in [0, 1] for each ``(context, claim)`` pair.

        ``context`` is the retrieved passages joined by blank lines."""
        ...


@runtime_checkable
class PassAwareFaithfulness(Protocol):
    """A backend that also sees each claim's :class:`ClaimContext` (per-token
    log-probabilities of the answer with and without the passages)."""

    name: str

    def predict(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray: ...

    def predict_with_passes(self, pairs: Sequence[tuple[str, str]],
                            contexts: Sequence[ClaimContext]) -> np.ndarray:
        """P(supported) for ``pairs[k]``, whose claim and LM passes are ``contexts[k]``."""
        ...


class NeedsPassesError(ValueError):
    """Raised by a pass-aware backend's plain ``predict``: it cannot score text alone."""


def predict_faithfulness(backend: FaithfulnessBackend, pairs: Sequence[tuple[str, str]],
                         contexts: Sequence[ClaimContext]) -> np.ndarray:
    """P(supported) clipped to [0, 1]; pass-aware backends also receive ``contexts``."""
    if len(pairs) != len(contexts):
        raise ValueError(f"pairs ({len(pairs)}) and contexts ({len(contexts)}) differ in length")
    if isinstance(backend, PassAwareFaithfulness):
        p = backend.predict_with_passes(pairs, contexts)
    else:
        p = backend.predict(pairs)
    p = np.asarray(p, dtype=np.float64)
    if p.shape != (len(pairs),):
        raise ValueError(f"faithfulness backend {backend.name!r} returned shape {p.shape}, "
                         f"expected ({len(pairs)},)")
    return np.clip(p, 0.0, 1.0)
