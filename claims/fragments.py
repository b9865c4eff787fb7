"""Claims that are not statements: a fragment ("Sydney", "In 1989.", "8,849 metres") says
nothing true or false until it is read as the answer to its question.

A RAG answer to "When did the Berlin Wall fall?" may be "1991", or a list whose items are
bare names. Checked against the passages on its own, "1991" is about nothing; checked as the
short form checks an answer, "When did the Berlin Wall fall? 1991", it is a statement the
passages contradict. :func:`is_fragment` tells the two apart, so a faithfulness backend can
be given the question with a fragment claim (``franq.stages.record``). :func:`needs_question`
also says so of a claim whose pronoun the decomposer could not resolve ("It fell in 1991.",
the answer's only sentence): the question names what "it" is.

A claim is a fragment when it has no verb or auxiliary (at most :data:`BARE_WORDS` words), or
(at most :data:`MAX_WORDS` words) no subject and opens with its head, a bare or participle verb
("Born in Ulm, Germany", "Use the --check flag."), by spaCy's English tagger and parser (the
pipeline the atomic decomposer loads); without a pipeline, when it has at most
:data:`FALLBACK_WORDS` words. The small tagger reads some verbs of technical sentences as
plural nouns ("maxUnavailable defaults to 25%"): a plural noun before "to", a determiner or a
preposition is taken for a verb. A claim it still misreads is read after its question, which
names its topic.
"""
from __future__ import annotations

import functools

from claims.atomic import SUBJECTS, load_pipeline
from claims.pronouns import UNRESOLVED
from claims.text import WORD_RE
from claims.types import Claim

MAX_WORDS = 8
"""Longer claims are read as statements."""
MAX_CHARS = 200
"""Longer claims too, whatever their word count (a bare answer is short)."""
BARE_WORDS = 5
"""A claim with no verb is a fragment up to this many words."""
FALLBACK_WORDS = 3
"""Without a spaCy pipeline: a claim of at most this many words is a fragment."""
VERB_TAGS = frozenset({"VERB", "AUX"})
OPENING_TAGS = frozenset({"VB", "VBN", "VBG"})
"""Penn tags of a verb that opens a subjectless fragment: bare (imperative), past or present participle."""
MISREAD_NEXT = frozenset({"TO", "DT", "IN", "PDT"})
"""Penn tags after a plural noun that make it a misread verb ("defaults to", "reloads all")."""


@functools.lru_cache(maxsize=4096)
def is_fragment(text: str) -> bool:
    """True when ``text`` is a bare answer (no verb) or a predicate with no subject, opened by
    its verb (module docstring): it needs its question to be a statement."""
    if len(text) > MAX_CHARS:
        return False  # and a hostile one-word "claim" of 100,000 characters is not parsed
    words = WORD_RE.findall(text)
    if not words or len(words) > MAX_WORDS:
        return False
    nlp = load_pipeline()
    if nlp is None:
        return len(words) <= FALLBACK_WORDS
    doc = nlp(text.strip())
    if not any(t.pos_ in VERB_TAGS for t in doc):
        # a bare answer is short ("9 November 1989", "Frank Herbert"); a plural noun right before
        # "to", a determiner or a preposition is more often a verb the tagger misread
        # ("maxUnavailable defaults to 25%", "daemon-reload reloads all unit files")
        return len(words) <= BARE_WORDS and not any(
            t.tag_ == "NNS" and t.i + 1 < len(doc) and doc[t.i + 1].tag_ in MISREAD_NEXT for t in doc)
    first = next((t for t in doc if not t.is_punct), None)
    # a predicate with no subject whose head opens it, a bare or participle verb: "Born in Ulm",
    # "Use the --check flag". A finite verb ("tar -x creates ...") means a subject the
    # tagger missed (code-like words), not a fragment.
    return (first is not None and first.dep_ == "ROOT" and first.pos_ in VERB_TAGS
            and first.tag_ in OPENING_TAGS and not any(t.dep_ in SUBJECTS for t in doc))


def needs_question(claim: Claim) -> bool:
    """True when ``claim`` reads as a statement only with its question: a fragment
    (:func:`is_fragment`) or a claim with a pronoun the decomposer left unresolved."""
    return is_fragment(claim.text) or UNRESOLVED in (claim.note or "")
