"""The local causal LM as equivalence judge.

For each unordered pair of distinct answers the LM is asked whether, as answers to the
question, they mean the same; ``P = p(yes) / (p(yes) + p(no))`` from the next-token
distribution after the prompt (one forward pass per pair, pairs batched, left-padded).
The judgement is symmetric, so ``P(a entails b) = P(b entails a) = P(same)``. Costs
``u (u - 1) / 2`` prompt passes for ``u`` unique answers. The prompt is
:data:`franq.lm.prompts.EQUIVALENCE_PROMPT`.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from franq.judges.base import expand, unique_pairs
from franq.lm.prompts import equivalence_prompt_text


class LMJudge:
    def __init__(self, lm, *, max_batch_tokens: int = 4096):
        self.lm = lm
        self.max_batch_tokens = max_batch_tokens
        self.name = f"lm-judge:{lm.name}"
        self._yes = [lm.encode(w)[0] for w in ("yes", "Yes")]
        self._no = [lm.encode(w)[0] for w in ("no", "No")]

    def _prompt_ids(self, question: str, a: str, b: str) -> list[int]:
        return self.lm.encode(equivalence_prompt_text(self.lm.tokenizer, question, a, b))

    def _p_yes(self, prompts: list[list[int]]) -> np.ndarray:
        lp = self.lm.next_token_logprobs(prompts, self._yes + self._no,
                                         max_batch_tokens=self.max_batch_tokens)
        k = len(self._yes)
        yes = np.logaddexp.reduce(lp[:, :k], axis=1)
        no = np.logaddexp.reduce(lp[:, k:], axis=1)
        return 1.0 / (1.0 + np.exp(no - yes))

    def entailment(self, question: str, texts: Sequence[str]) -> np.ndarray:
        uniq, inv, pairs = unique_pairs(texts)
        m = np.eye(len(uniq))
        pairs = [(a, b) for a, b in pairs if a < b]
        if pairs:
            p = self._p_yes([self._prompt_ids(question, uniq[a], uniq[b]) for a, b in pairs])
            for (a, b), v in zip(pairs, p):
                m[a, b] = m[b, a] = v
        return expand(m, inv)
