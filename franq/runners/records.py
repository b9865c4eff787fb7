"""Input records for batch scoring: read JSONL lines (byte limits, UTF-8), validate each
into an :class:`~franq.io.Example` (errors name the line and the field; every size is
bounded by the one table of :mod:`franq.limits`, checked before any work), keep stable ids,
skip the ids already in the output and report repeated ones. The output side is
:mod:`franq.runners.output`; what one output line holds is :mod:`franq.results`."""
from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from franq.errors import InputError, redact
from franq.io import Example, load_json, parse_example
from franq.io_forms import UnknownFields
from franq.limits import LIMITS, Limits, message


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

    def to_json(self, file: str | None = None) -> str:
        """``{"file"?, "line", "id", "error"}``: ``file`` names the input (``-`` for stdin)."""
        head = {"file": file} if file is not None else {}
        return json.dumps({**head, "line": self.line, "id": self.id, "error": redact(self.reason)},
                          ensure_ascii=False)


def read_lines(stream, *, max_record_bytes: int | None = None) -> Iterator[tuple[int, str | None, str]]:
    """Yield ``(line_number, text or None, error)`` from a binary stream.

    Undecodable bytes and lines over ``max_record_bytes`` (default: the ``record_bytes``
    limit) become errors; an over-long line is skipped in chunks, never held in memory whole.
    """
    if max_record_bytes is None:
        max_record_bytes = LIMITS["record_bytes"].default
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
            yield n, None, message("record_bytes", size, where=f"line {n}", subject="record", limit=max_record_bytes)
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


def parse_record(text: str, line: int, *, limits: Mapping[str, int] | None = None, strict: bool = False,
                 unknown: UnknownFields | None = None) -> Example:
    """Validate one JSONL line into an :class:`Example` within ``limits`` (:mod:`franq.limits`:
    passages, characters, claims; the defaults when None); errors name the line and field."""
    where = f"line {line}"
    obj = load_json(text, where)
    bad_string = _find_surrogate(obj, "")
    if bad_string:
        raise InputError(f"{where}: '{bad_string}' holds an unpaired surrogate escape (not valid Unicode)")
    return parse_example(obj, where, limits=limits, strict=strict, unknown=unknown)


def _peek_id(text: str | None) -> str | None:
    try:
        obj = load_json(text or "", "")
    except InputError:
        return None
    ident = obj.get("id") if isinstance(obj, dict) else None
    return str(ident) if isinstance(ident, (str, int)) and not isinstance(ident, bool) else None


def id_digest(ident: str) -> int:
    """An id as 8 bytes (how the readers and the output log remember ids: bounded memory)."""
    return int.from_bytes(hashlib.blake2b(ident.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big")


class RecordReader:
    """Turns input lines into :class:`Record` or :class:`BadRecord`, skipping the ids in
    ``done`` and reporting repeated ids. Ids are kept as 8-byte digests (bounded memory:
    one small dict entry per id). ``limits``: :class:`franq.limits.Limits` (or a table of
    overrides), the defaults when None."""

    def __init__(self, done: Iterable[str] = (), *, limits: Mapping[str, int] | None = None,
                 on_line: Callable[[], None] | None = None, done_digests: Iterable[int] = (), strict: bool = False):
        self._ids: dict[int, int] = {id_digest(i): -1 for i in done}  # -1: in output, not yet read
        self._ids.update((d, -1) for d in done_digests)
        self.limits = Limits.of(limits)
        self.on_line = on_line
        self.strict = strict  # unknown fields refused; otherwise kept in meta, named once per batch
        self.unknown = UnknownFields()
        self.skipped = 0
        self.duplicates = 0

    @property
    def pending(self) -> int:
        """Ids already in the output and not yet met in the input."""
        return sum(1 for v in self._ids.values() if v == -1)

    def read(self, stream) -> Iterator[Record | BadRecord]:
        for line, text, error in read_lines(stream, max_record_bytes=self.limits["record_bytes"]):
            if self.on_line:
                self.on_line()
            if error:
                yield BadRecord(line, None, error)
                continue
            if not text.strip():
                continue
            try:
                example = parse_record(text, line, limits=self.limits, strict=self.strict, unknown=self.unknown)
            except InputError as exc:
                yield BadRecord(line, _peek_id(text), str(exc))
                continue
            ident = example.stable_id()
            key = id_digest(ident)
            first = self._ids.get(key)
            if first is not None and first > 0:
                self.duplicates += 1
                note = (f" (ids compare as text: {ident} and \"{ident}\" are the same id)"
                        if ident.lstrip("-").isdigit() else "")
                yield BadRecord(line, ident, f"line {line}: 'id' {ident!r} repeats the id of line "
                                             f"{first}{note}; only the first is scored", duplicate=True)
                continue
            self._ids[key] = line
            if first == -1:
                self.skipped += 1
                continue
            yield Record(line, ident, example)
