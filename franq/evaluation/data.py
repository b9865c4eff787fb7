"""Benchmark data as built by ``scripts/build_nq_open.py`` and ``scripts/build_expertqa.py``,
and where the raw public files live (:func:`raw_data_dir`).

nq-open (short form): ``passages.jsonl.gz`` + ``{train,test}.jsonl``; each question has a
clean passage list (gold + BM25 distractors) and a corrupted one (for half of the
questions the gold passage is replaced by a distractor; for the other half it is the same
list, so their generations are shared). ExpertQA (long form): franq input records.
"""
from __future__ import annotations

import gzip
import json
import os
import random
from dataclasses import dataclass
from pathlib import Path

from franq.io import Example, parse_example
from franq.types import Passage

VARIANTS = ("clean", "corrupted")
RAW_DATA_ENV = "FRANQ_RAW_DATA"
"""The environment variable naming the folder of raw public files (shared/data/raw: ExpertQA,
nq-open-oracle, WiCE, SNLI), read by the dataset builders, the fitting commands and benchmarks."""


def raw_data_dir(path: str | os.PathLike | None = None) -> Path:
    """The folder of raw public data: ``path`` when given (a command's ``--raw``), else
    ``$FRANQ_RAW_DATA``; an error saying which to set when neither names an existing folder."""
    given = path if path is not None else os.environ.get(RAW_DATA_ENV)
    if not given:
        raise FileNotFoundError(f"raw data: pass --raw DIR or set {RAW_DATA_ENV} to the folder holding the raw "
                                "public files (ExpertQA, nq-open-oracle, WiCE, SNLI; see shared/data/SOURCES.md)")
    folder = Path(given).expanduser()
    if not folder.is_dir():
        raise FileNotFoundError(f"raw data: {folder} is not a folder (from {'--raw' if path is not None else RAW_DATA_ENV})")
    return folder


@dataclass(frozen=True)
class ShortItem:
    """One nq-open question with the passages of one variant."""

    id: str
    question: str
    answers: tuple[str, ...]
    passage_ids: tuple[int, ...]
    passages: tuple[Passage, ...]
    corrupted: bool  # the gold passage was replaced (corrupted variant only)


def load_nq_open(root: str | Path, split: str, variant: str = "clean", *, limit: int | None = None) -> list[ShortItem]:
    if variant not in VARIANTS:
        raise ValueError(f"variant: expected one of {list(VARIANTS)}, got {variant!r}")
    root = Path(root)
    with gzip.open(root / "passages.jsonl.gz", "rt", encoding="utf-8") as f:
        pool = {p["id"]: Passage(p["text"], p["title"]) for p in map(json.loads, f)}
    items = []
    with open(root / f"{split}.jsonl", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            corrupted = variant == "corrupted" and r["corrupted"]
            ids = tuple(r["corrupted_passage_ids"] if variant == "corrupted" else r["passage_ids"])
            items.append(ShortItem(r["id"], r["question"], tuple(r["answers"]), ids,
                                   tuple(pool[i] for i in ids), corrupted))
            if limit is not None and len(items) >= limit:
                break
    return items


def load_examples(path: str | Path) -> list[tuple[str, Example, dict]]:
    """franq input records (with claims and labels): ``(id, Example, raw record)``."""
    with open(path, encoding="utf-8") as f:
        return [(rec["id"], parse_example(rec), rec) for rec in map(json.loads, f)]


def _expertqa_test_and_train_questions(datasets: str | Path) -> tuple[list[dict], set[str]]:
    folder = Path(datasets) / "expertqa"
    with open(folder / "train.jsonl", encoding="utf-8") as f:
        questions = {json.loads(line)["question"] for line in f}
    with open(folder / "test.jsonl", encoding="utf-8") as f:
        return [json.loads(line) for line in f], questions


def expertqa_seen_in_train(datasets: str | Path) -> set[str]:
    """Ids of the ExpertQA test records (``expertqa/test.jsonl``, from rand_test) whose question
    is also in ``train.jsonl``: ExpertQA's domain_val shares 12 of rand_test's questions (the
    same answers and labels), and franq fits on train. Held-out numbers leave them out
    (:func:`expertqa_held_out`); the files keep them, so the committed generations stay valid."""
    test, train_questions = _expertqa_test_and_train_questions(datasets)
    return {rec["id"] for rec in test if rec["question"] in train_questions}


def expertqa_held_out(datasets: str | Path) -> list[dict]:
    """The ExpertQA test records no fit has seen, in file order (205 of 217)."""
    test, train_questions = _expertqa_test_and_train_questions(datasets)
    return [rec for rec in test if rec["question"] not in train_questions]


def sample_records(source: str | Path, target: str | Path, *, n: int, seed: int = 0) -> str:
    """Write a seeded sample of the JSONL lines of ``source`` to ``target``: the lines shuffled with
    ``random.Random(seed)``, the first ``n`` kept (how the calibration training sample was drawn).
    Returns the line saying what was written."""
    rows, total = seeded_lines(source, n, seed=seed)
    with open(target, "w", encoding="utf-8") as f:
        f.write("\n".join(rows) + "\n")
    return f"wrote {len(rows)} of {total} records to {target}"


def seeded_lines(source: str | Path, n: int, *, seed: int = 0) -> tuple[list[str], int]:
    """The first ``n`` lines of ``source`` after shuffling them with ``random.Random(seed)``
    (the benchmark's ExpertQA train sample, the calibration sample), and how many it has."""
    with open(source, encoding="utf-8") as f:
        rows = f.read().splitlines()
    random.Random(seed).shuffle(rows)
    return rows[:n], len(rows)


PASSAGE_ANSWERS = "passage-answers.json.gz"
"""In the built nq-open folder: what :func:`passage_answers` reads (written from the raw file
by scripts/build_nq_open.py), so the distractor pairs need no raw data."""


def passage_answers(nq: Path, raw: str | os.PathLike | None = None) -> dict[int, list[str]]:
    """Pool passage id (``NQ/passages.jsonl.gz``, the built nq-open folder) -> the gold answers
    of the raw nq-open question whose gold passage it is: from ``NQ/passage-answers.json.gz``
    when the folder has it, else from ``RAW/nq-open-oracle.jsonl.gz`` (``raw``: --raw or
    ``$FRANQ_RAW_DATA``)."""
    committed = Path(nq) / PASSAGE_ANSWERS
    if committed.is_file():
        with gzip.open(committed, "rt", encoding="utf-8") as f:
            return {int(k): v for k, v in json.load(f).items()}
    return raw_passage_answers(Path(nq), raw_data_dir(raw))


def write_passage_answers(nq: Path, raw: Path) -> int:
    """Write ``NQ/passage-answers.json.gz`` from the raw file (byte-stable: sorted ids, no
    timestamp); returns how many passages it names."""
    owners = raw_passage_answers(Path(nq), Path(raw))
    text = json.dumps({str(k): owners[k] for k in sorted(owners)}, ensure_ascii=False, separators=(",", ":"))
    with open(Path(nq) / PASSAGE_ANSWERS, "wb") as f, gzip.GzipFile(fileobj=f, mode="wb", mtime=0, filename="") as g:
        g.write(text.encode("utf-8"))
    return len(owners)


def raw_passage_answers(nq: Path, raw: Path) -> dict[int, list[str]]:
    """:func:`passage_answers` from the raw file (``RAW/nq-open-oracle.jsonl.gz``)."""
    by_text: dict[tuple[str, str], list[str]] = {}
    with gzip.open(raw / "nq-open-oracle.jsonl.gz", "rt", encoding="utf-8") as f:
        for r in map(json.loads, f):
            c = r["ctxs"][0]
            by_text.setdefault((c["title"], c["text"]), list(r["answers"]))
    with gzip.open(nq / "passages.jsonl.gz", "rt", encoding="utf-8") as f:
        return {p["id"]: by_text[p["title"], p["text"]] for p in map(json.loads, f) if (p["title"], p["text"]) in by_text}
