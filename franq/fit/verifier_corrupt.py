"""Contradicted claims for the verifier's synthetic data: one typed substitution per claim
(a same-type entity from spaCy's NER, random or, with :meth:`Corruptor.use_near`, one the
sentence encoder finds close, a number, a year, a negation, a WordNet antonym, a
WordNet co-hyponym noun: "iron" -> "gold"; or, :meth:`Corruptor.from_window`, an entity
the window names in another role), and :func:`shorten_subject`, which names a
claim's subject the way answers refer back to it ("The Eiffel Tower is ..." -> "The tower
is ...")."""
from __future__ import annotations

import random
import re
from collections import defaultdict

NEGATABLE = re.compile(r"\b(is|are|was|were|can|could|will|would|does|did|do|has|have|had|should|must)\b")
NEGATED = re.compile(r"\b(is|are|was|were|can|could|will|would|does|did|do|has|have|had|should|must) not\b"
                     r"|\b(isn't|aren't|wasn't|weren't|doesn't|didn't|don't|cannot|can't)\b")
YEAR_RE = re.compile(r"\b(1[5-9]\d\d|20[0-3]\d)\b")
NUMBER_RE = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?![\w])")
SUBJECT_RE = re.compile(r"^(?:The )?((?:[A-Z][\w'-]* ){0,3})([A-Z][a-z]+) (?=(?:is|was|are|were|has|had)\b)")
CONCRETE = {"noun.substance", "noun.artifact", "noun.location", "noun.object", "noun.animal", "noun.plant", "noun.food"}
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

    def __init__(self, nlp, wordnet, rng: random.Random, *, cohyponym: bool = False):
        self.nlp, self.wn, self.rng = nlp, wordnet, rng
        self.pool: dict[str, list[str]] = defaultdict(list)
        self.kinds = ["entity", "entity", "number", "year", "negation", "antonym"] + (["cohyponym"] if cohyponym else [])
        self.near = None  # a franq.fit.verifier_near.NearestPool over self.pool, see use_near
        self.near_share = 0.0

    def use_near(self, near, share: float) -> None:
        """From now on, ``share`` of the entity substitutions take one of the entity's nearest
        same-type entities in ``near`` (a NearestPool, given this pool's entities) instead of
        a random one; ``share`` 0 turns it off."""
        for label, ents in self.pool.items():
            if near is not None and label not in near:
                near.add(label, ents)
        self.near, self.near_share = near, float(share)

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
        if self.near is not None and self.near_share and self.rng.random() < self.near_share:
            other = self.near.nearest(e.label_, e.text, self.rng,
                                      lambda o: o.lower() not in text.lower() and e.text not in o)
            if other:
                return text[:e.start_char] + other + text[e.end_char:]
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

    def _cohyponym(self, text, doc):
        """A concrete common noun of the predicate (a substance, an artefact, a place, an
        animal, ...) swapped for a sibling under its WordNet hypernym ("made of iron" ->
        "made of gold"); synonyms (the same synset) are never chosen."""
        if self.wn is None:
            return None
        verb = next((t.i for t in doc if t.pos_ in ("VERB", "AUX")), len(doc))
        tokens = [t for t in doc if t.i > verb and t.pos_ == "NOUN" and t.tag_ == "NN" and t.is_alpha and len(t.text) > 2]
        self.rng.shuffle(tokens)  # a noun of the predicate ("made of iron"), not the subject
        for t in tokens[:3]:
            synsets = [x for x in self.wn.synsets(t.text.lower(), pos="n")[:1] if x.lexname() in CONCRETE]
            own = {x.name().lower() for s in synsets for x in s.lemmas()}
            sibs = sorted({x.name().replace("_", " ") for s in synsets for h in s.hypernyms() for sib in h.hyponyms()
                           if sib not in synsets and sib.lexname() == s.lexname() for x in sib.lemmas()[:1]
                           if "_" not in x.name() and x.name().islower() and x.name().lower() not in own})
            if sibs:
                new = self.rng.choice(sibs)
                return text[:t.idx] + new + text[t.idx + len(t.text):]
        return None


def shorten_subject(text: str, wordnet) -> str | None:
    """"The Eiffel Tower was built ..." -> "The tower was built ...": a capitalised subject
    of up to four words whose last word is a common noun in WordNet (not a person's name)
    read as "The <noun>"; None when the claim does not start so."""
    m = SUBJECT_RE.match(text)
    if m is None or not m.group(1) or wordnet is None:
        return None
    head = m.group(2).lower()
    if not wordnet.synsets(head, pos="n") or wordnet.synsets(head, pos="n")[0].lexname() == "noun.person":
        return None
    return f"The {head} " + text[m.end():]
