"""Stage 2, evidence: the preset's gatherer (:mod:`franq.evidence`: token passes or samples)
fills each record; then each scorable claim gets its :class:`~franq.stages.record.ClaimEvidence`
view, in record order, as the batched stages read them."""
from __future__ import annotations

from franq.evidence import INTERNALS
from franq.lm.capture import CaptureSpec
from franq.stages.claims import scorable
from franq.stages.record import AnswerRecord, ClaimBatch, ClaimEvidence


def gather(preset_pipeline, records: list[AnswerRecord]) -> ClaimBatch:
    """Run the preset's evidence gatherer over ``records``; the batch of their scorable claims."""
    preset_pipeline.evidence.gather(records)
    return ClaimBatch([e for r in records for e in scorable_evidence(preset_pipeline.preset, r)])


def scorable_evidence(preset, record: AnswerRecord) -> list[ClaimEvidence]:
    """One :class:`ClaimEvidence` per scorable claim of ``record``."""
    return [record.evidence(c) for c in record.claims if scorable(preset, c)]


def capture_spec(*components) -> CaptureSpec | None:
    """What the with-passages pass must capture for the components that read ``internals``:
    the union of their ``capture`` specs (None when none reads them)."""
    spec = None
    for comp in components:
        if INTERNALS in getattr(comp, "needs", ()):
            want = getattr(comp, "capture", None) or CaptureSpec()
            spec = want.union(spec)
    return spec
