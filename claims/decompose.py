"""Decomposition: answer text -> list[Claim].

The offline :class:`SentenceDecomposer` makes one claim per sentence. It understands the
shape of chat answers: markdown headings become non-check-worthy claims, list items are
split on their own (the bullet or number is not part of the claim), and citation markers
such as ``[2]`` or ``[1, 3]`` are cut out of the claim's character spans, so a claim's
text is always exactly the concatenation of the answer characters it covers.

Sentences that carry no fact (greetings, refusals, restated questions, "Here are ...:"
intros) are kept as not check-worthy claims with the reason in ``note``. The LLM
decomposer producing atomic claims (:mod:`claims.llm_decompose`) plugs in through the
same protocol; :func:`decompose_all` also returns warnings and usage for any decomposer.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from claims.checkworthy import is_label, non_claim_reason
from claims.text import CITATION_RE, WORD_RE, split_at_script_ends
from claims.types import Claim, Decomposition

HEADING_RE = re.compile(r"^\s{0,3}(#{1,6})\s+")
BOLD_LINE_RE = re.compile(r"^\s*(?:(?:[-*+•]|\d{1,3}[.)])\s+)?(\*\*|__)[^*_]+(\*\*|__):?\s*$")  # "- **Memory**" too
LIST_RE = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")
EMPHASIS_RE = re.compile(r"\*\*|__|`")
FENCE_RE = re.compile(r"^\s{0,3}(```|~~~)")


@runtime_checkable
class Decomposer(Protocol):
    """Turns an answer into claims whose ``char_spans`` point into that answer."""

    name: str

    def decompose(self, answer: str) -> list[Claim]: ...


@functools.lru_cache(maxsize=1)
def _sentencizer():
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    return nlp


def split_sentences(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Sentence ``(start, end)`` spans of ``text[start:end]`` in absolute offsets.

    Uses spaCy's rule-based sentencizer on a blank English pipeline (no model download);
    its tokenizer keeps abbreviations ("e.g.", "Dr.", "U.S.") and decimals in one token.
    """
    end = len(text) if end is None else end
    doc = _sentencizer()(text[start:end])
    spans = []
    for sent in doc.sents:
        s, e = _strip(text, start + sent.start_char, start + sent.end_char)
        if e > s:
            spans.extend(split_at_script_ends(text, s, e))
    return spans


def _strip(text: str, s: int, e: int) -> tuple[int, int]:
    while s < e and text[s].isspace():
        s += 1
    while e > s and text[e - 1].isspace():
        e -= 1
    return s, e


def cut_spans(text: str, s: int, e: int) -> tuple[tuple[int, int], ...]:
    """Split ``[s, e)`` around citation markers and markdown emphasis, trimming whitespace."""
    cuts = [(m.start(), m.end()) for m in CITATION_RE.finditer(text, s, e)]
    cuts += [(m.start(), m.end()) for m in EMPHASIS_RE.finditer(text, s, e)]
    spans, pos = [], s
    for cs, ce in sorted(cuts):
        if cs > pos:
            spans.append((pos, cs))
        pos = max(pos, ce)
    if pos < e:
        spans.append((pos, e))
    out = []
    for i, (a, b) in enumerate(spans):
        if i == 0:  # leading whitespace of the claim
            a, b = _strip(text, a, b)[0], b
        if i == len(spans) - 1:
            b = _strip(text, a, b)[1]
        if b > a and text[a:b].strip():
            out.append((a, b))
    # A cut before final punctuation ("big [2].") must not leave "big ." behind.
    return tuple(out)


def label_lines(lines: Sequence[str]) -> set[int]:
    """Indices of the lines that are bare labels (:func:`claims.checkworthy.is_label`) by
    where they stand: a list item with items nested under it (a list header), or a line of
    its own with more below it that is not the answer's first line, or is and a list
    follows ("Memory" before its paragraph). A short answer on its own ("Paris") or a bare
    item of a flat list ("- Paris") stays a claim."""
    filled = [k for k, line in enumerate(lines) if line.strip()]
    out = set()
    for n, k in enumerate(filled):
        nxt = lines[filled[n + 1]] if n + 1 < len(filled) else None
        marker = LIST_RE.match(lines[k])
        if nxt is None or not is_label(lines[k][marker.end() if marker else 0:]):
            continue
        indent = len(lines[k]) - len(lines[k].lstrip())
        nested = LIST_RE.match(nxt) and len(nxt) - len(nxt.lstrip()) > indent
        if nested or not marker and (n > 0 or LIST_RE.match(nxt)):
            out.add(k)
    return out


def spans_text(text: str, spans: tuple[tuple[int, int], ...]) -> str:
    return "".join(text[a:b] for a, b in spans)


class SentenceDecomposer:
    """Offline, deterministic: one claim per sentence, per list item, per heading."""

    name = "sentence"

    def decompose(self, answer: str) -> list[Claim]:
        claims: list[Claim] = []
        pos = 0
        code: int | None = None  # where the open code block's body starts
        lines = answer.splitlines(keepends=True)
        labels = label_lines(lines)
        for k, line in enumerate(lines):
            ls, le = pos, pos + len(line)
            pos = le
            if FENCE_RE.match(line):  # a fence (and its language tag) is markup, not a claim
                if code is not None:
                    self._code_block(answer, code, ls, claims)
                code = le if code is None else None
                continue
            if code is not None or not line.strip():
                continue
            heading = HEADING_RE.match(line) or BOLD_LINE_RE.match(line)
            if heading or k in labels:  # kept, not scored; the "#" or the list marker is not part of it
                markup = HEADING_RE.match(line) or LIST_RE.match(line)
                spans = cut_spans(answer, ls + (markup.end() if markup else 0), le)
                claims.append(Claim(spans_text(answer, spans), spans, sentence=len(claims), check_worthy=False,
                                    note="heading" if heading else "label"))
                continue
            marker = LIST_RE.match(line)
            body = ls + (marker.end() if marker else 0)
            for s, e in split_sentences(answer, body, le):
                spans = cut_spans(answer, s, e)
                text = spans_text(answer, spans)
                if not text:
                    continue
                reason = "no words to check" if WORD_RE.search(text) is None else non_claim_reason(text)
                claims.append(
                    Claim(text, spans, sentence=len(claims), check_worthy=reason is None, note=reason)
                )
        if code is not None:  # a block left open runs to the end of the answer
            self._code_block(answer, code, len(answer), claims)
        return claims

    @staticmethod
    def _code_block(answer: str, start: int, end: int, claims: list[Claim]) -> None:
        """A fenced code block: one not check-worthy claim (kept, not scored)."""
        s, e = _strip(answer, start, end)
        if e > s:
            claims.append(Claim(answer[s:e], ((s, e),), sentence=len(claims), check_worthy=False, note="code block"))

    def decompose_many(self, answers: Sequence[str]) -> list[Decomposition]:
        return [Decomposition(tuple(self.decompose(a)), method=self.name) for a in answers]


def decompose_all(decomposer: Decomposer, answers: Sequence[str]) -> list[Decomposition]:
    """Decompose several answers with warnings and usage: through the decomposer's own
    ``decompose_many`` (batched, concurrent) when it has one, else one by one."""
    many = getattr(decomposer, "decompose_many", None)
    if many is not None:
        return list(many(answers))
    return [Decomposition(tuple(decomposer.decompose(a)), method=getattr(decomposer, "name", "custom"))
            for a in answers]
