"""Config keys removed in 0.2.0, and the key that holds each value now.

Nothing here reads an old key: an old key is an unknown-key error (:mod:`franq.config`),
and :func:`renamed_hint` adds the new key's name to that error.
"""
from __future__ import annotations

from collections.abc import Iterable

FLAT = {  # old top-level key -> new key
    "model": "[model] path", "gguf_file": "[model] gguf_file", "device": "[model] device",
    "dtype": "[model] dtype", "on_overflow": "[model] on_overflow", "max_new_tokens": "[model] max_new_tokens",
    "decomposer": "[decomposer] name", "decomposer_backend": "[decomposer] backend",
    "decomposer_model": "[decomposer] model", "decomposer_base_url": "[decomposer] base_url",
    "decomposer_api_key_env": "[decomposer] api_key_env", "decomposer_timeout": "[decomposer] timeout",
    "decomposer_max_retries": "[decomposer] max_retries", "decomposer_concurrency": "[decomposer] concurrency",
    "decomposer_max_tokens": "[decomposer] max_tokens", "decomposer_cache_dir": "[decomposer] cache_dir",
    "decomposer_align": "[decomposer] align", "faithfulness": "[faithfulness] name",
    "faithfulness_map": "[faithfulness] map", "probe": "[model] probe_file",
    "alignscore_checkpoint": "[faithfulness.alignscore] checkpoint",
    "alignscore_base_model": "[faithfulness.alignscore] base_model", "nli_model": "[faithfulness.nli] model",
    "judge_model": "[faithfulness.judge] model", "judge_base_url": "[faithfulness.judge] base_url",
    "judge": "[uq] equivalence", "n_samples": "[uq] n_samples", "unfaith_samples": "[uq] unfaith_samples",
    "calibrator": "[calibration] calibrator", "calibrator_mismatch": "[calibration] on_mismatch",
    "max_batch_tokens": "[batch] max_batch_tokens",
    "verifiers": "[checks.NAME] (the answering app's answer checks)",
}
IN_SECTION = {  # (section, old key) -> new key
    ("faithfulness", "alignscore_checkpoint"): "[faithfulness.alignscore] checkpoint",
    ("faithfulness", "alignscore_base_model"): "[faithfulness.alignscore] base_model",
    ("faithfulness", "nli_model"): "[faithfulness.nli] model",
    ("faithfulness", "judge_model"): "[faithfulness.judge] model",
    ("faithfulness", "judge_base_url"): "[faithfulness.judge] base_url",
    ("model", "fallback_path"): "[fallbacks.model] path",
    ("model", "probe"): "[model] probe_file",
}


def renamed_hint(keys: Iterable[str], section: str | None = None) -> str:
    """``" (renamed in 0.2.0: 'judge' is now [uq] equivalence)"`` for the old keys among
    ``keys`` (top-level when ``section`` is None); ``""`` when none is an old key."""
    new = {k: FLAT.get(k) if section is None else IN_SECTION.get((section, k)) for k in keys}
    moved = [f"'{k}' is now {n}" for k, n in new.items() if n]
    return f" (renamed in 0.2.0: {'; '.join(moved)})" if moved else ""
