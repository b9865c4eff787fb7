"""The FRANQ mix (paper eq. 2 and 4):

    P(true) = P_faithful * P(true | faithful) + (1 - P_faithful) * P(true | unfaithful)

and, with a faithfulness backend that tells the three conditions apart (the verifier),

    P(true) = P_s * T_s + P_c * T_c + P_n * T_n     (supported / contradicted / not mentioned)

The formulas live in :mod:`calibration.mix` (``calibration/`` is a leaf package and needs
them too); these are the pipeline's checked entries to them. Which one a calibrated result
used is the calibrator file's format (:mod:`franq.calibrate`); the raw ``p_true_raw`` is
always the paper's binary mix with P_faithful = P_s.
"""
from __future__ import annotations

import numpy as np

from calibration.mix import franq_mix, franq_mix3


def _checked(named: dict) -> list[np.ndarray]:
    arrays = []
    for name, a in named.items():
        a = np.asarray(a, dtype=np.float64)
        if np.isnan(a).any() or (a < 0).any() or (a > 1).any():
            raise ValueError(f"{name}: values must lie in [0, 1], got {a[(a < 0) | (a > 1) | np.isnan(a)][:3]}")
        arrays.append(a)
    return arrays


def mix(p_faithful, p_true_if_faithful, p_true_if_unfaithful) -> np.ndarray:
    """Vectorized FRANQ formula; every input must lie in [0, 1]."""
    return franq_mix(*_checked({"p_faithful": p_faithful, "p_true_if_faithful": p_true_if_faithful,
                                "p_true_if_unfaithful": p_true_if_unfaithful}))


def mix3(p_supported, p_contradicted, p_not_mentioned, p_true_if_supported, p_true_if_contradicted,
         p_true_if_not_mentioned) -> np.ndarray:
    """Three-condition FRANQ; every input must lie in [0, 1] and P_s + P_c + P_n = 1."""
    arrays = _checked({"p_supported": p_supported, "p_contradicted": p_contradicted,
                       "p_not_mentioned": p_not_mentioned, "p_true_if_supported": p_true_if_supported,
                       "p_true_if_contradicted": p_true_if_contradicted,
                       "p_true_if_not_mentioned": p_true_if_not_mentioned})
    total = arrays[0] + arrays[1] + arrays[2]
    if not np.allclose(total, 1.0, atol=1e-6):
        raise ValueError(f"p_supported + p_contradicted + p_not_mentioned must be 1, got {total[:3]}")
    return franq_mix3(*arrays)
