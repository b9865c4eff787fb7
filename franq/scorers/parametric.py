"""Parametric Knowledge (paper eq. 3): p(c | x) = prod_{t in S(c)} p(y_t | x, y_<t).

The same answer tokens teacher-forced under the prompt with the retrieved passages
removed: what the model believes without the evidence. FRANQ's UQ_unfaith for long-form
answers. Higher = more likely true.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from franq.evidence import PASSES
from franq.scorers.base import Signal, claim_logprob


class ParametricKnowledgeScorer:
    name = "parametric"
    needs = frozenset({PASSES})
    signals = (Signal("log_parametric", "log_prob", True, "log p(c | x): the claim's tokens without the passages"),)

    def score(self, batch: Sequence) -> dict[str, np.ndarray]:
        return {"log_parametric": np.array([claim_logprob(e.closed_logprobs, e.claim) for e in batch],
                                           dtype=np.float64)}

    def probability(self, primary: np.ndarray) -> np.ndarray:
        return np.exp(np.asarray(primary, dtype=np.float64))
