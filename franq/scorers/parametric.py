"""Parametric Knowledge (paper eq. 3): p(c | x) = prod_{t in S(c)} p(y_t | x, y_<t).

The same answer tokens teacher-forced under the prompt with the retrieved passages
removed: what the model believes without the evidence. FRANQ's UQ_unfaith for long-form
answers. Higher = more likely true.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from franq.scorers.base import ClaimContext, claim_logprob


class ParametricKnowledgeScorer:
    name = "parametric"

    def log_score(self, batch: Sequence[ClaimContext]) -> np.ndarray:
        return np.array([claim_logprob(c.closed_logprobs, c.claim) for c in batch], dtype=np.float64)

    def score(self, batch: Sequence[ClaimContext]) -> np.ndarray:
        return np.exp(self.log_score(batch))
