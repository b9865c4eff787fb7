"""Truth probe (SAPLMA-style): P(claim true) from the with-passages pass's hidden states.

A logistic regression on the claim's hidden states (pooled over its tokens at the probe's
layers), fitted by ``franq fit probe`` on claims labelled ``is_true``, read from the probe
file of the model (``[model] probe_file``; default the one shipped for the embedded model). Use
it as an extra signal, or as UQ_faith / UQ_unfaith. It is supervised: it knows only what
its training claims taught it, and belongs to the model it was fitted with.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from franq.evidence import INTERNALS
from franq.internals import capture_for, claim_features
from franq.internals.probe_file import load_probes
from franq.scorers.base import Signal


class ProbeScorer:
    """A scorer whose one signal is a probe's probability: the first probe for ``target`` on
    a feature set of one of ``kinds`` in the model's probe file (``[model] probe_file``; default the
    file shipped for the pipeline's model), applied to each claim's features."""

    name = "probe_scorer"
    target = "is_true"
    kinds: tuple[str, ...] = ("hidden",)
    needs = frozenset({INTERNALS})
    signals: tuple[Signal, ...] = ()

    def __init__(self, probe_path=None, *, lm_name: str | None = None):
        where = f"scorer {self.name!r}"
        self.probe = load_probes(probe_path, lm_name, where).find(self.target, self.kinds, where)
        self.capture = capture_for(self.probe.features)

    @classmethod
    def from_config(cls, config, lm):
        return cls(config.model.probe_file, lm_name=lm.name)

    def score(self, batch: Sequence) -> dict[str, np.ndarray]:
        return {self.signals[0].name: self.probe.predict(claim_features(self.probe.features, batch))}

    def probability(self, primary: np.ndarray) -> np.ndarray:
        return np.asarray(primary, dtype=np.float64)


class TruthProbeScorer(ProbeScorer):
    name = "truth_probe"
    signals = (Signal("p_true_probe", "prob", True, "hidden-state probe's P(true), fitted on is_true labels"),)
