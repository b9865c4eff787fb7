"""Sentence-aligned windows over the passages, what the verifier reads as premises.

Every passage is cut on its own (a window never crosses passages) into windows of at most
``window_words`` words made of whole sentences; consecutive windows of one passage share
``overlap_sentences`` sentences, so a fact stated across a sentence boundary is seen whole
by one window. A sentence longer than a window is cut between words. Each window keeps its
passage's index and its character span in that passage's text (what the report shows as
evidence). A window that still does not fit the encoder next to the claim is halved between
words (:func:`fit_windows`).
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from claims.decompose import split_sentences

WORD_RE = re.compile(r"\S+")


@dataclass(frozen=True)
class Window:
    """``text == passages[passage][start:end]``."""

    passage: int
    start: int
    end: int
    text: str


def _units(text: str, window_words: int) -> list[tuple[int, int, int]]:
    """``(start, end, n_words)`` of each sentence; a sentence of more than ``window_words``
    words becomes consecutive pieces of ``window_words`` words."""
    spans = split_sentences(text) if text.strip() else []
    if not spans and text.strip():
        spans = [(0, len(text))]
    units = []
    for s, e in spans:
        words = [(m.start(), m.end()) for m in WORD_RE.finditer(text, s, e)]
        if not words:
            continue
        for k in range(0, len(words), window_words):
            piece = words[k:k + window_words]
            units.append((piece[0][0], piece[-1][1], len(piece)))
    return units


def passage_windows(text: str, passage: int = 0, *, window_words: int = 200,
                    overlap_sentences: int = 1) -> list[Window]:
    """The windows of one passage (none for an empty one)."""
    if window_words < 1:
        raise ValueError(f"window_words must be >= 1, got {window_words}")
    if overlap_sentences < 0:
        raise ValueError(f"overlap_sentences must be >= 0, got {overlap_sentences}")
    units = _units(text, window_words)
    out: list[Window] = []
    i = 0
    while i < len(units):
        j, n = i, 0
        while j < len(units) and (j == i or n + units[j][2] <= window_words):
            n += units[j][2]
            j += 1
        s, e = units[i][0], units[j - 1][1]
        out.append(Window(passage, s, e, text[s:e]))
        if j >= len(units):
            break
        # overlap: the last sentences again, but only as many as leave room for the next one
        i = max(i + 1, j - overlap_sentences)
        while i < j and sum(u[2] for u in units[i:j + 1]) > window_words:
            i += 1
    return out


def windows(passages: Sequence[str], *, window_words: int = 200, overlap_sentences: int = 1) -> list[Window]:
    """The windows of all passages, passage by passage, in order."""
    return [w for k, text in enumerate(passages)
            for w in passage_windows(text, k, window_words=window_words, overlap_sentences=overlap_sentences)]


def closest_windows(items: Sequence[Window], claim: str, k: int) -> list[Window]:
    """The ``k`` windows sharing the most content words with ``claim`` (ties: the earlier
    window), in their passage order; all of them when there are at most ``k``. What a
    verifier with ``top_windows`` reads (the ``fast`` preset): a cheap lexical cut before
    the cross-encoder, which then reads ``k`` windows per claim instead of every one."""
    if len(items) <= k:
        return list(items)
    from franq.verifier import slots  # its content words (stemmed, stop words out)

    want = slots._content(claim)
    ranked = sorted(range(len(items)), key=lambda i: (-len(want & slots._content(items[i].text)), i))
    return [items[i] for i in sorted(ranked[:k])]


def fit_windows(items: Sequence[Window], passages: Sequence[str], n_tokens: Callable[[str], int],
                budget: int) -> list[Window]:
    """Each window halved between words until its text has at most ``budget`` tokens (a
    single word over the budget is kept: the encoder truncates it)."""
    out: list[Window] = []
    stack = list(reversed(items))
    while stack:
        w = stack.pop()
        words = [(m.start(), m.end()) for m in WORD_RE.finditer(passages[w.passage], w.start, w.end)]
        if len(words) <= 1 or n_tokens(w.text) <= budget:
            out.append(w)
            continue
        half = len(words) // 2
        text = passages[w.passage]
        left = Window(w.passage, words[0][0], words[half - 1][1], text[words[0][0]:words[half - 1][1]])
        right = Window(w.passage, words[half][0], words[-1][1], text[words[half][0]:words[-1][1]])
        stack.extend((right, left))
    return out
