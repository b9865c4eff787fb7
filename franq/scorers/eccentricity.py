"""Eccentricity (Lin et al. 2024): the spread of the samples' spectral embeddings.

The eigenvectors of the normalized Laplacian with eigenvalue below ``threshold`` (0.9)
embed the samples; ``U`` is the Euclidean norm of the vector of each eigenvector's
centred norm. Equals LM-Polygraph's ``Eccentricity`` (the value is invariant to the
choice of basis inside a repeated eigenvalue, since it depends only on the projector),
except that an eigenvalue at the threshold up to rounding (1e-9) is left out, as its
strict ``<`` means in exact arithmetic; LAPACK may return it a hair below, which made
the value depend on the order of the samples.

``probability`` maps it to [0, 1] with ``exp(-U)``. Higher = more likely true.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from franq.evidence import SAMPLES
from franq.scorers.base import Signal
from franq.scorers.diversity import SampleContext, normalized_laplacian


class EccentricityScorer:
    name = "eccentricity"
    needs = frozenset({SAMPLES})
    signals = (Signal("u_eccentricity", "uncertainty", False, "spread of the samples' spectral embeddings"),)

    def __init__(self, *, threshold: float = 0.9):
        self.threshold = threshold

    def uncertainty(self, batch: Sequence[SampleContext]) -> np.ndarray:
        out = []
        for s in batch:
            lam, vec = np.linalg.eigh(normalized_laplacian(s.similarity()))
            # An eigenvalue at the threshold up to rounding (graphs with rational weights hit
            # 0.9 exactly) is not below it, whichever side of it LAPACK's rounding falls.
            vec = vec[:, lam < self.threshold - 1e-9]
            centred = np.linalg.norm(vec - vec.mean(axis=0, keepdims=True), axis=0)
            out.append(float(np.linalg.norm(centred)))
        return np.array(out, dtype=np.float64)

    def score(self, batch: Sequence) -> dict[str, np.ndarray]:
        return {"u_eccentricity": self.uncertainty([e.samples for e in batch])}

    def probability(self, primary: np.ndarray) -> np.ndarray:
        return np.exp(-np.asarray(primary, dtype=np.float64))
