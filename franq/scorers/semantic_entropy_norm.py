"""Length-normalized semantic entropy: the entropy of the samples' meaning distribution
with per-token likelihoods, renormalized over the classes seen.

Raw semantic entropy (:mod:`~franq.scorers.semantic_entropy`) averages minus the log of
each class's sequence likelihood: its scale grows with the samples' length (tens of nats
for 16-token samples of a small model), so ``exp(-SE)`` collapses to ~0 for every answer.
Here each class's mass uses the geometric mean of its responses' token probabilities
(Malinin & Gales 2021) and the masses are renormalized over the classes
(:func:`~franq.scorers.diversity.class_distribution`); ``H = -sum_k p_k log p_k`` lies in
``[0, log K]`` for K classes, whatever the sample length.

``probability`` is ``exp(-H)``: one over the effective number of meanings, in
``[1/K, 1]``. Higher = more likely true. Depends on the samples only, not on the answer.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from franq.evidence import SAMPLES
from franq.scorers.base import Signal
from franq.scorers.diversity import SampleContext, class_distribution, semantic_classes


def normalized_entropy(s: SampleContext) -> float:
    p = class_distribution(s, semantic_classes(s.equivalent), per_token=True)
    p = p[p > 0]
    return float(-np.sum(p * np.log(p)))


class NormalizedSemanticEntropyScorer:
    name = "semantic_entropy_norm"
    needs = frozenset({SAMPLES})
    signals = (Signal("u_semantic_entropy_norm", "uncertainty", False,
                      "entropy of the length-normalized meaning distribution (nats, <= log N)"),)

    def score(self, batch: Sequence) -> dict[str, np.ndarray]:
        return {"u_semantic_entropy_norm": np.array([normalized_entropy(e.samples) for e in batch])}

    def probability(self, primary: np.ndarray) -> np.ndarray:
        """exp(-H): one over the effective number of meanings, in (0, 1]."""
        return np.exp(-np.asarray(primary, dtype=np.float64))
