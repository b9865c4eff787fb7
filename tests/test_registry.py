"""franq.registry: components by name, and components added from outside the package
through entry points (one file and one registration, nothing in franq changed)."""
from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from franq import registry
from franq.config import FranqConfig
from franq.errors import InputError
from franq.presets import check_config

ROOT = Path(__file__).resolve().parents[1]

PLUGIN = '''
import numpy as np

from franq.registry import Setting
from franq.scorers.base import Signal

BUILT = []  # the settings each SetFaithfulness was built with


class SetFaithfulness:
    """P(supported) = its ``[faithfulness.toy_set] constant`` for every claim: a plugin with settings."""

    needs = frozenset()
    settings = (Setting("constant", float, 0.5, "P(supported) of every claim"),
                Setting("label", str, "set", "a name for the results"))

    @classmethod
    def from_config(cls, config, lm=None):
        settings = config.settings_for("faithfulness", "toy_set")
        BUILT.append(settings)
        return cls(settings["constant"], settings["label"])

    def __init__(self, constant, label):
        self.constant = constant
        self.name = f"toy-set:{label}:{constant}"

    def predict(self, pairs, evidence=None):
        return np.full(len(pairs), self.constant)


class ToyFaithfulness:
    """P(supported) = 0.5 for every claim."""

    name = "toy-v1"
    needs = frozenset()

    def predict(self, pairs, evidence=None):
        return np.full(len(pairs), 0.5)


class ToyScorer:
    """UQ = 0.25 for every claim, declared as a log-probability."""

    name = "toy_scorer"
    needs = frozenset()
    signals = (Signal("log_toy", "log_prob", True, "log 0.25"),)

    def score(self, batch):
        return {"log_toy": np.full(len(batch), np.log(0.25))}

    def probability(self, primary):
        return np.exp(primary)


class ToySampleScorer(ToyScorer):
    name = "toy_samples"
    needs = frozenset({"samples"})
'''
APP = '''
import click

import franq


@click.command()
@click.option("--threshold", type=float, default=0.5, help="Abstain below this P(true).")
def toy_abstain(threshold):
    """A toy application: the public API only."""
    click.echo(f"toy app on franq {franq.__version__}, threshold {threshold}")
'''
ENTRY_POINTS = '''
[franq.faithfulness]
toy = toy_franq_plugin:ToyFaithfulness
toy_set = toy_franq_plugin:SetFaithfulness

[franq.scorers]
toy_scorer = toy_franq_plugin:ToyScorer
toy_samples = toy_franq_plugin:ToySampleScorer

[franq.equivalence]
broken = toy_franq_plugin:NoSuchClass

[franq.apps]
toy-abstain = toy_franq_plugin.app:toy_abstain
'''


def write_plugin(root: Path) -> Path:
    """A package ``toy_franq_plugin`` and its installed metadata (what pip would write)."""
    (root / "toy_franq_plugin").mkdir(parents=True)
    (root / "toy_franq_plugin" / "__init__.py").write_text(textwrap.dedent(PLUGIN))
    (root / "toy_franq_plugin" / "app.py").write_text(textwrap.dedent(APP))
    info = root / "toy_franq_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-franq-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS.lstrip())
    return root


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    root = write_plugin(tmp_path / "site")
    monkeypatch.syspath_prepend(str(root))
    registry.clear_cache()
    yield root
    sys.modules.pop("toy_franq_plugin", None)
    registry.clear_cache()


def test_builtin_names_come_first_and_lookup_errors_list_them():
    assert registry.names("faithfulness")[:6] == ["combined", "lexical", "context_pmi", "alignscore", "nli", "judge"]
    with pytest.raises(InputError, match=r"unknown scorer 'nope'; known: \['claim_prob'"):
        registry.lookup("scorers", "nope")
    with pytest.raises(ValueError, match="component kind must be one of"):
        registry.names("judges")


def test_plugin_faithfulness_backend_from_an_entry_point_scores(plugin, tiny_lm, tiny_lm_path):
    from franq.pipeline import Franq

    assert "toy" in registry.names("faithfulness") and "toy" not in registry.BUILTIN["faithfulness"]
    config = FranqConfig.from_dict({"model": {"path": str(tiny_lm_path), "device": "cpu"},
                                    "faithfulness": {"name": "toy"}, "calibration": {"calibrator": "none"}})
    result = Franq(config, tiny_lm).score("Where is the tower?", ["The tower is in Paris."],
                                          "The tower is in Paris. It was built in 1889.")
    assert result.stack.faithfulness == "toy-v1" == result.stack["faithfulness"]
    assert result.scored and all(c.p_faithful == 0.5 for c in result.scored)


def test_plugin_scorer_from_an_entry_point_is_uq_unfaith(plugin, tiny_lm, make_franq):
    franq = make_franq(tiny_lm, {"uq": {"long": {"unfaith": "toy_scorer"}}})
    result = franq.score("Where is the tower?", ["The tower is in Paris."], "The tower is in Paris.")
    assert result.stack["uq_unfaith"] == "toy_scorer" and franq.components["long"]["uq_unfaith"] == "toy_scorer"
    for c in result.scored:
        assert c.uq_unfaith == pytest.approx(0.25) and c.signals["log_toy"] == pytest.approx(-1.3862944)
        assert c.p_true_raw == pytest.approx(c.p_faithful * c.uq_faith + (1 - c.p_faithful) * 0.25)


def test_plugin_needs_are_checked_like_builtin_ones(plugin):
    with pytest.raises(InputError, match="'uq.long.faith': 'toy_samples' cannot run in the long preset"):
        check_config(FranqConfig.from_dict({"uq": {"long": {"faith": "toy_samples"}}}))
    check_config(FranqConfig.from_dict({"mode": "short", "uq": {"short": {"faith": "toy_samples"}}}))


def test_broken_plugin_names_itself(plugin):
    with pytest.raises(InputError, match="'uq.equivalence': equivalence judge 'broken': its entry point "
                                         "'toy_franq_plugin:NoSuchClass' failed to load"):
        check_config(FranqConfig.from_dict({"uq": {"equivalence": "broken"}}))


def test_plugins_are_gone_after_clear_cache_without_them(plugin, monkeypatch):
    assert "toy" in registry.names("faithfulness")
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p != str(plugin)])
    registry.clear_cache()
    assert "toy" not in registry.names("faithfulness")
    with pytest.raises(InputError, match="'faithfulness.name': unknown faithfulness backend 'toy'"):
        check_config(FranqConfig.from_dict({"faithfulness": {"name": "toy"}}))


def test_cli_scores_with_a_plugin_installed_as_one_file_and_one_registration(tmp_path, tiny_lm_path):
    root = write_plugin(tmp_path / "site")
    config = tmp_path / "franq.toml"
    config.write_text('[uq.long]\nunfaith = "toy_scorer"\n\n[calibration]\ncalibrator = "none"\n')
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(ROOT)]), "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-m", "franq", "score", "--example", "--model", str(tiny_lm_path),
                           "--device", "cpu", "--faithfulness", "toy", "--config", str(config), "--format", "json"],
                          capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout)
    assert record["stack"]["faithfulness"] == "toy-v1" and record["stack"]["uq_unfaith"] == "toy_scorer"
    scored = [c for c in record["claims"] if c["status"] == "scored"]
    assert scored and all(c["p_faithful"] == 0.5 and c["uq_unfaith"] == pytest.approx(0.25) for c in scored)


def test_cli_gains_a_plugin_application_as_a_subcommand(tmp_path):
    root = write_plugin(tmp_path / "site")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(ROOT)])}
    listed = subprocess.run([sys.executable, "-m", "franq", "--help"], capture_output=True, text=True, env=env)
    assert listed.returncode == 0, listed.stderr
    assert "toy-abstain" in listed.stdout and "A toy application" in listed.stdout
    run = subprocess.run([sys.executable, "-m", "franq", "toy-abstain", "--threshold", "0.7"],
                         capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().endswith("threshold 0.7")


def test_plugin_backend_with_its_own_settings_table_runs_through_the_cli(plugin, tmp_path, tiny_lm_path):
    from click.testing import CliRunner

    from franq.cli import main

    toy = sys.modules.get("toy_franq_plugin") or __import__("toy_franq_plugin")
    config = tmp_path / "franq.toml"
    config.write_text('[calibration]\ncalibrator = "none"\n\n[faithfulness.toy_set]\nconstant = 0.3\nlabel = "mine"\n')
    args = ["score", "--example", "--model", str(tiny_lm_path), "--device", "cpu", "--faithfulness", "toy_set",
            "--config", str(config), "--format", "json"]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    record = json.loads(res.stdout)
    assert record["stack"]["faithfulness"] == "toy-set:mine:0.3" and toy.BUILT[-1] == {"constant": 0.3, "label": "mine"}
    scored = [c for c in record["claims"] if c["status"] == "scored"]
    assert scored and all(c["p_faithful"] == pytest.approx(0.3) for c in scored)

    built = len(toy.BUILT)
    for table, message in (("constnt = 0.3", "config 'faithfulness.toy_set.constnt': unknown setting; "
                                             "known: ['constant', 'label']"),
                           ('constant = "high"', "config 'faithfulness.toy_set.constant': expected a number, "
                                                 "got str 'high'")):
        config.write_text(f"[faithfulness.toy_set]\n{table}\n")
        res = CliRunner().invoke(main, args)
        assert res.exit_code != 0
        lines = [line for line in res.output.splitlines() if line.strip()]
        assert len(lines) == 1 and message in lines[0], res.output
    assert len(toy.BUILT) == built  # refused when the config was read: nothing was built


def test_plugin_settings_defaults_and_overrides(plugin):
    config = FranqConfig.from_dict({"faithfulness": {"name": "toy_set"}})
    assert config.settings_for("faithfulness", "toy_set") == {"constant": 0.5, "label": "set"}
    config = config.with_overrides({"faithfulness.toy_set.constant": 1})
    assert config.settings_for("faithfulness", "toy_set")["constant"] == 1
    assert config.to_dict()["faithfulness"]["toy_set"] == {"constant": 1}
    with pytest.raises(InputError, match="'faithfulness.toy_set.label': expected a string, got int 3"):
        check_config(config.with_overrides({"faithfulness.toy_set.label": 3}))


def test_kinds_added_outside_the_library(monkeypatch):
    """The library declares four kinds and names no application; franq.apps adds its own."""
    importlib.import_module("franq.apps")  # declares the applications' kinds

    assert registry.kinds()[:4] == ("scorers", "faithfulness", "decomposers", "equivalence")
    assert {"apps", "checks", "fallbacks", "raters"} <= set(registry.kinds())
    assert '"franq.apps.' not in (ROOT / "franq" / "registry.py").read_text()  # no app module named
    monkeypatch.setattr(registry, "BUILTIN", {k: dict(v) for k, v in registry.BUILTIN.items()})
    monkeypatch.setattr(registry, "_LABEL", dict(registry._LABEL))
    registry.add_kind("widgets", {"plain": "franq.faithfulness.lexical:LexicalFaithfulness"}, label="widget")
    assert registry.names("widgets") == ["plain"]
    with pytest.raises(InputError, match="unknown widget 'fancy'; known: \\['plain'\\]"):
        registry.lookup("widgets", "fancy")
    with pytest.raises(InputError, match="config 'widgets.plain.x': unknown setting; known: \\[\\]"):
        check_config(FranqConfig.from_dict({"widgets": {"plain": {"x": 1}}}))
