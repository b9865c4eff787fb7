"""The output of batch scoring: an append-only JSONL file that survives crashes and
resumes (:class:`OutputLog`, see :mod:`franq.runners.local`), a stream when the output is
not a file (:class:`StreamOutput`), and the file of records that were not scored
(:class:`ErrorFile`)."""
from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from franq.errors import FranqError, InputError, OutputWriteError
from franq.runners.records import BadRecord, id_digest

log = logging.getLogger(__name__)


class OutputLockedError(FranqError, OSError):
    """Another process is appending to the same output file."""


def is_result_line(obj: Any) -> bool:
    """A complete ``franq score`` output line: an object with a string id, the claims and the mode."""
    return (isinstance(obj, dict) and isinstance(obj.get("id"), str) and isinstance(obj.get("claims"), list)
            and isinstance(obj.get("mode"), str))


def is_keyed_line(obj: Any) -> bool:
    """Any JSON object with a string id (the default for :class:`OutputLog`)."""
    return isinstance(obj, dict) and isinstance(obj.get("id"), str)


def provenance(obj: Any) -> tuple[str, dict] | None:
    """``(preset, {"stack", "calibrator"})`` of a result line: what scored it (None when the
    line names no stack)."""
    stack = obj.get("stack") if isinstance(obj, dict) else None
    if not isinstance(stack, dict):
        return None
    cal = obj.get("calibrator") if isinstance(obj.get("calibrator"), dict) else {}
    return str(stack.get("mode")), {"stack": stack, "calibrator": cal.get("path"),
                                    "prior": cal.get("prior", UNRECORDED)}


UNRECORDED = "unrecorded"
"""The ``prior`` provenance of a line written before results recorded one: it matches any."""


class Provenance:
    """What scored the results an output already holds, by preset: a resumed run must write
    with the same stack and calibrator, or the file would mix two (its old records are
    skipped, never scored again by the new stack). ``presets``: the presets this run scores
    with, checked at once (before any model loads); each new line is checked by :meth:`check`
    before it is written."""

    def __init__(self, path: str, held: dict[str, dict], *, presets: Sequence[str] | None = None,
                 mode: str | None = None):
        self.path, self.held = path, dict(held)
        other = sorted(set(self.held) - set(presets)) if presets is not None else []
        if other:
            raise InputError(f"output {path}: it holds results of preset(s) {other}, which this run "
                             f"(mode {mode!r}: {list(presets)}) does not score with; resuming would mix two "
                             f"stacks in one file: write to another output file (or delete it to start over)")

    def check(self, line: str) -> None:
        """Refuse ``line`` (one result) when its preset's results in the file came from another stack."""
        got = provenance(json.loads(line))
        if got is None:
            return
        preset, new = got
        old = self.held.setdefault(preset, new)
        if old != new:
            changed = [f"{k}: {old['stack'].get(k)!r} -> {new['stack'].get(k)!r}"
                       for k in sorted(set(old["stack"]) | set(new["stack"])) if old["stack"].get(k) != new["stack"].get(k)]
            if old["calibrator"] != new["calibrator"]:
                changed.append(f"calibrator: {old['calibrator']!r} -> {new['calibrator']!r}")
            if UNRECORDED not in (old["prior"], new["prior"]) and old["prior"] != new["prior"]:
                changed.append(f"calibrator moved to prior: {old['prior']!r} -> {new['prior']!r}")
            if not changed:  # the same stack; only the older lines did not record a prior
                return
            raise InputError(f"output {self.path}: its {preset} results were scored with another stack "
                             f"({'; '.join(changed)}); resuming would mix them in one file: write to another "
                             f"output file (or delete it to start over). Nothing of this run was written")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _write_error(what: str, path: str, exc: OSError, kept: str = "") -> OutputWriteError:
    reason = exc.strerror or type(exc).__name__
    return OutputWriteError(f"{what}: cannot write {path}: {reason}{kept}")


class OutputLog:
    """An append-only JSONL output that survives crashes (see :mod:`franq.runners.local`).

    Opening it takes an exclusive lock (a second run on the same file fails at once) and
    reads every line in full: a line that is not a complete record (``is_record``; a
    partial last line left by a crash, a damaged line in the middle) is moved to the
    recovery file ``path + ".recovered"`` (appended, never deleted) and taken out of the
    output, so its record is scored again. A non-empty file holding no record at all is
    refused untouched (it is not a franq output). Every append is one ``write`` and an
    ``fsync``; a failed write is cut back off, so the file always ends on a whole line.
    """

    def __init__(self, path: str, *, fsync: bool = True, is_record: Callable[[Any], bool] = is_keyed_line,
                 recovery_path: str | None = None):
        self.path = path
        self.fsync = fsync
        self.is_record = is_record
        self.recovery_path = recovery_path or path + ".recovered"
        self.fd = self._open_locked()
        self.recovered = 0
        self.digests: list[int] = []
        self.held: dict[str, dict] = {}
        """What scored the whole records in the file, by preset (:func:`provenance`; the first seen)."""
        try:
            self._scan()
        except BaseException:
            os.close(self.fd)
            raise

    def _open_locked(self) -> int:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        except OSError as exc:
            raise InputError(f"output: cannot open {self.path} for appending: {exc.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise OutputLockedError(f"output: {self.path} is being written by another franq run") from None
        return fd

    def _parse(self, raw: bytes) -> Any:
        if not raw.endswith(b"\n"):
            return None
        try:
            obj = json.loads(raw)  # bytes: UTF-8 checked by the decoder
        except (ValueError, RecursionError):
            return None
        return obj if self.is_record(obj) else None

    def _scan(self) -> None:
        """Read every line; keep the ids of whole records, move the others aside."""
        bad: list[tuple[int, bytes]] = []
        with os.fdopen(os.dup(self.fd), "rb") as f:
            f.seek(0)
            n = 0
            for raw in f:
                n += 1
                obj = self._parse(raw)
                if obj is None:
                    bad.append((n, raw))
                else:
                    self.digests.append(id_digest(obj["id"]))
                    if (got := provenance(obj)) is not None:
                        self.held.setdefault(*got)
            size = f.tell()
        if not bad:
            return
        if not self.digests and any(raw.endswith(b"\n") for _, raw in bad):
            raise InputError(f"output {self.path} line {bad[0][0]}: not a franq result line; "
                             f"use another output file")
        tail = [line for line, _ in bad] == list(range(n - len(bad) + 1, n + 1))
        self._recover(bad, size, tail_only=tail)

    def _recover(self, bad: list[tuple[int, bytes]], size: int, *, tail_only: bool) -> None:
        """Append the damaged lines to the recovery file (fsynced), then take them out of
        the output: cut off a damaged tail, or rewrite the file without them (a new file
        renamed over the old one, so a crash leaves one or the other, both whole)."""
        try:
            with open(self.recovery_path, "ab") as r:
                for _, raw in bad:
                    r.write(raw if raw.endswith(b"\n") else raw + b"\n")
                r.flush()
                os.fsync(r.fileno())
        except OSError as exc:
            raise _write_error("recovery file", self.recovery_path, exc,
                               f"; {self.path} was left as it was") from None
        lines = ", ".join(str(line) for line, _ in bad[:10]) + (" ..." if len(bad) > 10 else "")
        log.warning("output %s: %d damaged line(s) (line %s) moved to %s; their records will be scored again",
                    self.path, len(bad), lines, self.recovery_path)
        self.recovered = len(bad)
        if tail_only:
            os.ftruncate(self.fd, size - sum(len(raw) for _, raw in bad))
            return
        bad_lines = {line for line, _ in bad}
        directory = os.path.dirname(os.path.abspath(self.path))
        tmp = os.path.join(directory, f".{os.path.basename(self.path)}.{os.getpid()}.tmp")
        try:
            with os.fdopen(os.dup(self.fd), "rb") as src, open(tmp, "wb") as dst:
                src.seek(0)
                for n, raw in enumerate(src, 1):
                    if n not in bad_lines:
                        dst.write(raw)
                dst.flush()
                os.fsync(dst.fileno())
            os.chmod(tmp, os.fstat(self.fd).st_mode & 0o7777)
            os.replace(tmp, self.path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise _write_error("output", self.path, exc, f" while taking damaged lines out (they are also "
                                                          f"in {self.recovery_path}); nothing was lost") from None
        old, self.fd = self.fd, self._open_locked()
        os.close(old)

    def ids(self) -> Iterator[str]:
        """Ids of the whole records in the file."""
        with open(self.path, "rb") as f:
            for raw in f:
                obj = self._parse(raw)
                if obj is not None:
                    yield obj["id"]

    def append(self, lines: Sequence[str]) -> None:
        """Append whole lines with one write (then fsync). On failure (disk full, read-only,
        permission) the partial write is cut off and an :class:`OutputWriteError` names the path."""
        if not lines:
            return
        data = "".join(line + "\n" for line in lines).encode("utf-8")
        size = os.fstat(self.fd).st_size
        try:
            _write_all(self.fd, data)
            if self.fsync:
                os.fsync(self.fd)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(self.fd, size)
            raise _write_error("output", self.path, exc, "; the results written before are kept, "
                                                         "rerun the same command to resume") from None

    def close(self) -> None:
        os.close(self.fd)


class StreamOutput:
    """Output to a stream (standard output, a pipe, ``/dev/null``): no resume, never read back."""

    def __init__(self, stream, name: str = "standard output"):
        self.stream = stream
        self.name = name
        self.digests: list[int] = []
        self.recovered = 0

    @classmethod
    def open(cls, path: str) -> StreamOutput:
        try:
            return cls(open(path, "w", encoding="utf-8"), path)
        except OSError as exc:
            raise InputError(f"output: cannot open {path} for writing: {exc.strerror}") from None

    def ids(self) -> Iterator[str]:
        return iter(())

    def append(self, lines: Sequence[str]) -> None:
        try:
            for line in lines:
                self.stream.write(line + "\n")
            self.stream.flush()
        except OSError as exc:
            raise _write_error("output", self.name, exc, "") from None

    def close(self) -> None:
        if self.stream not in (sys.stdout, sys.__stdout__):
            try:
                self.stream.close()
            except OSError as exc:
                raise _write_error("output", self.name, exc, "") from None


class ErrorFile:
    """Where bad records go: a file (rewritten by each run) or standard error. Each record
    names the input file it comes from (``source``)."""

    def __init__(self, path: str | None, source: str | None = None):
        self.path = path
        self.source = source
        self.name = path or "standard error"
        if path is None:
            self.stream = sys.stderr
        else:
            try:
                self.stream = open(path, "w", encoding="utf-8")
            except OSError as exc:
                raise InputError(f"error file: cannot open {path} for writing: {exc.strerror}") from None

    def write(self, record: BadRecord) -> None:
        try:
            self.stream.write(record.to_json(self.source) + "\n")
        except OSError as exc:
            raise _write_error("error file", self.name, exc, "") from None

    def flush(self) -> None:
        try:
            self.stream.flush()
        except OSError as exc:
            raise _write_error("error file", self.name, exc, "") from None

    def close(self) -> None:
        if self.path is not None:
            try:
                self.stream.close()
            except OSError as exc:
                raise _write_error("error file", self.name, exc, "") from None
