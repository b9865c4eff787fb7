"""Stage 5, mix: the uncalibrated FRANQ mix (paper eq. 4, :func:`franq.mix.mix`),
P(true) = P_f * UQ_faith + (1 - P_f) * UQ_unfaith."""
from __future__ import annotations

from franq.mix import mix
from franq.stages.record import ClaimBatch


def mix_batch(batch: ClaimBatch) -> None:
    """Fill ``batch.p_true_raw`` (with no UQ term, the ``fast`` preset: P_supported itself,
    the mix with UQ_faith = 1 and UQ_unfaith = 0)."""
    if batch.uq_faith is None:
        batch.p_true_raw = batch.p_supported.copy()
        return
    batch.p_true_raw = mix(batch.p_supported, batch.uq_faith, batch.uq_unfaith)
