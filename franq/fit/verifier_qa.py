"""The verifier's question-answer pairs from nq-open (franq.fit.verifier_data's ``nq-qa`` and,
through franq.fit.verifier_declarative, ``nq-declarative``): per question, its gold answer
said against the gold passage (supported), another question's answer of the same type
(contradicted: random, or with a NearestPool one the sentence encoder finds close), and the
gold answer against another question's passage (not mentioned)."""
from __future__ import annotations

import gzip
import json
import random
from collections import defaultdict
from pathlib import Path

from franq.fit.verifier_data import sentences, window_around


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


def nq_qa_pairs(rows: list[dict], *, rng: random.Random, window_words: int, typed: dict, kinds: dict,
                **near) -> list[dict]:
    """Short-form statements "question answer" against the gold passage's window with the
    answer (``typed``, ``kinds``: :func:`answer_types` of ``rows``; ``near``: see :func:`qa_pairs`)."""
    return qa_pairs(rows, lambda r, answer: f"{r['question']} {answer}", rng=rng, window_words=window_words,
                    typed=typed, kinds=kinds, source="nq-qa", **near)


def _near_answer(near, typed: dict, kind: str, answer: str, premise: str, rng: random.Random) -> str | None:
    group = f"answer:{kind}:{id(typed)}"  # the answers of this row set's type (train and dev apart)
    if group not in near:
        near.add(group, [x["answers"][0] for x in typed[kind]])
    return near.nearest(group, answer, rng,
                        lambda o: o.lower() not in premise.lower() and answer.lower() not in o.lower())


def qa_pairs(rows: list[dict], say, *, rng: random.Random, window_words: int, typed: dict, kinds: dict,
             source: str, near=None, near_share: float = 0.0) -> list[dict]:
    """Per question, ``say(row, answer)`` (a claim, or None to leave the question out) with the
    gold answer against the gold passage's window that names it (supported), with another
    question's answer of the same type (contradicted; for ``near_share`` of the questions one
    of the answer's nearest in ``near``, a :class:`~franq.fit.verifier_near.NearestPool`), and
    the gold claim against another question's passage (not mentioned)."""
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
        hard = near is not None and near_share and rng.random() < near_share
        other = hard and _near_answer(near, typed, kinds[r["id"]], answer, premise, rng)
        if other:
            bad = say(r, other)
            if bad:
                out.append({"premise": premise, "claim": bad, "label": 1, "source": source, "how": "near-answer"})
        for _ in range(0 if other else 5):
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
