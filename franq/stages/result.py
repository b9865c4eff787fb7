"""Stage 7, result: each record's :class:`~franq.types.AnswerScore`, its claims in order,
the scored ones read from the batch (claim ``k`` of the batch is the ``k``-th scorable
claim in record order) and the others marked ``not_check_worthy`` or ``unaligned``."""
from __future__ import annotations

from claims.types import Claim
from franq.errors import redact
from franq.stages.claims import scorable
from franq.stages.record import AnswerRecord, ClaimBatch
from franq.types import AnswerScore, ClaimScore, verdict


def answer_scores(preset_pipeline, records: list[AnswerRecord], batch: ClaimBatch, *,
                  threshold: float | None = None) -> list[AnswerScore]:
    """The results of ``records``, in order."""
    p = preset_pipeline
    k = 0
    results = []
    for r in records:
        out = []
        for c in r.claims:
            if not c.check_worthy:
                out.append(ClaimScore(c, "not_check_worthy"))
            elif not scorable(p.preset, c):
                out.append(ClaimScore(c, "unaligned"))
            else:
                out.append(claim_score(c, batch, k, threshold))
                k += 1
        results.append(AnswerScore(
            question=r.example.question, answer=r.example.answer, claims=tuple(out), mode=p.preset.form,
            stack=p.result_stack, calibrator=p.calibrator.info if p.calibrator else None,
            warnings=tuple(redact(x) for x in (*r.warnings, *p.calibration_warnings))))
    return results


def claim_score(claim: Claim, batch: ClaimBatch, k: int, threshold: float | None = None) -> ClaimScore:
    """Claim ``k`` of the batch, scored; with ``threshold``, its verdict."""
    def at(a):
        return None if a is None else float(a[k])

    cal, c = batch.calibrated, batch.conditions
    p_true = at(cal.p_true) if cal else at(batch.p_true_raw)
    three = {} if c is None else {"p_contradicted": at(c.p_contradicted), "p_not_mentioned": at(c.p_not_mentioned),
                                  "evidence_window": c.windows[k]}
    calibrated = {} if cal is None else {
        "p_true_calibrated": at(cal.p_true), "p_true_if_supported_calibrated": at(cal.p_true_if_supported),
        "p_true_if_contradicted_calibrated": at(cal.p_true_if_contradicted),
        "p_true_if_not_mentioned_calibrated": at(cal.p_true_if_not_mentioned),
        "p_true_if_unfaithful_calibrated": at(cal.p_true_if_unfaithful), "p_faithful_calibrated": at(cal.p_faithful)}
    return ClaimScore(
        claim, "scored", p_faithful=at(batch.p_supported), uq_faith=at(batch.uq_faith),
        uq_unfaith=at(batch.uq_unfaith), p_true_raw=at(batch.p_true_raw), **three, **calibrated,
        signals={name: float(v[k]) for name, v in batch.signals.items()}, verdict=verdict(p_true, threshold),
        verdict_basis=None if threshold is None else ("calibrated" if cal else "uncalibrated"))
