"""The FRANQ mix (paper eq. 2 and 4), defined once for the whole project::

    P(true) = P_faithful * P(true | faithful) + (1 - P_faithful) * P(true | unfaithful)

and its three-condition form (:func:`franq_mix3`, supported / contradicted / not mentioned).
Here, in the leaf package, because the calibrators need it (:mod:`calibration.franq`) and
``calibration/`` never imports ``franq``; the pipeline's checked entry is :func:`franq.mix.mix`.
"""
from __future__ import annotations

import numpy as np


def franq_mix(p_faithful: np.ndarray, p_true_if_faithful: np.ndarray, p_true_if_unfaithful: np.ndarray) -> np.ndarray:
    return p_faithful * p_true_if_faithful + (1.0 - p_faithful) * p_true_if_unfaithful


def franq_mix3(p_supported: np.ndarray, p_contradicted: np.ndarray, p_not_mentioned: np.ndarray,
               p_true_if_supported: np.ndarray, p_true_if_contradicted: np.ndarray,
               p_true_if_not_mentioned: np.ndarray) -> np.ndarray:
    """FRANQ with three conditions of the passages towards the claim (issue 25)::

        P(true) = P_s * T_s + P_c * T_c + P_n * T_n

    (P_s + P_c + P_n = 1). With P_c = 0 it is :func:`franq_mix` with P_faithful = P_s. Clipped
    to [0, 1]: three products summed can pass 1 by a rounding error (1.0000000000000002)."""
    return np.clip(p_supported * p_true_if_supported + p_contradicted * p_true_if_contradicted
                   + p_not_mentioned * p_true_if_not_mentioned, 0.0, 1.0)
