"""Lookback Lens (Chuang et al., 2024): P_faithful from the attention of the pass FRANQ runs.

For every layer and head, the lookback ratio of an answer token is the mean attention on
the prompt (question and passages) over that plus the mean attention on the answer tokens
before it, while the model predicts the token; a claim's features are the ratios averaged
over its tokens (layers x heads values; 270 for SmolLM2-135M), captured during the
with-passages pass without keeping any attention map (:mod:`franq.lm.capture`). A logistic
regression fitted by ``franq fit probe`` maps them to P(supported). The probe belongs to
the model it was fitted with; the embedded model's ships in ``franq/data/``.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from franq.evidence import INTERNALS, PASSES
from franq.faithfulness.base import NeedsPassesError
from franq.internals import capture_for, claim_features
from franq.internals.probe_file import load_probes


class ProbeFaithfulness:
    """P_faithful from one ``is_faithful`` probe of a probe file (``[model] probe_file``; default
    the file shipped for the pipeline's model)."""

    kind = "lookback"
    name = "lookback-v1"
    needs = frozenset({PASSES, INTERNALS})

    def __init__(self, probe_path=None, *, lm_name: str | None = None):
        self.probe = load_probes(probe_path, lm_name, f"faithfulness {self.kind!r}").find(
            "is_faithful", self.kind, f"faithfulness {self.kind!r}")
        self.capture = capture_for(self.probe.features)

    @classmethod
    def from_config(cls, config, lm):
        return cls(config.model.probe_file, lm_name=lm.name)

    def predict(self, pairs: Sequence[tuple[str, str]], evidence=None) -> np.ndarray:
        if evidence is None or any(e.internals is None for e in evidence):
            raise NeedsPassesError(f"{self.name} reads the with-passages pass's internals; it needs each "
                                   "claim's evidence with them (Franq gathers them)")
        return self.probe.predict(claim_features(self.probe.features, evidence))


class LookbackFaithfulness(ProbeFaithfulness):
    """Logistic regression on the claim's Lookback Lens ratios."""
