"""Stage 6, calibrate: the preset's calibrator (:class:`franq.calibrate.ActiveCalibrator`,
none when no fitted one matches the stack) maps the batch's raw values to calibrated ones."""
from __future__ import annotations

from calibration.contract import ClaimInputs
from franq.stages.record import ClaimBatch


def calibrate(calibrator, batch: ClaimBatch) -> None:
    """Fill ``batch.calibrated`` (:class:`~calibration.contract.CalibratedClaims`; None without a calibrator)."""
    if calibrator is None:
        batch.calibrated = None
        return
    c = batch.conditions  # None: the backend gives P(supported) only
    batch.calibrated = calibrator.apply(ClaimInputs(
        batch.p_supported, batch.uq_faith, batch.uq_unfaith, signals=batch.signals,
        p_contradicted=None if c is None else c.p_contradicted,
        p_not_mentioned=None if c is None else c.p_not_mentioned))
