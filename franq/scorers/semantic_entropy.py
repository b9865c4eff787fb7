"""Semantic entropy (Kuhn et al. 2023): FRANQ's UQ_faith for short-form answers (paper
section 2.2).

Samples are clustered by bidirectional entailment (:func:`semantic_classes`). A class's
log-probability is the log-sum-exp of the likelihoods of its *unique* responses (a text
sampled twice counts once), so it is the model's probability mass on the responses seen
in that class and never exceeds 1. The entropy is the Monte Carlo estimate over the
samples: ``SE = -mean_j log p(class(j))``. Equals LM-Polygraph's
``SemanticEntropy(use_unique_responses=True)``.

``probability`` maps it to [0, 1] with ``exp(-SE)``: the geometric mean, over the samples, of
the probability of their meaning; 1 when every sample means the same with certainty,
and ``1 / k`` for k equally likely meanings that hold all the mass. Higher = more likely
true.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from franq.evidence import SAMPLES
from franq.scorers.base import Signal
from franq.scorers.diversity import SampleContext, semantic_classes


class SemanticEntropyScorer:
    name = "semantic_entropy"
    needs = frozenset({SAMPLES})
    signals = (Signal("u_semantic_entropy", "uncertainty", False, "semantic entropy of the samples (nats)"),)

    def uncertainty(self, batch: Sequence[SampleContext]) -> np.ndarray:
        return np.array([self._entropy(s) for s in batch], dtype=np.float64)

    @staticmethod
    def _entropy(s: SampleContext) -> float:
        classes = semantic_classes(s.equivalent)
        lp = np.asarray(s.logprobs, dtype=np.float64)
        class_lp = np.empty(len(classes))
        sample_class = np.empty(len(s.texts), dtype=int)
        for k, members in enumerate(classes):
            seen: dict[str, int] = {}
            for i in members:
                seen.setdefault(s.texts[i], i)
                sample_class[i] = k
            class_lp[k] = np.logaddexp.reduce(lp[list(seen.values())])
        return float(-np.mean(class_lp[sample_class]))

    def score(self, batch: Sequence) -> dict[str, np.ndarray]:
        return {"u_semantic_entropy": self.uncertainty([e.samples for e in batch])}

    def probability(self, primary: np.ndarray) -> np.ndarray:
        """exp(-SE): one over the effective number of meanings, in (0, 1]."""
        return np.exp(-np.asarray(primary, dtype=np.float64))
