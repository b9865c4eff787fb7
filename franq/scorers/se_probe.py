"""Semantic entropy probes (Kossen et al., 2024): short-form confidence from one pass, no samples.

Semantic entropy needs N sampled answers per question (the ``short`` preset draws 10). A
semantic entropy probe predicts, from the hidden states of one answer, whether its
question's semantic entropy is low: a logistic regression fitted by ``franq fit probe``
on answers labelled with the semantic entropy of their samples (target
``low_semantic_entropy``: below the threshold that best splits the fitting data). The
``probe`` preset (``uq.short_scoring = "probe"``) scores a short answer with it from the
two teacher-forced passes FRANQ runs in long form, instead of sampling:

    se_probe         P(low semantic entropy) from the with-passages pass (UQ_faith)
    se_probe_closed  the same question asked of the closed-book pass's hidden states, by a
                     probe fitted on them (UQ_unfaith: how sure the model is without passages)

Each reads its probe from the model's probe file (``[model] probe_file``; default the file shipped
for the embedded model) and belongs to the model it was fitted with.
"""
from __future__ import annotations

from franq.evidence import INTERNALS, PASSES
from franq.scorers.base import Signal
from franq.scorers.truth_probe import ProbeScorer


class SemanticEntropyProbeScorer(ProbeScorer):
    name = "se_probe"
    target = "low_semantic_entropy"
    kinds = ("hidden",)
    needs = frozenset({PASSES, INTERNALS})
    signals = (Signal("p_low_se_probe", "prob", True,
                      "semantic entropy probe on the with-passages pass: P(the samples would agree)"),)


class ClosedBookSemanticEntropyProbeScorer(SemanticEntropyProbeScorer):
    name = "se_probe_closed"
    kinds = ("hidden_closed",)
    signals = (Signal("p_low_se_probe_closed", "prob", True,
                      "semantic entropy probe on the closed-book pass's hidden states"),)
