"""Contradicted claims for the verifier's synthetic data: one typed substitution per claim
(a same-type entity from spaCy's NER, a number, a year, a negation, a WordNet antonym; or,
:meth:`Corruptor.from_window`, an entity the window names in another role)."""
from __future__ import annotations

import random
import re
from collections import defaultdict

NEGATABLE = re.compile(r"\b(is|are|was|were|can|could|will|would|does|did|do|has|have|had|should|must)\b")
NEGATED = re.compile(r"\b(is|are|was|were|can|could|will|would|does|did|do|has|have|had|should|must) not\b"
                     r"|\b(isn't|aren't|wasn't|weren't|doesn't|didn't|don't|cannot|can't)\b")
YEAR_RE = re.compile(r"\b(1[5-9]\d\d|20[0-3]\d)\b")
NUMBER_RE = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?![\w])")
SWAP_TYPES = ("PERSON", "GPE", "ORG", "NORP", "LOC", "FAC", "EVENT", "WORK_OF_ART", "LANGUAGE", "DATE", "PRODUCT")


def tagger():
    """spaCy's tagger + NER (no parser, no lemmatizer) from the first installed pipeline of
    :data:`claims.atomic.PIPELINES`, what the corruptions read; None when none is installed."""
    import spacy

    from claims.atomic import PIPELINES

    for name in PIPELINES:
        try:
            return spacy.load(name, exclude=["parser", "lemmatizer"])
        except (OSError, ImportError):
            continue
    return None


class Corruptor:
    """One typed substitution per claim: same-type entity, number, year, negation, antonym."""

    def __init__(self, nlp, wordnet, rng: random.Random):
        self.nlp, self.wn, self.rng = nlp, wordnet, rng
        self.pool: dict[str, list[str]] = defaultdict(list)
        self.kinds = ["entity", "entity", "number", "year", "negation", "antonym"]

    def add_entities(self, doc) -> None:
        for ent in doc.ents:
            if ent.label_ in SWAP_TYPES and 2 <= len(ent.text) <= 40:
                self.pool[ent.label_].append(ent.text)

    def corrupt(self, text: str, doc=None) -> tuple[str, str] | None:
        doc = doc if doc is not None else self.nlp(text)
        kinds = list(self.kinds)
        self.rng.shuffle(kinds)
        for kind in kinds:
            out = getattr(self, "_" + kind)(text, doc)
            if out and out != text:
                return out, kind
        return None

    def from_window(self, text: str, doc, window_doc, source: str) -> str | None:
        """The claim with one of its entities swapped for another entity of the same type that
        the window names in another sentence (not in ``source``, the claim's own sentence,
        where a list "Y and Z founded it" would keep the claim true): "The capital is Sydney"
        against a window that says Sydney is the largest city. The window still shares every
        word of the changed claim, so word overlap cannot tell it from a supported one."""
        ents = [e for e in doc.ents if e.label_ in SWAP_TYPES]
        self.rng.shuffle(ents)
        for e in ents:
            others = sorted({o.text for o in window_doc.ents if o.label_ == e.label_ and 2 <= len(o.text) <= 40
                             and o.text.lower() not in text.lower() and e.text.lower() not in o.text.lower()
                             and o.text.lower() not in source.lower()})
            if others:
                return text[:e.start_char] + self.rng.choice(others) + text[e.end_char:]
        return None

    def _entity(self, text, doc):
        ents = [e for e in doc.ents if e.label_ in SWAP_TYPES and len(self.pool[e.label_]) > 20]
        if not ents:
            return None
        e = self.rng.choice(ents)
        for _ in range(10):
            other = self.rng.choice(self.pool[e.label_])
            if other.lower() != e.text.lower() and other.lower() not in text.lower() and e.text not in other:
                return text[:e.start_char] + other + text[e.end_char:]
        return None

    def _year(self, text, doc):
        years = list(YEAR_RE.finditer(text))
        if not years:
            return None
        m = self.rng.choice(years)
        new = int(m.group()) + self.rng.choice([-1, 1]) * self.rng.randint(1, 30)
        return text[:m.start()] + str(new) + text[m.end():]

    def _number(self, text, doc):
        nums = [m for m in NUMBER_RE.finditer(text) if not YEAR_RE.fullmatch(m.group())]
        if not nums:
            return None
        m = self.rng.choice(nums)
        raw = m.group().replace(",", "")
        value = float(raw)
        factor = self.rng.choice([0.5, 2, 3, 10, 0.1, 1.5])
        new = value * factor if value > 1 else value + self.rng.randint(1, 9)
        if "." in raw:
            s = f"{new:.{len(raw.split('.')[1])}f}"
        else:
            s = f"{int(round(new)):,}" if "," in m.group() else str(int(round(new)))
        return None if s == m.group() else text[:m.start()] + s + text[m.end():]

    def _negation(self, text, doc):
        m = NEGATED.search(text)
        if m:
            undo = {"isn't": "is", "aren't": "are", "wasn't": "was", "weren't": "were", "doesn't": "does",
                    "didn't": "did", "don't": "do", "cannot": "can", "can't": "can"}
            word = m.group()
            return text[:m.start()] + (undo.get(word.lower()) or word[:-4]) + text[m.end():]
        m = NEGATABLE.search(text)
        return None if m is None else text[:m.end()] + " not" + text[m.end():]

    def _antonym(self, text, doc):
        if self.wn is None:
            return None
        tokens = [t for t in doc if t.pos_ in ("ADJ", "VERB", "ADV") and t.is_alpha and len(t.text) > 2]
        self.rng.shuffle(tokens)
        for t in tokens:
            pos = {"ADJ": "a", "VERB": "v", "ADV": "r"}[t.pos_]
            for lemma in (x for s in self.wn.synsets(t.text.lower(), pos=pos)[:3] for x in s.lemmas()):
                if lemma.antonyms():
                    ant = lemma.antonyms()[0].name().replace("_", " ")
                    if pos == "v" and t.tag_ not in ("VB", "VBP"):
                        continue  # an inflected verb: the antonym's lemma would not agree
                    return text[:t.idx] + ant + text[t.idx + len(t.text):]
        return None
