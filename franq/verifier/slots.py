"""The slot check beside the cross-encoder: typed slots of a claim aligned with the passage
sentences that speak about it; a mismatch on an aligned slot is evidence of contradiction.

:func:`extract` reads a text's slots: numbers with their unit (digits, "thirty", "5k",
"$3 million", "40%", "3 weeks"; time, size, length and money units compared in one base
unit, so "3 weeks" is not "3 days"), years ("1953", "44 BC"), versions ("3.12.0"), named
entities (capitalised spans, ALL-CAPS words, code-like tokens such as ``--check`` or
``json.dumps``; no NER model), negation cues (not, no, never, without, n't, cannot, ...),
comparatives and orderings (larger / smaller, before / after, first / last, ...) and
quantifiers (all / always vs some / may).

:func:`features` finds the sentences that speak about a claim (content-word overlap) and
aligns the claim's slots with theirs, type by type: a number, year or version the passages
never state while a speaking sentence (or the sentence after it, when that one opens with a
pronoun that refers back: :func:`continuations`) states another of the same type; an entity
absent from the passages (or from the speaking sentence) where that sentence names another; a
negation polarity, comparative or quantifier that differs; two aligned slots in the other
order. It returns :data:`FEATURES` (the last one a contradiction-evidence score in [0, 1]).

The combiner that fuses them with the verifier is :mod:`franq.verifier.combiner`.
"""
from __future__ import annotations

import functools
import itertools
import math
import re
from dataclasses import dataclass, field

import numpy as np

from claims.decompose import split_sentences

FEATURES = ("relevance", "n_slots", "n_aligned", "number_mismatch", "year_mismatch", "version_mismatch",
            "entity_absent", "entity_elsewhere", "negation_mismatch", "comparative_mismatch", "scope_mismatch",
            "order_swap", "evidence")



def _wordset(text: str) -> set[str]:
    return set(text.split())

_UNDER_20 = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen " \
    "seventeen eighteen nineteen"
_WORDS = {w: i for i, w in enumerate(_UNDER_20.split())}
_WORDS.update({"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
               "ninety": 90, "hundred": 100, "dozen": 12, "twice": 2, "once": 1, "half": 0.5, "double": 2,
               "triple": 3, "single": 1})
_SCALE = {"hundred": 1e2, "thousand": 1e3, "k": 1e3, "million": 1e6, "m": 1e6, "billion": 1e9, "bn": 1e9,
          "trillion": 1e12}
_UNITS = {  # unit word -> (category, factor to the category's base unit)
    **{u: ("time", 1e-3) for u in ("ms", "millisecond", "milliseconds")},
    **{u: ("time", 1.0) for u in ("s", "sec", "secs", "second", "seconds")},
    **{u: ("time", 60.0) for u in ("min", "mins", "minute", "minutes")},
    **{u: ("time", 3600.0) for u in ("h", "hr", "hrs", "hour", "hours")},
    **{u: ("time", 86400.0) for u in ("day", "days")},
    **{u: ("time", 604800.0) for u in ("week", "weeks")},
    **{u: ("time", 2.63e6) for u in ("month", "months")},
    **{u: ("time", 3.156e7) for u in ("year", "years")},
    **{u: ("size", 1.0) for u in ("b", "byte", "bytes")},
    **{u: ("size", 1e3) for u in ("kb", "kilobytes")}, "kib": ("size", 1024.0),
    **{u: ("size", 1e6) for u in ("mb", "megabytes")}, "mib": ("size", 1024.0 ** 2),
    **{u: ("size", 1e9) for u in ("gb", "gigabytes")}, "gib": ("size", 1024.0 ** 3),
    **{u: ("length", 1e-3) for u in ("mm", "millimetres", "millimeters")},
    **{u: ("length", 1e-2) for u in ("cm", "centimetres", "centimeters")},
    **{u: ("length", 1.0) for u in ("m", "metre", "metres", "meter", "meters")},
    **{u: ("length", 1e3) for u in ("km", "kilometre", "kilometres", "kilometer", "kilometers")},
    **{u: ("length", 1609.34) for u in ("mile", "miles")}, **{u: ("length", 0.3048) for u in ("foot", "feet", "ft")},
    **{u: ("percent", 1.0) for u in ("%", "percent", "per cent", "percentage")},
    **{u: ("money", 1.0) for u in ("$", "€", "£", "usd", "eur", "gbp", "dollar", "dollars", "euro", "euros",
                                   "pound", "pounds")},
}
_MONTHS = _wordset("january february march april may june july august september october november december")
_NEGATION = {"not", "no", "never", "without", "cannot", "none", "nor", "neither", "nothing", "nobody", "n't",
             "unable", "fails", "lacks", "nowhere"}
_OPPOSITE = {}
for _a, _b in [("larger", "smaller"), ("more", "less"), ("more", "fewer"), ("higher", "lower"), ("greater", "smaller"),
               ("before", "after"), ("earlier", "later"), ("longer", "shorter"), ("older", "younger"),
               ("older", "newer"), ("first", "last"), ("faster", "slower"), ("most", "least"), ("largest", "smallest"),
               ("highest", "lowest"), ("increase", "decrease"), ("increased", "decreased"), ("rose", "fell"),
               ("raised", "lowered"), ("above", "below"), ("maximum", "minimum"), ("gain", "loss"),
               ("public", "private"), ("enable", "disable"), ("enabled", "disabled"), ("north", "south"),
               ("east", "west")]:
    _OPPOSITE.setdefault(_a, set()).add(_b)
    _OPPOSITE.setdefault(_b, set()).add(_a)
_UNIVERSAL = {"all", "every", "always", "each", "any", "everywhere", "must", "only"}
_EXISTENTIAL = {"some", "may", "might", "can", "sometimes", "usually", "often", "several", "most", "certain"}
_STOP = _wordset("""a an the and or but if then than that this these those it its it's is are was were be been being of
in on at to for from by with as into onto about over under up out so such not no do does did done has have had
having i you he she they we them him her his their our your my me us can could would should will shall may might
must also only just very more most less least which who whom whose what when where why how there here all any each
every some one per via after before while since until both either neither nor own same other another being
its""")
_LEADING = _STOP | _wordset("""however although though because despite during following today yesterday now first then
note see use using set add run when while unlike like once after before under by default without within around
about many several new old there yes today unless whether until since pass passing failed adding setting keep
stop make take give get read write return returns send""") | _MONTHS | {"bc", "bce", "ad"}
_TOKEN = re.compile(r"[A-Za-z][\w'’]*|\d[\d,]*(?:\.\d+)*|[$€£%]|n't")
_NUMBER = re.compile(r"(?<![\w.])([$€£])?\s?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?:\s?(k|m|bn)\b)?"
                     r"(?:\s?(%|[A-Za-z]+(?:\s+cent)?))?", re.IGNORECASE)
_VERSION = re.compile(r"(?<![\w.])v?(\d+\.\d+\.\d+[\w.-]*|(?<=v)\d+\.\d+)")
_ENTITY = re.compile(r"(?:[A-Z][\w'’&.-]*[\w]|[A-Z])(?:\s+(?:of|de|van|von|der|la|du|da|del)?\s*[A-Z][\w'’&.-]*[\w])*")
_CODE = re.compile(r"`([^`]+)`|(?<![\w-])(--?[A-Za-z][\w-]*)|\b([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\(?\)?|"
                   r"[a-z]+_[\w]+|\w+\(\))|'([\w.-]+)'")


@dataclass
class Slots:
    """The typed slots of one text; numbers are ``(value in base unit, category)``."""

    numbers: list[tuple[float, str | None]] = field(default_factory=list)
    years: list[int] = field(default_factory=list)
    versions: list[str] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)
    negations: int = 0
    comparatives: set[str] = field(default_factory=set)
    quantifiers: set[str] = field(default_factory=set)

    def count(self) -> int:
        return sum(map(len, (self.numbers, self.years, self.versions, self.entities)))


def _words(text: str) -> list[str]:
    return [t.lower().replace("’", "'") for t in _TOKEN.findall(text)]


def _number(m: re.Match) -> tuple[float, str | None]:
    cur, whole, frac, scale, unit = m.groups()
    value = float(whole.replace(",", "") + (frac or "")) * (_SCALE[scale.lower()] if scale else 1.0)
    unit = (unit or "").lower()
    if unit in _SCALE:
        value, unit = value * _SCALE[unit], ""
    if cur:
        return value, "money"
    if unit in _UNITS:
        return value * _UNITS[unit][1], _UNITS[unit][0]
    return value, (unit.rstrip("s") or None) if unit and unit not in _STOP else None


@functools.lru_cache(maxsize=4096)
def _sentences(text: str) -> tuple[tuple[int, int], ...]:
    return tuple(split_sentences(text)) if text.strip() else ()


@functools.lru_cache(maxsize=4096)
def extract(text: str) -> Slots:
    """The slots of ``text`` (cached: passages are read once per claim; do not modify the result)."""
    s = Slots()
    masked = _VERSION.sub(lambda m: s.versions.append(m.group(1)) or " ", text)
    for m in _NUMBER.finditer(masked):
        whole, frac, unit = m.group(2), m.group(3), (m.group(5) or "").lower()
        bc = unit in ("bc", "bce")
        if bc or ("," not in whole and not frac and len(whole) == 4 and 1000 <= int(whole) <= 2199 and unit not in _UNITS):
            s.years.append(-int(whole.replace(",", "")) if bc else int(whole))
            continue
        before = masked[max(0, m.start(2) - 12):m.start(2)].lower().split()
        if unit in _MONTHS or (before and before[-1].strip(",.") in _MONTHS):  # a day of the month
            continue
        if m.start(2) > 0 and masked[m.start(2) - 1] in "#/:":  # issue numbers, ratios, ports: a code, not a quantity
            s.entities.append(m.group(0).strip().lower())
            continue
        s.numbers.append(_number(m))
    words = _words(masked)
    skip = -1
    for i, w in enumerate(words):
        if i == skip:
            continue
        if w in _WORDS and not (w == "one" and i + 1 < len(words) and words[i + 1] in ("of", "another")):
            value = float(_WORDS[w])
            nxt = words[i + 1] if i + 1 < len(words) else ""
            if nxt in _SCALE:
                value, skip = value * _SCALE[nxt], i + 1
                nxt = words[i + 2] if i + 2 < len(words) else ""
            cat = _UNITS.get(nxt)
            s.numbers.append((value * cat[1], cat[0]) if cat else (value, nxt.rstrip("s") or None))
    s.negations = sum(w in _NEGATION or w.endswith("n't") for w in words)
    s.comparatives = {w for w in words if w in _OPPOSITE}
    s.quantifiers = {w for w in words if w in _UNIVERSAL or w in _EXISTENTIAL}
    for m in _CODE.finditer(text):
        s.entities.append(next(g for g in m.groups() if g).lower())
    for sent_start, sent_end in _sentences(text):
        for m in _ENTITY.finditer(text, sent_start, sent_end):
            parts = m.group(0).split()
            if m.start() == sent_start or text[sent_start:m.start()].strip() in ('"', "'", "("):
                while parts and (parts[0].lower() in _LEADING or re.search(r"(ed|ing|ly)$", parts[0])):
                    parts = parts[1:]
            parts = [p for p in parts if p.lower().strip(".") not in _MONTHS and p.lower() not in ("bc", "bce", "ad")]
            if parts and not (len(parts) == 1 and parts[0].lower() in _STOP):
                s.entities.append(" ".join(parts).lower().rstrip("."))
    return s


def _stem(w: str) -> str:
    return next((w[: -len(suf)] for suf in ("ing", "ed", "es", "s") if len(w) > len(suf) + 3 and w.endswith(suf)), w)


@functools.lru_cache(maxsize=16384)
def _content(text: str) -> frozenset[str]:
    return frozenset(_stem(w) for w in _words(text) if w not in _STOP and len(w) > 1)


def speaking_sentences(claim: str, passages: list[str], *, top: int = 2, min_share: float = 0.25
                       ) -> list[tuple[float, str]]:
    """``(overlap, sentence)`` of the ``top`` passage sentences sharing the most content
    words with the claim (share of the claim's), those at ``min_share`` or above and with
    two shared words (one for a claim of at most two)."""
    want = _content(claim)
    if not want:
        return []
    found = []
    for text in passages:
        for a, b in _sentences(text):
            shared = len(want & _content(text[a:b]))
            share = shared / len(want)
            if share >= min_share and shared >= min(2, len(want)):
                found.append((share, text[a:b]))
    return sorted(found, key=lambda x: -x[0])[:top]


_BACK = frozenset(["it", "its", "he", "his", "she", "her", "they", "their", "this", "these"])


def continuations(speaking: list[tuple[float, str]], passages: list[str]) -> list[str]:
    """The sentences that go on about what a speaking sentence is about: the next sentence of
    its passage when it opens with a pronoun that refers back ("Its elevation of 8,849 metres
    ..." after "Mount Everest is Earth's highest mountain."), so that a number stated there
    is the speaking sentence's number."""
    said = {t for _, t in speaking}
    out = []
    for text in passages:
        spans = _sentences(text)
        for (a, b), (c, d) in itertools.pairwise(spans):
            if text[a:b] in said and text[c:d] not in said and (words := _words(text[c:d][:12])) and words[0] in _BACK:
                out.append(text[c:d])
    return out


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b)) or (max(abs(a), abs(b)) > 0
                                                           and abs(a - b) / max(abs(a), abs(b)) < 0.006)


_CATS = {"time", "size", "length", "percent", "money"}


def _compatible(a: str | None, b: str | None) -> bool:
    """Two numbers' units can be compared: the same category, or plain counts (either unit unknown)."""
    return a == b if a in _CATS or b in _CATS else (a is None or b is None or a == b)


def _has_entity(entity: str, text: str) -> bool:
    return re.search(r"(?<![\w])" + re.escape(entity) + r"(?![\w])", text) is not None


def features(claim: str, passages: list[str]) -> np.ndarray:
    """The claim's slot features against its passages, in the order of :data:`FEATURES`."""
    out = dict.fromkeys(FEATURES, 0.0)
    speaking = speaking_sentences(claim, passages)
    c = extract(claim)
    out["n_slots"] = math.log1p(c.count())
    if not speaking:
        return np.array([out[f] for f in FEATURES])
    out["relevance"] = speaking[0][0]
    sents = [extract(t) for _, t in speaking]
    stated = sents + [extract(t) for t in continuations(speaking, passages)]  # where numbers and years are read
    whole = [extract(p) for p in passages]
    all_numbers = [n for w in whole for n in w.numbers]
    low_passages = " ".join(passages).lower()
    low_best = speaking[0][1].lower()
    low_claim = claim.lower()
    positions: list[tuple[int, int]] = []  # (where in the claim, where in the best sentence) of aligned slots
    for value, cat in c.numbers:
        here = [n for s in stated for n in s.numbers if _compatible(cat, n[1])]
        if any(_close(value, v) and _compatible(cat, u) for v, u in all_numbers):
            out["n_aligned"] += 1
            positions.append((_position(claim, value), _position(speaking[0][1], value)))
        elif here:
            out["number_mismatch"] += 1
    for year in c.years:
        if any(year in w.years for w in whole):
            out["n_aligned"] += 1
            positions.append((low_claim.find(str(abs(year))), low_best.find(str(abs(year)))))
        elif any(s.years for s in stated):
            out["year_mismatch"] += 1
    for version in c.versions:
        if version in low_passages:
            out["n_aligned"] += 1
        elif any(s.versions for s in sents):
            out["version_mismatch"] += 1
    best_entities = set(sents[0].entities)
    for entity in dict.fromkeys(c.entities):
        others = best_entities - set(c.entities)
        if _has_entity(entity, low_best):
            out["n_aligned"] += 1
            positions.append((low_claim.find(entity), low_best.find(entity)))
        elif not _has_entity(entity, low_passages):
            out["entity_absent"] += bool(others)
        elif others:
            out["entity_elsewhere"] += 1
    best = sents[0]
    out["negation_mismatch"] = float((c.negations > 0) != (best.negations > 0))
    out["comparative_mismatch"] = float(any(w not in best.comparatives and _OPPOSITE[w] & best.comparatives
                                            for w in c.comparatives))
    cu, ce = c.quantifiers & _UNIVERSAL, c.quantifiers & _EXISTENTIAL
    bu, be = best.quantifiers & _UNIVERSAL, best.quantifiers & _EXISTENTIAL
    out["scope_mismatch"] = float(bool(cu and be and not bu) or bool(ce and bu and not be))
    aligned = [b for a, b in sorted(set(positions)) if a >= 0 and b >= 0]
    out["order_swap"] = float(len(aligned) >= 2 and len(set(aligned)) == len(aligned) and aligned != sorted(aligned))
    weights = {"number_mismatch": 0.8, "year_mismatch": 0.8, "version_mismatch": 0.7, "entity_absent": 0.5,
               "entity_elsewhere": 0.4, "negation_mismatch": 0.4, "comparative_mismatch": 0.5,
               "scope_mismatch": 0.3, "order_swap": 0.4}
    keep = math.prod((1.0 - w) ** min(out[k], 3.0) for k, w in weights.items())
    out["evidence"] = out["relevance"] * (1.0 - keep)
    return np.array([out[f] for f in FEATURES])


def _position(sentence: str, value: float) -> int:
    """Where ``value`` is written in ``sentence`` (-1: not as such)."""
    return next((m.start() for m in _NUMBER.finditer(sentence) if _close(_number(m)[0], value)), -1)
