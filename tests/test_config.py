"""FranqConfig: nested sections from TOML and JSON, old flat files with a deprecation
warning naming the new keys, errors naming the key, overrides, and the CLI's help text."""
from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
import warnings

import pytest

from franq.config import FranqConfig, FranqDeprecationWarning
from franq.errors import InputError
from franq.presets import check_config

NESTED_TOML = '''
mode = "auto"

[model]
path = "/models/llama"
device = "cpu"

[decomposer]
name = "llm"
model = "/models/chat"

[faithfulness]
name = "lexical"

[uq]
equivalence = "jaccard"
n_samples = 5

[uq.short]
faith = "eigval"
extra = ["lexical_similarity"]

[calibration]
calibrator = "none"
on_mismatch = "error"

[batch]
max_batch_tokens = 2048
'''
NESTED = {
    "mode": "auto",
    "model": {"path": "/models/llama", "device": "cpu"},
    "decomposer": {"name": "llm", "model": "/models/chat"},
    "faithfulness": {"name": "lexical"},
    "uq": {"equivalence": "jaccard", "n_samples": 5, "short": {"faith": "eigval", "extra": ["lexical_similarity"]}},
    "calibration": {"calibrator": "none", "on_mismatch": "error"},
    "batch": {"max_batch_tokens": 2048},
}
FLAT = {  # the same settings in the old flat keys (which cannot choose scorers)
    "mode": "auto", "model": "/models/llama", "device": "cpu", "decomposer": "llm",
    "decomposer_model": "/models/chat", "faithfulness": "lexical", "judge": "jaccard", "n_samples": 5,
    "calibrator": "none", "calibrator_mismatch": "error", "max_batch_tokens": 2048,
}


def _strict(fn, *args):
    """``fn(*args)`` with every warning an error: the nested form is not deprecated."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn(*args)


def test_nested_toml_and_json_files_load_the_same_config(tmp_path):
    toml, js = tmp_path / "franq.toml", tmp_path / "franq.json"
    toml.write_text(NESTED_TOML)
    js.write_text(json.dumps(NESTED))
    a, b = _strict(FranqConfig.from_file, toml), _strict(FranqConfig.from_file, js)
    assert a == b == _strict(FranqConfig.from_dict, NESTED)
    assert a.mode == "auto" and a.model.path == "/models/llama" and a.model.device == "cpu"
    assert a.decomposer.name == "llm" and a.decomposer.model == "/models/chat"
    assert a.uq.equivalence == "jaccard" and a.uq.n_samples == 5
    assert (a.uq.short.faith, a.uq.short.unfaith, a.uq.short.extra) == ("eigval", "eigval", ("lexical_similarity",))
    assert (a.uq.long.faith, a.uq.long.unfaith) == ("claim_prob", "parametric")  # untouched defaults
    assert a.calibration.on_mismatch == "error" and a.batch.max_batch_tokens == 2048
    assert FranqConfig.from_dict(a.to_dict()) == a


@pytest.mark.parametrize("suffix", [".json", ".toml"])
def test_flat_legacy_file_loads_with_a_warning_naming_each_new_key(tmp_path, suffix):
    path = tmp_path / f"old{suffix}"
    if suffix == ".json":
        path.write_text(json.dumps(FLAT))
    else:
        path.write_text("".join(f"{k} = {json.dumps(v)}\n" for k, v in FLAT.items()))
    with pytest.warns(FranqDeprecationWarning) as record:
        old = FranqConfig.from_file(path)
    message = str(record[0].message)
    assert str(path) in message
    for renamed in ("'judge' -> [uq] equivalence", "'model' -> [model] path", "'device' -> [model] device",
                    "'decomposer_model' -> [decomposer] model", "'faithfulness' -> [faithfulness] name",
                    "'calibrator_mismatch' -> [calibration] on_mismatch",
                    "'max_batch_tokens' -> [batch] max_batch_tokens"):
        assert renamed in message
    nested = {**NESTED, "uq": {"equivalence": "jaccard", "n_samples": 5}}
    assert old == FranqConfig.from_dict(nested)
    assert issubclass(FranqDeprecationWarning, FutureWarning)  # shown to users by default


def test_from_dict_leaves_its_argument_unchanged():
    data = {"judge": "jaccard", "uq": {"n_samples": 5}}
    with pytest.warns(FranqDeprecationWarning):
        config = FranqConfig.from_dict(data)
    assert config.uq.equivalence == "jaccard" and config.uq.n_samples == 5
    assert data == {"judge": "jaccard", "uq": {"n_samples": 5}}


@pytest.mark.parametrize("data, message", [
    ({"modle": "x"}, r"config: unknown key\(s\) \['modle'\]"),
    ({"model": {"paht": "x"}}, r"\[model\]: unknown key\(s\) \['paht'\]; known keys are \['api_key_env', 'device'"),
    ({"uq": {"judge": "lm"}}, r"\[uq\]: unknown key\(s\) \['judge'\]"),
    ({"uq": {"long": {"faithh": "claim_prob"}}}, r"\[uq\].long: unknown key\(s\) \['faithh'\]"),
    ({"uq": {"short": {"extra": "eigval"}}}, r"\[uq\].short.extra: expected a list of scorer names"),
    ({"calibration": "none"}, r"\[calibration\]: expected a table of settings"),
    ({"uq": {"n_samples": 1}}, r"'uq.n_samples': expected an integer >= 2"),
    ({"mode": "medium"}, r"'mode': expected one of \['long', 'short', 'auto'\]"),
])
def test_bad_keys_and_values_are_named(data, message):
    with pytest.raises(InputError, match=message):
        FranqConfig.from_dict(data)


def test_unknown_key_in_a_file_names_the_file_and_the_key(tmp_path):
    path = tmp_path / "franq.toml"
    path.write_text('[faithfulness]\nname = "lexical"\nnli = "x"\n')
    with pytest.raises(InputError, match=re.escape(f"config {path}: [faithfulness]: unknown key(s) ['nli']")):
        FranqConfig.from_file(path)


def test_with_overrides_changes_the_named_keys_and_ignores_none():
    base = FranqConfig.from_dict(NESTED)
    new = base.with_overrides({"model.path": "/models/other", "faithfulness.name": "combined", "mode": "long",
                               "calibration.calibrator": None, "model.device": None})
    assert new.model.path == "/models/other" and new.faithfulness.name == "combined" and new.mode == "long"
    assert new.calibration.calibrator == "none" and new.model.device == "cpu"  # None: not given
    assert new.uq == base.uq and new.batch == base.batch
    assert base.model.path == "/models/llama" and base.mode == "auto"  # frozen: a copy was changed
    with pytest.raises(InputError, match=r"\[model\]: unknown key\(s\) \['paht'\]"):
        base.with_overrides({"model.paht": "x"})
    with pytest.raises(InputError, match="'faithfulness.name': 'context_pmi' cannot run in the short preset"):
        check_config(base.with_overrides({"faithfulness.name": "context_pmi", "mode": "short"}))


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


@pytest.mark.parametrize("command", ["score", "answer", "calibrate"])
def test_cli_help_describes_every_option(command):
    from franq import cli

    proc = subprocess.run([sys.executable, "-m", "franq", command, "--help"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    options = _option_help(proc.stdout)
    declared = [p for p in cli.main.commands[command].params if p.param_type_name == "option"]
    assert len(options) == len(declared) + 1  # and --help
    undocumented = [term for term, desc in options.items() if not desc]
    assert not undocumented, f"options without help text: {undocumented}"
    for shared in ("--config FILE", "--model TEXT", "--faithfulness TEXT", "--calibrator TEXT",
                   "--mode [long|short|auto]"):
        assert shared in options


def test_threads_setting_is_checked_and_applied():
    import torch

    from franq.lm.threads import auto_threads, configure_threads

    with pytest.raises(InputError, match="'model.threads': expected a positive integer"):
        FranqConfig.from_dict({"model": {"threads": 0}})
    assert FranqConfig.from_dict({"model": {"threads": 2}}).model.threads == 2
    assert (auto_threads(1), auto_threads(2), auto_threads(4), auto_threads(64)) == (1, 1, 2, 8)
    before = torch.get_num_threads()
    try:
        assert configure_threads(1) == 1 == torch.get_num_threads()
    finally:
        torch.set_num_threads(before)


COMPONENT_TOML = '''
[faithfulness]
name = "alignscore"

[faithfulness.alignscore]
checkpoint = "/m/AlignScore-large.ckpt"
base_model = "/m/roberta-large"

[faithfulness.judge]
model = "judge-7b"
base_url = "http://localhost:8000/v1"

[equivalence.nli]
model = "/m/deberta-mnli"
'''


def test_component_tables_load_check_and_round_trip(tmp_path):
    path = tmp_path / "franq.toml"
    path.write_text(COMPONENT_TOML)
    config = _strict(FranqConfig.from_file, path)
    assert config.settings_for("faithfulness", "alignscore") == {"checkpoint": "/m/AlignScore-large.ckpt",
                                                                  "base_model": "/m/roberta-large"}
    assert config.settings_for("faithfulness", "judge") == {"model": "judge-7b", "base_url": "http://localhost:8000/v1",
                                                            "api_key_env": "OPENAI_API_KEY"}  # a default filled in
    assert config.settings_for("faithfulness", "nli") == {"model": None}  # no table: the defaults
    assert config.settings_for("equivalence", "nli") == {"model": "/m/deberta-mnli"}
    assert FranqConfig.from_dict(config.to_dict()) == config and hash(config) == hash(FranqConfig.from_dict(
        config.to_dict()))
    new = config.with_overrides({"faithfulness.nli.model": "/m/nli", "faithfulness.alignscore.checkpoint": "/m/b.ckpt"})
    assert new.settings_for("faithfulness", "nli") == {"model": "/m/nli"}
    assert new.settings_for("faithfulness", "alignscore")["checkpoint"] == "/m/b.ckpt"
    assert config.settings_for("faithfulness", "alignscore")["checkpoint"] == "/m/AlignScore-large.ckpt"  # frozen


@pytest.mark.parametrize("table, message", [
    ('[faithfulness.alignscore]\ncheckpoin = "x"\n',
     "config 'faithfulness.alignscore.checkpoin': unknown setting; known: ['base_model', 'checkpoint']"),
    ("[faithfulness.nli]\nmodel = 3\n", "config 'faithfulness.nli.model': expected a string, got int 3"),
    ('[faithfulness.nlii]\nmodel = "x"\n', "config 'faithfulness.nlii': unknown faithfulness backend 'nlii'"),
    ('[equivalence.nli]\nmodell = "x"\n', "config 'equivalence.nli.modell': unknown setting; known: ['model']"),
    ('[scorers.claim_prob]\nalpha = 1\n', "config 'scorers.claim_prob.alpha': unknown setting; known: []"),
    ('[faithfulness]\nname = "alignscore"\n[faithfulness.alignscore]\nbase_model = "/m/r"\n',
     "config 'faithfulness.alignscore.checkpoint': required when faithfulness.name is 'alignscore'"),
    ('[faithfulness]\nname = "judge"\n[faithfulness.judge]\nbase_url = "http://h/v1"\n',
     "config 'faithfulness.judge.model': required with base_url"),
    ('mode = "short"\n[uq]\nequivalence = "nli"\n', "config 'equivalence.nli.model': required when uq.equivalence"),
])
def test_bad_component_settings_are_named_before_any_model_loads(tmp_path, monkeypatch, table, message):
    from franq.faithfulness.alignscore import AlignScoreFaithfulness
    from franq.faithfulness.nli import NLIFaithfulness

    def never(*args, **kwargs):
        raise AssertionError("a model was loaded")

    for cls in (AlignScoreFaithfulness, NLIFaithfulness):
        monkeypatch.setattr(cls, "__init__", never)
    path = tmp_path / "franq.toml"
    path.write_text(table)
    with pytest.raises(InputError, match=re.escape(message)):
        check_config(FranqConfig.from_file(path))  # what Franq.from_config runs before loading the model


@pytest.mark.parametrize("section, old, table, new", [
    ("faithfulness", "alignscore_checkpoint", "faithfulness.alignscore", "checkpoint"),
    ("faithfulness", "alignscore_base_model", "faithfulness.alignscore", "base_model"),
    ("faithfulness", "nli_model", "faithfulness.nli", "model"),
    ("faithfulness", "judge_model", "faithfulness.judge", "model"),
    ("faithfulness", "judge_base_url", "faithfulness.judge", "base_url"),
])
def test_old_component_keys_load_with_a_warning_naming_the_new_key(section, old, table, new):
    extra = {"judge_model": "m"} if old == "judge_base_url" else {}
    with pytest.warns(FranqDeprecationWarning, match=re.escape(f"[{section}] {old} -> [{table}] {new}")):
        config = FranqConfig.from_dict({section: {old: "/m/x", **extra}})
    kind, name = "faithfulness", table.split(".")[1]
    assert config.settings_for(kind, name)[new] == "/m/x"
    assert config == _strict(FranqConfig.from_dict, {section: {name: {new: "/m/x", **({"model": "m"} if extra else {})}}})
    with pytest.warns(FranqDeprecationWarning, match=re.escape(f"'{old}' -> [{table}] {new}")):  # flat, older still
        assert FranqConfig.from_dict({old: "/m/x", **extra}) == config
    with pytest.raises(InputError, match="disagree"):
        FranqConfig.from_dict({section: {old: "/m/x", name: {new: "/m/y"}}})


def test_old_fallback_path_loads_with_a_warning_naming_the_new_key():
    importlib.import_module("franq.apps")  # the applications declare the "fallbacks" kind

    with pytest.warns(FranqDeprecationWarning, match=re.escape("[model] fallback_path -> [fallbacks.model] path")):
        config = FranqConfig.from_dict({"model": {"fallback_path": "/m/big"}})
    assert config.settings_for("fallbacks", "model") == {"path": "/m/big"}
    assert config.to_dict()["fallbacks"] == {"model": {"path": "/m/big"}}


def test_the_nli_equivalence_judge_falls_back_to_the_nli_backends_model():
    config = _strict(FranqConfig.from_dict, {"mode": "short", "uq": {"equivalence": "nli"},
                                             "faithfulness": {"nli": {"model": "/m/nli"}}})
    from franq.equivalence.nli import nli_model

    assert nli_model(config.settings_for("equivalence", "nli"), config) == "/m/nli"
    own = config.with_overrides({"equivalence.nli.model": "/m/other"})
    assert nli_model(own.settings_for("equivalence", "nli"), own) == "/m/other"


def test_app_tables_load_without_importing_the_apps_first():
    """The applications declare their kinds through the ``franq.kinds`` entry point group, so a
    library user's config with a ``[fallbacks.model]`` table loads in a fresh process."""
    import subprocess
    import sys

    code = ("import franq\n"
            "c = franq.FranqConfig.from_dict({'fallbacks': {'model': {'path': '/models/second'}}})\n"
            "print(c.settings_for('fallbacks', 'model')['path'])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "/models/second"


def test_old_model_probe_key_loads_as_probe_file_with_a_warning():
    with pytest.warns(FranqDeprecationWarning, match=r"\[model\] probe -> \[model\] probe_file"):
        c = FranqConfig.from_dict({"model": {"probe": "p.json"}})
    assert c.model.probe_file == "p.json"
