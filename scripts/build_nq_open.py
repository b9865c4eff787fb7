"""Build the short-form benchmark (nq-open-oracle with BM25 distractors) from the raw file.

    python scripts/build_nq_open.py [--raw DIR (default: $FRANQ_RAW_DATA)] [--out datasets/nq-open] \
        [--train 500 --test 1000 --k 5 --seed 0]

Each question gets k passages: its gold passage plus k - 1 distractors retrieved by BM25
(question as the query) from the *other* questions' gold passages, in shuffled positions.
The corrupted-retrieval variant (FRANQ paper appendix A.1) replaces the gold passage of a
seeded half of the questions by the next BM25 distractor, keeping its position. Writes
``passages.jsonl.gz`` (the passage pool, by id), ``train.jsonl`` and ``test.jsonl``
(questions with passage ids for both variants) and ``passage-answers.json.gz`` (each pool
passage's question's gold answers: the distractor pairs' wrong answers). Deterministic; see
the dataset card.
"""
from __future__ import annotations

import argparse
import gzip
import json
import math
import random
import re
from collections import Counter
from pathlib import Path

from franq.equivalence.normalized import normalize_answer
from franq.evaluation.data import raw_data_dir, write_passage_answers

TOKEN = re.compile(r"[a-z0-9]+")
STOP = frozenset("a an the of in on at to for from by with and or is are was were be been who what when "
                 "where which why how did does do it its this that as de".split())


def tokens(text: str) -> list[str]:
    return [t for t in TOKEN.findall(text.lower()) if t not in STOP]


class BM25:
    """Okapi BM25 (k1 = 1.5, b = 0.75) over a fixed list of documents."""

    def __init__(self, docs: list[list[str]], k1: float = 1.5, b: float = 0.75):
        self.k1, self.b = k1, b
        self.tf = [Counter(d) for d in docs]
        self.len = [len(d) for d in docs]
        self.avg = sum(self.len) / len(docs)
        df = Counter(t for d in self.tf for t in d)
        n = len(docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        self.postings: dict[str, list[int]] = {}
        for i, d in enumerate(self.tf):
            for t in d:
                self.postings.setdefault(t, []).append(i)

    def top(self, query: list[str], k: int, exclude: set[int]) -> list[int]:
        scores: dict[int, float] = {}
        for t in set(query):
            idf = self.idf.get(t)
            if idf is None:
                continue
            for i in self.postings[t]:
                f = self.tf[i][t]
                norm = f + self.k1 * (1 - self.b + self.b * self.len[i] / self.avg)
                scores[i] = scores.get(i, 0.0) + idf * f * (self.k1 + 1) / norm
        ranked = sorted((i for i in scores if i not in exclude), key=lambda i: (-scores[i], i))
        return ranked[:k]


def has_answer(text: str, answers: list[str]) -> bool:
    norm = f" {normalize_answer(text)} "
    return any(f" {normalize_answer(a)} " in norm for a in answers if normalize_answer(a))


def build(raw: Path, out: Path, n_train: int, n_test: int, k: int, seed: int) -> dict:
    rows = [json.loads(line) for line in gzip.open(raw / "nq-open-oracle.jsonl.gz", "rt", encoding="utf-8")]
    # one pool entry per distinct passage text (some questions share a gold passage)
    pool: list[dict] = []
    pool_id: dict[str, int] = {}
    gold: list[int] = []
    for r in rows:
        ctx = r["ctxs"][0]
        key = ctx["title"] + "\n" + ctx["text"]
        if key not in pool_id:
            pool_id[key] = len(pool)
            pool.append({"id": len(pool), "title": ctx["title"], "text": ctx["text"]})
        gold.append(pool_id[key])
    index = BM25([tokens(p["title"] + " " + p["text"]) for p in pool])
    rng = random.Random(seed)
    order = list(range(len(rows)))
    rng.shuffle(order)
    if n_train + n_test > len(rows):
        raise SystemExit(f"--train + --test = {n_train + n_test} exceeds the {len(rows)} questions")
    splits = {"train": order[:n_train], "test": order[n_train:n_train + n_test]}
    stats: dict = {"pool": len(pool)}
    used: set[int] = set()
    for split, idx in splits.items():
        corrupt = set(rng.sample(idx, len(idx) // 2))
        records, distractor_hits = [], 0
        for q in idx:
            r = rows[q]
            got = index.top(tokens(r["question"]), k, exclude={gold[q]})
            while len(got) < k:  # a question with too few matching words: random fill
                pick = rng.randrange(len(pool))
                if pick != gold[q] and pick not in got:
                    got.append(pick)
            distractors, spare = got[:k - 1], got[k - 1]
            passage_ids = [gold[q], *distractors]
            rng.shuffle(passage_ids)
            position = passage_ids.index(gold[q])
            corrupted = list(passage_ids)
            if q in corrupt:
                corrupted[position] = spare
            distractor_hits += sum(has_answer(pool[i]["text"], r["answers"]) for i in distractors)
            used.update(passage_ids + corrupted)
            records.append({"id": f"nq-{q}", "question": r["question"], "answers": r["answers"],
                            "passage_ids": passage_ids, "gold_position": position,
                            "corrupted": q in corrupt, "corrupted_passage_ids": corrupted})
        out.mkdir(parents=True, exist_ok=True)
        with open(out / f"{split}.jsonl", "w", encoding="utf-8") as f:
            for rec in records:
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")
        stats[split] = {"questions": len(records), "corrupted": len(corrupt),
                        "distractors_with_answer": distractor_hits, "distractors": len(records) * (k - 1)}
    with gzip.open(out / "passages.jsonl.gz", "wt", encoding="utf-8", compresslevel=9) as f:
        for p in pool:
            if p["id"] in used:
                f.write(json.dumps(p, ensure_ascii=False) + "\n")
    stats["passages_written"] = len(used)
    stats["passage_answers"] = write_passage_answers(out, raw)  # what the distractor pairs read
    return stats


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--raw", type=Path, default=None, help="raw data folder (default: $FRANQ_RAW_DATA)")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "datasets" / "nq-open")
    ap.add_argument("--train", type=int, default=500)
    ap.add_argument("--test", type=int, default=1000)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    print(json.dumps(build(raw_data_dir(a.raw), a.out, a.train, a.test, a.k, a.seed), indent=1))


if __name__ == "__main__":
    main()
