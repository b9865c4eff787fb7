"""The ``passes`` evidence (long form): each answer's tokens teacher-forced twice over
the same answer tokens, with the passages in the prompt (p(y_t | x, r, y_<t), paper eq. 1)
and with them removed (p(y_t | x, y_<t), eq. 3). All passes of all answers of a call run
in one batched :meth:`~franq.lm.CausalLM.continuation_logprobs` call.

An answer the model generated itself (:meth:`franq.Franq.answer`) brings its own
with-passages log-probabilities; only the closed-book pass is run for it.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class TokenPasses:
    name = "passes"

    def __init__(self, lm, *, on_overflow: str = "truncate", max_batch_tokens: int = 4096):
        self.lm = lm
        self.on_overflow = on_overflow
        self.max_batch_tokens = max_batch_tokens

    def gather(self, answers: Sequence) -> None:
        """Fill ``rag_logprobs`` / ``closed_logprobs`` of each answer (see
        :class:`franq.pipeline.AnswerWork`); prompt truncations go to its warnings."""
        items, slots = [], []
        for a in answers:
            if a.rag_logprobs is None:
                rag = self.lm.rag_prompt(a.example.question, a.example.passages, reserve=len(a.answer_ids),
                                         on_overflow=self.on_overflow)
                a.warnings.extend(rag.warnings)
                items.append((rag.ids, a.answer_ids))
                slots.append((a, "rag_logprobs"))
            closed = self.lm.closed_book_prompt(a.example.question)
            items.append((closed.ids, a.answer_ids))
            slots.append((a, "closed_logprobs"))
        results = self.lm.continuation_logprobs(items, max_batch_tokens=self.max_batch_tokens) if items else []
        for (a, attr), lp in zip(slots, results):
            setattr(a, attr, np.asarray(lp, dtype=np.float64))
