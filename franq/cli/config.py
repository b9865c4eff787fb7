"""``franq config show``: every effective config value and where it came from.

Takes the flags ``franq score`` takes for its stack, builds the config the same way, and
prints each key as a TOML line with a trailing comment naming its source: ``# default``,
``# file PATH``, ``# flag --x`` or ``# env NAME`` (an environment variable that fills a
value the config leaves unset: ``OMP_NUM_THREADS`` for ``model.threads``, ``FRANQ_HOME``
for ``decomposer.cache_dir``). ``--json`` prints ``{key: {"value", "source"}}``. API keys
are never printed: a key's variable is named, with whether it is set.
"""
from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import click

from franq import files
from franq.cli.options import (
    CALIBRATOR_MISMATCH_OPTION, DECOMPOSER_OPTIONS, FAST_OPTION, FLAG_KEYS, PRIOR_OPTION, THRESHOLD_OPTION, StackFlags,
    decomposer_flags, fail, fast_mode, options, printable, stack,
)
from franq.config import SECTIONS, FranqConfig
from franq.config_reference import toml_value
from franq.errors import FranqError
from franq.settings import where

@dataclasses.dataclass(frozen=True)
class Value:
    """One effective value and its source (``default``, ``file PATH``, ``flag --x``, ``env NAME``)."""

    key: str
    value: Any
    source: str
    note: str = ""


def file_data(path: str | None) -> dict[str, Any]:
    """The config file's tables as written (read within the same limits as :meth:`FranqConfig.from_file`)."""
    if not path:
        return {}
    text = files.read_text(Path(path), limit="config_bytes", what="config")
    if path.endswith(".toml"):
        return files.load_toml(text, f"config {path}")
    return files.load_json(text, f"config {path}", max_int=files.INT64)


def _given(data: dict[str, Any], dotted: str) -> bool:
    node: Any = data
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def effective(cfg: FranqConfig, config_path: str | None, flags: dict[str, str]) -> list[Value]:
    """Every key of ``cfg`` with its source; ``flags``: ``{dotted key: "--flag"}`` of the flags given."""
    data, default = file_data(config_path), FranqConfig()

    def source(key: str, value: Any, default_value: Any) -> str:
        if key in flags:
            return f"flag {flags[key]}"
        if config_path and (_given(data, key) or value != default_value):  # != : an old key the file spelt otherwise
            return f"file {config_path}"
        return "default"

    out = [Value("mode", cfg.mode, source("mode", cfg.mode, default.mode))]
    for name in SECTIONS:
        section, base = getattr(cfg, name), getattr(default, name)
        for f in dataclasses.fields(section):
            key, value = f"{name}.{f.name}", getattr(section, f.name)
            out.append(Value(key, value, source(key, value, getattr(base, f.name))))
    out = [_from_environment(v) for v in out]
    chosen = {("faithfulness", cfg.faithfulness.name), ("decomposers", cfg.decomposer.name),
              ("equivalence", cfg.uq.equivalence), *((k, n) for k, n, _ in cfg.components)}
    for kind, name in sorted(chosen):
        given = cfg.components.get(kind, name)
        for key, value in cfg.settings_for(kind, name).items():
            src = f"file {config_path}" if key in given else "default"
            out.append(Value(f"{where(kind, name)}.{key}", value, src))
    for name in cfg.limits:
        key = f"limits.{name}"
        value = cfg.limits[name]
        out.append(Value(key, value, f"flag --limit {name}={value}" if key in flags else
                         source(key, value, default.limits[name])))
    return out


def _from_environment(v: Value) -> Value:
    """``v`` with what the environment fills in where the config leaves it unset."""
    if v.key == "model.threads" and v.value is None:
        from franq.lm.threads import resolve_threads  # the rule every command sets its threads by

        threads, source = resolve_threads()
        if source == "default":
            return Value(v.key, threads, "default", "half the usable cores")
        return Value(v.key, threads, f"env {source}")
    if v.key == "decomposer.cache_dir" and v.value is None:
        from franq.lm.load import franq_home

        return Value(v.key, str(franq_home() / "decompose"), "env FRANQ_HOME" if os.environ.get("FRANQ_HOME")
                     else "default")
    if v.key.endswith("api_key_env") and v.value:
        return dataclasses.replace(v, note=f"${v.value} is {'set' if os.environ.get(v.value) else 'not set'}")
    return v


def toml_lines(values: list[Value]) -> str:
    """The values as TOML, one table per section, each line's source in a trailing comment."""
    lines, table = [], ""
    for v in values:
        section, _, key = v.key.rpartition(".")
        if section != table:
            lines.append(f"\n[{section}]")
            table = section
        note = f" ({v.note})" if v.note else ""
        lines.append(printable(f"{key} = {toml_value(v.value)}  # {v.source}{note}"))
    return "\n".join(lines).lstrip("\n")


@click.group("config")
def config() -> None:
    """See the configuration a command runs with."""


@config.command("show")
@options(DECOMPOSER_OPTIONS)
@THRESHOLD_OPTION
@CALIBRATOR_MISMATCH_OPTION
@PRIOR_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print {key: {value, source}} as JSON.")
@FAST_OPTION
@stack
def show(decomposer, decomposer_model, decomposer_base_url, threshold, calibrator_mismatch, prior, as_json, fast,
         stack: StackFlags):
    """Print every effective config value and where it came from: # default, # file PATH,
    # flag --x or # env NAME. Takes the stack flags of `franq score`."""
    more = {"calibrator_mismatch": calibrator_mismatch, "threshold": threshold, "prior": prior,
            **decomposer_flags(decomposer, decomposer_model, decomposer_base_url)}
    given = {**{k: v for k, v in vars(stack).items() if k not in ("config_path", "limits")}, **more}
    flags = {FLAG_KEYS[k]: f"--{k.replace('_', '-')}" for k, v in given.items() if v is not None}
    if decomposer_base_url:
        flags["decomposer.backend"] = "--decomposer-base-url"
    flags.update({f"limits.{name}": "--limit" for name, _ in stack.limits})
    if fast:
        flags["mode"] = "--fast"
    try:
        values = effective(stack.config(mode=fast_mode(fast, stack.mode), **more), stack.config_path, flags)
    except FranqError as exc:
        raise fail(exc) from None
    if as_json:
        click.echo(json.dumps({v.key: {"value": dataclasses.asdict(v.value) if dataclasses.is_dataclass(v.value)
                                       else v.value, "source": v.source, **({"note": v.note} if v.note else {})}
                               for v in values}, indent=2))
    else:
        click.echo(toml_lines(values))
