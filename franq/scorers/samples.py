"""What a sample-diversity scorer sees: N answers sampled for one question, their
log-likelihoods, and a pairwise entailment matrix from an equivalence judge.

Scorers of this family (semantic entropy, sum of eigenvalues, degree matrix,
eccentricity, lexical similarity) follow LM-Polygraph's definitions: each computes
``uncertainty`` (their convention: higher = more uncertain) and declares its signal as
``u_<name>`` with ``higher_is_true=False``; ``probability`` converts to franq's
convention (higher = more likely true) at that boundary.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

EQUIVALENCE_THRESHOLD = 0.5


@dataclass(frozen=True)
class SampleContext:
    """``entailment[i, j]`` is P(texts[i] entails texts[j]) in [0, 1] (diagonal 1).
    ``equivalent[i, j]`` is bidirectional entailment: both directions >= 0.5."""

    texts: tuple[str, ...]
    logprobs: np.ndarray
    entailment: np.ndarray

    def __post_init__(self):
        n = len(self.texts)
        if n < 1:
            raise ValueError("texts: at least one sample is needed")
        if np.shape(self.logprobs) != (n,):
            raise ValueError(f"logprobs: expected shape ({n},), got {np.shape(self.logprobs)}")
        if np.shape(self.entailment) != (n, n):
            raise ValueError(f"entailment: expected shape ({n}, {n}), got {np.shape(self.entailment)}")

    @property
    def equivalent(self) -> np.ndarray:
        e = np.asarray(self.entailment) >= EQUIVALENCE_THRESHOLD
        return e & e.T

    def similarity(self) -> np.ndarray:
        """The symmetric graph weights W = (E + E^T) / 2 (Lin et al. 2024, 'entail')."""
        e = np.asarray(self.entailment, dtype=np.float64)
        return (e + e.T) / 2


def semantic_classes(equivalent: np.ndarray) -> list[list[int]]:
    """Greedy clustering by bidirectional equivalence (Kuhn et al. 2023): each sample joins
    the first class whose first member it is equivalent to, in both directions."""
    classes: list[list[int]] = []
    for i in range(len(equivalent)):
        for members in classes:
            j = members[0]
            if equivalent[j, i] and equivalent[i, j]:
                members.append(i)
                break
        else:
            classes.append([i])
    return classes


def normalized_laplacian(w: np.ndarray) -> np.ndarray:
    """L = I - D^{-1/2} W D^{-1/2} with D the degree matrix of W."""
    d = w.sum(axis=1)
    if (d <= 0).any():
        raise ValueError("similarity: every sample needs a positive degree (the diagonal must be > 0)")
    inv = 1.0 / np.sqrt(d)
    return np.eye(len(w)) - inv[:, None] * w * inv[None, :]
