"""Alignment: a claim's character spans -> the answer tokens that express it.

Tokens are matched through the tokenizer's offset mapping (one ``(start, end)`` character
range per answer token), so the same code serves byte-level BPE, SentencePiece and
word-level tokenizers. A token belongs to a claim when its characters overlap the claim's
spans on at least one non-whitespace character (BPE tokens often carry a leading space).
"""
from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Sequence

from claims.decompose import cut_spans, spans_text, split_sentences
from claims.text import is_content_word, iter_words, normalize_word
from claims.types import Claim


def token_positions(answer: str, spans: Sequence[tuple[int, int]],
                    offsets: Sequence[tuple[int, int]]) -> tuple[int, ...]:
    """Indices of the tokens whose characters overlap ``spans`` on non-whitespace."""
    starts = [s for s, _ in offsets]
    found: set[int] = set()
    for a, b in spans:
        # tokens are in text order; start scanning just before the first candidate
        i = max(bisect.bisect_right(starts, a) - 1, 0)
        while i < len(offsets) and offsets[i][0] < b:
            s, e = offsets[i]
            lo, hi = max(s, a), min(e, b)
            if hi > lo and answer[lo:hi].strip():
                found.add(i)
            i += 1
    return tuple(sorted(found))


def align_claims(answer: str, claims: Sequence[Claim], offsets: Sequence[tuple[int, int]],
                 token_ids: Sequence[int]) -> list[Claim]:
    """Fill ``token_positions`` and ``token_ids`` of each claim; never drops a claim.

    A check-worthy claim that overlaps no token keeps empty positions and gets a ``note``
    saying why, so callers can report it.
    """
    if len(offsets) != len(token_ids):
        raise ValueError(f"offsets ({len(offsets)}) and token_ids ({len(token_ids)}) differ in length")
    out = []
    for claim in claims:
        pos = token_positions(answer, claim.char_spans, offsets)
        note = claim.note
        if not pos and claim.check_worthy:
            note = claim.note or ("claim has no character spans in the answer" if not claim.char_spans
                    else "no answer token overlaps the claim's characters")
        out.append(dataclasses.replace(
            claim, token_positions=pos, token_ids=tuple(int(token_ids[i]) for i in pos), note=note))
    return out


def locate_claim(answer: str, text: str, *, sentence: int = 0) -> Claim:
    """Find the characters of ``answer`` that express a claim given as free text.

    Tries, in order: the exact text; the text with citation markers and emphasis cut out
    (matched against the answer with the same cuts); then content-word matching inside
    the answer sentence sharing the most content words with the claim (this handles
    paraphrased and non-contiguous claims such as "Paris is the capital of France" from
    "Paris, the capital of France, ..."). If no content word of the claim occurs in the
    answer the claim comes back with no spans and a ``note``.
    """
    text = text.strip()
    if not text:
        return Claim("", (), sentence=sentence, check_worthy=False, note="empty claim")
    i = answer.find(text)
    if i >= 0:
        spans = cut_spans(answer, i, i + len(text))
        return Claim(text, spans, sentence=sentence)

    wanted = {normalize_word(w) for w, _, _ in iter_words(text) if is_content_word(w)}
    best: list[tuple[int, int]] = []
    for s, e in split_sentences(answer):
        hits = [(a, b) for w, a, b in iter_words(answer, s, e)
                if is_content_word(w) and normalize_word(w) in wanted]
        if len({normalize_word(answer[a:b]) for a, b in hits}) > \
                len({normalize_word(answer[a:b]) for a, b in best}):
            best = hits
    if not best:
        return Claim(text, (), sentence=sentence, note="no content word of the claim occurs in the answer")
    merged: list[tuple[int, int]] = []
    for a, b in best:  # join words separated only by spaces or stop words' absence
        if merged and not answer[merged[-1][1]:a].strip():
            merged[-1] = (merged[-1][0], b)
        else:
            merged.append((a, b))
    return Claim(text, tuple(merged), sentence=sentence)


__all__ = ["align_claims", "locate_claim", "token_positions", "spans_text"]
