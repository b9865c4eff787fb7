"""The rough edges a new user hit (issue 28): files named by options checked before the
model loads, --threshold shown, report inputs that hold no scored records, provenance of
every P(true), empty passages, help defaults that cannot drift, tiny samples flagged."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from franq.cli import main

GOOD = {"question": "When was the Eiffel Tower built?",
        "passages": ["The Eiffel Tower was built from 1887 to 1889."],
        "answer": "It was built from 1887 to 1889 [1]. It is in Paris."}


@pytest.fixture
def no_model_load(monkeypatch):
    """Fail the test if anything starts loading a model."""
    from franq.lm import load as lm_load
    from franq.pipeline import Franq

    def refuse(*args, **kwargs):
        raise AssertionError("the model was loaded before the named files were checked")

    monkeypatch.setattr(Franq, "from_config", classmethod(refuse))
    monkeypatch.setattr(lm_load, "load_pretrained", refuse)


def run(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


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
    result = run(*command, flag, value)
    assert result.exit_code != 0
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    assert says in lines[0] and value.split("/")[-1] in lines[0]


def test_a_broken_calibrator_probe_or_map_in_the_config_fails_before_the_model_loads(no_model_load, tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text('{"variant": 5}')
    for key, table, says in [("calibrator", "calibration", "calibrator"),
                             ("probe_file", "model", "probe"),
                             ("map", "faithfulness", "map")]:
        cfg = tmp_path / f"{key}.json"
        cfg.write_text(json.dumps({table: {key: str(broken)}}))
        result = run("score", "--example", "--config", str(cfg))
        assert result.exit_code != 0, key
        assert says in result.output and "broken.json" in result.output, result.output
        missing = tmp_path / f"{key}-missing.json"
        cfg.write_text(json.dumps({table: {key: str(missing)}}))
        result = run("score", "--example", "--config", str(cfg))
        assert result.exit_code != 0 and missing.name in result.output
        assert "no file at" in result.output or "cannot read" in result.output


def test_a_backend_setting_naming_a_missing_path_fails_before_the_model_loads(no_model_load, tmp_path):
    cfg = tmp_path / "nli.toml"
    cfg.write_text('[faithfulness]\nname = "nli"\n[faithfulness.nli]\nmodel = "/nonexistent/deberta"\n')
    result = run("score", "--example", "--config", str(cfg))
    assert result.exit_code != 0 and "[faithfulness.nli] model" in result.output
    assert "/nonexistent/deberta" in result.output


# ---------------------------------------------------------------- --threshold, report, provenance
@pytest.fixture(scope="module")
def scored(tiny_lm_path, tmp_path_factory):
    """A batch input and its `franq score` output, from the tiny model."""
    root = tmp_path_factory.mktemp("scored")
    batch = root / "batch.jsonl"
    batch.write_text(json.dumps(GOOD | {"id": "a"}) + "\n")
    out = root / "scores.jsonl"
    result = run("score", str(batch), "-o", str(out), "--model", str(tiny_lm_path), "--quiet")
    assert result.exit_code == 0, result.output
    return batch, out


def test_threshold_adds_a_verdict_column_to_the_default_table(tiny_lm_path):
    args = ["score", "-q", GOOD["question"], "-p", GOOD["passages"][0], "-a", GOOD["answer"],
            "--model", str(tiny_lm_path), "--quiet"]
    plain = run(*args).output
    assert "verdict" not in plain
    table = run(*args, "--threshold", "0.95").output
    header = next(line for line in table.splitlines() if line.lstrip().startswith("#"))
    assert "verdict" in header
    rows = [line for line in table.splitlines() if line[:2].strip().isdigit()]
    assert rows and all("likely_true" in r or "likely_false" in r for r in rows)
    assert "P(true) >= 0.95" in table


def test_the_table_says_which_scorers_backend_and_calibrator_produced_p_true(tiny_lm_path):
    table = run("score", "-q", GOOD["question"], "-p", GOOD["passages"][0], "-a", GOOD["answer"],
                "--model", str(tiny_lm_path), "--quiet").output
    footer = next(line for line in table.splitlines() if line.startswith("scored by:"))
    assert "UQ_faith claim_prob / UQ_unfaith parametric" in footer
    assert "faithfulness combined" in footer and "calibrator: uncalibrated" in footer


def test_the_decision_line_of_answer_says_what_produced_p_true(tiny_lm_path):
    result = run("answer", "-q", GOOD["question"], "-p", GOOD["passages"][0], "--model", str(tiny_lm_path),
                 "--max-new-tokens", "4", "--verify", "trivial", "--quiet")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("Decision: "))
    after = "\n".join(lines[at:])
    assert "UQ_faith" in after and "UQ_unfaith" in after and "faithfulness" in after
    assert "calibrator: uncalibrated" in after


def test_report_csv_with_a_threshold_fills_the_verdict_column(scored, tmp_path):
    import csv

    _, out = scored
    path = tmp_path / "c.csv"
    result = run("report", str(out), "--csv", str(path), "--threshold", "0.5")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(path.open()))
    assert rows and all(r["verdict"] in ("likely_true", "likely_false") for r in rows if r["status"] == "scored")
    assert all((r["verdict"] == "likely_true") == (float(r["p_true"]) >= 0.5) for r in rows if r["status"] == "scored")
    assert {r["uq_faith_scorer"] for r in rows} == {"claim_prob"} and {r["calibrator"] for r in rows} == {"uncalibrated"}
    run("report", str(out), "--csv", str(path))  # no threshold given: the verdicts the claims were scored with
    assert {r["verdict"] for r in csv.DictReader(path.open())} == {""}


def test_report_given_an_unscored_input_file_says_it_holds_no_scored_records(scored, tmp_path):
    batch, out = scored
    html = tmp_path / "r.html"
    result = run("report", str(batch), "-o", str(html))
    assert result.exit_code != 0 and not html.exists()
    message = result.output.splitlines()[-1]
    assert f"{batch} holds no scored records" in message and "'claims'" in message and "franq score" in message
    result = run("report", str(out), str(batch), "-o", str(html))  # one good file does not hide the other
    assert result.exit_code != 0 and f"{batch} holds no scored records" in result.output
