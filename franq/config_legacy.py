"""Old config keys, still read: flat top-level keys (``faithfulness = "lexical"``) and a
component's settings named in its section (``[faithfulness] nli_model``). Each is moved to
its new place with one :class:`FranqDeprecationWarning` naming every new key.
"""
from __future__ import annotations

import warnings
from typing import Any

from franq.errors import InputError


class FranqDeprecationWarning(FutureWarning):
    """A config key that still works but has a new name (shown to users by default)."""


LEGACY_KEYS = {  # old flat key -> (table, key)
    "model": ("model", "path"), "gguf_file": ("model", "gguf_file"), "device": ("model", "device"),
    "dtype": ("model", "dtype"), "on_overflow": ("model", "on_overflow"),
    "max_new_tokens": ("model", "max_new_tokens"),
    "decomposer": ("decomposer", "name"), "decomposer_backend": ("decomposer", "backend"),
    "decomposer_model": ("decomposer", "model"), "decomposer_base_url": ("decomposer", "base_url"),
    "decomposer_api_key_env": ("decomposer", "api_key_env"), "decomposer_timeout": ("decomposer", "timeout"),
    "decomposer_max_retries": ("decomposer", "max_retries"),
    "decomposer_concurrency": ("decomposer", "concurrency"),
    "decomposer_max_tokens": ("decomposer", "max_tokens"), "decomposer_cache_dir": ("decomposer", "cache_dir"),
    "decomposer_align": ("decomposer", "align"),
    "faithfulness": ("faithfulness", "name"), "faithfulness_map": ("faithfulness", "map"),
    "probe": ("model", "probe_file"), "alignscore_checkpoint": ("faithfulness.alignscore", "checkpoint"),
    "alignscore_base_model": ("faithfulness.alignscore", "base_model"),
    "nli_model": ("faithfulness.nli", "model"), "judge_model": ("faithfulness.judge", "model"),
    "judge_base_url": ("faithfulness.judge", "base_url"),
    "judge": ("uq", "equivalence"), "n_samples": ("uq", "n_samples"),
    "unfaith_samples": ("uq", "unfaith_samples"),
    "calibrator": ("calibration", "calibrator"), "calibrator_mismatch": ("calibration", "on_mismatch"),
    "max_batch_tokens": ("batch", "max_batch_tokens"),
}
LEGACY_SECTION_KEYS = {  # (section, old key) -> (component table, key)
    ("faithfulness", "alignscore_checkpoint"): ("faithfulness.alignscore", "checkpoint"),
    ("faithfulness", "alignscore_base_model"): ("faithfulness.alignscore", "base_model"),
    ("faithfulness", "nli_model"): ("faithfulness.nli", "model"),
    ("faithfulness", "judge_model"): ("faithfulness.judge", "model"),
    ("faithfulness", "judge_base_url"): ("faithfulness.judge", "base_url"),
    ("model", "fallback_path"): ("fallbacks.model", "path"),
    ("model", "probe"): ("model", "probe_file"),  # "probe" also names a preset, a backend and two scorers
}


def table(data: dict[str, Any], path: list[str], source: str) -> dict[str, Any]:
    """The (nested) table at ``path`` in ``data``, made when missing."""
    for i, part in enumerate(path):
        if not isinstance(data.setdefault(part, {}), dict):
            raise InputError(f"{source}: '{'.'.join(path[:i + 1])}' must be a table of settings")
        data = data[part]
    return data


def copy_tables(data: dict[str, Any]) -> dict[str, Any]:
    return {k: copy_tables(v) if isinstance(v, dict) else v for k, v in data.items()}


def from_flat_keys(data: dict[str, Any], source: str) -> dict[str, Any]:
    """Old flat keys -> sections, with one deprecation warning naming every new key."""
    flat = [k for k in data if k in LEGACY_KEYS and not isinstance(data[k], dict)]
    if not flat:
        return data
    out = copy_tables({k: v for k, v in data.items() if k not in flat})  # the caller's dict is left alone
    for key in flat:
        path, new = LEGACY_KEYS[key]
        table(out, path.split("."), source)[new] = data[key]
    renames = ", ".join(f"'{k}' -> [{LEGACY_KEYS[k][0]}] {LEGACY_KEYS[k][1]}" for k in flat)
    warnings.warn(f"{source}: flat config keys are deprecated; use the sections: {renames}",
                  FranqDeprecationWarning, stacklevel=3)
    return out


def from_section_keys(data: dict[str, Any], source: str) -> dict[str, Any]:
    """Old component keys in a section (``[faithfulness] nli_model``) -> the component's
    table (``[faithfulness.nli] model``), with one deprecation warning naming every new key."""
    old = [(s, k) for s, k in LEGACY_SECTION_KEYS if isinstance(data.get(s), dict) and k in data[s]]
    if not old:
        return data
    out = copy_tables(data)
    for section, key in old:
        path, new = LEGACY_SECTION_KEYS[section, key]
        value = out[section].pop(key)
        target = table(out, path.split("."), source)
        if target.get(new, value) != value:
            raise InputError(f"{source}: [{section}] {key} and [{path}] {new} disagree; keep only [{path}] {new}")
        target[new] = value
    renames = ", ".join(f"[{s}] {k} -> [{LEGACY_SECTION_KEYS[s, k][0]}] {LEGACY_SECTION_KEYS[s, k][1]}"
                        for s, k in old)
    warnings.warn(f"{source}: these keys are deprecated; use the component tables: {renames}",
                  FranqDeprecationWarning, stacklevel=3)
    return out
