"""What the answering components read: one question, its passages and (when known) the
answer, the closed-book answer, FRANQ's result and gold labels."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from franq import AnswerScore, Passage


@dataclass(frozen=True)
class QAItem:
    """A question with its passages. ``answer`` is the RAG answer to verify (predictors);
    ``closed_answer`` the same model's answer without passages (dual generation, fallback);
    ``score`` FRANQ's result for ``answer``; ``gold_answers`` reference answers (reference-
    based sufficiency raters and evaluation only)."""

    question: str
    passages: tuple[Passage, ...]
    answer: str | None = None
    closed_answer: str | None = None
    score: AnswerScore | None = None
    gold_answers: tuple[str, ...] = ()

    @property
    def context(self) -> str:
        """The passages as one text (``title. text`` blocks, blank lines between)."""
        return "\n\n".join(f"{p.title}. {p.text}" if p.title else p.text for p in self.passages)


def max_by_owner(values, owner: Sequence[int], n: int) -> np.ndarray:
    """``out[i] = max(values[k] for k with owner[k] == i)`` (0 where item i owns none): the
    max over an item's chunks, premises or gold answers."""
    out = np.zeros(n, dtype=np.float64)
    np.maximum.at(out, np.asarray(owner, dtype=np.int64), np.asarray(values, dtype=np.float64))
    return out
