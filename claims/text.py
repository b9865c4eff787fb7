"""Word-level text helpers shared by the splitter, the aligner and lexical matching."""
from __future__ import annotations

import re
from collections.abc import Iterator

WORD_RE = re.compile(r"\w+(?:[-'’.,]\w+)*")
CITATION_RE = re.compile(r"[ \t]*\[\d+(?:\s*[,–-]\s*\d+)*\]")
NUMBER_RE = re.compile(r"^\d[\d.,]*$")

STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing down during each few
    for from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just may me might more most must my myself no nor not now of off on
    once only or other our ours ourselves out over own same shall she should so some such than
    that the their theirs them themselves then there these they this those through to too under
    until up very was we were what when where which while who whom why will with would you your
    yours yourself yourselves one ones s t many much well like can't cannot won't isn't aren't
    wasn't weren't doesn't don't didn't it's that's there's via per etc""".split()
)


def normalize_word(word: str) -> str:
    """Lower-case and strip the simplest inflections, so 'Rivers' matches 'river'."""
    w = word.lower().replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    if NUMBER_RE.match(w):
        return w.replace(",", "")
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


def iter_words(text: str, start: int = 0, end: int | None = None) -> Iterator[tuple[str, int, int]]:
    """Yield ``(word, start, end)`` for each word of ``text[start:end]`` (absolute offsets)."""
    for m in WORD_RE.finditer(text, start, len(text) if end is None else end):
        yield m.group(), m.start(), m.end()


def is_content_word(word: str) -> bool:
    w = word.lower()
    return w not in STOPWORDS and (len(w) > 1 or w.isdigit())


def content_words(text: str) -> list[str]:
    """Normalized content words of ``text``, in order, with repeats."""
    return [normalize_word(w) for w, _, _ in iter_words(text) if is_content_word(w)]
