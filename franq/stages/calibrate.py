"""Stage 6, calibrate: the preset's calibrator (:class:`franq.calibrate.ActiveCalibrator`,
none when no fitted one matches the stack) maps the batch's raw values to calibrated ones."""
from __future__ import annotations

from franq.stages.record import ClaimBatch


def calibrate(calibrator, batch: ClaimBatch) -> None:
    """Fill ``batch.calibrated`` (None without a calibrator)."""
    if calibrator is None:
        batch.calibrated = None
        return
    batch.calibrated = calibrator.apply(batch.p_supported, batch.uq_faith, batch.uq_unfaith, batch.signals,
                                        conditions=batch.conditions)
