"""Stage 6, calibrate: the preset's calibrator (:class:`franq.calibrate.ActiveCalibrator`,
none when no fitted one matches the stack) maps the batch's raw values to calibrated ones."""
from __future__ import annotations

import numpy as np

from calibration.contract import CalibratedClaims, ClaimInputs
from franq.stages.record import ClaimBatch


def calibrate(calibrator, batch: ClaimBatch) -> None:
    """Fill ``batch.calibrated`` (:class:`~calibration.contract.CalibratedClaims`; None without a calibrator)."""
    if calibrator is None:
        batch.calibrated = None
        return
    c = batch.conditions  # None: the backend gives P(supported) only
    text_only = batch.uq_faith is None  # fast: no UQ term; the mix with UQ_faith = 1, UQ_unfaith = 0
    n = len(batch)
    out = calibrator.apply(ClaimInputs(
        batch.p_supported, np.ones(n) if text_only else batch.uq_faith,
        np.zeros(n) if text_only else batch.uq_unfaith, signals=batch.signals,
        p_contradicted=None if c is None else c.p_contradicted,
        p_not_mentioned=None if c is None else c.p_not_mentioned))
    batch.calibrated = CalibratedClaims(out.p_true) if text_only else out  # no UQ branch to report
