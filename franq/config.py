"""FranqConfig: every model and backend is named here, never hard-wired.

Load from a JSON or TOML file (``franq score --config FILE``) or build in Python.
Unknown keys are an error naming the key.
"""
from __future__ import annotations

import dataclasses
import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from franq.errors import InputError

DECOMPOSERS = ("sentence",)
FAITHFULNESS = ("lexical",)
OVERFLOW = ("truncate", "error")
CALIBRATOR_MISMATCH = ("warn", "error", "force")
MODES = ("long", "short", "auto")
JUDGES = ("normalized", "lm")
UNFAITH_SAMPLES = ("rag", "closed")


@dataclass(frozen=True)
class FranqConfig:
    model: str | None = None
    """Local path or cached Hugging Face name of a causal LM; ``None`` = embedded SmolLM2."""
    gguf_file: str | None = None
    """A GGUF file inside ``model`` (or a path to one when ``model`` is None)."""
    device: str | None = None
    dtype: str | None = None
    decomposer: str = "sentence"
    faithfulness: str = "lexical"
    on_overflow: str = "truncate"
    max_batch_tokens: int = 4096
    max_new_tokens: int = 256
    calibrator: str = "default"
    """``"default"`` (the shipped calibrator when it matches the stack), ``"none"``, or a
    calibrator file from ``franq calibrate``."""
    calibrator_mismatch: str = "warn"
    """When the calibrator was fitted for another stack: ``warn`` (do not apply), ``error``, ``force``."""

    mode: str = "long"
    """long | short | auto (a single short sentence is short-form)."""
    judge: str = "normalized"
    """Short-form equivalence judge: normalized (answer normalization) | lm (the LM asks itself)."""
    n_samples: int = 10
    unfaith_samples: str = "rag"
    """Short-form UQ_unfaith samples: rag (with passages, paper) | closed (without)."""

    def __post_init__(self):
        for key, allowed in (("decomposer", DECOMPOSERS), ("faithfulness", FAITHFULNESS),
                             ("on_overflow", OVERFLOW), ("calibrator_mismatch", CALIBRATOR_MISMATCH),
                             ("mode", MODES), ("judge", JUDGES), ("unfaith_samples", UNFAITH_SAMPLES)):
            if getattr(self, key) not in allowed:
                raise InputError(f"config '{key}': expected one of {list(allowed)}, got {getattr(self, key)!r}")
        if not isinstance(self.calibrator, str) or not self.calibrator.strip():
            raise InputError(f"config 'calibrator': expected 'default', 'none' or a file path, "
                             f"got {self.calibrator!r}")
        for key in ("max_batch_tokens", "max_new_tokens", "n_samples"):
            v = getattr(self, key)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise InputError(f"config '{key}': expected a positive integer, got {v!r}")

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, source: str = "config") -> FranqConfig:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise InputError(f"{source}: unknown key(s) {unknown}; known keys are {sorted(known)}")
        return cls(**data)

    @classmethod
    def from_file(cls, path: str | Path) -> FranqConfig:
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise InputError(f"config: cannot read {path}: {exc.strerror}") from None
        try:
            data = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
        except ValueError as exc:
            raise InputError(f"config {path}: not valid {'TOML' if path.suffix == '.toml' else 'JSON'}: {exc}") from None
        if not isinstance(data, dict):
            raise InputError(f"config {path}: expected an object at the top level")
        return cls.from_dict(data, source=f"config {path}")

    def replace(self, **changes) -> FranqConfig:
        return dataclasses.replace(self, **{k: v for k, v in changes.items() if v is not None})
