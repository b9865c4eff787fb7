"""The files franq reads and writes: bounded reads at the boundary, one output guard and
one atomic write, for every command.

Reading: :func:`read_text` / :func:`read_json_file` (a whole config, calibrator, probe,
policy or ``.json`` example) and :func:`iter_lines` (JSONL, optionally gzipped) are bounded
by :mod:`franq.limits` before the bytes are held (``stat`` for the size, reads of at most
the limit plus one byte, devices refused), so ``/dev/zero``, a FIFO or a gzip bomb end in
one line naming the file and the limit. :func:`load_json` is strict (no NaN / Infinity /
``1e999``, no repeated key, nesting within ``json_depth``); TOML gets the same depth check.

Writing: :func:`check_outputs` refuses, before anything is read or loaded, an output that
is an input or another output, or in a folder that is missing or takes no files;
:func:`atomic_open` / :func:`atomic_write` write beside the output and rename over it once
complete (``-``, ``/dev/null`` and pipes are written as streams).
"""
from __future__ import annotations

import contextlib
import gzip
import json
import math
import os
import stat
import sys
import tempfile
import zlib
from collections.abc import Iterator, Mapping
from typing import Any

from franq.errors import InputError
from franq.limits import LimitError, limit_of
from franq.limits import message as limit_message

INT64 = 2**63
"""Integers in configs and fitted files must fit a C ``int64`` (``threads = 1e30`` as an int is refused)."""


def _over(name: str, shown: str, where: str, limits) -> LimitError:
    return LimitError(limit_message(name, shown, where=where, limit=limit_of(name, limits)))  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- strict JSON
class DuplicateKeyError(ValueError):
    pass


def no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict:
    """A JSON object whose keys are all different (JSON leaves a repeated key to the reader;
    franq refuses it rather than silently keep one of the values)."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKeyError(f"key {key!r} appears twice in one object")
            seen.add(key)
    return out


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is out of range (not a finite number)")
    return value


def _prefix(where: str) -> str:
    return f"{where}: " if where else ""


def check_depth(obj: Any, where: str = "", *, limits: Mapping[str, int] | None = None,
                max_int: int | None = None) -> Any:
    """``obj`` itself when no value is nested deeper than the ``json_depth`` limit (and,
    with ``max_int``, no integer reaches it in size); else :class:`LimitError` /
    :class:`InputError` naming the top-level field. Iterative: any depth is safe."""
    cap = limit_of("json_depth", limits)
    stack: list[tuple[Any, int, str]] = [(obj, 1, "")]
    while stack:
        value, depth, field = stack.pop()
        if isinstance(value, dict):
            items = value.items()
        elif isinstance(value, list):
            items = enumerate(value)
        else:
            if max_int is not None and isinstance(value, int) and not isinstance(value, bool) and abs(value) >= max_int:
                raise InputError(f"{_prefix(where)}{_field(field)}holds the integer {str(value)[:24]}..., too "
                                 f"large (at most {max_int - 1})")
            continue
        if depth > cap:
            raise _too_deep(field, where, limits)
        for key, child in items:
            stack.append((child, depth + 1, _join(field, key) if depth <= 6 else field))
    return obj


def _too_deep(field: str, where: str, limits) -> LimitError:
    cap = limit_of("json_depth", limits)
    text = limit_message("json_depth", f"more than {cap}", limit=cap)
    return LimitError(f"{_prefix(where)}{_field(field)}nested too deeply: {text}")


def _join(field: str, key) -> str:
    """The path of a field, ``meta.tags[3]``, as the error messages name it."""
    if isinstance(key, int):
        return f"{field}[{key}]"
    return f"{field}.{key}" if field else str(key)


def _field(field: str) -> str:
    return f"'{field}' " if field else ""


def load_json(text: str | bytes, where: str = "", *, limits: Mapping[str, int] | None = None,
              max_int: int | None = None) -> Any:
    """Strict JSON: NaN, Infinity and numbers out of float range (``1e999``) refused, no
    repeated key, nesting within the ``json_depth`` limit; errors name ``where``."""
    try:
        obj = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float,
                         object_pairs_hook=no_duplicate_keys)
    except DuplicateKeyError as exc:
        raise InputError(f"{_prefix(where)}{exc}; give each field once") from None
    except RecursionError:
        raise _too_deep("", where, limits) from None
    except ValueError as exc:  # UnicodeDecodeError too
        raise InputError(f"{_prefix(where)}not valid JSON ({exc})") from None
    return check_depth(obj, where, limits=limits, max_int=max_int)


def load_toml(text: str, where: str = "", *, limits: Mapping[str, int] | None = None) -> dict:
    """TOML with the same depth limit as JSON and integers that fit a C int64."""
    import tomllib

    try:
        obj = tomllib.loads(text)
    except RecursionError:
        raise _too_deep("", where, limits) from None
    except ValueError as exc:
        raise InputError(f"{_prefix(where)}not valid TOML ({exc})") from None
    return check_depth(obj, where, limits=limits, max_int=INT64)


# ---------------------------------------------------------------------------- reading
def _regular(path, what: str, *, pipes: bool = False) -> None:
    """The path is a regular file (or, with ``pipes``, a pipe): a directory, a device
    (``/dev/zero``) or a socket is refused before it is opened."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise InputError(f"{what}: cannot read {path}: no such file") from None
    except OSError as exc:
        raise InputError(f"{what}: cannot read {path}: {exc.strerror}") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"{what}: {path} is a directory, not a file")
    if not (stat.S_ISREG(st.st_mode) or (pipes and stat.S_ISFIFO(st.st_mode))):
        raise InputError(f"{what}: {path} is a device or special file, not a regular file")


def check_file(path, *, limit: str = "artefact_bytes", what: str = "file",
               limits: Mapping[str, int] | None = None) -> int:
    """The size of a regular file within ``limit``, checked without reading it (for files
    another library opens: safetensors, XGBoost models)."""
    _regular(path, what)
    size = os.stat(path).st_size
    if size > limit_of(limit, limits):
        raise _over(limit, str(size), f"{what} {path}", limits)
    return size


def read_bytes(path, *, limit: str = "artefact_bytes", what: str = "file",
               limits: Mapping[str, int] | None = None) -> bytes:
    """The bytes of a regular file of at most ``limit`` (a name in :mod:`franq.limits`);
    never holds more than that plus one byte, whatever the file."""
    _regular(path, what)
    cap = limit_of(limit, limits)
    where = f"{what} {path}"
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > cap:
                raise _over(limit, str(size), where, limits)
            data = f.read(cap + 1)
    except OSError as exc:
        raise InputError(f"{what}: cannot read {path}: {exc.strerror}") from None
    if len(data) > cap:
        raise _over(limit, f"more than {cap}", where, limits)
    return data


def decode(data: bytes, where: str) -> str:
    """UTF-8 text (a byte order mark dropped); invalid bytes name the line and byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(f"{where} line {line}: not valid UTF-8 ({exc.reason} at byte {exc.start})") from None


def read_text(path, *, limit: str = "artefact_bytes", what: str = "file",
              limits: Mapping[str, int] | None = None) -> str:
    """:func:`read_bytes` decoded as UTF-8."""
    return decode(read_bytes(path, limit=limit, what=what, limits=limits), f"{what} {path}")


def read_json_file(path, *, limit: str = "artefact_bytes", what: str = "file",
                   limits: Mapping[str, int] | None = None, max_int: int | None = INT64) -> Any:
    """A whole JSON file, bounded (:func:`read_bytes`) and strict (:func:`load_json`)."""
    text = read_text(path, limit=limit, what=what, limits=limits)
    return load_json(text, f"{what} {path}", limits=limits, max_int=max_int)


class _Counted:
    """A binary stream that stops after ``cap`` bytes (a gzip file's decompressed bytes)."""

    def __init__(self, stream, cap: int, where: str, limits):
        self.stream, self.left, self.cap, self.where, self.limits = stream, cap, cap, where, limits

    def readline(self, size: int) -> bytes:
        raw = self.stream.readline(min(size, self.left + 1))
        self.left -= len(raw)
        if self.left < 0:
            raise _over("decompressed_bytes", f"more than {self.cap}", self.where, self.limits)
        return raw


def iter_lines(path, *, what: str = "input", limits: Mapping[str, int] | None = None,
               ) -> Iterator[tuple[int, str | None, str]]:
    """``(line number, text, "")`` for each line of a JSONL file (``.gz``: gzip, at most
    ``decompressed_bytes`` after decompression), or ``(n, None, reason)`` for a line over
    ``record_bytes`` or not valid UTF-8 (the caller reports it with the file and line; the
    rest of a long line is skipped only if it asks for the next). Pipes are read; devices
    are refused."""
    _regular(path, what, pipes=True)
    cap = limit_of("record_bytes", limits)
    where = f"{what} {path}"
    try:
        raw_stream = open(path, "rb")
    except OSError as exc:
        raise InputError(f"{what}: cannot read {path}: {exc.strerror}") from None
    with raw_stream:
        stream: Any = raw_stream
        if str(path).endswith(".gz"):
            stream = _Counted(gzip.GzipFile(fileobj=raw_stream), limit_of("decompressed_bytes", limits), where, limits)
        n = 0
        while True:
            try:
                raw = stream.readline(cap + 1)
            except (OSError, EOFError, zlib.error) as exc:
                raise InputError(f"{where} line {n + 1}: cannot read ({exc})") from None
            if not raw:
                return
            n += 1
            if len(raw) > cap and not raw.endswith(b"\n"):
                yield n, None, limit_message("record_bytes", f"more than {cap}", limit=cap)
                while raw and not raw.endswith(b"\n"):
                    raw = stream.readline(2**20)
                continue
            if n == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            try:
                yield n, raw.decode("utf-8"), ""
            except UnicodeDecodeError as exc:
                yield n, None, f"not valid UTF-8 ({exc.reason} at byte {exc.start})"


def read_jsonl(path, *, what: str = "input", limits: Mapping[str, int] | None = None) -> Iterator[tuple[int, Any]]:
    """``(line number, parsed JSON)`` per non-blank line of :func:`iter_lines`; the first
    bad line (too long, not UTF-8, not strict JSON) raises, naming the file and line."""
    for n, text, error in iter_lines(path, what=what, limits=limits):
        if error:
            raise InputError(f"{what} {path} line {n}: {error}")
        if text.strip():
            yield n, load_json(text, f"{what} {path} line {n}", limits=limits)


# ---------------------------------------------------------------------------- the output guard
def _stat(path: str | None, fd: int | None) -> os.stat_result | None:
    try:
        return os.stat(path) if path is not None else os.fstat(fd)
    except (OSError, ValueError):
        return None


def _std_fd(stream) -> int | None:
    try:
        return stream.fileno()
    except (AttributeError, OSError, ValueError):  # a replaced stream (tests, notebooks)
        return None


def _identity(role: str, path: str, output: bool):
    if path == "-":
        fd = _std_fd(sys.stdout if output else sys.stdin)
        st = _stat(None, fd) if fd is not None else None
        return ("standard output" if output else "standard input"), st, None
    return path, _stat(path, None), os.path.realpath(path)


def check_outputs(outputs: Mapping[str, Any], inputs: Mapping[str, Any] | None = None, *,
                  directories: bool = True) -> None:
    """Refuse (naming both roles and paths; nothing read or written yet) an output that is
    the same file as an input or another output (same inode, or for files not created yet
    the same real path), or whose directory is missing or takes no files. ``outputs`` /
    ``inputs``: role (``"-o"``, ``"--config"``) -> path, ``"-"`` (stdout / stdin) or None.
    Only regular files can be overwritten (two streams to a terminal lose nothing); inputs
    may repeat. ``directories=False``: the caller reports a missing directory itself."""
    seen: list[tuple[str, str, tuple | None, str | None, bool]] = []
    entries = [(role, p, False) for role, p in (inputs or {}).items()] + [(role, p, True) for role, p in outputs.items()]
    for role, path, output in entries:
        if path is None:
            continue
        path = os.fspath(path)
        shown, st, real = _identity(role, path, output)
        if output and path != "-" and directories:
            check_output_path(path, role)
        if st is not None and not stat.S_ISREG(st.st_mode):
            continue
        ident = (st.st_dev, st.st_ino) if st is not None else None
        for other_role, other_shown, other_ident, other_real, other_output in seen:
            if not (output or other_output):
                continue
            same = (ident is not None and ident == other_ident) or (
                ident is None and other_ident is None and real is not None and real == other_real)
            if same:
                how = "" if shown == other_shown else " (a link or another name for it)"
                raise InputError(f"{role}: {shown} is the same file as the {other_role} {other_shown}{how}; "
                                 f"give each a file of its own (nothing was read or written)")
        seen.append((role, shown, ident, real, output))


def check_output_path(path: str, role: str = "output") -> None:
    """An output path can be written: not a directory, in a directory that exists and takes files."""
    if os.path.isdir(path):
        raise InputError(f"{role}: {path} is a directory; name a file")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise InputError(f"{role}: the directory {os.path.dirname(path) or parent} does not exist; "
                         f"create it first (franq does not create directories for an output)")
    if not _is_stream(path):
        try:  # a real try, not os.access: a read-only mount refuses root too
            tempfile.TemporaryFile(dir=parent).close()
        except OSError as exc:
            raise InputError(f"{role}: cannot write in {os.path.dirname(path) or parent} ({exc.strerror}); "
                             "name a file in a folder you can write (nothing was read or written)") from None


def _is_stream(path: str) -> bool:
    st = _stat(path, None)
    return st is not None and not stat.S_ISREG(st.st_mode)


@contextlib.contextmanager
def atomic_open(path: str, mode: str = "w", *, encoding: str | None = "utf-8"):
    """A file object whose content replaces ``path`` only when the block ends without an
    error (a temporary file in the same directory, flushed, synced and renamed); on an
    error the temporary file is removed and ``path`` is left as it was. ``"-"`` is
    standard output; an existing special file (``/dev/null``, a pipe) is written directly."""
    binary = "b" in mode
    if path == "-":
        yield sys.stdout.buffer if binary else sys.stdout
        return
    if _is_stream(path):
        with open(path, mode, encoding=None if binary else encoding) as f:
            yield f
        return
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=directory)
    try:
        st = _stat(path, None)
        os.chmod(tmp, stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~_umask())
        with os.fdopen(fd, mode, encoding=None if binary else encoding) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def atomic_write(path: str, data: str | bytes, *, encoding: str = "utf-8") -> None:
    """Write ``data`` to ``path`` all at once (:func:`atomic_open`)."""
    with atomic_open(path, "wb" if isinstance(data, bytes) else "w", encoding=encoding) as f:
        f.write(data)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
