"""Shared pieces of the calibrators: errors and input validation.

``calibration/`` is a leaf package: it depends on numpy (and scikit-learn / xgboost to
fit), never on ``franq``.
"""
from __future__ import annotations

import json
import math
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

import numpy as np


class NotFittedError(ValueError, AttributeError):
    """A calibrator was used before ``fit`` (or ``from_json``)."""


class CalibratorFileError(ValueError):
    """A calibrator file is unreadable, of another format, or malformed; the message names the field."""


class MissingDependencyError(ImportError, ValueError):
    """An optional package is not installed; the message names the extra that installs it.
    An ImportError, and a ValueError so that the CLI reports it in one line like bad input."""


def as_scores(values: Any, field: str, *, n: int | None = None) -> np.ndarray:
    """A 1-D float array of finite values, optionally of length ``n``."""
    try:
        a = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"'{field}' must be a 1-D sequence of numbers") from None
    if a.ndim != 1:
        raise ValueError(f"'{field}' must be 1-D, got shape {a.shape}")
    if n is not None and len(a) != n:
        raise ValueError(f"'{field}' has {len(a)} values, expected {n} (one per claim)")
    bad = ~np.isfinite(a)
    if bad.any():
        raise ValueError(f"'{field}' must be finite; {int(bad.sum())} value(s) are NaN or infinite "
                         f"(first at index {int(np.flatnonzero(bad)[0])})")
    return a


def as_probabilities(values: Any, field: str, *, n: int | None = None) -> np.ndarray:
    a = as_scores(values, field, n=n)
    bad = (a < 0) | (a > 1)
    if bad.any():
        raise ValueError(f"'{field}' must lie in [0, 1]; got {a[bad][:3].tolist()} "
                         f"(first at index {int(np.flatnonzero(bad)[0])})")
    return a


def as_labels(values: Any, field: str, *, n: int | None = None) -> np.ndarray:
    """Binary labels (bools or 0/1) as a float array."""
    a = as_scores(values, field, n=n)
    bad = (a != 0) & (a != 1)
    if bad.any():
        raise ValueError(f"'{field}' must be 0/1 or true/false; got {a[bad][:3].tolist()} "
                         f"(first at index {int(np.flatnonzero(bad)[0])})")
    return a


def as_weights(values: Any, field: str, *, n: int) -> np.ndarray:
    if values is None:
        return np.ones(n, dtype=np.float64)
    a = as_scores(values, field, n=n)
    if (a < 0).any():
        raise ValueError(f"'{field}' must be non-negative; got {a[a < 0][:3].tolist()}")
    return a


def write_json(obj: dict, path: str | Path) -> None:
    """Write ``obj`` to a temporary file beside ``path``, then rename it over ``path``: a
    failed write leaves the old file as it was."""
    text = json.dumps(obj, separators=(",", ":"), allow_nan=False) + "\n"
    path = Path(path)
    if path.exists() and not path.is_file():  # /dev/null, a pipe: written as a stream
        path.write_text(text, encoding="utf-8")
        return
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


MAX_FILE_BYTES = 64 * 2**20
"""A calibrator file's size, at most (franq's ``artefact_bytes`` limit; this leaf package
takes the caps as parameters rather than import franq)."""
MAX_DEPTH = 64
"""Nesting depth of a calibrator file, at most (franq's ``json_depth`` limit)."""


def read_json(path: str | Path, *, max_bytes: int = MAX_FILE_BYTES, max_depth: int = MAX_DEPTH) -> dict:
    """A calibrator file: a regular file of at most ``max_bytes`` (never more is read, so
    ``/dev/zero`` or a FIFO is refused), UTF-8, strict JSON (no NaN / Infinity / ``1e999``)
    nested at most ``max_depth`` levels, an object at the top level."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise CalibratorFileError(f"calibrator: {path} is not a regular file")
        if st.st_size > max_bytes:
            raise CalibratorFileError(f"calibrator {path}: {st.st_size} bytes, over the limit of {max_bytes}")
        with open(path, "rb") as f:
            data = f.read(max_bytes + 1)
    except OSError as exc:
        raise CalibratorFileError(f"calibrator: cannot read {path}: {exc.strerror}") from None
    if len(data) > max_bytes:
        raise CalibratorFileError(f"calibrator {path}: more than {max_bytes} bytes, over the limit")
    try:
        text = data.decode("utf-8")
        obj = json.loads(text, parse_constant=_reject_constant, parse_float=_finite)
    except RecursionError:
        raise CalibratorFileError(f"calibrator {path}: nested too deeply (more than {max_depth} levels)") from None
    except ValueError as exc:
        raise CalibratorFileError(f"calibrator {path}: not valid JSON ({exc})") from None
    if _depth(obj) > max_depth:
        raise CalibratorFileError(f"calibrator {path}: nested too deeply (more than {max_depth} levels)")
    if not isinstance(obj, dict):
        raise CalibratorFileError(f"calibrator {path}: expected a JSON object at the top level")
    return obj


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is out of range")
    return value


def _depth(obj: Any) -> int:
    """Nesting depth of a parsed JSON value (iterative)."""
    deepest, stack = 0, [(obj, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (dict, list)):
            deepest = max(deepest, depth)
            stack.extend((v, depth + 1) for v in (value.values() if isinstance(value, dict) else value))
    return deepest


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not valid JSON")


def float_list(obj: dict, key: str, where: str) -> list[float]:
    v = obj.get(key)
    if not isinstance(v, list) or not all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                          and math.isfinite(x) for x in v):
        raise CalibratorFileError(f"{where}: '{key}' must be a list of finite numbers")
    return [float(x) for x in v]


def number(obj: dict, key: str, where: str, default: float, *, integer: bool = False,
           low: float = -math.inf, high: float = math.inf) -> float:
    """A finite number field (a whole number with ``integer``) within [low, high], or ``default`` when absent."""
    v = obj.get(key, default)
    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and low <= v <= high
    if not ok or (integer and v != int(v)):
        kind = "a whole number" if integer else "a finite number"
        bounds = "" if (low, high) == (-math.inf, math.inf) else f" in [{low:g}, {high:g}]"
        raise CalibratorFileError(f"{where}: '{key}' must be {kind}{bounds}, got {v!r:.60}")
    return int(v) if integer else float(v)


def check_header(obj: Any, fmt: str, version: int, where: str) -> None:
    """The file is a JSON object of format ``fmt`` and a version this code reads."""
    if not isinstance(obj, dict):
        raise CalibratorFileError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    if obj.get("format") != fmt:
        raise CalibratorFileError(f"{where}: 'format' must be {fmt!r}, got {obj.get('format')!r}")
    if obj.get("version") != version:
        raise CalibratorFileError(f"{where}: 'version' {obj.get('version')!r} is not supported "
                                  f"(this franq reads version {version})")



def calibrator_header(obj: Any, fmt: str, version: int, where: str) -> tuple[dict[str, str], str]:
    """The fields every FRANQ calibrator file (binary or three-condition) starts with, checked:
    format and version, ``uq_transform`` "log", ``fitted_for`` (an object of strings) and
    ``description`` (a string); returns ``(fitted_for, description)``."""
    check_header(obj, fmt, version, where)
    if obj.get("uq_transform") != "log":
        raise CalibratorFileError(f"{where}: 'uq_transform' must be 'log', got {obj.get('uq_transform')!r}")
    fitted_for = obj.get("fitted_for")
    if not isinstance(fitted_for, dict) or not all(isinstance(v, str) for v in fitted_for.values()):
        raise CalibratorFileError(f"{where}: 'fitted_for' must be an object of strings")
    description = obj.get("description", "")
    if not isinstance(description, str):
        raise CalibratorFileError(f"{where}: 'description' must be a string, got {type(description).__name__}")
    return fitted_for, description


def evaluation_record(evaluation: dict | None) -> dict:
    """The calibrator file's ``evaluation`` part: how the calibrator does on held-apart dev
    sets (per set: claims, share true, ECE, Brier, the constant's Brier, AUROC), written by
    the recipe of a shipped file; none when there is none (files without it read back
    unchanged)."""
    return {"evaluation": evaluation} if evaluation else {}


def read_evaluation(obj: dict, where: str) -> dict | None:
    """A calibrator file's ``evaluation`` (None when absent), checked: dev set names to
    objects of numbers (or null: an AUROC on one class)."""
    ev = obj.get("evaluation")
    if ev is None:
        return None
    if not isinstance(ev, dict) or not all(
            isinstance(name, str) and isinstance(row, dict) and all(
                v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in row.values())
            for name, row in ev.items()):
        raise CalibratorFileError(f"{where}: 'evaluation' must map dev set names to objects of numbers, got {ev!r}"[:300])
    return ev


def fit_record(obj: dict, where: str) -> tuple[int, dict, dict | None]:
    """What a calibrator file records of its fit, checked: ``n_samples`` (an integer >= 0),
    ``counts`` (an object) and ``fit_spread`` (None or an object with ``distinct``, ``min``,
    ``max``: the spread of its predictions on its training claims)."""
    n_samples = number(obj, "n_samples", where, 0, integer=True, low=0)
    counts = obj.get("counts", {})
    if not isinstance(counts, dict):
        raise CalibratorFileError(f"{where}: 'counts' must be an object, got {type(counts).__name__}")
    spread = obj.get("fit_spread")
    if spread is not None and not (isinstance(spread, dict) and {"distinct", "min", "max"} <= set(spread)):
        raise CalibratorFileError(f"{where}: 'fit_spread' must be an object with 'distinct', 'min', 'max'")
    if spread is not None:
        number(spread, "distinct", where + " 'fit_spread'", 0, integer=True, low=0)
        low = number(spread, "min", where + " 'fit_spread'", 0.0, low=0.0, high=1.0)
        number(spread, "max", where + " 'fit_spread'", 1.0, low=low, high=1.0)
    return n_samples, counts, spread
