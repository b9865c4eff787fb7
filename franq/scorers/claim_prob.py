"""Max Claim Probability (paper eq. 1): p(c | x, r) = prod_{t in S(c)} p(y_t | x, r, y_<t).

FRANQ's UQ_faith for long-form answers. Higher = more likely true.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from franq.scorers.base import ClaimContext, claim_logprob


class MaxClaimProbabilityScorer:
    name = "claim_prob"

    def log_score(self, batch: Sequence[ClaimContext]) -> np.ndarray:
        return np.array([claim_logprob(c.rag_logprobs, c.claim) for c in batch], dtype=np.float64)

    def score(self, batch: Sequence[ClaimContext]) -> np.ndarray:
        return np.exp(self.log_score(batch))
