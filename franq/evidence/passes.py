"""The ``passes`` evidence (long form): each answer's tokens teacher-forced twice over
the same answer tokens, with the passages in the prompt (p(y_t | x, r, y_<t), paper eq. 1)
and with them removed (p(y_t | x, y_<t), eq. 3). All passes of all answers of a call run
in one batched :meth:`~franq.lm.CausalLM.continuation_logprobs` call.

An answer the model generated itself (:meth:`franq.Franq.answer`) brings its own
with-passages log-probabilities; only the closed-book pass is run for it, unless a
component reads the ``internals`` evidence: then ``capture`` (a
:class:`~franq.lm.capture.CaptureSpec`) makes the with-passages pass keep the answer's
lookback ratios, attention on the previous token and hidden states
(:mod:`franq.lm.capture`), reduced per layer as it runs; its log-probabilities are the
same, exactly, and an answer that brought its own keeps them. A capture spec with
``closed_hidden_layers`` also keeps the closed-book pass's hidden states
(``closed_internals``: what the model represents without the passages).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class TokenPasses:
    name = "passes"

    def __init__(self, lm, *, on_overflow: str = "truncate", max_batch_tokens: int = 4096, capture=None,
                 closed_book: bool = True, style: str = "franq"):
        self.lm = lm
        self.style = style
        self.closed_book = closed_book
        self.on_overflow = on_overflow
        self.max_batch_tokens = max_batch_tokens
        self.capture = capture if capture else None

    def gather(self, answers: Sequence) -> None:
        """Fill ``rag_logprobs`` / ``closed_logprobs`` (unless ``closed_book`` is off) and,
        with ``capture``, ``internals`` (with-passages pass) and ``closed_internals``
        (closed-book pass, hidden states only) of each answer (see
        :class:`franq.stages.record.AnswerRecord`); prompt truncations go to its warnings."""
        specs = {"rag": self.capture.rag if self.capture and self.capture.rag else None,
                 "closed": self.capture.closed if self.capture and self.closed_book else None}
        runs: dict = {None: ([], [])}  # capture spec (None: plain) -> (items, (answer, pass) slots)
        for a in answers:
            if a.rag_logprobs is None or specs["rag"]:
                rag = self.lm.rag_prompt(a.example.question, a.example.passages, reserve=len(a.answer_ids),
                                         on_overflow=self.on_overflow, style=self.style)
                if a.rag_logprobs is None:
                    a.warnings.extend(rag.warnings)
                items, slots = runs.setdefault(specs["rag"], ([], []))
                items.append((rag.ids, a.answer_ids))
                slots.append((a, "rag"))
            if self.closed_book:
                closed = self.lm.closed_book_prompt(a.example.question, style=self.style)
                items, slots = runs.setdefault(specs["closed"], ([], []))
                items.append((closed.ids, a.answer_ids))
                slots.append((a, "closed"))
        for spec, (items, slots) in runs.items():
            if not items:
                continue
            if spec is None:
                lps = self.lm.continuation_logprobs(items, max_batch_tokens=self.max_batch_tokens)
                internals = [None] * len(items)
            else:
                lps, internals = self.lm.captured_logprobs(items, spec, max_batch_tokens=self.max_batch_tokens)
            for (a, which), lp, inner in zip(slots, lps, internals):
                lp = np.asarray(lp, dtype=np.float64)
                if which == "closed":
                    a.closed_logprobs = lp
                    if inner is not None:
                        a.closed_internals = inner
                else:
                    if inner is not None:
                        a.internals = inner
                    if a.rag_logprobs is None:  # an answer that brought its own keeps them
                        a.rag_logprobs = lp
