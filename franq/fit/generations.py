"""The committed data the shipped artefacts are fitted on: the benchmark datasets
(``datasets/expertqa``, ``datasets/nq-open``, ``datasets/wice``) and the cached model
passes in ``datasets/generations`` (written by the benchmark's ``observe`` step), read
from a source checkout. A pip install has no ``datasets/``: pass the checkout's folder."""
from __future__ import annotations

import gzip
import json
from functools import lru_cache
from pathlib import Path

from franq.errors import InputError
from franq.evaluation.common import read_records, seeded_lines, slug


def datasets_dir(path: str | Path | None = None) -> Path:
    """The ``datasets/`` folder: ``path`` when given, else the one beside the ``franq``
    package in a source checkout; an error naming what to pass when there is none."""
    folder = Path(path) if path is not None else Path(__file__).resolve().parents[2] / "datasets"
    if not (folder / "generations").is_dir():
        raise InputError(f"datasets: {folder} has no generations/ folder; pass --datasets DIR, the datasets/ "
                         "folder of a franq source checkout")
    return folder


@lru_cache(maxsize=8)
def snapshot(datasets: Path, name: str) -> dict[str, dict]:
    """A committed observe cache (``generations/<name>.gz``), by record id."""
    path = datasets / "generations" / f"{name}.gz"
    if not path.is_file():
        raise InputError(f"{path}: no such committed generations file")
    return read_records(path, gzip.open)


def read_jsonl(path: str | Path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def seeded_sample(path: str | Path, n: int, *, seed: int = 0) -> list[dict]:
    """The records of a JSONL file shuffled with ``random.Random(seed)``, first ``n``: the
    benchmark's ExpertQA train sample (and the calibration sample of 120 answers)."""
    return [json.loads(line) for line in seeded_lines(path, n, seed=seed)[0]]


def long_scored(datasets: Path, records: list[dict], stack: dict[str, str]) -> list:
    """ExpertQA ``records`` scored as ``franq score`` would have, read back: one
    :class:`~franq.results.ResultLine` per answer (its claims with the snapshot's status,
    ``p_faithful`` and signals; the records' claim labels as the example's), from the
    committed long-form snapshot of ``stack``: what :func:`franq.fit.training_claims.training_claims`
    reads."""
    from claims.types import Claim
    from franq.evaluation.common import long_key
    from franq.io import Example
    from franq.results import ResultLine
    from franq.types import AnswerScore, ClaimScore, Stack

    name = f"long-expertqa.{slug(stack['model'])}.{slug(stack['faithfulness'])}.jsonl"
    snap = snapshot(datasets, name)
    typed = Stack.from_dict(stack)
    out = []
    for rec in records:
        obs = snap.get(long_key(rec["id"], stack))
        if obs is None:
            raise InputError(f"generations/{name}: no record of ExpertQA answer {rec['id']} for this stack")
        claims, labels = [], []
        for c, o in zip(rec["claims"], obs["claims"]):
            scored = o["status"] == "scored"
            claims.append(ClaimScore(Claim(c["text"], ()), o["status"], p_faithful=o["p_faithful"] if scored else None,
                                     signals=(o.get("signals") or o.get("components") or {}) if scored else {}))
            labels.append({"is_true": c.get("is_true"), "is_faithful": c.get("is_faithful")})
        result = AnswerScore(rec["question"], rec["answer"], tuple(claims), "long", typed)
        example = Example(rec["question"], (), rec["answer"], id=rec["id"], claim_labels=tuple(labels))
        out.append(ResultLine(f"generations/{name} answer {rec['id']}", rec["id"], result, example))
    return out


def short_observed(datasets: Path, model: str, split: str, n: int, variants=("clean", "corrupted")):
    """``(item, record, variant)`` of the first ``n`` nq-open questions of ``split`` with a
    committed short-form observation: the clean passage lists, plus the corrupted lists of
    the questions whose gold passage was replaced (the others share generations); and how
    many had none."""
    from franq.evaluation.common import load_nq_open, short_key
    from franq.evidence.samples import SamplingOptions

    cache = snapshot(datasets, f"short-nq-open.{slug(model)}.jsonl")
    options = SamplingOptions()
    rows, missing = [], 0
    for variant in variants:
        for it in load_nq_open(datasets / "nq-open", split, variant, limit=n):
            if variant == "corrupted" and not it.corrupted:
                continue
            rec = cache.get(short_key(it.id, it.passage_ids, options))
            if rec is None:
                missing += 1
            else:
                rows.append((it, rec, variant))
    return rows, missing
