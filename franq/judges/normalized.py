"""Normalized-answer equivalence: the offline default judge for short answers.

Answers are normalized as in SQuAD / Natural Questions evaluation (lower case, no
punctuation, no articles, single spaces) and compared as sets of words.
``P(a entails b)`` is the share of ``b``'s words found in ``a``: "Paris, France" entails
"Paris" (1.0); "Paris" entails "Paris, France" only half. Two answers are equivalent
(both directions >= 0.5) when their word sets overlap that much either way; identical
normalized answers get 1 both ways. Cheap (microseconds per pair) and deterministic.
"""
from __future__ import annotations

import re
import string
from collections.abc import Sequence

import numpy as np

from franq.judges.base import expand, unique_pairs

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans({c: " " for c in string.punctuation + "“”‘’–—"})


def normalize_answer(text: str) -> str:
    text = text.lower().translate(_PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


class NormalizedAnswerJudge:
    name = "normalized-v1"

    def entailment(self, question: str, texts: Sequence[str]) -> np.ndarray:
        uniq, inv, pairs = unique_pairs(texts)
        words = [set(normalize_answer(t).split()) for t in uniq]
        m = np.eye(len(uniq))
        for a, b in pairs:
            if not words[b]:
                m[a, b] = 1.0 if not words[a] else 0.0
            else:
                m[a, b] = len(words[a] & words[b]) / len(words[b])
        return expand(m, inv)
