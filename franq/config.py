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

DECOMPOSERS = ("sentence", "llm")
DECOMPOSER_BACKENDS = ("local", "openai")
DECOMPOSER_ALIGN = ("words", "llm")
FAITHFULNESS = ("combined", "lexical", "context_pmi", "alignscore", "nli", "judge")
# settings each faithfulness backend requires
FAITHFULNESS_NEEDS = {"alignscore": ("alignscore_checkpoint", "alignscore_base_model"), "nli": ("nli_model",)}
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
    faithfulness: str = "combined"
    """Faithfulness backend: combined (offline default), lexical, context_pmi, alignscore, nli, judge."""
    faithfulness_map: str | None = None
    """JSON logistic map for combined / context_pmi (``None`` = the packaged one)."""
    alignscore_checkpoint: str | None = None
    """Local AlignScore ``.ckpt`` (base or large)."""
    alignscore_base_model: str | None = None
    """Local directory with the encoder's config.json and tokenizer (roberta-base / -large)."""
    nli_model: str | None = None
    """Local transformers sequence-classification NLI model (directory or cached name)."""
    judge_model: str | None = None
    """Judge chat model: a local CausalLM path (``None`` = the pipeline's LM) or, with
    ``judge_base_url``, the model name on an OpenAI-compatible server."""
    judge_base_url: str | None = None
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
    decomposer_backend: str = "local"
    """For ``decomposer="llm"``: "local" runs a CausalLM in-process (``decomposer_model``
    = a local model path; None = the scoring model); "openai" calls an OpenAI-compatible
    server at ``decomposer_base_url`` (None = the OpenAI API) with model ``decomposer_model``."""
    decomposer_model: str | None = None
    decomposer_base_url: str | None = None
    decomposer_api_key_env: str = "OPENAI_API_KEY"
    """Name of the environment variable holding the API key (the key itself is never stored)."""
    decomposer_timeout: float = 60.0
    decomposer_max_retries: int = 2
    decomposer_concurrency: int = 4
    decomposer_max_tokens: int = 1024
    decomposer_cache_dir: str | None = None
    """Disk cache of decomposition replies; None = ``$FRANQ_HOME/decompose``."""
    decomposer_align: str = "words"
    """LLM claims -> answer words: "words" (content words, deterministic) or "llm" (the
    decomposer's model also lists the supporting words, one call per claim)."""

    def __post_init__(self):
        for key, allowed in (("decomposer", DECOMPOSERS), ("faithfulness", FAITHFULNESS),
                             ("on_overflow", OVERFLOW), ("calibrator_mismatch", CALIBRATOR_MISMATCH),
                             ("mode", MODES), ("judge", JUDGES), ("unfaith_samples", UNFAITH_SAMPLES),
                             ("decomposer_backend", DECOMPOSER_BACKENDS), ("decomposer_align", DECOMPOSER_ALIGN)):
            if getattr(self, key) not in allowed:
                raise InputError(f"config '{key}': expected one of {list(allowed)}, got {getattr(self, key)!r}")
        for key in FAITHFULNESS_NEEDS.get(self.faithfulness, ()):
            if not getattr(self, key):
                raise InputError(f"config '{key}': required when faithfulness is {self.faithfulness!r}")
        if self.judge_base_url and not self.judge_model:
            raise InputError("config 'judge_model': required with judge_base_url (the server's model name)")
        if not isinstance(self.calibrator, str) or not self.calibrator.strip():
            raise InputError(f"config 'calibrator': expected 'default', 'none' or a file path, "
                             f"got {self.calibrator!r}")
        if self.decomposer == "llm" and self.decomposer_backend == "openai" and not self.decomposer_model:
            raise InputError("config 'decomposer_model': the openai decomposer backend needs a model name")
        if not isinstance(self.decomposer_timeout, (int, float)) or self.decomposer_timeout <= 0:
            raise InputError(f"config 'decomposer_timeout': expected a positive number of seconds, "
                             f"got {self.decomposer_timeout!r}")
        if not isinstance(self.decomposer_max_retries, int) or self.decomposer_max_retries < 0:
            raise InputError(f"config 'decomposer_max_retries': expected 0 or more, got {self.decomposer_max_retries!r}")
        for key in ("max_batch_tokens", "max_new_tokens", "n_samples", "decomposer_concurrency",
                    "decomposer_max_tokens"):
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
