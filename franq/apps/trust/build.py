"""``franq trust build``: the conditions of paper 004's Table 1 from a QA set and a passage pool.

Input records (JSONL), one question each::

    {"id": ..., "question": ..., "answers": [gold, ...], "gold_passages": [{"title", "text"} | "text", ...]}

or nq-open's layout (``passage_ids`` + ``gold_position`` into the pool). The pool (JSONL,
``{"id", "title", "text"}``, optionally gzipped) supplies distractors: the passages most
similar to the question by BM25 that contain no gold answer (the paper's distractors are
"noisy but factually correct").

Conditions (configurable): poison ratio {0, 30%} without distractors (factuality), and
{0, 8, 20} distractors without poison (robustness and accountability share these). A
poisoned passage is a copy of a gold passage with every gold answer string replaced by
the question's fake answer. The fake answer is written by a chat model when one is given,
otherwise it is a same-type gold answer of another question (year for a year, number for a
number, capitalized name for a name, other phrase for a phrase), picked with the seed;
each record says which (``fake_source``). With ``g`` gold passages and poison ratio ``r``,
``k = max(1, round(r * g / (1 - r)))`` poisoned copies are added, so the achieved ratio
``k / (g + k)`` (recorded as ``poison_actual``) is the nearest one can get with whole
passages (one gold passage: 50%). Passages are shuffled with the seed; the 1-based
positions of the gold passages are recorded (``gold_ids``) for citation accuracy.

Deterministic for a seed: the same inputs and options give byte-identical output.
"""
from __future__ import annotations

import math
import random
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import franq
from franq.evaluation.metrics import normalize_answer
from franq.io import LIMITS, LimitError, iter_lines, load_json
from franq.apps.trust import prompts

STOP = frozenset("a an and are as at be by for from has he in is it its of on or she that the to was were "
                 "which who what when where why how with did does do".split())
_TOKEN = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class Condition:
    name: str
    poison: float
    distractors: int


def conditions(poison_ratios: Sequence[float] = (0.0, 0.3), distractor_counts: Sequence[int] = (0, 8, 20)
               ) -> list[Condition]:
    """Paper 004 Table 1: each poison ratio without distractors, each distractor count without
    poison; the clean condition (no poison, no distractors) once."""
    out: dict[tuple[float, int], Condition] = {}
    for r in poison_ratios:
        if not 0.0 <= r < 1.0:
            raise franq.InputError(f"poison ratio: expected a number in [0, 1), got {r}")
        copies = round(r / (1 - r))  # poisoned copies per gold passage: 0.9999999 would ask for ten million
        if copies + 1 > LIMITS["passages"].default:
            raise LimitError(f"poison ratio {r}: needs {copies} poisoned copies of each gold passage, over the limit "
                             f"of {LIMITS['passages'].default} passages per answer; give a ratio up to "
                             f"{1 - 1 / LIMITS['passages'].default:.3f}")
        out.setdefault((r, 0), Condition(f"p{round(r * 100)}-d0", r, 0))
    for d in distractor_counts:
        if not 0 <= d < LIMITS["passages"].default:
            raise franq.InputError(f"distractor count: expected 0 to {LIMITS['passages'].default - 1} (the limit of "
                                   f"passages per answer), got {d}")
        out.setdefault((0.0, d), Condition(f"p0-d{d}", 0.0, d))
    return list(out.values())


# ---------------------------------------------------------------- reading
def read_jsonl(path: str) -> list[dict]:
    """The records of a JSONL file (``.gz``: gzip), read within franq's limits
    (:func:`franq.io.iter_lines`: each line at most ``record_bytes``, at most
    ``decompressed_bytes`` out of a gzip file, devices refused, UTF-8 checked, strict JSON)."""
    out = []
    for n, text, error in iter_lines(path, what="input"):
        if error:
            raise franq.InputError(f"{path}, line {n}: {error}")
        if text.strip():
            try:
                out.append(load_json(text, ""))
            except franq.InputError as exc:
                reason = str(exc).replace("not valid JSON", "invalid JSON", 1)
                raise franq.InputError(f"{path}, line {n}: {reason}") from None
    return out


def _passage(p, where: str) -> dict:
    if isinstance(p, str):
        return {"title": "", "text": p}
    if isinstance(p, dict) and isinstance(p.get("text"), str) and isinstance(p.get("title") or "", str):
        return {"title": p.get("title") or "", "text": p["text"]}
    raise franq.InputError(f"{where}: a passage must be a string or an object with a 'text' string")


def _is_id(v) -> bool:
    return isinstance(v, str) or (isinstance(v, int) and not isinstance(v, bool))


def questions(records: Iterable[dict], pool: dict) -> list[dict]:
    """Validated questions: ``{id, question, answers, gold}`` (gold = passages)."""
    out = []
    for n, r in enumerate(records, 1):
        where = f"record {n}" + (f" (id {r.get('id')})" if isinstance(r, dict) and "id" in r else "")
        if not isinstance(r, dict):
            raise franq.InputError(f"{where}: expected a JSON object")
        q, answers = r.get("question"), r.get("answers")
        if not isinstance(q, str) or not q.strip():
            raise franq.InputError(f"{where}: field 'question' must be a non-empty string")
        if not isinstance(answers, list) or not answers or not all(isinstance(a, str) and a.strip() for a in answers):
            raise franq.InputError(f"{where}: field 'answers' must be a non-empty list of strings")
        if "gold_passages" in r:
            if not isinstance(r["gold_passages"], list):
                raise franq.InputError(f"{where}: field 'gold_passages' must be a list of passages, "
                                       f"got {type(r['gold_passages']).__name__}")
            gold = [_passage(p, f"{where}, field 'gold_passages[{i}]'") for i, p in enumerate(r["gold_passages"])]
        elif "passage_ids" in r and "gold_position" in r:
            ids, at = r["passage_ids"], r["gold_position"]
            if not isinstance(ids, list) or not all(_is_id(i) for i in ids):
                raise franq.InputError(f"{where}: field 'passage_ids' must be a list of passage ids (strings or "
                                       f"integers)")
            if not (isinstance(at, int) and not isinstance(at, bool) and 0 <= at < len(ids)):
                raise franq.InputError(f"{where}: field 'gold_position' must be an index into 'passage_ids' "
                                       f"(0 to {len(ids) - 1}), got {at!r:.30}")
            pid = ids[at]
            if pid not in pool:
                raise franq.InputError(f"{where}: gold passage id {pid!r:.60} is not in the pool")
            gold = [pool[pid]]
        else:
            raise franq.InputError(f"{where}: needs 'gold_passages' (or nq-open's 'passage_ids' + 'gold_position')")
        if not gold:
            raise franq.InputError(f"{where}: field 'gold_passages' is empty")
        out.append({"id": str(r.get("id", n)), "question": q, "answers": answers, "gold": gold})
    return out


# ---------------------------------------------------------------- distractors
def tokens(text: str) -> list[str]:
    return [t for t in _TOKEN.findall(text.lower()) if t not in STOP]


class BM25:
    """Okapi BM25 (k1 = 1.5, b = 0.75) over ``title text`` of each pool passage."""

    def __init__(self, docs: Sequence[str], k1: float = 1.5, b: float = 0.75):
        self.tf = [Counter(tokens(d)) for d in docs]
        self.len = [sum(c.values()) for c in self.tf]
        self.avg = sum(self.len) / max(len(docs), 1)
        df = Counter(t for c in self.tf for t in c)
        n = len(docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        self.k1, self.b = k1, b

    def ranked(self, query: str) -> list[int]:
        q = set(tokens(query))
        scores = []
        for i, (tf, ln) in enumerate(zip(self.tf, self.len)):
            s = 0.0
            for t in q & tf.keys():
                f = tf[t]
                s += self.idf[t] * f * (self.k1 + 1) / (f + self.k1 * (1 - self.b + self.b * ln / self.avg))
            scores.append((-s, i))
        return [i for _, i in sorted(scores)]


def contains_answer(text: str, answers: Sequence[str]) -> bool:
    norm = f" {normalize_answer(text)} "
    return any(f" {normalize_answer(a)} " in norm for a in answers if normalize_answer(a))


# ---------------------------------------------------------------- fake answers
def answer_type(answer: str) -> str:
    a = answer.strip()
    if re.fullmatch(r"(1[0-9]|20)\d\d", a):
        return "year"
    if re.search(r"\d", a):
        return "number"
    words = a.split()
    if words and all(w[:1].isupper() for w in words if w.isalpha() and len(w) > 3):
        return "name"
    return "phrase"


def fake_from_others(qs: Sequence[dict], seed: int) -> list[str]:
    """For each question, a same-type gold answer of another question that matches none of
    its own gold answers (any other question's answer if no same type is left)."""
    rng = random.Random(seed)
    by_type: dict[str, list[str]] = {}
    for q in qs:
        by_type.setdefault(answer_type(q["answers"][0]), []).append(q["answers"][0])
    every = [q["answers"][0] for q in qs]
    fakes = []
    for q in qs:
        own = {normalize_answer(a) for a in q["answers"]}
        for candidates in (by_type[answer_type(q["answers"][0])], every):
            pick = [c for c in candidates if normalize_answer(c) not in own and not contains_answer(c, q["answers"])]
            if pick:
                fakes.append(rng.choice(pick))
                break
        else:
            raise franq.InputError(f"question {q['id']}: no other question's answer can serve as its fake answer")
    return fakes


def fake_from_chat(qs: Sequence[dict], chat) -> list[str]:
    """Fake answers written by a chat model (``chat.complete(messages) -> text``)."""
    out = []
    for q in qs:
        text = chat(prompts.TRUST_FAKE_ANSWER.format(question=q["question"], answer=q["answers"][0]))
        fake = text.strip().splitlines()[0].strip(" .\"'") if text.strip() else ""
        if not fake or contains_answer(fake, q["answers"]):
            raise franq.InputError(f"question {q['id']}: the chat model's fake answer {fake!r} is empty or "
                                   "repeats a gold answer")
        out.append(fake)
    return out


def poison(text: str, answers: Sequence[str], fake: str) -> str | None:
    """``text`` with every gold answer string (longest first, case-insensitive, whole words)
    replaced by ``fake``; ``None`` when no gold answer occurs in it."""
    out, hits = text, 0
    for a in sorted({a.strip() for a in answers if a.strip()}, key=len, reverse=True):
        out, n = re.subn(rf"(?<!\w){re.escape(a)}(?!\w)", fake, out, flags=re.IGNORECASE)
        hits += n
    return out if hits else None


# ---------------------------------------------------------------- the build
def build(records: Sequence[dict], pool_records: Sequence[dict], *, conds: Sequence[Condition], seed: int = 0,
          limit: int | None = None, fake_writer=None, fake_source: str = "other-question",
          max_passage_words: int | None = None) -> tuple[list[dict], dict]:
    """One output record per (question, condition), and a summary of what was built.

    ``fake_writer(questions) -> fake answers`` replaces the default (another question's
    answer of the same type). ``max_passage_words`` (optional) cuts every passage to that many words (a gold passage
    to a window around its first gold answer), to bound the context of small models."""
    pool = {}
    for n, p in enumerate(pool_records, 1):
        if not isinstance(p, dict) or not _is_id(p.get("id")):
            raise franq.InputError(f"pool record {n}: needs an 'id' (a string or an integer), got "
                                   f"{type(p.get('id') if isinstance(p, dict) else p).__name__}")
        pool[p["id"]] = _passage(p, f"pool record {n} (id {p['id']!r:.40})")
    qs = questions(records, pool)
    for q in qs:
        q["full_gold"], q["gold"] = q["gold"], [_cut(g, q["answers"], max_passage_words) for g in q["gold"]]
    skipped = {q["id"] for q in qs if not any(poison(g["text"], q["answers"], "X") for g in q["gold"])}
    qs = [q for q in qs if q["id"] not in skipped]
    qs = random.Random(seed).sample(qs, len(qs))
    if limit is not None:
        qs = qs[:limit]
    fakes = list(fake_writer(qs)) if fake_writer is not None else fake_from_others(qs, seed)
    max_d = max((c.distractors for c in conds), default=0)
    ids = list(pool)
    bm25 = BM25([f"{pool[i]['title']} {pool[i]['text']}" for i in ids]) if max_d else None
    out = []
    for q, fake in zip(qs, fakes):
        gold = q["gold"]
        gold_texts = {g["text"] for g in q["full_gold"]}
        distractors = []
        if bm25:
            for i in bm25.ranked(q["question"]):
                p = pool[ids[i]]
                if p["text"] in gold_texts or contains_answer(f"{p['title']} {p['text']}", q["answers"]):
                    continue
                distractors.append(_cut(p, (), max_passage_words))
                if len(distractors) == max_d:
                    break
        poisoned = [dict(g, text=t) for g in gold if (t := poison(g["text"], q["answers"], fake))]
        for c in conds:
            rng = random.Random(f"{seed}:{q['id']}:{c.name}")
            k = max(1, round(c.poison * len(gold) / (1 - c.poison))) if c.poison > 0 else 0
            if len(gold) + k + c.distractors > LIMITS["passages"].default:
                raise LimitError(f"question {q['id']}, condition {c.name}: {len(gold) + k + c.distractors} passages, "
                                 f"over the limit of {LIMITS['passages'].default} passages per answer")
            items = [("gold", g) for g in gold] + [("poison", poisoned[j % len(poisoned)]) for j in range(k)]
            items += [("distractor", d) for d in distractors[:c.distractors]]
            rng.shuffle(items)
            out.append({
                "id": q["id"], "condition": c.name, "poison_ratio": c.poison, "distractors": c.distractors,
                "question": q["question"], "answers": q["answers"], "fake_answer": fake, "fake_source": fake_source,
                "poison_actual": round(k / (len(gold) + k), 4), "seed": seed,
                "passages": [{"title": p["title"], "text": p["text"], "kind": kind} for kind, p in items],
                "gold_ids": [i for i, (kind, _) in enumerate(items, 1) if kind == "gold"],
                "poison_ids": [i for i, (kind, _) in enumerate(items, 1) if kind == "poison"],
            })
        if len(distractors) < max_d:
            raise franq.InputError(f"question {q['id']}: the pool has only {len(distractors)} usable distractors; "
                                   f"{max_d} asked")
    summary = {"questions": len(qs), "conditions": [c.name for c in conds], "records": len(out),
               "skipped_no_answer_in_gold": len(skipped), "fake_source": fake_source, "seed": seed,
               "poison_actual": {c.name: sorted({r["poison_actual"] for r in out if r["condition"] == c.name})
                                 for c in conds}}
    return out, summary


def _cut(p: dict, answers: Sequence[str], max_words: int | None) -> dict:
    words = p["text"].split()
    if not max_words or len(words) <= max_words:
        return p
    start = 0
    norm = [normalize_answer(w) for w in words]
    for a in answers:
        first = normalize_answer(a).split()[:1]
        if first and first[0] in norm:
            start = max(0, min(norm.index(first[0]) - max_words // 3, len(words) - max_words))
            break
    return {"title": p["title"], "text": " ".join(words[start:start + max_words])}
