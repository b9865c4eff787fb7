"""Which coordinations inside a clause are lists of facts (:mod:`claims.atomic`): "She
speaks French, German and Italian" states three facts, one per item; "Pride and
Prejudice", "docker compose with a space instead of a hyphen", "between 1503 and 1519" and
"red or blue" state one. :func:`split_lists` returns one token set per item of the first
list that states each item, the rest of the clause shared."""
from __future__ import annotations

LIST_SLOTS = {"dobj", "attr", "pobj", "oprd", "acomp"}
LIST_JOINS = {"and", "&", "plus"}
"""Coordinators of a list that states each item; "or", "but", "instead of" do not ("a space instead of a hyphen")."""
RANGE_PREPOSITIONS = {"between"}
"""A list after one of these is one range ("between 1503 and 1519"), never split."""
NAMES = frozenset({
    "rock and roll", "rhythm and blues", "research and development", "trial and error", "supply and demand",
    "law and order", "bed and breakfast", "fish and chips", "pros and cons", "arts and crafts",
    "bosnia and herzegovina", "trinidad and tobago", "antigua and barbuda", "saint kitts and nevis",
    "sao tome and principe", "são tomé and príncipe", "saint vincent and the grenadines",
    "heard island and mcdonald islands", "marks and spencer", "barnes and noble", "ben and jerry's",
    "dolce and gabbana", "black and decker", "tom and jerry", "lewis and clark",
})
"""Fixed phrases joined by "and" that name one thing (lower-cased): never split as a list.
Two capitalised single words joined by "and" are taken as one name without being listed here."""


def walk(token, follow) -> set[int]:
    """Indices of ``token`` and of the descendants reached through children ``follow`` accepts."""
    out, stack = set(), [token]
    while stack:
        t = stack.pop()
        out.add(t.i)
        stack.extend(c for c in t.children if follow(c))
    return out


def split_lists(doc, tokens: set[int]) -> list[set[int]]:
    """One token set per item of the first list (coordinated nouns or adjectives in an
    object / attribute slot) inside ``tokens``; ``[tokens]`` when there is none."""
    for i in sorted(tokens):
        t = doc[i]
        if t.dep_ not in LIST_SLOTS:
            continue
        items = _conjuncts(t, tokens)
        if len(items) < 2 or _one_name(doc, items) or not _states_each(doc, items):
            continue
        item_sets = [_item(doc[j], items, tokens) for j in items]
        glue = {c.i for j in items for c in doc[j].children
                if (c.dep_ in ("cc", "preconj", "punct") or c.lower_ in ("both", "either")) and c.i in tokens}
        every = set().union(*item_sets) | glue
        return [(tokens - every) | (s - glue) for s in item_sets]
    return [tokens]


def _states_each(doc, items: list[int]) -> bool:
    """The list states each item: its coordinators are "and" (:data:`LIST_JOINS`), and it is
    not the range of "between" (:data:`RANGE_PREPOSITIONS`)."""
    joins = [c for i in items for c in doc[i].children if c.dep_ in ("cc", "preconj") and c.i < max(items)]
    return all(c.lower_ in LIST_JOINS or c.dep_ == "preconj" for c in joins) and not _in_range(doc, items[0])


def _in_range(doc, first: int) -> bool:
    """A list that is (or ends) the range of "between" in its clause: "between" above it, or
    before it with an object that has no "and" of its own (a misattached "between X ... and Y")."""
    def verb(t):
        return next((a for a in t.ancestors if a.pos_ in ("VERB", "AUX")), None)
    return any(t.lower_ in RANGE_PREPOSITIONS and t.i < first and verb(t) == verb(doc[first]) and (
        t.is_ancestor(doc[first]) or not any(c.dep_ == "conj" for o in t.children for c in o.children)) for t in doc)


def _one_name(doc, items: list[int]) -> bool:
    """Items joined by "and" that name one thing: a phrase of :data:`NAMES`, or two
    capitalised words with nothing of their own ("Pride and Prejudice", "Procter and
    Gamble", "Simon and Garfunkel"; also "Paris and London", which stays one claim)."""
    words = [doc[i] for i in items]
    first, last = min(w.left_edge.i for w in words), max(w.right_edge.i for w in words)
    if doc[first:last + 1].text.lower() in NAMES:
        return True
    joined = [c for w in words for c in w.children if c.dep_ == "cc"]
    return (len(words) == 2 and len(joined) == 1 and joined[0].lower_ in ("and", "&")
            and all(w.text[:1].isupper() and w.i > 0 for w in words)
            and all(c.dep_ in ("cc", "conj", "compound") and c.text[:1].isupper() or c.dep_ in ("cc", "conj")
                    for w in words for c in w.children))


def _conjuncts(t, tokens: set[int]) -> list[int]:
    out, stack = [], [t]
    while stack:
        x = stack.pop()
        if x.i in tokens and x.pos_ in ("NOUN", "PROPN", "ADJ", "NUM", "PRON"):
            out.append(x.i)
            stack.extend(c for c in x.children if c.dep_ == "conj")
    return sorted(out)


def _item(token, items: list[int], tokens: set[int]) -> set[int]:
    """One list item: its subtree within ``tokens``, without the other items and the glue."""
    return walk(token, lambda c: c.i in tokens and c.i not in items and c.dep_ not in ("cc", "preconj"))
