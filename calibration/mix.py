"""The FRANQ mix (paper eq. 2 and 4), defined once for the whole project::

    P(true) = P_faithful * P(true | faithful) + (1 - P_faithful) * P(true | unfaithful)

Here, in the leaf package, because the calibrators need it (:mod:`calibration.franq`) and
``calibration/`` never imports ``franq``; the pipeline's checked entry is :func:`franq.mix.mix`.
"""
from __future__ import annotations

import numpy as np


def franq_mix(p_faithful: np.ndarray, p_true_if_faithful: np.ndarray, p_true_if_unfaithful: np.ndarray) -> np.ndarray:
    return p_faithful * p_true_if_faithful + (1.0 - p_faithful) * p_true_if_unfaithful
