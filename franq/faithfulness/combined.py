"""The combined offline faithfulness backend: a logistic regression over offline signals.

Features (see :mod:`franq.faithfulness.features`) are lexical overlap statistics of the
claim in the passages and, when the fitted map uses them, the context PMI of the claim's
tokens from FRANQ's two passes. Fitted on ExpertQA training answers (rand_val +
domain_val, human support labels) by ``franq fit faithfulness`` and shipped as JSON
that records the features and the stack it was fitted for. Higher = more likely supported.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from franq.evidence import PASSES
from franq.faithfulness.base import NeedsPassesError
from franq.faithfulness.context_pmi import packaged_map, warn_if_other_stack
from franq.faithfulness.features import PASS_FEATURES, feature_matrix, pass_features
from franq.faithfulness.logistic import LogisticMap

DEFAULT_MAP = "data/faithfulness-combined.json"


class CombinedFaithfulness:
    """P_faithful = sigmoid(w . standardized features + b) from a fitted JSON map."""

    def __init__(self, map_path: str | Path | None = None, *, lm_name: str | None = None):
        self.map = _load_map(map_path)
        self.needs = frozenset({PASSES}) if _uses_passes(self.map) else frozenset()
        self.name = str(self.map.fitted_on.get("name", "combined-v1"))
        if self.needs:
            warn_if_other_stack(self.map, lm_name, "the combined faithfulness map")

    @classmethod
    def needs_for(cls, config) -> frozenset[str]:
        """``passes`` when the configured map uses LM-pass features (the packaged one does not)."""
        return frozenset({PASSES}) if _uses_passes(_load_map(config.faithfulness.map)) else frozenset()

    @classmethod
    def from_config(cls, config, lm) -> CombinedFaithfulness:
        return cls(config.faithfulness.map, lm_name=lm.name)

    def predict(self, pairs: Sequence[tuple[str, str]], evidence=None) -> np.ndarray:
        if self.needs and evidence is None:
            raise NeedsPassesError(f"{self.name} uses LM-pass features {list(self.map.features)}; "
                                   "it needs each claim's evidence (Franq passes it)")
        passes = [pass_features(e) for e in evidence] if self.needs else None
        return self.map.predict(feature_matrix(self.map.features, pairs, passes))


def _load_map(map_path) -> LogisticMap:
    return LogisticMap.from_json(map_path) if map_path else packaged_map(DEFAULT_MAP)


def _uses_passes(fitted: LogisticMap) -> bool:
    return any(f in PASS_FEATURES for f in fitted.features)
