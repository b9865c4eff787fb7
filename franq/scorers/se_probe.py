"""Semantic entropy probes (Kossen et al., 2024): short-form confidence from one pass, no samples.

Semantic entropy needs N sampled answers per question (the ``short`` preset draws 10). A
semantic entropy probe predicts, from the hidden states of one answer, whether its
question's semantic entropy is low: a logistic regression fitted by ``franq fit-probe``
on answers labelled with the semantic entropy of their samples (target
``low_semantic_entropy``: below the threshold that best splits the fitting data). The
``probe`` preset (``uq.short_scoring = "probe"``) scores a short answer with it from the
two teacher-forced passes FRANQ runs in long form, instead of sampling:

    se_probe         P(low semantic entropy) from the with-passages pass (UQ_faith)
    se_probe_closed  the same question asked of the closed-book pass's hidden states, by a
                     probe fitted on them (UQ_unfaith: how sure the model is without passages)

Each reads its probe from the model's probe file (``model.probe``; default the file shipped
for the embedded model) and belongs to the model it was fitted with.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from franq.evidence import INTERNALS, PASSES
from franq.internals import capture_for, claim_features
from franq.probe import load_probes
from franq.scorers.base import Signal

TARGET = "low_semantic_entropy"


class SemanticEntropyProbeScorer:
    name = "se_probe"
    kinds = ("hidden",)
    needs = frozenset({PASSES, INTERNALS})
    signals = (Signal("p_low_se_probe", "prob", True,
                      "semantic entropy probe on the with-passages pass: P(the samples would agree)"),)

    def __init__(self, probe_path=None, *, lm_name: str | None = None):
        where = f"scorer {self.name!r}"
        self.probe = load_probes(probe_path, lm_name, where).find(TARGET, self.kinds, where)
        self.capture = capture_for(self.probe.features)

    @classmethod
    def from_config(cls, config, lm):
        return cls(config.model.probe, lm_name=lm.name)

    def score(self, batch: Sequence) -> dict[str, np.ndarray]:
        return {self.signals[0].name: self.probe.predict(claim_features(self.probe.features, batch))}

    def probability(self, primary: np.ndarray) -> np.ndarray:
        return np.asarray(primary, dtype=np.float64)


class ClosedBookSemanticEntropyProbeScorer(SemanticEntropyProbeScorer):
    name = "se_probe_closed"
    kinds = ("hidden_closed",)
    signals = (Signal("p_low_se_probe_closed", "prob", True,
                      "semantic entropy probe on the closed-book pass's hidden states"),)
