"""Stage 3, uq: UQ_faith, UQ_unfaith and the extra scorers over the batch. Each scorer's raw
signals are kept by name (checked against its declarations); the two UQ terms are the
primary signals mapped to probabilities (:meth:`franq.scorers.base.Scorer.probability`),
clipped to [0, 1]."""
from __future__ import annotations

import numpy as np

from franq.scorers.base import check_output, primary
from franq.stages.record import ClaimBatch


def score_uq(preset_pipeline, batch: ClaimBatch, *, closed_book_unfaith: bool = False) -> None:
    """Fill ``batch.uq_faith``, ``uq_unfaith`` and ``signals``. ``closed_book_unfaith``:
    UQ_unfaith reads the samples drawn without the passages (``uq.unfaith_samples = "closed"``)."""
    p, n = preset_pipeline, len(batch)
    if not p.preset.uq:  # fast: no UQ term; the mix is P_supported (franq.stages.mix)
        return
    for role, scorer in (("faith", p.uq_faith), ("unfaith", p.uq_unfaith), *(("extra", s) for s in p.extra)):
        claims = batch.claims
        if role == "unfaith" and closed_book_unfaith:
            claims = [e.with_closed_book_samples() for e in claims]
        out = check_output(scorer, scorer.score(claims), n)
        batch.signals.update(out)
        if role == "faith":
            batch.uq_faith = np.clip(scorer.probability(out[primary(scorer).name]), 0.0, 1.0)
        elif role == "unfaith":
            batch.uq_unfaith = np.clip(scorer.probability(out[primary(scorer).name]), 0.0, 1.0)
