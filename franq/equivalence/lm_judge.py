"""The local causal LM as equivalence judge.

For each unordered pair of distinct answers the LM is asked whether, as answers to the
question, they mean the same; ``P = p(yes) / (p(yes) + p(no))`` from the next-token
distribution after the prompt (one forward pass per pair, pairs batched, left-padded;
:func:`franq.lm.labels.label_probability`). The judgement is symmetric, so
``P(a entails b) = P(b entails a) = P(same)``. Costs ``u (u - 1) / 2`` prompt passes for
``u`` unique answers. The prompt is :data:`franq.lm.prompts.EQUIVALENCE_PROMPT`.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from franq.equivalence.base import expand, unique_pairs
from franq.lm.labels import LabelWords, label_probability
from franq.lm.prompts import EQUIVALENCE_LABELS, equivalence_prompt_text


class LMJudge:
    @classmethod
    def from_config(cls, config, lm) -> LMJudge:
        return cls(lm, max_batch_tokens=config.batch.max_batch_tokens)

    def __init__(self, lm, *, max_batch_tokens: int = 4096):
        self.lm = lm
        self.max_batch_tokens = max_batch_tokens
        self.name = f"lm-judge:{lm.name}"
        self.labels = LabelWords.lookup(lm, *EQUIVALENCE_LABELS)

    def entailment(self, question: str, texts: Sequence[str]) -> np.ndarray:
        uniq, inv, pairs = unique_pairs(texts)
        m = np.eye(len(uniq))
        pairs = [(a, b) for a, b in pairs if a < b]
        if pairs:
            prompts = [self.lm.encode(equivalence_prompt_text(self.lm.tokenizer, question, uniq[a], uniq[b]))
                       for a, b in pairs]
            p = label_probability(self.lm, prompts, self.labels, max_batch_tokens=self.max_batch_tokens)
            for (a, b), v in zip(pairs, p):
                m[a, b] = m[b, a] = v
        return expand(m, inv)
