"""Sum of eigenvalues of the graph Laplacian (Lin et al. 2024): FRANQ's UQ_unfaith for
short-form answers (paper section 2.2).

W = (E + E^T) / 2 from the pairwise entailment matrix, L = I - D^{-1/2} W D^{-1/2},
``U = sum_k max(0, 1 - lambda_k)``: a continuous count of distinct meanings, between 1
(all samples agree) and N (all differ). Equals LM-Polygraph's ``EigValLaplacian``.

``probability`` maps it to [0, 1] with ``1 / U``: one over the effective number of meanings
(the same scale as ``exp(-semantic entropy)``, which is one over the perplexity of
meanings). Higher = more likely true.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from franq.evidence import SAMPLES
from franq.scorers.base import Signal
from franq.scorers.diversity import SampleContext, normalized_laplacian


class SumEigenvaluesScorer:
    name = "eigval"
    needs = frozenset({SAMPLES})
    signals = (Signal("u_eigval", "uncertainty", False, "sum of eigenvalues of the graph Laplacian: the number of meanings"),)

    def uncertainty(self, batch: Sequence[SampleContext]) -> np.ndarray:
        out = []
        for s in batch:
            lam = np.linalg.eigvalsh(normalized_laplacian(s.similarity()))
            out.append(float(np.sum(np.maximum(0.0, 1.0 - lam))))
        return np.array(out, dtype=np.float64)

    def score(self, batch: Sequence) -> dict[str, np.ndarray]:
        return {"u_eigval": self.uncertainty([e.samples for e in batch])}

    def probability(self, primary: np.ndarray) -> np.ndarray:
        """1 / sum of eigenvalues (the number of meanings is at least 1), in (0, 1]."""
        return np.clip(1.0 / np.maximum(np.asarray(primary, dtype=np.float64), 1.0), 0.0, 1.0)
