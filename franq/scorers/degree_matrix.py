"""Degree matrix (Lin et al. 2024): ``U = trace(N - D) / N^2 = 1 - mean(W)`` with W the
symmetric similarity of the samples. Equals LM-Polygraph's ``DegMat``.

``score`` is ``1 - U``, the mean pairwise similarity, in [0, 1]. Higher = more likely true.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from franq.scorers.samples import SampleContext


class DegreeMatrixScorer:
    name = "degree_matrix"

    def uncertainty(self, batch: Sequence[SampleContext]) -> np.ndarray:
        out = []
        for s in batch:
            w = s.similarity()
            n = len(w)
            out.append(float(np.trace(n - np.diag(w.sum(axis=1))) / n**2))
        return np.array(out, dtype=np.float64)

    def score(self, batch: Sequence[SampleContext]) -> np.ndarray:
        return np.clip(1.0 - self.uncertainty(batch), 0.0, 1.0)
