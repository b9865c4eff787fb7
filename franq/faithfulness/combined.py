"""The combined offline faithfulness backend: a logistic regression over offline signals.

Features (see :mod:`franq.faithfulness.features`) are lexical overlap statistics of the
claim in the passages and, when the fitted map uses them, the context PMI of the claim's
tokens from FRANQ's two passes. Fitted on ExpertQA training answers (rand_val +
domain_val, human support labels) by ``scripts/fit_faithfulness.py`` and shipped as JSON
that records the features and the stack it was fitted for. Higher = more likely supported.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from franq.faithfulness.base import NeedsPassesError
from franq.faithfulness.context_pmi import packaged_map, warn_if_other_stack
from franq.faithfulness.features import PASS_FEATURES, feature_matrix, pass_features
from franq.faithfulness.logistic import LogisticMap
from franq.scorers.base import ClaimContext

DEFAULT_MAP = "data/faithfulness-combined.json"


class CombinedFaithfulness:
    """P_faithful = sigmoid(w . standardized features + b) from a fitted JSON map."""

    def __init__(self, map_path: str | Path | None = None, *, lm_name: str | None = None):
        self.map = LogisticMap.from_json(map_path) if map_path else packaged_map(DEFAULT_MAP)
        self.needs_passes = any(f in PASS_FEATURES for f in self.map.features)
        self.name = str(self.map.fitted_on.get("name", "combined-v1"))
        if self.needs_passes:
            warn_if_other_stack(self.map, lm_name, "the combined faithfulness map")

    def predict(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        if self.needs_passes:
            raise NeedsPassesError(f"{self.name} uses LM-pass features {list(self.map.features)}; "
                                   "use it inside Franq (it calls predict_with_passes)")
        return self.map.predict(feature_matrix(self.map.features, pairs, None))

    def predict_with_passes(self, pairs: Sequence[tuple[str, str]],
                            contexts: Sequence[ClaimContext]) -> np.ndarray:
        passes = [pass_features(c) for c in contexts] if self.needs_passes else None
        return self.map.predict(feature_matrix(self.map.features, pairs, passes))
