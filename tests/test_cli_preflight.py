"""The CLI checks every file an option or the config names before it loads a model: a
missing or broken one is one error line naming the option (or key) and the file."""
from __future__ import annotations

import json

import pytest

from conftest import GOOD, run_cli


@pytest.fixture
def no_model_load(monkeypatch):
    """Fail the test if anything starts loading a model."""
    from franq.lm import load as lm_load
    from franq.pipeline import Franq

    def refuse(*args, **kwargs):
        raise AssertionError("the model was loaded before the named files were checked")

    monkeypatch.setattr(Franq, "from_config", classmethod(refuse))
    monkeypatch.setattr(lm_load, "load_pretrained", refuse)


@pytest.mark.parametrize("command", [
    ["score", "--example"],
    ["answer", "-q", "Who?", "-p", "A passage."],
])
@pytest.mark.parametrize("flag, value, says", [
    ("--calibrator", "/tmp/franq-no-such-calibrator.json", "--calibrator"),
    ("--model", "/nonexistent", "--model"),
    ("--gguf-file", "/nonexistent/model.gguf", "--gguf-file"),
])
def test_a_missing_file_named_by_an_option_fails_before_the_model_loads(no_model_load, command, flag, value, says):
    result = run_cli(*command, flag, value)
    assert result.exit_code != 0
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    assert says in lines[0] and value.split("/")[-1] in lines[0]


def test_a_batch_checks_the_named_files_before_the_model_loads_and_after_its_paths(no_model_load, tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(GOOD) + "\n")
    out = tmp_path / "out.jsonl"
    result = run_cli("score", str(src), "-o", str(out), "--calibrator", str(tmp_path / "nope.json"))
    assert result.exit_code != 0 and "--calibrator" in result.output and "nope.json" in result.output
    assert not out.exists()
    result = run_cli("score", str(src), "-o", str(src), "--calibrator", str(tmp_path / "nope.json"))
    assert result.exit_code != 0 and "nope.json" not in result.output  # the path mistake is the one named


def test_a_broken_calibrator_probe_or_map_in_the_config_fails_before_the_model_loads(no_model_load, tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text('{"variant": 5}')
    for key, table, says in [("calibrator", "calibration", "calibrator"),
                             ("probe_file", "model", "probe"),
                             ("map", "faithfulness", "map")]:
        cfg = tmp_path / f"{key}.json"
        cfg.write_text(json.dumps({table: {key: str(broken)}}))
        result = run_cli("score", "--example", "--config", str(cfg))
        assert result.exit_code != 0, key
        assert says in result.output and "broken.json" in result.output, result.output
        missing = tmp_path / f"{key}-missing.json"
        cfg.write_text(json.dumps({table: {key: str(missing)}}))
        result = run_cli("score", "--example", "--config", str(cfg))
        assert result.exit_code != 0 and missing.name in result.output
        assert "no file at" in result.output or "cannot read" in result.output


def test_a_backend_setting_naming_a_missing_path_fails_before_the_model_loads(no_model_load, tmp_path):
    cfg = tmp_path / "nli.toml"
    cfg.write_text('[faithfulness]\nname = "nli"\n[faithfulness.nli]\nmodel = "/nonexistent/deberta"\n')
    result = run_cli("score", "--example", "--config", str(cfg))
    assert result.exit_code != 0 and "[faithfulness.nli] model" in result.output
    assert "/nonexistent/deberta" in result.output

