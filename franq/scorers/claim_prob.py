"""Max Claim Probability (paper eq. 1): p(c | x, r) = prod_{t in S(c)} p(y_t | x, r, y_<t).

FRANQ's UQ_faith for long-form answers. Higher = more likely true.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from franq.evidence import PASSES
from franq.scorers.base import Signal, claim_logprob


class MaxClaimProbabilityScorer:
    name = "claim_prob"
    needs = frozenset({PASSES})
    signals = (
        Signal("log_claim_prob", "log_prob", True, "log p(c | x, r): the claim's tokens with the passages"),
        Signal("n_tokens", "count", False, "answer tokens of the claim (for per-token baselines)"),
    )

    def score(self, batch: Sequence) -> dict[str, np.ndarray]:
        return {"log_claim_prob": np.array([claim_logprob(e.rag_logprobs, e.claim) for e in batch], dtype=np.float64),
                "n_tokens": np.array([len(e.claim.token_positions) for e in batch], dtype=np.float64)}

    def probability(self, primary: np.ndarray) -> np.ndarray:
        return np.exp(np.asarray(primary, dtype=np.float64))
