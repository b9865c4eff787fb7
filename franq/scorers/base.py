"""What a claim scorer sees, and the protocol it implements."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from claims.types import Claim


@dataclass(frozen=True)
class ClaimContext:
    """One aligned claim with the per-token log-probabilities of its whole answer.

    ``rag_logprobs[t]`` is ``log p(y_t | x, r, y_<t)`` (passages in the prompt) and
    ``closed_logprobs[t]`` is ``log p(y_t | x, y_<t)`` (passages removed), for every
    answer token ``t``; the claim's own tokens are ``claim.token_positions``.
    """

    claim: Claim
    rag_logprobs: np.ndarray
    closed_logprobs: np.ndarray


@runtime_checkable
class ClaimScorer(Protocol):
    name: str  # stable key, used in ClaimScore.components

    def score(self, batch: Sequence[ClaimContext]) -> np.ndarray:
        """P(claim is true)-like score, shape ``(len(batch),)``, higher = more likely true."""
        ...


def claim_logprob(logprobs: np.ndarray, claim: Claim) -> float:
    """Sum of the claim's token log-probabilities (the log of paper eq. 1 / eq. 3)."""
    if not claim.token_positions:
        raise ValueError(f"claim {claim.text!r} has no aligned tokens; it cannot be scored")
    return float(np.sum(logprobs[list(claim.token_positions)]))
