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
import fcntl
import hashlib
import itertools
import json
import logging
import os
import re
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from franq.errors import FranqError, InputError
from franq.io import Example, parse_example
from franq.types import AnswerScore

log = logging.getLogger(__name__)

MAX_RECORD_BYTES = 16 * 2**20
MAX_PASSAGE_CHARS = 100_000
BATCH_TOKENS = 16_384
MAX_BATCH_ANSWERS = 64
SECRET_ENV_RE = re.compile(r"(API_?KEY|TOKEN|SECRET|PASSWORD)", re.I)
SECRET_VALUE_RE = re.compile(r"\b(sk-[A-Za-z0-9_\-]{8,}|hf_[A-Za-z0-9]{8,})")


class OutputLockedError(FranqError, OSError):
    """Another process is appending to the same output file."""


@dataclass(frozen=True)
class Record:
    """A validated input record: its line number, stable id and example."""

    line: int
    id: str
    example: Example


@dataclass(frozen=True)
class BadRecord:
    """A record that was not scored; ``reason`` names the line and the field."""

    line: int
    id: str | None
    reason: str
    duplicate: bool = False

    def to_json(self) -> str:
        return json.dumps({"line": self.line, "id": self.id, "error": redact(self.reason)},
                          ensure_ascii=False)


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
        return (f"scored {self.scored} answers ({self.claims} claims, {rate:.2f} claims/s), "
                f"skipped {self.skipped} already in output, {self.bad} bad records, "
                f"{self.duplicates} duplicate ids{where}")


def result_record(example_id: str | None, result: AnswerScore) -> dict:
    """One output line: the input's id, then ``dataclasses.asdict`` of the result."""
    return {"id": example_id, **dataclasses.asdict(result)}


def redact(text: str) -> str:
    """Mask API keys: values of secret-looking environment variables and key patterns."""
    for name, value in os.environ.items():
        if value and len(value) >= 8 and SECRET_ENV_RE.search(name):
            text = text.replace(value, f"<{name} redacted>")
    return SECRET_VALUE_RE.sub("<redacted>", text)


# ---------------------------------------------------------------------------- reading
def read_lines(stream, *, max_record_bytes: int = MAX_RECORD_BYTES) -> Iterator[tuple[int, str | None, str]]:
    """Yield ``(line_number, text or None, error)`` from a binary stream.

    Undecodable bytes and lines over ``max_record_bytes`` become errors; an over-long
    line is skipped in chunks, never held in memory whole.
    """
    n = 0
    while True:
        raw = stream.readline(max_record_bytes + 1)
        if not raw:
            return
        n += 1
        if len(raw) > max_record_bytes and not raw.endswith(b"\n"):
            size = len(raw)
            while raw and not raw.endswith(b"\n"):
                raw = stream.readline(2**20)
                size += len(raw)
            yield n, None, (f"line {n}: record is {size} bytes, over the limit of "
                            f"{max_record_bytes} (--max-record-bytes)")
            continue
        if n == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]  # a UTF-8 byte order mark
        try:
            yield n, raw.decode("utf-8"), ""
        except UnicodeDecodeError as exc:
            yield n, None, f"line {n}: not valid UTF-8 ({exc.reason} at byte {exc.start})"


def count_lines(path: str) -> int | None:
    """Number of lines of a regular file (for the progress bar's ETA), else None."""
    if path == "-" or not os.path.isfile(path):
        return None
    n, last = 0, b"\n"
    with open(path, "rb") as f:
        while chunk := f.read(2**20):
            n += chunk.count(b"\n")
            last = chunk[-1:]
    return n + (last != b"\n")


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not valid JSON")


def _find_surrogate(obj: Any, path: str) -> str | None:
    """Path of the first string holding an unpaired surrogate (not encodable as UTF-8)."""
    if isinstance(obj, str):
        try:
            obj.encode("utf-8")
        except UnicodeEncodeError:
            return path or "record"
        return None
    items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    for key, value in items:
        where = f"{path}.{key}" if isinstance(key, str) and path else (
            f"{path}[{key}]" if isinstance(key, int) else str(key))
        found = _find_surrogate(value, where)
        if found:
            return found
    return None


def parse_record(text: str, line: int, *, max_passage_chars: int = MAX_PASSAGE_CHARS) -> Example:
    """Validate one JSONL line into an :class:`Example`; errors name the line and field."""
    where = f"line {line}"
    try:
        obj = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise InputError(f"{where}: not valid JSON ({reason})") from None
    bad_string = _find_surrogate(obj, "")
    if bad_string:
        raise InputError(f"{where}: '{bad_string}' holds an unpaired surrogate escape (not valid Unicode)")
    example = parse_example(obj, where)
    for i, p in enumerate(example.passages):
        if len(p.text) > max_passage_chars:
            raise InputError(f"{where}: 'passages[{i}]' is {len(p.text)} characters, over the limit "
                             f"of {max_passage_chars} (--max-passage-chars)")
    return example


def _peek_id(text: str | None) -> str | None:
    try:
        obj = json.loads(text or "", parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return None
    ident = obj.get("id") if isinstance(obj, dict) else None
    return str(ident) if isinstance(ident, (str, int)) and not isinstance(ident, bool) else None


def _digest(ident: str) -> int:
    return int.from_bytes(hashlib.blake2b(ident.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big")


class RecordReader:
    """Turns input lines into :class:`Record` or :class:`BadRecord`, skipping the ids in
    ``done`` and reporting repeated ids. Ids are kept as 8-byte digests (bounded memory:
    one small dict entry per id)."""

    def __init__(self, done: Iterable[str] = (), *, max_record_bytes: int = MAX_RECORD_BYTES,
                 max_passage_chars: int = MAX_PASSAGE_CHARS, on_line: Callable[[], None] | None = None):
        self._ids: dict[int, int] = {_digest(i): -1 for i in done}  # -1: in output, not yet read
        self.max_record_bytes = max_record_bytes
        self.max_passage_chars = max_passage_chars
        self.on_line = on_line
        self.skipped = 0
        self.duplicates = 0

    @property
    def pending(self) -> int:
        """Ids already in the output and not yet met in the input."""
        return sum(1 for v in self._ids.values() if v == -1)

    def read(self, stream) -> Iterator[Record | BadRecord]:
        for line, text, error in read_lines(stream, max_record_bytes=self.max_record_bytes):
            if self.on_line:
                self.on_line()
            if error:
                yield BadRecord(line, None, error)
                continue
            if not text.strip():
                continue
            try:
                example = parse_record(text, line, max_passage_chars=self.max_passage_chars)
            except InputError as exc:
                yield BadRecord(line, _peek_id(text), str(exc))
                continue
            ident = example.stable_id()
            key = _digest(ident)
            first = self._ids.get(key)
            if first is not None and first > 0:
                self.duplicates += 1
                yield BadRecord(line, ident, f"line {line}: 'id' {ident!r} repeats the id of line "
                                             f"{first}; only the first is scored", duplicate=True)
                continue
            self._ids[key] = line
            if first == -1:
                self.skipped += 1
                continue
            yield Record(line, ident, example)


# ---------------------------------------------------------------------------- writing
class OutputLog:
    """An append-only JSONL output that survives crashes (see the module docstring).

    Opening it cuts off a partial last line left by a crash, takes an exclusive lock
    (a second run on the same file fails at once) and reads the ids already written.
    """

    def __init__(self, path: str, *, fsync: bool = True):
        self.path = path
        self.fsync = fsync
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self.fd)
            raise OutputLockedError(f"output: {path} is being written by another franq run") from None
        self.repaired = self._cut_partial_line()

    def _cut_partial_line(self) -> int:
        size = os.fstat(self.fd).st_size
        end = size
        while end > 0:
            start = max(0, end - 65536)
            chunk = os.pread(self.fd, end - start, start)
            k = chunk.rfind(b"\n")
            if k >= 0:
                end = start + k + 1
                break
            end = start
        if end < size:
            os.ftruncate(self.fd, end)
            log.warning("output %s: removed a partial last line (%d bytes) left by an interrupted run",
                        self.path, size - end)
        return size - end

    def ids(self) -> Iterator[str]:
        """Ids of the records already in the file (lines start with ``{"id": ``)."""
        decoder = json.JSONDecoder()
        with open(self.path, "rb") as f:
            for n, raw in enumerate(f, 1):
                text = raw.decode("utf-8")
                try:
                    if text.startswith('{"id": '):
                        ident = decoder.raw_decode(text, 7)[0]
                    else:
                        ident = json.loads(text).get("id")
                except (ValueError, AttributeError):
                    raise InputError(f"output {self.path} line {n}: not a franq result line; "
                                     f"use another output file") from None
                if ident is not None:
                    yield str(ident)

    def append(self, lines: Sequence[str]) -> None:
        """Append whole lines with one write (then fsync)."""
        if not lines:
            return
        data = memoryview("".join(line + "\n" for line in lines).encode("utf-8"))
        while data:
            data = data[os.write(self.fd, data):]
        if self.fsync:
            os.fsync(self.fd)

    def close(self) -> None:
        os.close(self.fd)


class _StreamOutput:
    """Output to a text stream (stdout): no resume."""

    def __init__(self, stream):
        self.stream = stream

    def ids(self) -> Iterator[str]:
        return iter(())

    def append(self, lines: Sequence[str]) -> None:
        for line in lines:
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        pass


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
    return [Scored(r.line, r.id, json.dumps(result_record(r.id, res), ensure_ascii=False), len(res.claims))
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
    out = _StreamOutput(sys.stdout) if output in (None, "-") else OutputLog(output, fsync=fsync)
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

