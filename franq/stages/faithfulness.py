"""Stage 4, faithfulness: P(claim supported by the passages) for the batch, and, from a
backend that tells them apart (the verifier), P(contradicted) and P(not mentioned) too
(:mod:`franq.faithfulness.base`: the backends get each claim's passages and statement)."""
from __future__ import annotations

from franq.faithfulness.base import predict_conditions, predict_faithfulness
from franq.stages.record import ClaimBatch


def judge_faithfulness(backend, batch: ClaimBatch) -> None:
    """Fill ``batch.conditions`` (None: the backend gives P(supported) only) and ``batch.p_supported``."""
    batch.conditions = predict_conditions(backend, batch.claims)
    batch.p_supported = (batch.conditions.p_supported if batch.conditions is not None
                         else predict_faithfulness(backend, batch.claims))
