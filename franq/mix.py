"""The FRANQ mix (paper eq. 2 and 4):

    P(true) = P_faithful * P(true | faithful) + (1 - P_faithful) * P(true | unfaithful)

The formula itself lives in :func:`calibration.mix.franq_mix` (``calibration/`` is a
leaf package and needs it too); this is the pipeline's checked entry to it.
"""
from __future__ import annotations

import numpy as np

from calibration.mix import franq_mix


def mix(p_faithful, p_true_if_faithful, p_true_if_unfaithful) -> np.ndarray:
    """Vectorized FRANQ formula; every input must lie in [0, 1]."""
    arrays = [np.asarray(a, dtype=np.float64) for a in (p_faithful, p_true_if_faithful, p_true_if_unfaithful)]
    for name, a in zip(("p_faithful", "p_true_if_faithful", "p_true_if_unfaithful"), arrays):
        if np.isnan(a).any() or (a < 0).any() or (a > 1).any():
            raise ValueError(f"{name}: values must lie in [0, 1], got {a[(a < 0) | (a > 1) | np.isnan(a)][:3]}")
    return franq_mix(*arrays)
