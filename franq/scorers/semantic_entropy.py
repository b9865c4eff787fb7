"""Semantic entropy (Kuhn et al. 2023): FRANQ's UQ_faith for short-form answers (paper
section 2.2).

Samples are clustered by bidirectional entailment (:func:`semantic_classes`). A class's
log-probability is the log-sum-exp of the likelihoods of its *unique* responses (a text
sampled twice counts once). Two values:

``p_semantic_entropy`` (primary, a probability)
    ``exp(-SE_norm)``, ``SE_norm = -mean_j log p(class(j))`` over the samples, with each
    class's mass from length-normalized likelihoods (the geometric mean of its responses'
    token probabilities, Malinin & Gales 2021) renormalized over the classes seen
    (:func:`~franq.scorers.diversity.class_distribution`): the geometric mean, over the
    samples, of the probability of their meaning. 1 when every sample means the same,
    ``1 / K`` for K equally likely meanings: one over the effective number of meanings, the
    scale of ``1 / sum of eigenvalues`` (:mod:`~franq.scorers.eigval`), so the FRANQ mix of
    the two is flat in P_faithful when they read the same evidence and never runs
    backwards. (Renormalizing raw sequence likelihoods is not enough: 16-token samples of
    a small model differ by tens of nats, the most likely class takes all the mass and the
    value is still ~0.)
``u_semantic_entropy`` (the paper's raw value, nats)
    the same Monte Carlo estimate without renormalizing: equals LM-Polygraph's
    ``SemanticEntropy(use_unique_responses=True)``. Its ``exp(-SE)`` is the geometric mean
    of sequence likelihoods, ~0 for any multi-token sample (tens of nats for 16 tokens of
    a small model), so it is no probability; the benchmark's "Semantic Entropy" row and the
    paper-scale FRANQ row read it.

Higher ``p_semantic_entropy`` = more likely true.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from franq.evidence import SAMPLES
from franq.scorers.base import Signal
from franq.scorers.diversity import SampleContext, class_distribution, semantic_classes


def class_logprobs(s: SampleContext) -> tuple[np.ndarray, np.ndarray]:
    """Each class's log mass (log-sum-exp over its unique responses) and each sample's class."""
    classes = semantic_classes(s.equivalent)
    lp = np.asarray(s.logprobs, dtype=np.float64)
    class_lp = np.empty(len(classes))
    sample_class = np.empty(len(s.texts), dtype=int)
    for k, members in enumerate(classes):
        seen: dict[str, int] = {}
        for i in members:
            seen.setdefault(s.texts[i], i)
            sample_class[i] = k
        class_lp[k] = np.logaddexp.reduce(lp[list(seen.values())])
    return class_lp, sample_class


def semantic_entropy(s: SampleContext) -> float:
    """The paper's Monte Carlo semantic entropy (nats): raw class masses, not renormalized."""
    class_lp, sample_class = class_logprobs(s)
    return float(-np.mean(class_lp[sample_class]))


def normalized_semantic_entropy(s: SampleContext) -> float:
    """The same estimate over the length-normalized, renormalized class distribution
    (nats, <= log of the number of classes)."""
    classes = semantic_classes(s.equivalent)
    p = class_distribution(s, classes, per_token=True)
    sample_class = np.empty(len(s.texts), dtype=int)
    for k, members in enumerate(classes):
        sample_class[members] = k
    return float(-np.mean(np.log(p[sample_class])))


class SemanticEntropyScorer:
    name = "semantic_entropy"
    needs = frozenset({SAMPLES})
    signals = (Signal("p_semantic_entropy", "prob", True,
                      "exp(-semantic entropy) over length-normalized, renormalized class masses: one over the "
                      "effective number of meanings"),
               Signal("u_semantic_entropy", "uncertainty", False,
                      "semantic entropy of the samples (nats), the paper's / LM-Polygraph's raw value"))

    def uncertainty(self, batch: Sequence[SampleContext]) -> np.ndarray:
        """The paper's raw semantic entropy (LM-Polygraph's value)."""
        return np.array([semantic_entropy(s) for s in batch], dtype=np.float64)

    def score(self, batch: Sequence) -> dict[str, np.ndarray]:
        samples = [e.samples for e in batch]
        return {"p_semantic_entropy": np.exp(-np.array([normalized_semantic_entropy(s) for s in samples])),
                "u_semantic_entropy": self.uncertainty(samples)}

    def probability(self, primary: np.ndarray) -> np.ndarray:
        """The primary signal is already a probability in (0, 1]."""
        return np.clip(np.asarray(primary, dtype=np.float64), 0.0, 1.0)
