"""The scored answer's probability mass under the samples' meaning distribution: an
answer-dependent short-form signal for observer mode.

The samples are clustered by bidirectional entailment (Kuhn et al. 2023); each class gets
the likelihood mass of its unique responses, renormalized over the classes seen
(:func:`~franq.scorers.diversity.class_distribution`). The answer's mass is that of the
classes whose first member is equivalent to the answer (both directions >= 0.5), 0 when it
matches none. When the answer's own likelihood under the sampling prompt is known (the
observer preset computes it), the answer joins the samples as one more member with that
likelihood, so an answer the model finds likely scores well even if no sample said it,
and its mass is that of its class. The primary signal uses length-normalized likelihoods (the geometric mean of
token probabilities), so a class of long samples is not drowned by a short one;
``p_answer_mass_raw`` uses the raw sequence likelihoods, as semantic entropy does.

``probability`` is the mass, in [0, 1]. Higher = more likely true.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from franq.evidence import ANSWER_SAMPLES, SAMPLES
from franq.scorers.base import Signal
from franq.scorers.diversity import SampleContext, class_distribution, semantic_classes


def answer_mass(s: SampleContext, *, per_token: bool) -> float:
    joined = s.with_answer()
    if joined is not None:
        classes = semantic_classes(joined.equivalent)
        p = class_distribution(joined, classes, per_token=per_token)
        return float(next(p[k] for k, members in enumerate(classes) if len(s.texts) in members))
    classes = semantic_classes(s.equivalent)
    p = class_distribution(s, classes, per_token=per_token)
    same = s.answer_equivalent()
    return float(sum(p[k] for k, members in enumerate(classes) if same[members[0]]))


class AnswerMassScorer:
    name = "answer_mass"
    needs = frozenset({SAMPLES, ANSWER_SAMPLES})
    signals = (Signal("p_answer_mass", "prob", True, "the answer's class mass, length-normalized likelihoods"),
               Signal("p_answer_mass_raw", "prob", True, "the answer's class mass, raw sequence likelihoods"))

    def score(self, batch: Sequence) -> dict[str, np.ndarray]:
        return {"p_answer_mass": np.array([answer_mass(e.samples, per_token=True) for e in batch]),
                "p_answer_mass_raw": np.array([answer_mass(e.samples, per_token=False) for e in batch])}

    def probability(self, primary: np.ndarray) -> np.ndarray:
        return np.clip(np.asarray(primary, dtype=np.float64), 0.0, 1.0)
