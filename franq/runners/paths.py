"""The files of a batch run: input, output, error file and recovery file must be four
different files, and special outputs (a pipe, a terminal, ``/dev/null``) are written as
streams, never read back.

Checked before anything is opened for writing: two paths are the same file when they
resolve to the same inode (symlinks followed, hard links included) or, for files that do
not exist yet, to the same real path. Standard input and output count too
(``franq score - < out.jsonl -o out.jsonl``, ``franq score in.jsonl >> in.jsonl``).
"""
from __future__ import annotations

import os
import stat

from franq.errors import InputError
from franq.files import check_outputs

STREAM = "stream"
"""Output written as a stream: standard output, a pipe, a terminal, a device. No resume."""
FILE = "file"
"""Output in a regular file (new or existing): crash-safe appends and resume."""


def _stat(path: str | None, fd: int | None) -> os.stat_result | None:
    try:
        return os.stat(path) if path is not None else os.fstat(fd)
    except (OSError, ValueError):
        return None


def output_kind(output: str | None) -> str:
    """:data:`STREAM` for ``None`` / ``"-"`` and for paths that exist and are not regular
    files (``/dev/stdout`` into a pipe, ``/dev/null``, ``/dev/full``, a FIFO), else :data:`FILE`."""
    if output in (None, "-"):
        return STREAM
    st = _stat(output, None)
    return FILE if st is None or stat.S_ISREG(st.st_mode) else STREAM


def check_input(path: str) -> None:
    """The input is standard input (``-``), a regular file or a pipe."""
    if path == "-":
        return
    st = _stat(path, None)
    if st is None:
        raise InputError(f"input: no file at {path}")
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"input: {path} is a directory, not a JSONL file")
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
        raise InputError(f"input: {path} is a device, not a JSONL file")


def check_distinct(files: dict[str, str | None]) -> None:
    """Refuse (naming both roles and the paths) when two of ``files`` (role -> path;
    ``"-"`` for standard input/output, ``None`` for unused) are the same file: the
    ``"input"`` role is read, every other role is written (:func:`franq.files.check_outputs`,
    the one output guard every command uses)."""
    check_outputs({role: path for role, path in files.items() if role != "input"},
                  {"input": files.get("input")}, directories=False)
