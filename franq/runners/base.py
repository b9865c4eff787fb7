"""What every runner shares: the :class:`Runner` contract, the :class:`Scored` outcome, and
scoring records in token-bounded batches with one loaded :class:`~franq.pipeline.Franq`.

:mod:`franq.runners.local` (this process) and :mod:`franq.runners.ray` (inside each Ray
actor) both score through :func:`score_batches`; neither imports the other at module level.
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from franq.errors import FranqError
from franq.io import Example, record_json
from franq.results import result_record
from franq.runners.records import BadRecord, Record

log = logging.getLogger(__name__)

BATCH_TOKENS = 16_384
MAX_BATCH_ANSWERS = 64


@dataclass(frozen=True)
class Scored:
    """One scored record: its output JSON line (no newline) and its claim count."""

    line: int
    id: str
    json: str
    n_claims: int


class Runner(Protocol):
    """Scores a stream of records; yields one list of outcomes per batch (a
    :class:`Scored` or :class:`BadRecord` for each record of the batch)."""

    def run(self, records: Iterator[Record]) -> Iterator[list[Scored | BadRecord]]: ...


def score_records(franq, records: Sequence[Record]) -> list[Scored | BadRecord]:
    """Score records in one :meth:`Franq.score_many` call; if it fails, one at a time,
    so that each failing record becomes a :class:`BadRecord` and the others are scored."""
    if not records:
        return []
    try:
        results = franq.score_many([r.example for r in records])
    except Exception as exc:  # noqa: BLE001 - isolate the record, report it, carry on
        if getattr(exc, "stops_run", False):  # the served model is gone: stop; the rerun resumes
            raise
        if len(records) > 1:
            return [out for r in records for out in score_records(franq, [r])]
        r = records[0]
        reason = str(exc) if isinstance(exc, FranqError) else f"{type(exc).__name__}: {exc}"
        if not reason.startswith(f"line {r.line}"):
            reason = f"line {r.line}: {reason}"
        log.debug("record on line %d failed", r.line, exc_info=True)
        return [BadRecord(r.line, r.id, reason)]
    out: list[Scored | BadRecord] = []
    for r, res in zip(records, results):
        try:
            out.append(Scored(r.line, r.id, record_json(result_record(r.id, res, r.example)), len(res.claims)))
        except FranqError as exc:  # a non-finite number: the record is reported, never written as NaN
            out.append(BadRecord(r.line, r.id, f"line {r.line}: {exc}"))
    return out


def token_estimate(encode: Callable[[str], Sequence[int]], example: Example) -> int:
    """Tokens of both forward passes of one answer (with and without the passages)."""
    question, answer = len(encode(example.question)), len(encode(example.answer))
    passages = sum(len(encode(p.title + "\n" + p.text)) for p in example.passages)
    return 2 * (question + answer) + passages


def rough_tokens(text: str) -> range:
    """A stand-in for a tokenizer where the stack runs no language model (the ``fast``
    presets): about one token per four characters, as a sequence of that length."""
    return range(len(text) // 4 + 1)


def dynamic_batches(records: Iterable[Record], size: Callable[[Record], int], *,
                    budget: int = BATCH_TOKENS, max_answers: int = MAX_BATCH_ANSWERS) -> Iterator[list[Record]]:
    """Group consecutive records until their summed ``size`` reaches ``budget`` tokens
    (or ``max_answers`` records); a record bigger than the budget goes alone."""
    batch: list[Record] = []
    total = 0
    for r in records:
        n = size(r)
        if batch and (total + n > budget or len(batch) >= max_answers):
            yield batch
            batch, total = [], 0
        batch.append(r)
        total += n
    if batch:
        yield batch


def score_batches(franq, records: Iterable[Record], *, batch_tokens: int = BATCH_TOKENS,
                  max_answers: int = MAX_BATCH_ANSWERS) -> Iterator[list[Scored | BadRecord]]:
    """Score ``records`` with ``franq`` in :func:`dynamic_batches` of ``batch_tokens``
    estimated tokens; ``batch_tokens=0`` scores one answer per call (the unbatched baseline)."""
    encode = franq.lm.encode if franq.lm is not None else rough_tokens

    def size(record: Record) -> int:
        return token_estimate(encode, record.example)

    for batch in dynamic_batches(records, size, budget=max(batch_tokens, 1),
                                 max_answers=max_answers if batch_tokens > 0 else 1):
        yield score_records(franq, batch)
