"""The verifier's question-answer pairs from nq-open (``nq-qa`` and ``nq-declarative`` of
:func:`franq.fit.verifier.data.build`): per question, its gold answer said against the gold
passage (supported), another question's answer of the same type (contradicted), and the gold
answer against another question's passage (not mentioned).

``nq-qa`` says the question and answer as "question answer". ``nq-declarative`` says them as
a statement ("when did the berlin wall fall" + "1989" -> "The berlin wall fell in 1989."). The
synthetic contradictions (a passage sentence with one span swapped) are near-copies of the
premise; these are not: the statement is worded as the question is, the passage says the
fact its own way, and the contradicted ones name another question's answer of the same type
("The berlin wall fell in 1975."), as an answer that gets a fact wrong does. Rules cover the
common question forms (who / what / when / where / how many); a question no rule reads is
left out.
"""
from __future__ import annotations

import gzip
import json
import random
import re
from collections import defaultdict
from pathlib import Path

from franq.fit.verifier.data import sentences, window_around


def nq_rows(raw: Path) -> list[dict]:
    rows = []
    for i, line in enumerate(gzip.open(raw / "nq-open-oracle.jsonl.gz", "rt", encoding="utf-8")):
        r = json.loads(line)
        gold = next((c for c in r["ctxs"] if c.get("isgold")), r["ctxs"][0])
        rows.append({"id": f"nq-{i}", "question": r["question"], "answers": r["answers"], "passage": gold["text"]})
    return rows


def answer_types(rows: list[dict], nlp) -> tuple[dict[str, list[dict]], dict[str, str]]:
    """Each question's gold answer typed (spaCy's entity label, else NUM / CAP / LOW):
    ``(rows by type, type by row id)``, where a wrong answer of the same type is drawn from."""
    typed = defaultdict(list)
    kinds = {}
    for r, doc in zip(rows, nlp.pipe([r["answers"][0] for r in rows], batch_size=128)):
        a = r["answers"][0]
        ents = doc.ents
        kinds[r["id"]] = (ents[0].label_ if len(ents) == 1 and len(ents[0].text) >= len(a) - 2
                          else "NUM" if any(ch.isdigit() for ch in a) else "CAP" if a[:1].isupper() else "LOW")
        typed[kinds[r["id"]]].append(r)
    return typed, kinds


def nq_qa_pairs(rows: list[dict], *, rng: random.Random, window_words: int, typed: dict, kinds: dict) -> list[dict]:
    """Short-form statements "question answer" against the gold passage's window with the
    answer (``typed``, ``kinds``: :func:`answer_types` of ``rows``)."""
    return qa_pairs(rows, lambda r, answer: f"{r['question']} {answer}", rng=rng, window_words=window_words,
                    typed=typed, kinds=kinds, source="nq-qa")


def qa_pairs(rows: list[dict], say, *, rng: random.Random, window_words: int, typed: dict, kinds: dict,
             source: str) -> list[dict]:
    """Per question, ``say(row, answer)`` (a claim, or None to leave the question out) with the
    gold answer against the gold passage's window that names it (supported), with another
    question's answer of the same type (contradicted), and the gold claim against another
    question's passage (not mentioned)."""
    out = []
    for r in rows:
        answer = r["answers"][0]
        claim = say(r, answer)
        if claim is None:
            continue
        sents = sentences(r["passage"])
        hit = [k for k, s in enumerate(sents) if any(a.lower() in s.lower() for a in r["answers"])]
        if not hit:
            continue
        i, j = window_around(sents, hit[0], window_words, rng)
        premise = " ".join(sents[i:j])
        out.append({"premise": premise, "claim": claim, "label": 0, "source": source, "how": "gold"})
        pool = [x for x in typed[kinds[r["id"]]] if x is not r]
        for _ in range(5):
            other = rng.choice(pool)["answers"][0] if pool else None
            if other and other.lower() not in premise.lower() and answer.lower() not in other.lower():
                bad = say(r, other)
                if bad:
                    out.append({"premise": premise, "claim": bad, "label": 1, "source": source,
                                "how": "wrong-answer"})
                break
        unrelated = rng.choice(rows)
        if unrelated is not r and not any(a.lower() in unrelated["passage"].lower() for a in r["answers"]):
            us = sentences(unrelated["passage"])
            a, b = window_around(us, rng.randrange(len(us)), window_words, rng)
            out.append({"premise": " ".join(us[a:b]), "claim": claim, "label": 2, "source": source,
                        "how": "other-passage"})
    return out


# past tense of the irregular verbs nq-open's "when / where did ..." questions use
IRREGULAR = dict(pair.split(":") for pair in (
    "be:was become:became begin:began break:broke bring:brought build:built buy:bought catch:caught "
    "choose:chose come:came do:did draw:drew drink:drank drive:drove eat:ate fall:fell feel:felt "
    "fight:fought find:found fly:flew forget:forgot freeze:froze get:got give:gave go:went grow:grew "
    "hang:hung have:had hear:heard hide:hid hold:held keep:kept know:knew lay:laid lead:led leave:left "
    "lose:lost make:made mean:meant meet:met pay:paid put:put read:read ride:rode ring:rang rise:rose "
    "run:ran say:said see:saw sell:sold send:sent set:set shake:shook shoot:shot shut:shut sing:sang "
    "sink:sank sit:sat sleep:slept speak:spoke spend:spent stand:stood steal:stole strike:struck "
    "swim:swam take:took teach:taught tear:tore tell:told think:thought throw:threw understand:understood "
    "wake:woke wear:wore win:won write:wrote split:split hit:hit cut:cut let:let").split())
WH_VERB = re.compile(r"^(who|what|which)\s+(is|was|are|were|has|had|does|did|do)?\s*", re.I)
AUX = {"is", "was", "are", "were"}
PREPOSITION = re.compile(r"^(in|on|at|from|near|beneath|under|above|below|between|during|by|within|inside|outside|"
                         r"along|across|around)\b", re.I)


def _past(verb: str) -> str:
    if verb in IRREGULAR:
        return IRREGULAR[verb]
    if verb.endswith("e"):
        return verb + "d"
    if re.search(r"[^aeiou]y$", verb):
        return verb[:-1] + "ied"
    return verb + "ed"


def _third(verb: str) -> str:
    if verb in ("have", "do", "go"):
        return {"have": "has", "do": "does", "go": "goes"}[verb]
    if re.search(r"(s|sh|ch|x|z|o)$", verb):
        return verb + "es"
    if re.search(r"[^aeiou]y$", verb):
        return verb[:-1] + "ies"
    return verb + "s"


def _finish(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip().rstrip("?").strip()
    return text[:1].upper() + text[1:] + "."


def statement(question: str, tags: list[tuple[str, str]], answer: str) -> str | None:
    """The question said as a statement with ``answer`` in it, or None where no rule reads
    it. ``tags``: the question's (word, Penn tag) pairs (spaCy's tagger)."""
    words = [w for w, _ in tags]
    if len(words) < 3:
        return None
    first, second = words[0].lower(), words[1].lower()
    rest = " ".join(words[2:])
    prep = "on" if re.search(r"\b(january|february|march|april|may|june|july|august|september|october|"
                             r"november|december)\s+\d{1,2}\b(?!\d)", answer.lower()) or re.match(r"\d{1,2}\s+[a-z]", answer.lower()) \
        else "in"
    if first in ("when", "where"):
        where = "in" if first == "where" else prep
        if PREPOSITION.match(answer):  # "beneath the liver", "in 1989": the answer brings its own
            where = ""
        if second in ("did", "does", "do"):  # when did S V O -> S V-ed O in A
            verbs = [k for k, (_, t) in enumerate(tags) if k >= 3 and t in ("VB", "VBP")]
            if not verbs:
                return None
            k = verbs[0]
            subj, verb, obj = " ".join(words[2:k]), words[k].lower(), " ".join(words[k + 1:])
            form = _past(verb) if second == "did" else _third(verb) if second == "does" else verb
            return _finish(f"{subj} {form} {obj} {where} {answer}")
        if second in AUX:  # when was S built -> S was built in A; where is S -> S is in A
            parts = [k for k, (_, t) in enumerate(tags)  # the participle ends the question, near enough
                     if k >= 3 and t in ("VBN", "VBG") and k >= len(tags) - 3]
            if parts:
                k = parts[0]
                return _finish(f"{' '.join(words[2:k])} {second} {' '.join(words[k:])} {where} {answer}")
            if first == "where":
                return _finish(f"{rest} {second} {where} {answer}")
        return None
    if first == "who":
        if second in AUX or second in ("has", "had"):
            return _finish(f"{answer} {second} {rest}")
        if tags[1][1] in ("VBD", "VBZ", "VBP"):  # who wrote X -> A wrote X
            return _finish(f"{answer} {' '.join(words[1:])}")
        return None
    if first in ("what", "which") and second in AUX:  # what is the capital of X -> A is the capital of X
        return _finish(f"{answer} {second} {rest}")
    if first in ("what", "which") and tags[1][1].startswith("NN") and len(tags) > 2 and tags[2][1] in ("VBD", "VBZ"):
        return _finish(f"{answer} {' '.join(words[2:])}")  # what team won X -> A won X
    if first == "how" and second in ("many", "much") and len(words) > 3:  # how many X are in Y -> N X are in Y
        noun = words[2].lower()
        said = answer if answer.lower().endswith(noun) else f"{answer} {words[2]}"
        return _finish(f"{said} {' '.join(words[3:])}")
    return None


def declarative_pairs(rows: list[dict], *, nlp, rng: random.Random, window_words: int, typed: dict, kinds: dict,
                      source: str = "nq-declarative") -> list[dict]:
    """Per question that a rule reads and whose gold passage holds the answer: the statement
    with the gold answer (supported), with another question's answer of the same type
    (contradicted), and the gold statement against another question's passage (not
    mentioned), each against a window of whole sentences around the answer."""
    tags = {r["id"]: [(t.text, t.tag_) for t in doc]
            for r, doc in zip(rows, nlp.pipe([r["question"] for r in rows], batch_size=128))}
    return qa_pairs(rows, lambda r, answer: statement(r["question"], tags[r["id"]], answer), rng=rng,
                    window_words=window_words, typed=typed, kinds=kinds, source=source)
