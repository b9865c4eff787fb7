"""Context PMI: P_faithful from the two passes FRANQ already runs, at no extra cost.

A claim grounded in the passages becomes more likely when they are in the prompt. The
signal is the mean over the claim's tokens of the pointwise mutual information
``log p(y_t | x, r, y_<t) - log p(y_t | x, y_<t)`` (paper eq. 1 vs eq. 3), mapped to a
probability by a one-feature logistic map fitted on labelled claims and stored as JSON
(``franq fit faithfulness``). Higher = more likely supported.

The map belongs to the LM and prompt it was fitted with (recorded in its ``stack``); with
another LM the ranking still holds but the probabilities are not calibrated, and a
warning says so.
"""
from __future__ import annotations

import logging
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

import numpy as np

from franq.evidence import PASSES
from franq.faithfulness.base import NeedsPassesError
from franq.faithfulness.features import pass_features
from franq.faithfulness.logistic import LogisticMap

log = logging.getLogger(__name__)

DEFAULT_MAP = "data/faithfulness-context-pmi.json"


def packaged_map(name: str) -> LogisticMap:
    return LogisticMap.from_json(resources.files("franq").joinpath(name).read_text(encoding="utf-8"))


def warn_if_other_stack(fitted: LogisticMap, lm_name: str | None, what: str) -> None:
    want = fitted.stack.get("model")
    if lm_name is not None and want and want != lm_name:
        log.warning("%s was fitted for model %s, not %s: its ranking still holds but its "
                    "probabilities are not calibrated for this model; refit it with "
                    "`franq fit faithfulness`", what, want, lm_name)


class ContextPMIFaithfulness:
    """P_faithful = sigmoid(a * mean token PMI + b) from a fitted JSON map."""

    name = "context-pmi-v1"
    needs = frozenset({PASSES})

    def __init__(self, map_path: str | Path | None = None, *, lm_name: str | None = None):
        self.map = LogisticMap.from_json(map_path) if map_path else packaged_map(DEFAULT_MAP)
        if self.map.features != ("pmi_mean",):
            raise ValueError(f"context PMI map: expected features ['pmi_mean'], got {list(self.map.features)}")
        warn_if_other_stack(self.map, lm_name, "the context-PMI map")

    @classmethod
    def from_config(cls, config, lm) -> ContextPMIFaithfulness:
        return cls(config.faithfulness.map, lm_name=lm.name)

    def predict(self, pairs: Sequence[tuple[str, str]], evidence=None) -> np.ndarray:
        if evidence is None:
            raise NeedsPassesError("context_pmi needs the claim's token log-probabilities with and without "
                                   "the passages; it needs each claim's evidence (Franq passes it)")
        x = np.array([pass_features(e)["pmi_mean"] for e in evidence], dtype=np.float64)
        return self.map.predict(x[:, None])
