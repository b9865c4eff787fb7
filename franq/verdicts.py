"""The verdict on a claim, made here and nowhere else (the pipeline's result stage, the
service's per-request threshold and ``franq report --csv --threshold`` all call
:func:`with_verdicts`), and the per-answer score (issue 45, items 2 and 6).

A claim's evidence is read from the faithfulness backend: with the ``verifier`` (three
conditions) the largest of P_s, P_c, P_n says whether the passages support it, contradict
it or do not mention it; with a binary backend P_faithful >= 0.5 is "supported", else "not
supported" (the knowledge term decides). Then, against ``threshold``:

``uncertain``     the passages do not mention (do not support) the claim and its knowledge
                  term, the calibrated P(true) from the model's own knowledge
                  (:class:`~franq.types.KnowledgeTerm`), carries no usable signal: the
                  map's score ranked the natural claims it was fitted on no better than
                  chance (the 90% interval of that AUROC reaches 0.5:
                  :mod:`calibration.knowledge_check`), or the term lies within ``margin`` of
                  its map's base rate, or the 90% interval of its map's step (from the step
                  counts) straddles the threshold
``likely_true``   otherwise, P(true) >= threshold
``likely_false``  otherwise, P(true) < threshold

A claim scored by the verifier alone (the ``fast`` mode: no UQ scorer, so no knowledge
term by design) that the passages do not support gets ``uncertain`` where its calibrated
P(true) is at or above the threshold: nothing speaks for it but how often such claims were
true where the calibrator was fitted (ExpertQA's unsupported claims are mostly true; a
"contradicted" there is as often the verifier's error). Below the threshold it is
``likely_false``: the calibration data says such claims are mostly false.

A claim without a knowledge term otherwise (no calibrator: the verdict cuts the raw mix,
marked ``uncalibrated``; an XGBoost calibrator) gets ``likely_true`` / ``likely_false`` alone:
franq cannot tell whether its knowledge term carries signal. Every verdict comes with its
reason in words.

P(every claim true) of an answer (:func:`p_all_true`) is the product of its scored claims'
P(true), taking them as independent (they are not quite: one answer, one model), so it ranks
answers; it is not itself calibrated.
"""
from __future__ import annotations

import dataclasses
import math

from franq.types import AnswerScore, ClaimScore, KnowledgeTerm, Verdict, WeakestClaim

UNCERTAIN_MARGIN = 0.05
"""The default of ``[calibration] uncertain_margin``."""


def probability_text(p: float, digits: int = 2) -> str:
    """``p`` to ``digits`` decimals, never as a certainty it is not: a probability strictly
    inside (0, 1) that would round to 1 or 0 prints as ``>0.99`` / ``<0.01`` (``digits`` 3, the
    table's columns: ``>0.999`` / ``<0.001``); no calibrated map reaches 0 or 1 (issue 45)."""
    edge = round(0.5 * 10 ** -digits, digits + 1)
    if 1.0 - edge <= p < 1.0:
        return f">{1 - 10 ** -digits:.{digits}f}"
    if 0.0 < p < edge:
        return f"<{10 ** -digits:.{digits}f}"
    return f"{p:.{digits}f}"


def claim_p_true(claim: ClaimScore) -> float | None:
    """P(true) to show and threshold: calibrated when a calibrator ran, else the raw mix."""
    return claim.p_true_raw if claim.p_true_calibrated is None else claim.p_true_calibrated


def evidence(claim: ClaimScore) -> tuple[str, str]:
    """``(condition, words)``: what the passages say of a scored claim, ``condition`` one of
    ``supported``, ``contradicted``, ``not_mentioned`` (three-condition backends) or
    ``not_supported`` (binary ones)."""
    p_s = claim.p_faithful if claim.p_faithful is not None else 0.0
    if claim.p_contradicted is None or claim.p_not_mentioned is None:
        if p_s >= 0.5:
            return "supported", f"supported by the passages (P_faithful {probability_text(p_s)})"
        return "not_supported", f"not supported by the passages (P_faithful {probability_text(p_s)})"
    p_c, p_n = claim.p_contradicted, claim.p_not_mentioned
    if p_s >= p_c and p_s >= p_n:
        return "supported", f"supported by the passages (P_s {probability_text(p_s)})"
    if p_c >= p_n:
        return "contradicted", f"contradicted by the passages (P_c {probability_text(p_c)})"
    return "not_mentioned", f"not in the passages (P_n {probability_text(p_n)})"


def verifier_alone(claim: ClaimScore) -> bool:
    """Whether ``claim`` was scored with no UQ term at all (the ``fast`` mode), calibrated."""
    return (claim.knowledge is None and claim.uq_faith is None and claim.uq_unfaith is None
            and claim.p_true_calibrated is not None)


def no_signal(k: KnowledgeTerm, threshold: float, margin: float) -> str | None:
    """Why knowledge term ``k`` carries no usable signal at ``threshold`` (None: it does)."""
    name = f"own knowledge gives P(true) {probability_text(k.p_true)}"
    if k.check_auroc is not None and k.check_low is not None and k.check_low <= 0.5:
        return (f"{name}, but it told true from false claims no better than chance on the calibrator's natural claims "
                f"(AUROC {k.check_auroc:.2f}, 90% interval {k.check_low:.2f}-{k.check_high:.2f}): no usable signal")
    if k.base_rate is not None and abs(k.p_true - k.base_rate) <= margin:
        return f"{name}, within {margin:g} of the base rate {probability_text(k.base_rate)}: no usable signal"
    if k.low is not None and k.high is not None and k.low <= threshold <= k.high:
        return (f"{name}, but its 90% interval [{probability_text(k.low)}, {probability_text(k.high)}] straddles the threshold "
                f"{threshold:g}: no usable signal")
    return None


def claim_verdict(claim: ClaimScore, threshold: float | None, *, margin: float = UNCERTAIN_MARGIN
                  ) -> tuple[Verdict | None, str | None]:
    """``(verdict, reason)`` of ``claim`` against ``threshold`` (the module doc); ``(None,
    None)`` without a threshold or for a claim that was not scored."""
    p = claim_p_true(claim) if claim.status == "scored" else None
    if p is None or threshold is None:
        return None, None
    condition, words = evidence(claim)
    k = claim.knowledge
    if condition in ("not_mentioned", "not_supported") and k is not None:
        why = no_signal(k, threshold, margin)
        if why is not None:
            return "uncertain", f"{words}; the model's {why}"
        words = _with_knowledge(words, k)
    if condition != "supported" and verifier_alone(claim) and p >= threshold:
        return "uncertain", (f"{words}, and the verifier alone scored it (no knowledge term): P(true) {probability_text(p)} "
                             f">= {threshold:g} is only how often such claims were true where its calibrator was "
                             "fitted")
    cut = "" if claim.p_true_calibrated is not None else " (uncalibrated: a ranking cut on the raw mix)"
    if p >= threshold:
        return "likely_true", f"{words}: P(true) {probability_text(p)} >= {threshold:g}{cut}"
    return "likely_false", f"{words}: P(true) {probability_text(p)} < {threshold:g}{cut}"


def with_verdict(claim: ClaimScore, threshold: float | None, *, margin: float = UNCERTAIN_MARGIN) -> ClaimScore:
    """``claim`` with its verdict, reason and basis for ``threshold`` (None: none)."""
    verdict, reason = claim_verdict(claim, threshold, margin=margin)
    basis = None if verdict is None else "calibrated" if claim.p_true_calibrated is not None else "uncalibrated"
    return dataclasses.replace(claim, verdict=verdict, verdict_reason=reason, verdict_basis=basis)


def with_verdicts(result: AnswerScore, threshold: float | None, *, margin: float = UNCERTAIN_MARGIN) -> AnswerScore:
    """``result`` with each claim's verdict for ``threshold`` (as ``--threshold``)."""
    return dataclasses.replace(result, claims=tuple(with_verdict(c, threshold, margin=margin) for c in result.claims))


def claim_reason(claim: ClaimScore) -> str:
    """Why a scored claim has its P(true), without a threshold: its verdict's reason when it
    has one, else what the passages say and, when they do not speak, the knowledge term."""
    if claim.verdict_reason:
        return claim.verdict_reason
    condition, words = evidence(claim)
    k = claim.knowledge
    if condition in ("supported", "contradicted") or k is None:
        return words
    return _with_knowledge(words, k)


def _with_knowledge(words: str, k: KnowledgeTerm) -> str:
    return f"{words}; the model's own knowledge gives P(true) {probability_text(k.p_true)}" + (
        "" if k.base_rate is None else f" against a base rate of {probability_text(k.base_rate)}")


def p_all_true(result: AnswerScore) -> float | None:
    """P(every scored claim true) under independence (the module doc); None when none was scored."""
    ps = [p for p in (claim_p_true(c) for c in result.scored) if p is not None]
    return math.prod(ps) if ps else None


def weakest_claim(result: AnswerScore) -> WeakestClaim | None:
    """The scored claim with the lowest P(true) (the first of equals), with its reason."""
    scored = [(p, i, c) for i, c in enumerate(result.claims)
              if c.status == "scored" and (p := claim_p_true(c)) is not None]
    if not scored:
        return None
    p, i, c = min(scored, key=lambda t: (t[0], t[1]))
    return WeakestClaim(index=i, text=c.claim.text, p_true=p, reason=claim_reason(c))


def answer_summary(result: AnswerScore) -> dict:
    """The per-answer score as an output line writes it: ``p_all_true`` and ``weakest_claim``
    (an object, or null)."""
    weakest = result.weakest_claim
    return {"p_all_true": result.p_all_true,
            "weakest_claim": None if weakest is None else dataclasses.asdict(weakest)}
