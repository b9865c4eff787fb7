"""The faithfulness protocol: P(claim supported by the passages).

A backend is one file with one class, plus one line in :mod:`franq.registry` (or a
``franq.faithfulness`` entry point in another package)::

    class MyBackend:
        name = "my-backend-v1"      # stable id, recorded in results and calibrator files
        needs = frozenset()         # evidence kinds it reads besides the text (franq.evidence)
        def predict(self, pairs, evidence=None) -> np.ndarray: ...   # P(supported), shape (n,)

The pipeline hands every backend each claim's :class:`~franq.stages.record.ClaimEvidence`
as ``evidence[k]``: its ``passages`` (the example's :class:`~franq.types.Passage` objects,
as given) and its ``statement`` (the claim in long form; "question answer" in short form),
with the token passes of the claim's answer. A text-only backend reads ``pairs[k]``,
``(context, statement)``, which :func:`text_pairs` builds from them, the one place the
passages are joined into one text (:func:`passages_context`). A backend that reads each
passage on its own (the verifier) reads ``evidence[k].passages``; one that reads the token
passes (``needs = {"passes"}``) raises :class:`NeedsPassesError` when called on text alone
(``evidence=None``, as evaluation code calls backends on stored pairs).

A backend that tells "the passages contradict the claim" from "the passages do not
mention it" (the ``verifier``) also defines, optionally::

        def predict_conditions(self, pairs, evidence=None) -> Conditions: ...

returning P_supported, P_contradicted and P_not_mentioned per claim (summing to 1) and the
passage window each was read from; its ``predict`` is ``p_supported``. The pipeline calls
``predict_conditions`` when a backend has it (:func:`predict_conditions`) and ``predict``
otherwise; for those backends P_contradicted and P_not_mentioned are unknown (None).
A claim of an answer given no passages is asked of no backend (:func:`predict_faithfulness`).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from franq.types import Passage


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


def passages_context(passages: Sequence[Passage]) -> str:
    """Passages as text-only faithfulness backends read them: ``title. text`` (or the text
    alone), blank lines between. The shipped faithfulness maps were fitted on this exact format."""
    return "\n\n".join(f"{p.title}. {p.text}" if p.title else p.text for p in passages)


def text_pairs(evidence: Sequence) -> list[tuple[str, str]]:
    """``(context, statement)`` of each claim (:class:`~franq.stages.record.ClaimEvidence`):
    what a text-only backend's ``predict`` reads. The claims of one answer share its
    passages, which are joined once."""
    joined: dict[int, str] = {}
    pairs = []
    for e in evidence:
        key = id(e.passages)  # one answer's claims read the same tuple, alive for this call
        if key not in joined:
            joined[key] = passages_context(e.passages)
        pairs.append((joined[key], e.statement))
    return pairs


def _given(pairs: Sequence[tuple[str, str]]) -> list[int]:
    """The claims whose answer was given passages (with some text)."""
    return [i for i, (context, _) in enumerate(pairs) if context.strip()]


def predict_faithfulness(backend, evidence: Sequence) -> np.ndarray:
    """P(supported) for each :class:`~franq.stages.record.ClaimEvidence`, checked and clipped to [0, 1].
    A claim of an answer given no passages (retrieval returned nothing) is supported by
    nothing: 0, without asking the backend (so P(true) is UQ_unfaith, the closed-book term)."""
    out = np.zeros(len(evidence), dtype=np.float64)
    pairs = text_pairs(evidence)
    given = _given(pairs)
    if not given:
        return out
    batch = [evidence[i] for i in given]
    p = np.asarray(backend.predict([pairs[i] for i in given], batch), dtype=np.float64)
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
    pairs = text_pairs(evidence)
    given = _given(pairs)
    if not given:
        return Conditions(*arrays, tuple(windows))
    batch = [evidence[i] for i in given]
    out = backend.predict_conditions([pairs[i] for i in given], batch)
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
