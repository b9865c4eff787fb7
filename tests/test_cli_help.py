"""The CLI's help texts: every option of the main commands has one, every default an
option states is the config's default (they cannot drift apart), and -v is accepted after
the subcommand."""
from __future__ import annotations

import functools

import re
import subprocess
import sys

import pytest
from click.testing import CliRunner

from conftest import GOOD, run_cli, tiny_cli_args
from franq.cli import main

STATED = [r"'([\w.]+)' \(default\b", r"\(default: (?:the config's, )?'?([\w.]+)'?\)", r"Default: the config's \(([\w.]+)\)"]
"""How a help text states a default: "'atomic' (default: ...)", "(default: combined)",
"(default: the config's, 256)", "Default: the config's (long)"."""


def _commands(group, path=()):
    import click

    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from _commands(command, (*path, name))
        else:
            yield " ".join((*path, name)), command


def test_help_defaults_match_the_config_defaults_for_every_option_that_states_one():
    import click

    from franq.cli.options import DEFAULTS, FLAG_KEYS

    keys = {**FLAG_KEYS, "max_new_tokens": "model.max_new_tokens"}
    checked = set()
    for where, command in _commands(main):
        for p in command.params:
            said = (p.help or "").replace("'default' (default", "(default").replace("'default'", "")  # the value
            states = "(default" in said.lower() or "default:" in said.lower()  # not "Default preset."
            if not isinstance(p, click.Option) or p.name not in keys or not states:
                continue
            real = DEFAULTS
            for part in keys[p.name].split("."):
                real = getattr(real, part)
            if real is None:
                continue  # a described default ("the embedded SmolLM2", "cuda if available")
            stated = [m.group(1) for pattern in STATED for m in re.finditer(pattern, p.help)]
            assert stated, f"{where} {p.opts[-1]}: states a default in a form this test cannot read: {p.help!r}"
            assert stated == [str(real)], f"{where} {p.opts[-1]}: help says {stated}, the config's default is {real!r}"
            checked.add((where, p.opts[-1]))
    assert {("score", "--decomposer"), ("score", "--faithfulness"), ("score", "--mode"),
            ("score", "--calibrator-mismatch"), ("answer", "--max-new-tokens")} <= checked


def test_help_of_score_states_the_atomic_decomposer_default():
    text = run_cli("score", "--help").output
    assert "'atomic' (default" in " ".join(text.split())


def test_verbose_flag_is_accepted_after_the_subcommand(tiny_lm_path):
    res = CliRunner().invoke(main, ["score", "-q", GOOD["question"], "-p", GOOD["passages"][0], "-a", GOOD["answer"],
                                    *tiny_cli_args(tiny_lm_path), "--format", "json", "-v"])
    assert res.exit_code == 0, res.output
    for command in (["score"], ["answer"], ["fit", "calibrator"], ["report"], ["serve"]):
        assert "-v, --verbose" in CliRunner().invoke(main, [*command, "--help"]).output


def _option_help(help_text: str) -> dict[str, str]:
    """Each option of a click help page, with its description (click writes it after the
    option on the same line, or on the next, indented line when the option is long)."""
    lines = help_text.split("\nOptions:\n", 1)[1].splitlines()
    out = {}
    for i, line in enumerate(lines):
        if not line.startswith("  -"):
            continue
        term, _, desc = line.strip().partition("  ")
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if not desc.strip() and nxt.startswith("      ") and not nxt.strip().startswith("-"):
            desc = nxt
        out[term] = desc.strip()
    return out


@pytest.mark.parametrize("command", [["score"], ["answer"], ["fit", "calibrator"]])
def test_cli_help_describes_every_option(command):
    from franq import cli

    proc = subprocess.run([sys.executable, "-m", "franq", *command, "--help"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    options = _option_help(proc.stdout)
    declared = [p for p in functools.reduce(lambda group, name: group.commands[name], command, cli.main).params
                if p.param_type_name == "option"]
    assert len(options) == len(declared) + 1  # and --help
    undocumented = [term for term, desc in options.items() if not desc]
    assert not undocumented, f"options without help text: {undocumented}"
    for shared in ("--config FILE", "--model TEXT", "--faithfulness TEXT", "--calibrator TEXT"):
        assert shared in options
    # every command offers the three FRANQ modes and the two that load no causal LM (fast, chat)
    assert "--mode [long|short|auto|fast|chat]" in options
