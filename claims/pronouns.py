""""it" in an atomic claim, read as the noun it stands for when that is safe.

A claim is checked on its own (against the passages, by an NLI model, by a reader), so
"Yuri Gagarin was the first man to walk on it" says nothing checkable unless "it" is
known. The rule is the one readers follow by default (centering: the subject of the
sentence before is the preferred antecedent), applied only where it is safe:

* the antecedent is the subject of a main clause: of the clause "it" is coordinated with
  in the same sentence ("The tower was built in 1889 and it was designed by Eiffel"), else
  of the sentence before;
* that subject is a singular noun phrase (a common or proper noun, tag NN / NNP), not a
  pronoun and not plural ("it" never stands for "they" or "the towers"); a subject that was
  itself "it", resolved, carries its antecedent on;
* no singular noun is the object of that subject's verb, nor inside its object or
  attribute ("the publisher of Media Play News"): after "Leonardo painted the Mona Lisa"
  or "The company released the phone", "it" may be either, so it is not read as the
  subject (a reader would not take "Leonardo hangs in the Louvre");
* no singular noun stands before the "it" in its own sentence as an object ("describing
  the trauma and ... it", "in the end, it"): it may stand for that one;
* the "it" is a referring argument (subject, object, object of a preposition), not the
  expletive of "it is known that ..." / "it is hard to ..." (a clausal complement follows).

Otherwise the claim keeps its words and says so in its ``note`` ("'it' unresolved: ..."):
changing or dropping the claim would lose what the answer said; the note tells the reader
why the claim may not stand on its own. A resolved claim keeps the answer characters of
"it" (the tokens that express it) and notes the reading ("'it' read as 'the Moon' ...").
"""
from __future__ import annotations

PRONOUN = "it"
ARGUMENT = {"nsubj", "nsubjpass", "dobj", "pobj", "attr"}
MAIN_SUBJECT = {"nsubj", "nsubjpass"}
CLAUSAL = {"ccomp", "xcomp", "csubj"}
SINGULAR = {"NN", "NNP"}
CORE_SKIP = {"relcl", "appos", "acl", "prep", "conj", "cc", "punct", "advcl"}
COMPETING = {"dobj", "dative"}
OBJECTS = {"dobj", "dative", "pobj"}


def referring_it(doc) -> list[int]:
    """Indices of the referring "it" tokens of ``doc`` (expletive "it" left out)."""
    out = []
    for t in doc:
        if t.lower_ != PRONOUN or t.dep_ not in ARGUMENT:
            continue
        if t.dep_ in MAIN_SUBJECT and any(c.dep_ in CLAUSAL and c.i > t.head.i for c in t.head.children):
            continue  # "It is known that ...", "It is hard to say"
        out.append(t.i)
    return out


def _clause_of(token):
    """The verb (or auxiliary) heading the clause ``token`` belongs to."""
    t = token.head
    while t.pos_ not in ("VERB", "AUX") and t.head.i != t.i:
        t = t.head
    return t


def subject_phrase(verb, resolved: dict[int, str]) -> str | None:
    """The text of ``verb``'s subject when it is a safe antecedent (a singular noun phrase,
    or an "it" already resolved), else None."""
    subjects = [c for c in verb.children if c.dep_ in MAIN_SUBJECT]
    if len(subjects) != 1:
        return None
    s = subjects[0]
    held = [c for c in verb.children if c.dep_ in COMPETING | {"attr"}]
    rivals = [c for c in held if c.dep_ != "attr"] + [t for c in held for t in c.subtree if t.dep_ == "pobj"]
    if any(t.tag_ in SINGULAR for t in rivals):
        return None  # "released the phone ... it sold", "is the publisher of Media Play News. It covers"
    if s.i in resolved:
        return resolved[s.i]
    if s.tag_ not in SINGULAR or any(c.dep_ == "conj" for c in s.children):
        return None
    words = sorted(_core(s), key=lambda t: t.i)
    text = "".join(t.text + t.whitespace_ for t in words).strip()
    return text or None


def _core(noun) -> list:
    out, stack = [], [noun]
    while stack:
        t = stack.pop()
        out.append(t)
        stack.extend(c for c in t.children if c.dep_ not in CORE_SKIP)
    return out


def _competes(doc, i: int, target: str) -> bool:
    """Another singular noun as likely as ``target`` stands before the "it" at ``i`` in its
    sentence, as an object ("Imaginal exposure involves imagining the trauma and describing
    it", "... plays a role in shaping his legacy, it does not ..."): the reader cannot tell."""
    for t in doc[:i]:
        if t.dep_ in OBJECTS and t.tag_ in SINGULAR:
            text = "".join(w.text + w.whitespace_ for w in sorted(_core(t), key=lambda w: w.i)).strip()
            if text.lower() != target.lower():
                return True
    return False


def resolve(doc, previous: str | None) -> tuple[dict[int, str], list[int], str | None]:
    """For one sentence (``doc``) after a sentence whose main subject was ``previous``:
    ``(resolved, unresolved, subject)``: the "it" tokens read as an antecedent
    (index -> antecedent text), those left unresolved, and this sentence's main subject
    as the antecedent for the next sentence (None when not safe)."""
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    resolved: dict[int, str] = {}
    unresolved: list[int] = []
    if root is None:
        return resolved, referring_it(doc), None
    main = subject_phrase(root, {})
    root_it = any(c.dep_ in MAIN_SUBJECT and c.lower_ == PRONOUN for c in root.children)
    for i in referring_it(doc):
        verb = _clause_of(doc[i])
        if verb.dep_ == "conj" and verb.i != root.i and not root_it:
            target = main  # "The tower was built in 1889 and it was designed by Eiffel"; None: not safe
        else:
            target = previous  # the subject of the sentence before (also of an "it" that is this one's subject)
        if target and _competes(doc, i, target):
            target = None
        if target:
            resolved[i] = target
        else:
            unresolved.append(i)
    return resolved, unresolved, subject_phrase(root, resolved)


def with_case(antecedent: str, sentence_start: bool) -> str:
    """The antecedent as it reads in place of "it": a leading article capitalised at the
    start of a sentence, lower-cased elsewhere ("The Moon" -> "the Moon")."""
    first, _, rest = antecedent.partition(" ")
    if first.lower() in ("the", "a", "an") and rest:
        first = first.capitalize() if sentence_start else first.lower()
    elif sentence_start:
        first = first[:1].upper() + first[1:]
    return f"{first} {rest}".strip() if rest else first


UNRESOLVED = "unresolved: no safe antecedent in the answer"
"""What a claim's note says of a pronoun it could not resolve (:func:`note`)."""


def note(resolved: dict[int, str], unresolved: list[int], doc) -> str | None:
    """The claim's note for the pronouns among its tokens."""
    parts = [f"'{doc[i].text}' read as '{with_case(a, False)}' (the subject before it)" for i, a in sorted(resolved.items())]
    parts += [f"'{doc[i].text}' {UNRESOLVED}" for i in unresolved]
    return "; ".join(parts) or None
