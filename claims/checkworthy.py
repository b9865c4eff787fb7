"""Which sentences are not claims: greetings, restated questions, headings, refusals.

Such sentences are kept in the output as not check-worthy (with the reason in
``Claim.note``) instead of being scored or dropped. The rules are deliberately
conservative: a sentence that also states a fact ("Sure! Paris is the capital.") is
split into sentences first, and only a sentence made of filler alone is excluded.
"""
from __future__ import annotations

import re

from claims.text import content_words

_GREETING = re.compile(
    r"^(?:(?:sure|certainly|of course|absolutely|okay|ok|great|hello|hi|hey|thanks|thank you)"
    r"(?:\s+there)?\s*(?:[!.,:]|$)"
    r"|(?:good|great|excellent|interesting) question\b|thanks? (?:you )?for (?:asking|your question)"
    r"|(?:i'?m |i am )?(?:glad|happy) to help|no problem\b|i hope (?:this|that) helps|hope this helps"
    r"|let me know if|feel free to|i'?d be (?:happy|glad) to)",
    re.IGNORECASE)
_INTRO = re.compile(r"^(?:here (?:is|are|'s)|below (?:is|are)|the following)\b.*:$", re.IGNORECASE)
_REFUSAL = re.compile(
    r"^(?:i'?m sorry|i am sorry|sorry,|unfortunately,? i|as an ai\b|i (?:cannot|can't|can not|"
    r"don't|do not|am unable to|am not able to) (?:answer|provide|help|find|know|say|determine|"
    r"access|browse)|i don't know|i do not know|the (?:passages|documents|context|sources) "
    r"(?:do not|don't) (?:provide|contain|mention|say))", re.IGNORECASE)
_RESTATED = re.compile(
    r"^(?:you (?:asked|want to know|are asking)|your question (?:is|was|asks)|the question (?:is|asks)"
    r"|to answer (?:your|the|this) question)\b", re.IGNORECASE)
_HEDGE = re.compile(
    r"^(?:(?:that|this|it)(?:'s| is| was) (?:a |an )?(?:very |quite |rather |really |an? )*(?:complex|complicated|"
    r"difficult|tricky|hard|nuanced|broad|subjective|open|debated|controversial|good|interesting|great)"
    r"(?: and \w+)? (?:question|topic|issue|matter|subject|one)\b"
    r"|(?:it|this|that) (?:really )?(?:depends|varies)\b"
    r"|(?:it(?:'s| is)|it can be) (?:difficult|hard|impossible|not possible|tricky) to (?:say|determine|know|tell|"
    r"predict|answer|give)\b"
    r"|there (?:is|'s) no (?:single |simple |easy |clear |definitive |definite |one |straightforward )+answer\b"
    r"|(?:i'?m not (?:sure|certain)|i am not (?:sure|certain))\b)", re.IGNORECASE)
_NO_DEFINITE_ANSWER = re.compile(
    r"\b(?:may|might|does) not have (?:a |one )?(?:single |simple |clear |definitive |definite |straightforward )+"
    r"answer\b", re.IGNORECASE)
_MAX_HEADING_WORDS = 8
_MAX_LABEL_WORDS = 4
_LABEL_WORD = re.compile(r"[A-Za-z][\w'&/+-]*")
_VERB = frozenset({"is", "are", "was", "were", "be", "been", "am", "has", "have", "had", "do", "does", "did", "can",
                   "could", "will", "would", "shall", "should", "may", "might", "must", "uses", "use", "runs", "run",
                   "needs", "need", "takes", "take", "makes", "make", "gives", "give"})
_MAX_HEDGE_WORDS = 6  # content words: a hedge that also states a fact is scored


def is_label(text: str) -> bool:
    """A bare markdown label ("Memory", "Timeout", "Setup and tools"): at most
    :data:`_MAX_LABEL_WORDS` words, no number, no verb, nothing after a colon and no
    sentence punctuation. Whether a line holding one is a label (a heading of what follows)
    or an answer ("Paris") depends on where it stands: :func:`claims.decompose.label_lines`."""
    s = text.strip().strip("*_#` ").strip()
    words = s.split()
    if not words or len(words) > _MAX_LABEL_WORDS or s[-1] in ".!?;," or ":" in s.rstrip(":"):
        return False
    return all(_LABEL_WORD.fullmatch(w) for w in words) and not any(w.lower() in _VERB for w in words)


def non_claim_reason(sentence: str, *, question: str | None = None) -> str | None:
    """Why ``sentence`` is not check-worthy ("greeting", "refusal", "restated question",
    "heading", "question", "hedge"), or None if it may carry a fact. A hedge ("That's a
    complex question that may not have a definitive answer.", "It depends.") asserts
    nothing about the world, so there is nothing to be true or false."""
    s = sentence.strip().strip("*_#` ").strip()
    if not s:
        return "empty"
    if _REFUSAL.match(s):
        return "refusal"
    if _RESTATED.match(s):
        return "restated question"
    if s.endswith("?"):
        return "question"
    if question is not None:
        q, c = set(content_words(question)), content_words(s)
        if c and set(c) <= q and len(c) >= 0.6 * len(q):
            return "restated question"
    if s.endswith(":") and len(s.split()) <= _MAX_HEADING_WORDS or _INTRO.match(s):
        return "heading"
    if _GREETING.match(s) and len(content_words(s)) <= 4:
        return "greeting"
    if (_HEDGE.match(s) or _NO_DEFINITE_ANSWER.search(s)) and len(content_words(s)) <= _MAX_HEDGE_WORDS:
        return "hedge"
    return None
