"""Minimal edits of one sentence for the contrastive verifier data
(:mod:`franq.fit.verifier.contrast`): typed-slot contradictions and rule-based paraphrases.

Every edit changes one slot so that the sentence says something its passage contradicts:

    entity-window    a same-type entity the window names elsewhere (the doer swapped)
    entity-other     a same-type entity of another passage
    number-x10 / number-div10 / number-pm1 / number-unit   3 -> 30 / 0.3 / 4 / 3 minutes
    year-pm1 / year-other / date-month                     1989 -> 1990 / 1974 / March -> June
    number-window / year-window   a number or year the window states about something else
    number-bound / year-decade    "more than 1,000" for 120, "in the 1990s" for 1989 (twin:
                                  "more than 100", "in the 1980s"; :func:`generalize`)
    comparative      larger -> smaller, more -> less, increased -> decreased
    order            before -> after, first -> last, preceded -> followed
    compare-swap     "X is larger than Y" -> "Y is larger than X"
    roles            "X defeated Y" -> "Y defeated X" (subject and object swapped)
    negation         is -> is not, did not -> did
    modal            can -> cannot, always -> never, raises -> never raises
    condition        with -> without, if -> unless, including -> excluding
    scope            all -> only some, some -> no, many -> few

:func:`paraphrase` rewrites a sentence without changing what it says (clause reorder,
synonyms, passive to active, a non-restrictive clause dropped, number words, contractions),
so a supported claim is not a copy of its premise. Entities are ``(start, end, label)``
character spans (spaCy's NER, or :func:`proper_spans` without it).
"""
from __future__ import annotations

import random
import re

YEAR_RE = re.compile(r"(?<![\d.])(?<!\d,)(1[5-9]\d\d|20[0-3]\d)(?!\d|,\d|s\b)")
NUM_RE = re.compile(r"(?<![\w.,$-])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?![\w]|,\d|\.\d)")
WORDNUM = dict(zip("two three four five six seven eight nine ten eleven twelve".split(), range(2, 13)))
TENS = {2: "twenty", 3: "thirty", 4: "forty", 5: "fifty", 6: "sixty", 7: "seventy", 8: "eighty", 9: "ninety"}
NUMWORD = {v: k for k, v in WORDNUM.items()}
MONTHS = "January February March April May June July August September October November December".split()
UNITS = [u.split() for u in ("seconds minutes hours days weeks months years",
                             "millimeters centimeters meters kilometers",
                             "inches feet yards miles", "milligrams grams kilograms tons",
                             "mm cm m km", "mg g kg", "ms s min h", "KB MB GB TB", "dollars euros pounds yen",
                             "thousand million billion trillion", "percent times")]
UNIT_OF = {u: units for units in UNITS for u in units} | {u.rstrip("s"): units for units in UNITS[:4] for u in units}
PAIRS = {  # kind: word pairs, each direction
    "comparative": "larger:smaller bigger:smaller higher:lower more:less greater:smaller longer:shorter older:younger "
                   "faster:slower heavier:lighter increase:decrease increased:decreased increases:decreases "
                   "rise:fall rose:fell rises:falls largest:smallest biggest:smallest highest:lowest "
                   "longest:shortest oldest:youngest most:least better:worse best:worst maximum:minimum "
                   "above:below wider:narrower warmer:colder stronger:weaker north:south east:west "
                   "northern:southern eastern:western more:fewer gained:lost won:lost",
    "order": "before:after earlier:later preceded:followed precedes:follows first:last prior:subsequent "
             "previously:subsequently",
    "modal": "can:cannot always:never usually:rarely often:rarely may:cannot must:need_not should:should_not "
             "allows:prevents allowed:prevented",
    "condition": "with:without including:excluding if:unless inside:outside includes:excludes",
    "scope": "all:only_some some:no many:few most:few none:all everyone:no_one everything:nothing",
}
SWAP = {kind: {} for kind in PAIRS}
for _kind, _text in PAIRS.items():
    for _pair in _text.split():
        _a, _b = (x.replace("_", " ") for x in _pair.split(":"))
        SWAP[_kind].setdefault(_a, _b)
        if _kind in ("comparative", "order", "condition") or _b in ("cannot", "never", "rarely", "all", "often"):
            SWAP[_kind].setdefault(_b, _a)
NOT_CONDITION = re.compile(r"\b(?:compared|associated|along|together|deal|dealt|filled|familiar|combined|consistent|"
                           r"agree|agreed|comply|correlated|connected|replaced|coincide|coincided|even|as)\s+with\b|"
                           r"\bwith\s+(?:respect|regard|the exception)|\bas\s+if\b|\beven\s+if\b", re.I)
NEGATABLE = re.compile(r"\b(is|are|was|were|can|could|will|would|does|did|do|has|have|had|should|must)\b(?! not\b)")
NEGATED = re.compile(r"\b(?:is|are|was|were|could|will|would|does|did|do|has|have|had|should|must) not\b|"
                     r"\b(?:isn't|aren't|wasn't|weren't|doesn't|didn't|don't|can't|won't|hasn't|haven't)\b")
UNDO = {"isn't": "is", "aren't": "are", "wasn't": "was", "weren't": "were", "doesn't": "does", "didn't": "did",
        "don't": "do", "can't": "can", "won't": "will", "hasn't": "has", "haven't": "have"}
VERBS_S = frozenset("raises returns requires supports allows uses includes contains causes increases reduces prevents "
                    "produces provides affects improves creates accepts blocks deletes stores sends runs starts "
                    "stops writes reads updates changes protects lowers triggers replaces needs helps".split())
NOT_SUBJECT = frozenset("the a an of and or for to with in on at by from these those its their his her our your my "
                        "many some all no any special several few more most other such".split())
ROLE_VERBS = re.compile(r"\b(defeated|beat|succeeded|replaced|acquired|bought|sued|killed|invaded|overtook|preceded|"
                        r"followed|hired|fired|employed|trained|coached|taught|influenced|funded|owns|owned|"
                        r"purchased|attacked|eliminated|outscored|signed|appointed|elected)\b")
PASSIVE = dict(p.split(":") for p in (
    "written:wrote founded:founded built:built designed:designed directed:directed produced:produced "
    "developed:developed created:created discovered:discovered invented:invented painted:painted "
    "composed:composed published:published established:established introduced:introduced led:led "
    "won:won played:played sung:sang performed:performed released:released owned:owned acquired:acquired "
    "described:described proposed:proposed named:named defeated:defeated replaced:replaced").split())
ACTIVE = {v: k for k, v in PASSIVE.items() if v != k} | {k: k for k, v in PASSIVE.items() if v == k}
SYNONYMS = dict(p.split(":") for p in (
    "approximately:about roughly:about large:big big:large begin:start began:started begins:starts "
    "purchased:bought located:situated situated:located many:numerous numerous:many "
    "however:but also:additionally "
    "additionally:also receive:get received:got obtain:get obtained:got commence:begin commenced:began "
    "demonstrate:show demonstrated:showed  "
    "therefore:thus thus:therefore primarily:mainly mainly:primarily largely:mostly mostly:largely "
    "significant:considerable considerable:significant rapidly:quickly quickly:rapidly frequently:often "
    "often:frequently commonly:usually usually:commonly nearly:almost almost:nearly entire:whole whole:entire "
    "died:passed_away passed_away:died became:turned_into stated:said said:stated "
    "known:recognized recognized:known major:key key:major famous:well-known well-known:famous "
    "currently:presently presently:currently allow:permit allows:permits permit:allow require:need "
    "requires:needs contain:include contains:includes finished:completed completed:finished ended:concluded "
    "attempted:tried tried:attempted built:constructed constructed:built enormous:huge huge:enormous "
    "extremely:very highly:very perhaps:maybe maybe:perhaps eventually:ultimately ultimately:eventually "
    "chiefly:mainly moreover:furthermore furthermore:moreover residents:inhabitants inhabitants:residents "
    "physicians:doctors doctors:physicians assisted:helped helped:assisted needed:required "
    "permitted:allowed allowed:permitted prohibited:banned banned:prohibited picked:selected "
    "several:a_number_of near:close_to annually:yearly yearly:annually typically:usually "
    "principal:main main:principal vital:essential essential:vital").split())
CONTRACT = {"does not": "doesn't", "did not": "didn't", "is not": "isn't", "are not": "aren't", "was not": "wasn't",
            "were not": "weren't", "do not": "don't", "cannot": "can't", "will not": "won't", "has not": "hasn't",
            "have not": "haven't", "percent": "%"}
UNCONTRACT = {v: k for k, v in CONTRACT.items()}
LOWER_START = frozenset("the a an it this that these those he she they we its their his her there some many most "
                        "in on at during after before by since".split())
INTRO = re.compile(r"^(In|On|During|After|Before|By|Since|At|Following|Throughout) ([^,]{2,40}), (\w+)(.*)\.$")
TRAIL = re.compile(r"^(\w+)(.{10,}?) (in|on|during|since|by) ((?:the )?(?:\w+ ){0,2}(?:1[5-9]\d\d|20[0-3]\d))\.$")
SWAP_TYPES = ("PERSON", "GPE", "ORG", "NORP", "LOC", "FAC", "EVENT", "WORK_OF_ART", "LANGUAGE", "PRODUCT", "PROPER")
PROPER_RE = re.compile(r"(?<!^)(?<![.!?] )\b([A-Z][a-z]+(?:\s+(?:of|the|de|von|van)?\s*[A-Z][a-z]+)*)")


def proper_spans(text: str) -> list[tuple[int, int, str]]:
    """Capitalized word runs not opening the sentence, as ``PROPER`` entities (no NER)."""
    return [(m.start(), m.end(), "PROPER") for m in PROPER_RE.finditer(text) if m.start() > 0]


def case_like(word: str, like: str) -> str:
    return word[:1].upper() + word[1:] if like[:1].isupper() else word


def put(text: str, start: int, end: int, new: str) -> str:
    return text[:start] + new + text[end:]


def fmt(value: float, like: str) -> str:
    if "." in like and value != int(value):
        return f"{value:.{max(1, len(like.split('.')[1]))}f}"
    value = round(value)
    return f"{value:,}" if "," in like or value >= 10000 and "," in like else str(value)


def _numbers(text: str):
    years = {m.start() for m in YEAR_RE.finditer(text)}
    return [m for m in NUM_RE.finditer(text) if m.start() not in years]


def number_edits(text: str, rng: random.Random) -> list[tuple[str, str]]:
    out = []
    nums = _numbers(text)
    if nums:
        m = rng.choice(nums)
        raw = m.group()
        v = float(raw.replace(",", ""))
        out.append(("number-x10", put(text, m.start(), m.end(), fmt(v * 10, raw))))
        if v >= 10:
            out.append(("number-div10", put(text, m.start(), m.end(), fmt(v / 10, raw))))
        if v >= 1:
            near = v + rng.choice((-1, 1)) if v > 1 else v + 1
            out.append(("number-pm1", put(text, m.start(), m.end(), fmt(near, raw))))
        unit = re.match(r"\s+(\w+)", text[m.end():])
        if unit and unit.group(1) in UNIT_OF:
            units = [u for u in UNIT_OF[unit.group(1)] if u.rstrip("s") != unit.group(1).rstrip("s")]
            new = rng.choice(units)
            new = new.rstrip("s") if v == 1 and unit.group(1)[-1:] != "s" else new
            out.append(("number-unit", put(text, m.end() + unit.start(1), m.end() + unit.end(1), new)))
    words = [m for m in re.finditer(r"\b(" + "|".join(WORDNUM) + r")\b", text, re.I)]
    if words and not nums:
        m = rng.choice(words)
        v = WORDNUM[m.group().lower()]
        if v < 10:
            out.append(("number-x10", put(text, m.start(), m.end(), case_like(TENS[v], m.group()))))
        near = NUMWORD.get(v + rng.choice((-1, 1))) or NUMWORD[v + 1 if v < 12 else v - 1]
        out.append(("number-pm1", put(text, m.start(), m.end(), case_like(near, m.group()))))
    return out


def date_edits(text: str, rng: random.Random) -> list[tuple[str, str]]:
    out = []
    years = list(YEAR_RE.finditer(text))
    if years:
        m = rng.choice(years)
        y = int(m.group())
        out.append(("year-pm1", put(text, m.start(), m.end(), str(y + rng.choice((-1, 1))))))
        out.append(("year-other", put(text, m.start(), m.end(), str(y + rng.choice((-1, 1)) * rng.randint(3, 40)))))
    months = list(re.finditer(r"\b(" + "|".join(MONTHS) + r")\b(?=\s+\d)", text))
    if months:
        m = rng.choice(months)
        out.append(("date-month", put(text, m.start(), m.end(), rng.choice([x for x in MONTHS if x != m.group()]))))
    return out


def word_edits(text: str, rng: random.Random) -> list[tuple[str, str]]:
    out = []
    for kind, table in SWAP.items():
        hits = [m for m in re.finditer(r"\b(" + "|".join(map(re.escape, table)) + r")\b", text, re.I)
                if m.group().lower() in table]
        if kind == "condition":
            bad = [b.span() for b in NOT_CONDITION.finditer(text)]
            hits = [m for m in hits if not any(a <= m.start() < b for a, b in bad)]
        if kind == "scope":  # "some" / "all" as determiners only: "all of", "some 40" are not scope
            hits = [m for m in hits if not re.match(r"\s+(?:of\b|\d|the\b|[.,;])", text[m.end():])]
        if hits:
            m = rng.choice(hits)
            out.append((kind, put(text, m.start(), m.end(), case_like(table[m.group().lower()], m.group()))))
    m = NEGATED.search(text)
    if m:
        w = m.group()
        out.append(("negation", put(text, m.start(), m.end(), UNDO.get(w.lower()) or w[:-4])))
    else:
        m = NEGATABLE.search(text)
        if m:
            out.append(("negation", put(text, m.end(), m.end(), " not")))
    verbs = [m for m in re.finditer(r"\b(\w+s)\b", text) if m.group().lower() in VERBS_S
             and text[:m.start()].split()[-1:] != [] and text[:m.start()].split()[-1].lower() not in NOT_SUBJECT]
    if verbs and "never" not in text.lower() and not any(k == "modal" for k, _ in out):
        m = rng.choice(verbs)
        out.append(("modal", put(text, m.start(), m.start(), "never ")))
    return out


def entity_edits(text: str, ents: list, window: dict[str, list[str]], pool: dict[str, list[str]],
                 rng: random.Random) -> list[tuple[str, str]]:
    """Same-type swaps (``window``: entities of the window's other sentences by label;
    ``pool``: of other passages), subject-object swaps and "than" swaps."""
    out = []
    low = text.lower()
    ents = [e for e in ents if e[2] in SWAP_TYPES]
    shuffled = ents[:]
    rng.shuffle(shuffled)
    for kind, source in (("entity-window", window), ("entity-other", pool)):
        for s, e, label in shuffled:
            name = text[s:e].lower()
            cands = [o for o in source.get(label, ()) if o.lower() not in low and name not in o.lower()
                     and o.lower() not in name]
            if kind == "entity-other" and len(cands) > 50:
                cands = rng.sample(cands, 50)
            n = len(text[s:e].split())
            close = [o for o in cands if abs(len(o.split()) - n) <= 1] or cands
            if close:
                out.append((kind, put(text, s, e, rng.choice(close))))
                break
    for (s1, e1, l1), (s2, e2, l2) in zip(ents, ents[1:]):
        between = text[e1:s2]
        if l1 == l2 and text[s1:e1].lower() != text[s2:e2].lower() and len(between.split()) <= 6 \
                and (ROLE_VERBS.search(between) or re.search(r"\bthan\b", between)):
            kind = "compare-swap" if "than" in between else "roles"
            out.append((kind, text[:s1] + text[s2:e2] + between + text[s1:e1] + text[e2:]))
            break
    return out


def window_numbers(text: str, window: list[str], rng: random.Random) -> list[tuple[str, str]]:
    """A number or year of ``text`` swapped for another the window states elsewhere
    (``number-window``, ``year-window``): every word of the edit is in the premise."""
    out = []
    low = " ".join(window)
    years = [y for y in dict.fromkeys(YEAR_RE.findall(low)) if y not in text]
    mine = list(YEAR_RE.finditer(text))
    if years and mine:
        m = rng.choice(mine)
        out.append(("year-window", put(text, m.start(), m.end(), rng.choice(years))))
    nums = [n.group() for n in _numbers(low) if n.group() not in text]
    mine = _numbers(text)
    if nums and mine:
        m = rng.choice(mine)
        other = rng.choice(sorted(set(nums)))
        if other.replace(",", "") != m.group().replace(",", ""):
            out.append(("number-window", put(text, m.start(), m.end(), other)))
    return out


def edits(text: str, ents: list, window: dict, pool: dict, rng: random.Random) -> list[tuple[str, str]]:
    """Every applicable contradiction of ``text``: ``(kind, edited)``, one per kind.
    ``window``: the window's other entities by label, and its other sentences as ``"TEXT"``."""
    seen, out = {text}, []
    for kind, new in (entity_edits(text, ents, window, pool, rng) + number_edits(text, rng)
                      + window_numbers(text, window.get("TEXT", []), rng)
                      + date_edits(text, rng) + word_edits(text, rng)):
        if new not in seen:
            seen.add(new)
            out.append((kind, new))
    return out


# ------------------------------------------------------------------ paraphrase
def _lower_first(text: str) -> str:
    first = text.split(" ", 1)[0]
    return text[:1].lower() + text[1:] if first.lower() in LOWER_START else text


def _upper_first(text: str) -> str:
    return text[:1].upper() + text[1:]


def reorder(text: str) -> str | None:
    """"In 1990, X did Y." <-> "X did Y in 1990."."""
    m = INTRO.match(text)
    if m:
        return _upper_first(f"{_lower_first(m.group(3) + m.group(4))} {m.group(1).lower()} {m.group(2)}.")
    m = TRAIL.match(text)
    if m and "," not in m.group(2)[-15:]:
        return f"{_upper_first(m.group(3))} {m.group(4)}, {_lower_first(m.group(1) + m.group(2))}."
    return None


def voice(text: str) -> str | None:
    """Passive with a named agent to active, and a named subject's simple active to passive."""
    m = re.match(r"^(.{3,60}?) (?:was|were) (\w+) by ((?:[A-Z][\w.'-]*\s?){1,4})(.*)\.$", text)
    if m and m.group(2) in PASSIVE and not re.search(r"\b(?:is|was|were|are)\b", m.group(1)):
        rest = m.group(4) if m.group(4)[:1] in ("", " ", ",") else " " + m.group(4)
        return f"{m.group(3).strip()} {PASSIVE[m.group(2)]} {_lower_first(m.group(1))}{rest}."
    m = re.match(r"^((?:[A-Z][\w.'-]*\s){1,4})(\w+) ((?:the|a|an|his|her|their|its) [^,]{3,50}?)((?: in \d{4})?)\.$",
                 text)
    if m and m.group(2) in ACTIVE:
        plural = re.search(r"s$", m.group(3).split()[-1]) is not None
        return f"{_upper_first(m.group(3))} {'were' if plural else 'was'} {ACTIVE[m.group(2)]} by " \
               f"{m.group(1).strip()}{m.group(4)}."
    return None


def drop_clause(text: str) -> str | None:
    """A parenthesis or a non-restrictive ", which ...," / ", who ...," clause left out."""
    new = re.sub(r"\s*\([^()]{2,80}\)", "", text, count=1)
    if new == text:
        new = re.sub(r", (?:which|who|whose) [^,]{3,80},", "", text, count=1)
    return new if new != text and len(new.split()) >= 5 else None


def number_words(text: str) -> str | None:
    m = re.search(r"(?<![\w.,$-])([2-9]|1[0-2])(?= [a-z])(?!\.\d)", text)
    if m:
        return put(text, m.start(), m.end(), NUMWORD[int(m.group())])
    m = re.search(r"\b(" + "|".join(WORDNUM) + r")\b(?= [a-z])", text)
    if m and m.group() in WORDNUM:
        return put(text, m.start(), m.end(), str(WORDNUM[m.group()]))
    return None


def synonyms(text: str, rng: random.Random) -> str | None:
    hits = [m for m in re.finditer(r"\b[\w-]+\b", text) if m.group().lower() in SYNONYMS]
    hits += [m for m in re.finditer(r"\bpassed away\b", text)]
    if not hits:
        return None
    out = text
    for m in sorted(rng.sample(hits, min(2, len(hits))), key=lambda m: -m.start()):
        key = m.group().lower().replace(" ", "_")
        out = put(out, m.start(), m.end(), case_like(SYNONYMS[key].replace("_", " "), m.group()))
    return out


def contractions(text: str) -> str | None:
    for table in (CONTRACT, UNCONTRACT):
        for a, b in table.items():
            if re.search(rf"(?<!\w){re.escape(a)}(?!\w)", text):
                return re.sub(rf"(?<!\w){re.escape(a)}(?!\w)", b if b != "%" or a != "percent" else "%",
                              text, count=1).replace(" %", "%")
    return None


def generalize(text: str, rng: random.Random, *, wrong: bool = False) -> tuple[str, str] | None:
    """A slot said less precisely, still true: "in 1989" -> "in the 1980s" (``year-decade``),
    "120 meters" -> "more than 100 meters" (``number-bound``); with ``wrong``, the same said
    falsely ("in the 1990s", "more than 1,000 meters"). The same ``rng`` state picks the same
    slot either way."""
    years = list(re.finditer(r"\bin (1[5-9]\d|20[0-3])\d\b(?!,\d)", text))
    nums = [m for m in _numbers(text) if "." not in m.group() and int(m.group().replace(",", "")) >= 20
            and re.match(r" [a-z]", text[m.end():])
            and not re.search(r"\b(?:about|approximately|around|over|under|nearly|almost|roughly|up to|"
                              r"less than|more than|at least|at most|than)\s*$", text[:m.start()], re.I)]
    if years and (not nums or rng.random() < 0.5):
        m = rng.choice(years)
        decade = int(m.group(1)) + (rng.choice((-1, 1)) if wrong else 0)
        return "year-decade", put(text, m.start(), m.end(), f"in the {decade}0s")
    if nums:
        m = rng.choice(nums)
        v = int(m.group().replace(",", ""))
        scale = 10 ** (len(str(v)) - 1)
        low = v // scale * scale * (10 if wrong else 1)
        said = f"more than {fmt(low, m.group())}" if low != v else \
            f"at least {fmt(low * 10 if wrong else v, m.group())}"
        return "number-bound", put(text, m.start(), m.end(), said)
    return None


PARAPHRASES = (reorder, voice, drop_clause, number_words, synonyms, contractions)


def paraphrase(text: str, rng: random.Random, *, at_most: int = 2) -> tuple[str, list[str]]:
    """``text`` said otherwise by up to ``at_most`` rules (random order), and the rules that
    applied; ``(text, [])`` when none does."""
    rules = list(PARAPHRASES)
    rng.shuffle(rules)
    done = []
    for rule in rules:
        if len(done) >= at_most:
            break
        new = rule(text, rng) if rule is synonyms else rule(text)
        if new and new != text:
            text, done = new, done + [rule.__name__]
    return text, done
