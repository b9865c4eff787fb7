"""Stage 1, claims: each answer's claims, aligned to its tokens (long form: decomposed, or
the claims given, located in the answer; short form: the whole answer as one claim, aligned
too when the preset runs token passes). Opens one :class:`~franq.stages.record.AnswerRecord` per answer."""
from __future__ import annotations

from claims.align import GIVEN_CLAIM_MIN_SHARE, align_claims, answer_units, locate_claim
from claims.decompose import decompose_all
from claims.types import Claim
from franq.evidence import PASSES
from franq.io import Example
from franq.limits import check
from franq.stages.record import AnswerRecord


def find_claims(preset, examples: list[Example], *, lm, decomposer, limits, token_ids=None, offsets=None
                ) -> list[AnswerRecord]:
    """One record per example, with its claims. ``token_ids`` / ``offsets``: the answer's
    tokens when they are known already (one generated answer)."""
    if preset.whole_answer:
        if PASSES not in preset.evidence:
            return [AnswerRecord(ex, [whole_answer_claim(ex.answer)], whole_answer=True) for ex in examples]
        records = []
        for ex in examples:
            ids, offs = lm.encode_answer(ex.answer)
            records.append(AnswerRecord(ex, align_claims(ex.answer, [whole_answer_claim(ex.answer)], offs, ids), ids,
                                        whole_answer=True))
        return records
    aligned = PASSES in preset.evidence  # fast: claims located by characters only, no tokenizer
    decs = iter(decompose_all(decomposer, [ex.answer for ex in examples if ex.claims is None]))
    records = []
    for ex in examples:
        if not aligned:
            ids, offs = [], []
        elif token_ids is None:
            ids, offs = lm.encode_answer(ex.answer)
        else:
            ids, offs = token_ids, offsets
        warnings: list[str] = []
        if ex.claims is None:
            d = next(decs)
            claims, warnings = list(d.claims), list(d.warnings)
            check("claims", len(claims), subject="the answer (decomposed)", limits=limits)
        else:
            units = answer_units(ex.answer)  # split once, not once per claim
            claims = [locate_claim(ex.answer, c, sentence=i, units=units, min_share=GIVEN_CLAIM_MIN_SHARE)
                      for i, c in enumerate(ex.claims)]
            if not ex.claims:
                warnings.append("claims: an empty list was given, so no claim was scored; leave 'claims' "
                                "out to split the answer into claims")
        records.append(AnswerRecord(ex, align_claims(ex.answer, claims, offs, ids) if aligned else claims, ids,
                                    warnings))
    return records


def scorable(preset, claim: Claim) -> bool:
    """A check-worthy claim aligned to the answer's tokens (any check-worthy claim, when the
    preset reads no token passes: the whole answer, or ``fast``'s text-only claims)."""
    return claim.check_worthy and (claim.is_aligned or PASSES not in preset.evidence)


def whole_answer_claim(answer: str) -> Claim:
    """The answer as one claim (paper: "we treat each model response as a single claim")."""
    stripped = answer.strip()
    start = answer.find(stripped) if stripped else 0
    return Claim(stripped, ((start, start + len(stripped)),), sentence=0)
