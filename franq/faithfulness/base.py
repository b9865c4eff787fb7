"""The faithfulness protocol: P(supported) for (context, claim) pairs."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class FaithfulnessBackend(Protocol):
    name: str  # stable id recorded in results and calibrator files

    def predict(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """P(claim supported by context) in [0, 1] for each ``(context, claim)`` pair.

        ``context`` is the retrieved passages joined by blank lines."""
        ...
