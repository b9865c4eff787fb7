"""Lexical similarity (Fomicheva et al. 2020): mean ROUGE-L F1 over all pairs of samples
(``rouge_score`` with the Porter stemmer, as LM-Polygraph's ``LexicalSimilarity``,
whose uncertainty is the negated mean).

``probability`` is the mean similarity itself, in [0, 1]. Higher = more likely true. Needs no
judge: it reads only the texts.
"""
from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from franq.evidence import SAMPLES
from franq.scorers.base import Signal
from franq.scorers.diversity import SampleContext


@functools.lru_cache(maxsize=1)
def _rouge():
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)


def mean_rouge_l(texts: Sequence[str]) -> float:
    scorer = _rouge()
    sims = [scorer.score(texts[i], texts[j])["rougeL"].fmeasure
            for i in range(len(texts)) for j in range(i + 1, len(texts))]
    return float(np.mean(sims)) if sims else 1.0


class LexicalSimilarityScorer:
    name = "lexical_similarity"
    needs = frozenset({SAMPLES})
    signals = (Signal("u_lexical_similarity", "uncertainty", False, "minus the mean pairwise ROUGE-L of the samples"),)

    def uncertainty(self, batch: Sequence[SampleContext]) -> np.ndarray:
        return -np.array([mean_rouge_l(s.texts) for s in batch], dtype=np.float64)

    def score(self, batch: Sequence) -> dict[str, np.ndarray]:
        return {"u_lexical_similarity": self.uncertainty([e.samples for e in batch])}

    def probability(self, primary: np.ndarray) -> np.ndarray:
        return np.clip(-np.asarray(primary, dtype=np.float64), 0.0, 1.0)
