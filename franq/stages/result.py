"""Stage 7, result: each record's :class:`~franq.types.AnswerScore`, its claims in order,
the scored ones read from the batch (claim ``k`` of the batch is the ``k``-th scorable
claim in record order) and the others marked ``not_check_worthy`` or ``unaligned``."""
from __future__ import annotations

from claims.types import Claim
from franq import language
from franq.errors import redact
from franq.stages.claims import scorable
from franq.stages.record import AnswerRecord, ClaimBatch
from franq.types import AnswerScore, ClaimScore, KnowledgeTerm
from franq.verdicts import UNCERTAIN_MARGIN, with_verdict


def answer_scores(preset_pipeline, records: list[AnswerRecord], batch: ClaimBatch, *,
                  threshold: float | None = None, margin: float = UNCERTAIN_MARGIN,
                  multilingual: bool = False) -> list[AnswerScore]:
    """The results of ``records``, in order; with ``threshold``, each scored claim's verdict
    (:func:`franq.verdicts.claim_verdict`, ``margin``: ``calibration.uncertain_margin``);
    unless ``multilingual``, a warning on a record whose text does not look English."""
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
                out.append(claim_score(c, batch, k, threshold, margin=margin))
                k += 1
        said = None if multilingual else language.warning({
            "question": r.example.question, "answer": r.example.answer,
            "passages": "\n".join(x.text for x in r.example.passages)})
        results.append(AnswerScore(
            question=r.example.question, answer=r.example.answer, claims=tuple(out), mode=p.preset.form,
            stack=p.result_stack, calibrator=p.calibrator.info if p.calibrator else None,
            warnings=tuple(redact(x) for x in (*r.warnings, *p.calibration_warnings, *([said] if said else [])))))
    return results


def claim_score(claim: Claim, batch: ClaimBatch, k: int, threshold: float | None = None, *,
                margin: float = UNCERTAIN_MARGIN) -> ClaimScore:
    """Claim ``k`` of the batch, scored; with ``threshold``, its verdict and reason."""
    def at(a):
        return None if a is None else float(a[k])

    cal, c = batch.calibrated, batch.conditions
    three = {} if c is None else {"p_contradicted": at(c.p_contradicted), "p_not_mentioned": at(c.p_not_mentioned),
                                  "evidence_window": c.windows[k]}
    calibrated = {} if cal is None else {
        "p_true_calibrated": at(cal.p_true), "p_true_if_supported_calibrated": at(cal.p_true_if_supported),
        "p_true_if_contradicted_calibrated": at(cal.p_true_if_contradicted),
        "p_true_if_not_mentioned_calibrated": at(cal.p_true_if_not_mentioned),
        "p_true_if_unfaithful_calibrated": at(cal.p_true_if_unfaithful), "p_faithful_calibrated": at(cal.p_faithful)}
    score = ClaimScore(
        claim, "scored", p_faithful=at(batch.p_supported), uq_faith=at(batch.uq_faith),
        uq_unfaith=at(batch.uq_unfaith), p_true_raw=at(batch.p_true_raw), **three, **calibrated,
        signals={name: float(v[k]) for name, v in batch.signals.items()}, knowledge=knowledge_term(cal, k))
    return with_verdict(score, threshold, margin=margin)


def knowledge_term(cal, k: int) -> KnowledgeTerm | None:
    """Claim ``k``'s knowledge term: its calibrated P(true | not mentioned) (three conditions) or
    P(true | not supported) (binary), with the map's base rate and interval; None without one."""
    value = None if cal is None else (cal.p_true_if_not_mentioned if cal.p_true_if_not_mentioned is not None
                                      else cal.p_true_if_unfaithful)
    if value is None:
        return None
    s = cal.knowledge
    check = {} if s is None or s.check is None else s.check
    return KnowledgeTerm(float(value[k]), base_rate=None if s is None else s.base_rate,
                         low=None if s is None or s.low is None else float(s.low[k]),
                         high=None if s is None or s.high is None else float(s.high[k]),
                         check_auroc=check.get("auroc"), check_low=check.get("low"), check_high=check.get("high"))
