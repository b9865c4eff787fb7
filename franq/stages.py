"""The pieces :class:`franq.pipeline.Franq` runs its stages with: one answer's work in
progress (:class:`AnswerWork`), the components of one preset (:class:`PresetPipeline`),
what the token passes capture, which claims are scored, and one claim's score."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from claims.types import Claim
from franq.calibrate import ActiveCalibrator
from franq.evidence import INTERNALS, PASSES
from franq.io import Example
from franq.lm.capture import CaptureSpec
from franq.presets import Preset
from franq.types import ClaimScore, Stack, verdict


@dataclass
class AnswerWork:
    """One answer on its way through the stages (what the evidence gatherers fill in)."""

    example: Example
    claims: list[Claim]
    answer_ids: list[int] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    rag_logprobs: np.ndarray | None = None
    closed_logprobs: np.ndarray | None = None
    sample_set: object | None = None
    samples: object | None = None
    closed_samples: object | None = None
    internals: object | None = None
    closed_internals: object | None = None


@dataclass
class PresetPipeline:
    """The components one preset runs, built once."""

    preset: Preset
    evidence: object
    uq_faith: object
    uq_unfaith: object
    extra: tuple
    stack: dict[str, str]
    """The stack as a calibrator records it (``fitted_for``; :func:`franq.calibrate.stack_key`)."""
    result_stack: Stack
    """The same, as the results carry it (:attr:`franq.types.AnswerScore.stack`)."""
    calibrator: ActiveCalibrator | None
    calibration_warnings: tuple[str, ...]



def capture_spec(*components):
    """What the with-passages pass must capture for the components that read ``internals``:
    the union of their ``capture`` specs (None when none reads them)."""
    spec = None
    for comp in components:
        if INTERNALS in getattr(comp, "needs", ()):
            want = getattr(comp, "capture", None) or CaptureSpec()
            spec = want.union(spec)
    return spec


def scorable(p: PresetPipeline, claim: Claim) -> bool:
    return claim.check_worthy and (claim.is_aligned or (p.preset.whole_answer and PASSES not in p.preset.evidence))


def claim_score(claim: Claim, k: int, raw: dict, cal, values: dict[str, np.ndarray],
                 threshold: float | None = None, conditions=None) -> ClaimScore:
    """Claim ``k`` of the batch; ``cal`` (:class:`~calibration.contract.CalibratedClaims`)
    when a calibrator ran; ``conditions`` (:class:`~franq.faithfulness.base.Conditions`)
    when the faithfulness backend tells supported / contradicted / not mentioned apart."""
    def at(a):
        return None if a is None else float(a[k])

    p_true = at(cal.p_true) if cal else at(raw["p_true"])
    c = conditions
    three = {} if c is None else {"p_contradicted": at(c.p_contradicted), "p_not_mentioned": at(c.p_not_mentioned),
                                  "evidence_window": c.windows[k]}
    calibrated = {} if cal is None else {
        "p_true_calibrated": at(cal.p_true), "p_true_if_supported_calibrated": at(cal.p_true_if_supported),
        "p_true_if_contradicted_calibrated": at(cal.p_true_if_contradicted),
        "p_true_if_not_mentioned_calibrated": at(cal.p_true_if_not_mentioned),
        "p_true_if_unfaithful_calibrated": at(cal.p_true_if_unfaithful), "p_faithful_calibrated": at(cal.p_faithful)}
    return ClaimScore(
        claim, "scored", p_faithful=at(raw["p_f"]), uq_faith=at(raw["faith"]), uq_unfaith=at(raw["unfaith"]),
        p_true_raw=at(raw["p_true"]), **three, **calibrated,
        signals={name: float(v[k]) for name, v in values.items()}, verdict=verdict(p_true, threshold),
        verdict_basis=None if threshold is None else ("calibrated" if cal else "uncalibrated"))


def whole_answer_claim(answer: str) -> Claim:
    """The answer as one claim (paper: "we treat each model response as a single claim")."""
    stripped = answer.strip()
    start = answer.find(stripped) if stripped else 0
    return Claim(stripped, ((start, start + len(stripped)),), sentence=0)
