"""Degree matrix (Lin et al. 2024): ``U = trace(N - D) / N^2 = 1 - mean(W)`` with W the
symmetric similarity of the samples. Equals LM-Polygraph's ``DegMat``.

``probability`` is ``1 - U``, the mean pairwise similarity, in [0, 1]. Higher = more likely true.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from franq.evidence import SAMPLES
from franq.scorers.base import Signal
from franq.scorers.diversity import SampleContext


class DegreeMatrixScorer:
    name = "degree_matrix"
    needs = frozenset({SAMPLES})
    signals = (Signal("u_degree_matrix", "uncertainty", False, "1 - mean pairwise similarity of the samples"),)

    def uncertainty(self, batch: Sequence[SampleContext]) -> np.ndarray:
        out = []
        for s in batch:
            w = s.similarity()
            n = len(w)
            out.append(float(np.trace(n - np.diag(w.sum(axis=1))) / n**2))
        return np.array(out, dtype=np.float64)

    def score(self, batch: Sequence) -> dict[str, np.ndarray]:
        return {"u_degree_matrix": self.uncertainty([e.samples for e in batch])}

    def probability(self, primary: np.ndarray) -> np.ndarray:
        return np.clip(1.0 - np.asarray(primary, dtype=np.float64), 0.0, 1.0)
