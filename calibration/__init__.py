"""Calibration: map raw scores to probabilities you can threshold (paper section 2.3).

    contract.py   what every calibrator reads (ClaimInputs) and returns (CalibratedClaims)
    isotonic.py   IsotonicCalibrator: fit / predict / to_json / from_json (no pickle)
    franq.py      FranqCalibrator: the FRANQ variants none / calibrated / condition / soft
    boosted.py    XGBoostCalibrator: the paper's XGBoost baselines (XGBoost's JSON format)
    metrics.py    expected_calibration_error, calibration_bins, brier_score

A leaf package: it never imports ``franq``.
"""
from calibration.base import CalibratorFileError, NotFittedError
from calibration.contract import CalibratedClaims, Calibrator, ClaimInputs
from calibration.franq import VARIANTS, FranqCalibrator
from calibration.isotonic import IsotonicCalibrator
from calibration.metrics import brier_score, expected_calibration_error

__all__ = ["VARIANTS", "CalibratedClaims", "Calibrator", "CalibratorFileError", "ClaimInputs", "FranqCalibrator",
           "IsotonicCalibrator", "NotFittedError",
           "brier_score", "expected_calibration_error"]
