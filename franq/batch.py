"""Batch scoring of JSONL files: streaming, resumable, and robust to bad records.

    franq score IN.jsonl -o OUT.jsonl [--errors ERR.jsonl] [--engine local|ray] [--quiet]

* Streaming with bounded memory: input is read line by line (a line longer than
  ``max_record_bytes`` is skipped without being held in memory), answers are scored in
  batches of bounded size, results are appended as they come.
* Resumable: a record whose id is already in OUT is skipped. Each batch of output lines
  is appended with one ``write`` on an ``O_APPEND`` descriptor and ``fsync``-ed; a crash
  can only leave a partial *last* line, which the next run cuts off before it appends.
  Records without an id get a stable content hash (:meth:`Example.stable_id`).
* Bad records (undecodable bytes, invalid JSON, wrong types, missing or unknown fields,
  oversized records or passages, duplicate ids, failures while scoring one answer) go to
  the error file as ``{"line", "id", "error"}`` with a reason naming the field; the run
  carries on. The error file is rewritten by every run: a rerun re-reads every record
  not yet in OUT, so it reports every remaining bad record exactly once.
* Throughput: records are grouped into one :meth:`Franq.score_many` call until their
  estimated token count reaches ``batch_tokens`` (dynamic batches); inside the call the
  forward passes are sorted by length and padded batches are bounded by
  ``FranqConfig.max_batch_tokens``. A failing batch is retried one answer at a time so
  a bad answer cannot sink the others.

The scoring engine is pluggable: :class:`LocalEngine` (this process) or
:class:`franq.batch_ray.RayEngine` (Ray Data actors).
"""
from __future__ import annotations

import dataclasses
import itertools
import json
import logging
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from franq.errors import FranqError, InputError
from franq.io import Example
from franq.jsonl import (MAX_PASSAGE_CHARS, MAX_RECORD_BYTES, BadRecord, OutputLog, Record, RecordReader,
                         StreamOutput, count_lines)
from franq.types import AnswerScore

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


@dataclass(frozen=True)
class BatchSummary:
    scored: int
    claims: int
    skipped: int
    bad: int
    duplicates: int
    seconds: float
    errors_path: str | None = None

    def message(self) -> str:
        rate = self.claims / self.seconds if self.seconds > 0 else 0.0
        where = f" (see {self.errors_path})" if (self.bad or self.duplicates) and self.errors_path else ""
        return (f"scored {self.scored} answers, {self.bad} bad records, {self.duplicates} duplicate ids, "
                f"{self.skipped} skipped (already in output); {self.claims} claims, {rate:.2f} claims/s{where}")


def result_record(example_id: str | None, result: AnswerScore, example: Example | None = None) -> dict:
    """One output line: the id, the result, and any claim labels the input carried."""
    record = {"id": example_id, **dataclasses.asdict(result)}
    if example is not None and example.claim_labels:
        for claim, labels in zip(record["claims"], example.claim_labels):
            claim.update(labels)
    return record


# ---------------------------------------------------------------------------- engines
class Engine(Protocol):
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
        if len(records) > 1:
            return [out for r in records for out in score_records(franq, [r])]
        r = records[0]
        reason = str(exc) if isinstance(exc, FranqError) else f"{type(exc).__name__}: {exc}"
        if not reason.startswith(f"line {r.line}"):
            reason = f"line {r.line}: {reason}"
        log.debug("record on line %d failed", r.line, exc_info=True)
        return [BadRecord(r.line, r.id, reason)]
    return [Scored(r.line, r.id, json.dumps(result_record(r.id, res, r.example), ensure_ascii=False),
                   len(res.claims))
            for r, res in zip(records, results)]


def token_estimate(encode: Callable[[str], Sequence[int]], example: Example) -> int:
    """Tokens of both forward passes of one answer (with and without the passages)."""
    question, answer = len(encode(example.question)), len(encode(example.answer))
    passages = sum(len(encode(p.title + "\n" + p.text)) for p in example.passages)
    return 2 * (question + answer) + passages


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


class LocalEngine:
    """Scores in this process with one loaded :class:`~franq.pipeline.Franq`.

    ``batch_tokens=0`` scores one answer per call (the unbatched baseline)."""

    def __init__(self, franq, *, batch_tokens: int = BATCH_TOKENS, max_answers: int = MAX_BATCH_ANSWERS):
        self.franq = franq
        self.batch_tokens = batch_tokens
        self.max_answers = max_answers if batch_tokens > 0 else 1

    def _size(self, record: Record) -> int:
        return token_estimate(self.franq.lm.encode, record.example)

    def run(self, records: Iterator[Record]) -> Iterator[list[Scored | BadRecord]]:
        for batch in dynamic_batches(records, self._size, budget=max(self.batch_tokens, 1),
                                     max_answers=self.max_answers):
            yield score_records(self.franq, batch)


# ---------------------------------------------------------------------------- the run
class _Progress:
    """tqdm bar on stderr over input lines, with answers/s and claims/s."""

    def __init__(self, total: int | None, enabled: bool):
        self.bar = None
        self.start = time.perf_counter()
        self.answers = self.claims = 0
        if enabled:
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="line", file=sys.stderr, dynamic_ncols=True,
                            desc="franq score")

    def line(self) -> None:
        if self.bar is not None:
            self.bar.update(1)

    def scored(self, n_claims: int) -> None:
        self.answers += 1
        self.claims += n_claims
        if self.bar is not None:
            dt = max(time.perf_counter() - self.start, 1e-9)
            self.bar.set_postfix_str(f"{self.answers / dt:.2f} answers/s, {self.claims / dt:.2f} claims/s",
                                     refresh=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def run_jsonl(engine_factory: Callable[[], Engine], input_path: str, output: str | None, *,
              errors_path: str | None = None, progress: bool = True, fsync: bool = True,
              max_record_bytes: int = MAX_RECORD_BYTES,
              max_passage_chars: int = MAX_PASSAGE_CHARS) -> BatchSummary:
    """Score a JSONL file into ``output`` (``None`` or ``"-"``: stdout, no resume).

    ``engine_factory`` is called once, when the first record to score is met: a locked
    or foreign output fails before any model is loaded, and a finished run loads none.
    """
    started = time.perf_counter()
    if input_path != "-" and not os.path.isfile(input_path):
        raise InputError(f"input: no file at {input_path}")
    out = StreamOutput(sys.stdout) if output in (None, "-") else OutputLog(output, fsync=fsync)
    errs = bar = None
    try:
        reader = RecordReader(out.ids(), max_record_bytes=max_record_bytes,
                              max_passage_chars=max_passage_chars)
        if reader.pending:
            log.info("resuming: %d records already in %s", reader.pending, output)
        bar = _Progress(count_lines(input_path), progress)
        reader.on_line = bar.line
        errs = open(errors_path, "w", encoding="utf-8") if errors_path else sys.stderr
        stream = sys.stdin.buffer if input_path == "-" else open(input_path, "rb")
        n_bad = n_ok = n_claims = 0

        def good_records() -> Iterator[Record]:
            nonlocal n_bad
            for item in reader.read(stream):
                if isinstance(item, BadRecord):
                    errs.write(item.to_json() + "\n")
                    n_bad += not item.duplicate
                else:
                    yield item

        with stream:
            records = good_records()
            first = next(records, None)  # load no model when nothing is left to score
            batches = engine_factory().run(itertools.chain([first], records)) if first else ()
            for outcomes in batches:
                lines = []
                for outcome in outcomes:
                    if isinstance(outcome, BadRecord):
                        errs.write(outcome.to_json() + "\n")
                        n_bad += 1
                    else:
                        lines.append(outcome.json)
                        n_claims += outcome.n_claims
                        bar.scored(outcome.n_claims)
                out.append(lines)
                n_ok += len(lines)
                errs.flush()
    finally:
        if bar is not None:
            bar.close()
        out.close()
        if errs is not None and errs is not sys.stderr:
            errs.close()
    return BatchSummary(n_ok, n_claims, reader.skipped, n_bad, reader.duplicates,
                        time.perf_counter() - started, errors_path)


def score_file(config, input_path: str, output: str | None, *, errors_path: str | None = None,
               engine: str = "local", workers: int = 2, cpus_per_worker: float = 1.0,
               gpus_per_worker: float = 0.0, ray_address: str | None = None,
               batch_tokens: int = BATCH_TOKENS, progress: bool = True,
               max_record_bytes: int = MAX_RECORD_BYTES,
               max_passage_chars: int = MAX_PASSAGE_CHARS) -> BatchSummary:
    """``franq score IN.jsonl -o OUT.jsonl``: pick the engine for a :class:`FranqConfig`
    and run :func:`run_jsonl`. Bad records go to ``errors_path`` (default
    ``OUT.errors.jsonl``, or stderr when writing to stdout)."""
    if errors_path is None and output not in (None, "-"):
        errors_path = output + ".errors.jsonl"
    if engine == "ray":
        from franq.batch_ray import RayEngine

        def factory() -> Engine:
            return RayEngine(config, workers=workers, cpus_per_worker=cpus_per_worker,
                             gpus_per_worker=gpus_per_worker, address=ray_address,
                             batch_tokens=batch_tokens)
    elif engine == "local":
        def factory() -> Engine:
            from franq.pipeline import Franq

            return LocalEngine(Franq.from_config(config), batch_tokens=batch_tokens)
    else:
        raise InputError(f"engine: expected 'local' or 'ray', got {engine!r}")
    return run_jsonl(factory, input_path, output, errors_path=errors_path, progress=progress,
                     max_record_bytes=max_record_bytes, max_passage_chars=max_passage_chars)

