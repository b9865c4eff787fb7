"""The equivalence-judge protocol."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class EquivalenceJudge(Protocol):
    name: str  # stable id recorded in results

    def entailment(self, question: str, texts: Sequence[str]) -> np.ndarray:
        """``(n, n)`` matrix: ``[i, j]`` = P(answer ``texts[i]`` entails ``texts[j]``) as
        answers to ``question``; the diagonal is 1."""
        ...


def unique_pairs(texts: Sequence[str]) -> tuple[list[str], np.ndarray, list[tuple[int, int]]]:
    """Unique texts, each text's index among them, and the ordered pairs of distinct unique
    texts: sampled answers repeat, and a judge needs to see each pair only once."""
    uniq: list[str] = []
    where: dict[str, int] = {}
    inv = np.empty(len(texts), dtype=int)
    for k, t in enumerate(texts):
        if t not in where:
            where[t] = len(uniq)
            uniq.append(t)
        inv[k] = where[t]
    pairs = [(a, b) for a in range(len(uniq)) for b in range(len(uniq)) if a != b]
    return uniq, inv, pairs


def expand(unique_matrix: np.ndarray, inv: np.ndarray) -> np.ndarray:
    """Back from unique texts to samples, with 1 on the diagonal."""
    m = unique_matrix[np.ix_(inv, inv)].astype(np.float64)
    np.fill_diagonal(m, 1.0)
    return m
