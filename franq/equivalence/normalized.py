"""Normalized-answer equivalence: the offline default judge for short answers.

Answers are normalized as in SQuAD / Natural Questions evaluation (lower case, no
punctuation, no articles, single spaces) and reduced to their *answer words*: content
words (stop words out, light stemming) that are not already in the question, so "Marvin
Gaye sang it first" and "Marvin Gaye" to "who sang it first" both become {marvin, gaye}
(an answer made only of question words keeps its content words). ``P(a entails b)`` is
the share of ``b``'s answer words found in ``a``: "Paris, France" entails "Paris" (1.0);
"Paris" entails "Paris, France" only half. Two answers are equivalent when both
directions are >= 0.5; identical answers get 1 both ways. Cheap (microseconds per pair)
and deterministic.
"""
from __future__ import annotations

import re
import string
from collections.abc import Sequence

import numpy as np

from claims.text import content_words
from franq.equivalence.base import expand, unique_pairs

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans({c: " " for c in string.punctuation + "“”‘’–—"})


def normalize_answer(text: str) -> str:
    text = text.lower().translate(_PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


class NormalizedAnswerJudge:
    name = "normalized-v1"

    def entailment(self, question: str, texts: Sequence[str]) -> np.ndarray:
        uniq, inv, pairs = unique_pairs(texts)
        asked = set(content_words(normalize_answer(question)))
        words = [answer_words(t, asked) for t in uniq]
        m = np.eye(len(uniq))
        for a, b in pairs:
            if not words[b]:
                m[a, b] = 1.0 if not words[a] else 0.0
            else:
                m[a, b] = len(words[a] & words[b]) / len(words[b])
        return expand(m, inv)


def answer_words(text: str, asked: set[str]) -> set[str]:
    """Normalized content words of an answer that the question does not already contain."""
    norm = normalize_answer(text)
    content = set(content_words(norm))
    return (content - asked) or content or set(norm.split())
