"""FranqConfig: nested sections from TOML and JSON, the keys removed in 0.2.0 refused with
their new names, errors naming the key (every bad value), overrides, component tables."""
from __future__ import annotations

import importlib
import json
import re
import warnings

import pytest

from franq.config import FranqConfig
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
FLAT = {  # the same settings in the flat keys removed in 0.2.0
    "mode": "auto", "model": "/models/llama", "device": "cpu", "decomposer": "llm",
    "decomposer_model": "/models/chat", "faithfulness": "lexical", "judge": "jaccard", "n_samples": 5,
    "calibrator": "none", "calibrator_mismatch": "error", "max_batch_tokens": 2048,
}


def _strict(fn, *args):
    """``fn(*args)`` with every warning an error."""
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
def test_flat_file_is_refused_naming_each_old_key_and_its_new_key(tmp_path, suffix):
    path = tmp_path / f"old{suffix}"
    if suffix == ".json":
        path.write_text(json.dumps(FLAT))
    else:
        path.write_text("".join(f"{k} = {json.dumps(v)}\n" for k, v in FLAT.items()))
    with pytest.raises(InputError) as error:
        FranqConfig.from_file(path)
    message = str(error.value)
    assert str(path) in message and "unknown key(s)" in message and "renamed in 0.2.0" in message
    for renamed in ("'judge' is now [uq] equivalence", "'model' is now [model] path", "'device' is now [model] device",
                    "'decomposer_model' is now [decomposer] model", "'faithfulness' is now [faithfulness] name",
                    "'calibrator_mismatch' is now [calibration] on_mismatch",
                    "'max_batch_tokens' is now [batch] max_batch_tokens"):
        assert renamed in message


def test_from_dict_leaves_its_argument_unchanged():
    data = {"uq": {"equivalence": "jaccard", "n_samples": 5}, "faithfulness": {"name": "nli", "nli": {"model": "m"}}}
    config = _strict(FranqConfig.from_dict, data)
    assert config.uq.equivalence == "jaccard" and config.uq.n_samples == 5
    assert data == {"uq": {"equivalence": "jaccard", "n_samples": 5},
                    "faithfulness": {"name": "nli", "nli": {"model": "m"}}}


@pytest.mark.parametrize("data, message", [
    ({"modle": "x"}, r"config: unknown key\(s\) \['modle'\]"),
    ({"model": {"paht": "x"}}, r"\[model\]: unknown key\(s\) \['paht'\]; known keys are \['api_key_env', 'device'"),
    ({"uq": {"judge": "lm"}}, r"\[uq\]: unknown key\(s\) \['judge'\]"),
    ({"uq": {"long": {"faithh": "claim_prob"}}}, r"\[uq\].long: unknown key\(s\) \['faithh'\]"),
    ({"uq": {"short": {"extra": "eigval"}}}, r"\[uq\].short.extra: expected a list of scorer names"),
    ({"calibration": "none"}, r"\[calibration\]: expected a table of settings"),
    ({"uq": {"n_samples": 1}}, r"'uq.n_samples': expected an integer >= 2"),
    ({"mode": "medium"}, r"'mode': expected one of \['long', 'short', 'auto', 'fast', 'chat'\]"),
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


def test_thread_count_precedence_is_flag_then_config_then_environment_then_default():
    from franq.lm.threads import auto_threads, resolve_threads

    env = {"OMP_NUM_THREADS": "3", "MKL_NUM_THREADS": "5"}
    assert resolve_threads(2, 4, env) == (2, "flag")
    assert resolve_threads(None, 4, env) == (4, "config")
    assert resolve_threads(None, None, env) == (3, "OMP_NUM_THREADS")
    assert resolve_threads(None, None, {"MKL_NUM_THREADS": "5"}) == (5, "MKL_NUM_THREADS")
    assert resolve_threads(None, None, {"OMP_NUM_THREADS": "6,2"}) == (6, "OMP_NUM_THREADS")  # OpenMP's nested list
    assert resolve_threads(None, None, {"OMP_NUM_THREADS": "many"}) == (auto_threads(), "default")
    assert resolve_threads(None, None, {}) == (auto_threads(), "default")


def test_every_threads_flag_is_the_one_shared_option():
    """One definition, one default (unset: the config, the environment, then the default)."""
    from franq import cli

    def commands(group, path=()):
        for name, command in group.commands.items():
            yield from commands(command, (*path, name)) if hasattr(command, "commands") else [((*path, name), command)]

    flags = {path: p for path, c in commands(cli.main) for p in c.params if "--threads" in getattr(p, "opts", ())}
    assert {("score",), ("answer",), ("fit", "probe"), ("fit", "verifier"), ("bench", "observe"),
            ("bench", "all")} <= set(flags)
    assert {(p.default, p.help, repr(p.type)) for p in flags.values()} == {
        (None, flags[("score",)].help, repr(flags[("score",)].type))}


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
def test_old_component_keys_are_refused_naming_the_new_key(section, old, table, new):
    with pytest.raises(InputError, match=re.escape(f"[{section}]: unknown key(s) ['{old}']")
                       + ".*" + re.escape(f"'{old}' is now [{table}] {new}")):
        FranqConfig.from_dict({section: {old: "/m/x"}})
    with pytest.raises(InputError, match=re.escape(f"'{old}' is now [{table}] {new}")):  # the older flat form
        FranqConfig.from_dict({old: "/m/x"})
    config = _strict(FranqConfig.from_dict, {section: {table.split(".")[1]: {new: "/m/x"}}})
    assert config.settings_for("faithfulness", table.split(".")[1])[new] == "/m/x"


def test_old_fallback_path_is_refused_naming_the_new_key():
    importlib.import_module("franq.apps")  # the applications declare the "fallbacks" kind

    with pytest.raises(InputError, match=re.escape("'fallback_path' is now [fallbacks.model] path")):
        FranqConfig.from_dict({"model": {"fallback_path": "/m/big"}})
    with pytest.raises(InputError, match=re.escape("'verifiers' is now [checks.NAME]")):  # the answer checks' tables
        FranqConfig.from_dict({"verifiers": {"nli": {"backend": "verifier"}}})
    config = _strict(FranqConfig.from_dict, {"fallbacks": {"model": {"path": "/m/big"}}})
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


def test_old_model_probe_key_is_refused_naming_probe_file():
    with pytest.raises(InputError, match=re.escape("'probe' is now [model] probe_file")):
        FranqConfig.from_dict({"model": {"probe": "p.json"}})


# ---------------------------------------------------------------------------- config values
CONFIG_ERRORS = [
    ({"model": {"device": 3}}, "'model.device': expected a string (or unset), got int"),
    ({"model": {"device": "cuda:x"}}, "'model.device': expected a torch device"),
    ({"model": {"device": "gpu"}}, "'model.device': expected a torch device"),
    ({"model": {"device": ["cpu"]}}, "'model.device': expected a string"),
    ({"model": {"dtype": 16}}, "'model.dtype': expected a string (or unset), got int"),
    ({"model": {"dtype": "float8"}}, "'model.dtype': expected one of"),
    ({"model": {"dtype": "fp16"}}, "'model.dtype': expected one of"),
    ({"model": {"path": 5}}, "'model.path': expected a string (or unset), got int"),
    ({"model": {"path": ""}}, "'model.path': is an empty string"),
    ({"model": {"path": ["/models/x"]}}, "'model.path': expected a string"),
    ({"model": {"path": True}}, "'model.path': expected a string (or unset), got bool"),
    ({"model": {"gguf_file": 1}}, "'model.gguf_file': expected a string"),
    ({"model": {"max_new_tokens": "256"}}, "'model.max_new_tokens': expected an integer, got str"),
    ({"model": {"max_new_tokens": 0}}, "'model.max_new_tokens': expected a positive integer"),
    ({"model": {"max_new_tokens": 2.5}}, "'model.max_new_tokens': expected an integer, got float"),
    ({"model": {"on_overflow": "drop"}}, "'model.on_overflow': expected one of"),
    ({"model": {"on_overflow": None}}, "'model.on_overflow': expected a string, got NoneType"),
    ({"model": {"colour": "red"}}, "unknown key(s) ['colour']"),
    ({"batch": 5}, "[batch]: expected a table of settings, got int"),
    ({"mode": 3}, "'mode': expected a string, got int"),
    ({"mode": "medium"}, "'mode': expected one of"),
    ({"decomposer": {"name": 1}}, "'decomposer.name': expected a string, got int"),
    ({"decomposer": {"timeout": "60"}}, "'decomposer.timeout': expected a number, got str"),
    ({"decomposer": {"timeout": -1}}, "'decomposer.timeout': expected a positive number"),
    ({"decomposer": {"max_retries": -1}}, "'decomposer.max_retries': expected 0 or more"),
    ({"decomposer": {"api_key_env": "MY KEY"}}, "'decomposer.api_key_env': expected the name of an environment"),
    ({"decomposer": {"api_key_env": 7}}, "'decomposer.api_key_env': expected a string"),
    ({"decomposer": {"base_url": ""}}, "'decomposer.base_url': is an empty string"),
    ({"faithfulness": {"name": None}}, "'faithfulness.name': expected a string, got NoneType"),
    ({"faithfulness": {"map": 3}}, "'faithfulness.map': expected a string"),
    ({"uq": {"seed": "1"}}, "'uq.seed': expected an integer, got str"),
    ({"uq": {"temperature": True}}, "'uq.temperature': expected a number, got bool"),
    ({"uq": {"temperature": -0.5}}, "'uq.temperature': expected a finite number from 0 to"),
    ({"uq": {"n_samples": 1}}, "'uq.n_samples': expected an integer >= 2"),
    ({"uq": {"long": {"faith": 3}}}, "'uq.long.faith': expected a string, got int"),
    ({"uq": {"short": {"extra": [1]}}}, "'uq.short.extra[0]': expected a string, got int"),
    ({"uq": {"short": {"extra": "eigval"}}}, "extra: expected a list of scorer names"),
    ({"calibration": {"calibrator": 0}}, "'calibration.calibrator': expected a string, got int"),
    ({"calibration": {"on_mismatch": "ignore"}}, "'calibration.on_mismatch': expected one of"),
    ({"batch": {"max_batch_tokens": "4096"}}, "'batch.max_batch_tokens': expected an integer, got str"),
    ({"batch": {"max_batch_tokens": 0}}, "'batch.max_batch_tokens': expected a positive integer"),
    ([1, 2], "expected an object at the top level, got list"),
]


@pytest.mark.parametrize("data, expected", CONFIG_ERRORS, ids=[str(i) for i in range(len(CONFIG_ERRORS))])
def test_bad_config_value_fails_when_built_naming_the_field(data, expected):
    with pytest.raises(InputError) as err:
        FranqConfig.from_dict(data)
    assert expected in str(err.value) and "\n" not in str(err.value)


def test_config_file_with_duplicate_keys_names_the_file(tmp_path):
    path = tmp_path / "franq.json"
    path.write_text('{"model": {"device": "cpu", "device": "cuda"}}')
    with pytest.raises(InputError, match=f"config {path}: .*'device' appears twice"):
        FranqConfig.from_file(path)


def test_config_rejects_unknown_keys_and_bad_values(tmp_path):
    path = tmp_path / "c.json"
    path.write_text('{"model": {"path": "x"}, "modle": "y"}')
    with pytest.raises(InputError, match=r"unknown key\(s\) \['modle'\]"):
        FranqConfig.from_file(path)
    with pytest.raises(InputError, match="'faithfulness.name'"):
        check_config(FranqConfig.from_dict({"faithfulness": {"name": "magic"}}))
    toml = tmp_path / "c.toml"
    toml.write_text('[model]\npath = "/models/llama"\n\n[batch]\nmax_batch_tokens = 2048\n')
    config = FranqConfig.from_file(toml)
    assert config.batch.max_batch_tokens == 2048 and config.model.path == "/models/llama"


def test_config_validates_calibrator_settings():
    from franq.config import FranqConfig


    with pytest.raises(InputError, match="'calibration.on_mismatch': expected one of"):
        FranqConfig.from_dict({"calibration": {"on_mismatch": "ignore"}})
    with pytest.raises(InputError, match="'calibration.calibrator': expected 'default', 'none' or a file path"):
        FranqConfig.from_dict({"calibration": {"calibrator": ""}})
    assert FranqConfig.from_dict({"calibration": {"calibrator": "none"}}).calibration.calibrator == "none"
    with pytest.raises(InputError, match=r"'calibrator' is now \[calibration\] calibrator"):
        FranqConfig.from_dict({"calibrator": "none"})


def test_config_names_missing_backend_settings():
    def config(**faithfulness):
        return check_config(FranqConfig.from_dict({"faithfulness": faithfulness}))

    with pytest.raises(InputError, match="'faithfulness.alignscore.checkpoint': required"):
        config(name="alignscore", alignscore={"base_model": "x"})
    with pytest.raises(InputError, match="'faithfulness.nli.model': required"):
        config(name="nli")
    with pytest.raises(InputError, match="'faithfulness.judge.model': required"):
        config(name="judge", judge={"base_url": "http://localhost:8000/v1"})
    with pytest.raises(InputError, match="'faithfulness.name': unknown faithfulness backend 'alignscorez'"):
        config(name="alignscorez")
    assert FranqConfig().faithfulness.name == "verifier"  # the default, chosen on six dev sets (issue 25)


@pytest.mark.parametrize("changes, field", [
    ({"name": "gpt"}, "decomposer.name"),
    ({"name": "llm", "backend": "openai"}, "decomposer.model"),
    ({"backend": "vllm"}, "decomposer.backend"),
    ({"timeout": 0}, "decomposer.timeout"),
    ({"concurrency": 0}, "decomposer.concurrency"),
    ({"align": "spacy"}, "decomposer.align"),
])
def test_bad_decomposer_config_names_the_field(changes, field):
    with pytest.raises(InputError, match=f"'{field}'"):
        check_config(FranqConfig.from_dict({"decomposer": changes}))


def test_config_rejects_unknown_judge():
    from franq.config import FranqConfig
    from franq.errors import InputError

    with pytest.raises(InputError, match="'uq.equivalence': unknown equivalence judge 'gpt'"):
        check_config(FranqConfig.from_dict({"uq": {"equivalence": "gpt"}}))
