"""The checks a :class:`franq.config.FranqConfig` runs on its values when it is built, long
before a model loads: types against each field's annotation, enumerations, numbers and
settings that go together. Component names are resolved elsewhere
(:func:`franq.presets.check_config`)."""
from __future__ import annotations

import dataclasses
import re
from typing import Any

from franq.errors import InputError, register_secret_env
from franq.limits import check_settings
from franq.lm.served.checks import check_model_keys

MODES = ("long", "short", "auto", "fast", "chat")
OVERFLOW = ("truncate", "error")
CALIBRATOR_MISMATCH = ("warn", "error", "force")
DECOMPOSER_BACKENDS = ("local", "openai")
DECOMPOSER_ALIGN = ("words", "llm")
UNFAITH_SAMPLES = ("rag", "closed")
SHORT_SCORING = ("auto", "in_policy", "observer", "probe")


MAX_TEMPERATURE = 100.0
"""Sampling temperatures above this are noise (and ``inf`` would score every sample 0.0)."""


def _positive_int(value: Any, where: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise InputError(f"config '{where}': expected a positive integer, got {value!r}")


def _choice(value: Any, allowed, where: str) -> None:
    if value not in allowed:
        raise InputError(f"config '{where}': expected one of {list(allowed)}, got {value!r}")


_TYPES = {"str": str, "int": int, "float": (int, float), "bool": bool}
DTYPES = ("float32", "float16", "bfloat16", "auto")
DEVICE_RE = re.compile(r"^(cpu|cuda|mps|xpu|hip|npu|meta|xla|hpu|ipu|mtia|privateuseone)(:\d+)?$")


def _check_types(c) -> None:
    """Every setting has the type its field declares (``str | None``, ``int``, ``float``),
    checked when the config is built, long before a model loads."""
    from franq.config import SECTIONS, PresetScorers

    for name in SECTIONS:
        section = getattr(c, name)
        for f in dataclasses.fields(section):
            value = getattr(section, f.name)
            where = f"{name}.{f.name}"
            if isinstance(value, PresetScorers):
                for key in ("faith", "unfaith"):
                    _check_type(getattr(value, key), "str", f"{where}.{key}")
                for i, extra in enumerate(value.extra):
                    _check_type(extra, "str", f"{where}.extra[{i}]")
                continue
            _check_type(value, str(f.type), where)
    _check_type(c.mode, "str", "mode")


def _check_type(value: Any, annotation: str, where: str) -> None:
    kinds = [k.strip() for k in annotation.split("|")]
    if value is None and "None" in kinds:
        return
    wanted = [k for k in kinds if k in _TYPES]
    if not wanted:
        return
    ok = any(isinstance(value, _TYPES[k]) and not (isinstance(value, bool) and k != "bool") for k in wanted)
    if not ok:
        shown = " or ".join({"str": "a string", "int": "an integer", "float": "a number",
                             "bool": "true or false"}[k] for k in wanted)
        none = " (or unset)" if "None" in kinds else ""
        raise InputError(f"config '{where}': expected {shown}{none}, got {type(value).__name__} {value!r}")


def check_values(c) -> None:
    """Values that need no registry: types, enumerations, numbers, settings that go together."""
    from franq.config import SECTIONS

    _check_types(c)
    _choice(c.mode, MODES, "mode")
    if c.model.dtype is not None:
        _choice(c.model.dtype, DTYPES, "model.dtype")
    if c.model.device is not None and not DEVICE_RE.match(c.model.device):
        raise InputError(f"config 'model.device': expected a torch device such as 'cpu', 'cuda', 'cuda:1' "
                         f"or 'mps', got {c.model.device!r}")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", c.decomposer.api_key_env):
        raise InputError(f"config 'decomposer.api_key_env': expected the name of an environment variable, "
                         f"got {c.decomposer.api_key_env!r}")
    register_secret_env(c.decomposer.api_key_env)
    _choice(c.model.on_overflow, OVERFLOW, "model.on_overflow")
    check_model_keys(c.model, c.limits)
    _positive_int(c.model.max_new_tokens, "model.max_new_tokens")
    _positive_int(c.model.threads if c.model.threads is not None else 1, "model.threads")
    d = c.decomposer
    _choice(d.backend, DECOMPOSER_BACKENDS, "decomposer.backend")
    _choice(d.align, DECOMPOSER_ALIGN, "decomposer.align")
    if d.name == "llm" and d.backend == "openai" and not d.model:
        raise InputError("config 'decomposer.model': the openai decomposer backend needs a model name")
    if not isinstance(d.timeout, (int, float)) or isinstance(d.timeout, bool) or d.timeout <= 0:
        raise InputError(f"config 'decomposer.timeout': expected a positive number of seconds, got {d.timeout!r}")
    if not isinstance(d.max_retries, int) or isinstance(d.max_retries, bool) or d.max_retries < 0:
        raise InputError(f"config 'decomposer.max_retries': expected 0 or more, got {d.max_retries!r}")
    _positive_int(d.concurrency, "decomposer.concurrency"), _positive_int(d.max_tokens, "decomposer.max_tokens")
    u = c.uq
    if not isinstance(u.n_samples, int) or isinstance(u.n_samples, bool) or u.n_samples < 2:
        raise InputError(f"config 'uq.n_samples': expected an integer >= 2, got {u.n_samples!r}")
    _choice(u.unfaith_samples, UNFAITH_SAMPLES, "uq.unfaith_samples")
    _choice(u.short_scoring, SHORT_SCORING, "uq.short_scoring")
    if isinstance(u.temperature, bool) or not isinstance(u.temperature, (int, float)) \
            or not 0 <= u.temperature <= MAX_TEMPERATURE:
        raise InputError(f"config 'uq.temperature': expected a finite number from 0 to {MAX_TEMPERATURE}, "
                         f"got {u.temperature!r}")
    _positive_int(u.max_sample_tokens, "uq.max_sample_tokens")
    cal = c.calibration
    if not isinstance(cal.calibrator, str) or not cal.calibrator.strip():
        raise InputError(f"config 'calibration.calibrator': expected 'default', 'none' or a file path, "
                         f"got {cal.calibrator!r}")
    _choice(cal.on_mismatch, CALIBRATOR_MISMATCH, "calibration.on_mismatch")
    if cal.threshold is not None and (isinstance(cal.threshold, bool) or not isinstance(cal.threshold, (int, float))
                                      or not 0.0 <= cal.threshold <= 1.0):
        raise InputError(f"config 'calibration.threshold': expected a probability in [0, 1], got {cal.threshold!r}")
    if cal.prior is not None and (isinstance(cal.prior, bool) or not isinstance(cal.prior, (int, float))
                                  or not 0.0 < cal.prior < 1.0):
        raise InputError(f"config 'calibration.prior': expected a share of true claims strictly between 0 and 1, "
                         f"got {cal.prior!r}")
    if isinstance(cal.uncertain_margin, bool) or not isinstance(cal.uncertain_margin, (int, float)) \
            or not 0.0 <= cal.uncertain_margin <= 1.0:
        raise InputError(f"config 'calibration.uncertain_margin': expected a number in [0, 1], "
                         f"got {cal.uncertain_margin!r}")
    _positive_int(c.batch.max_batch_tokens, "batch.max_batch_tokens")
    check_settings(c)  # [limits]: threads, samples, tokens
    for name in SECTIONS:  # after the checks with their own messages
        section = getattr(c, name)
        for f in dataclasses.fields(section):
            value = getattr(section, f.name)
            if isinstance(value, str) and not value.strip():
                raise InputError(f"config '{name}.{f.name}': is an empty string; leave it out for the default")
