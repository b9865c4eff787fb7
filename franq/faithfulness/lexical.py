"""Lexical support: weighted content-word recall of the claim in the best passage window.

A cheap, fully offline P_faithful. Each content word of the claim (stop words removed,
light stemming) has a weight: numbers 3, capitalized words (names) 2, others 1. The
score is the weighted share of the claim's words found in the best-matching window of
passage text (windows of about twice the claim's length, half-overlapping, never
crossing passage boundaries). Exact numbers and names matter most because a claim that
changes a date or an entity is not supported even when the rest of its words are.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from claims.text import NUMBER_RE, is_content_word, iter_words, normalize_word

NUMBER_WEIGHT = 3.0
NAME_WEIGHT = 2.0
MIN_WINDOW = 40


class LexicalFaithfulness:
    name = "lexical-v1"
    needs = frozenset()

    def predict(self, pairs: Sequence[tuple[str, str]], evidence=None) -> np.ndarray:
        cache: dict[str, list[list[str]]] = {}
        out = np.zeros(len(pairs), dtype=np.float64)
        for k, (context, claim) in enumerate(pairs):
            if context not in cache:
                cache[context] = [
                    [normalize_word(w) for w, _, _ in iter_words(block)]
                    for block in context.split("\n\n") if block.strip()
                ]
            out[k] = self._support(cache[context], claim)
        return out

    @staticmethod
    def _weights(claim: str) -> dict[str, float]:
        weights: dict[str, float] = {}
        for i, (word, _, _) in enumerate(iter_words(claim)):
            if not is_content_word(word):
                continue
            if NUMBER_RE.match(word):
                w = NUMBER_WEIGHT
            elif word[0].isupper() and i > 0:
                w = NAME_WEIGHT
            else:
                w = 1.0
            key = normalize_word(word)
            weights[key] = max(weights.get(key, 0.0), w)
        return weights

    def _support(self, passages: list[list[str]], claim: str) -> float:
        weights = self._weights(claim)
        total = sum(weights.values())
        if total == 0:
            return 0.0
        size = max(MIN_WINDOW, 2 * len(weights))
        best = 0.0
        for words in passages:
            last = max(len(words) - size, 0)
            for start in [*range(0, last, size // 2), last]:
                window = set(words[start:start + size])
                best = max(best, sum(w for key, w in weights.items() if key in window))
                if best == total:
                    return 1.0
        return best / total
