"""What `franq score`, `franq answer` and `franq report` print: the --threshold verdict
column, which scorers, backend and calibrator produced each P(true), and report inputs
that hold no scored records."""
from __future__ import annotations

import csv
import io
import json
import time

import pytest
from click.testing import CliRunner

import franq
from conftest import GOOD, run_cli, tiny_cli_args
from franq.cli import main

@pytest.fixture(scope="module")
def scored(tiny_lm_path, tmp_path_factory):
    """A batch input and its `franq score` output, from the tiny model."""
    root = tmp_path_factory.mktemp("scored")
    batch = root / "batch.jsonl"
    batch.write_text(json.dumps(GOOD | {"id": "a"}) + "\n")
    out = root / "scores.jsonl"
    result = run_cli("score", str(batch), "-o", str(out), "--model", str(tiny_lm_path), "--quiet")
    assert result.exit_code == 0, result.output
    return batch, out


def test_threshold_adds_a_verdict_column_to_the_default_table(tiny_lm_path):
    args = ["score", "-q", GOOD["question"], "-p", GOOD["passages"][0], "-a", GOOD["answer"],
            "--model", str(tiny_lm_path), "--quiet"]
    plain = run_cli(*args).output
    assert "verdict" not in plain
    table = run_cli(*args, "--threshold", "0.95").output
    header = next(line for line in table.splitlines() if line.lstrip().startswith("#"))
    assert "verdict" in header
    rows = [line for line in table.splitlines() if line[:2].strip().isdigit()]
    assert rows and all("likely_true" in r or "likely_false" in r for r in rows)
    assert "P(true) >= 0.95" in table


def test_the_table_says_which_scorers_backend_and_calibrator_produced_p_true(tiny_lm_path):
    table = run_cli("score", "-q", GOOD["question"], "-p", GOOD["passages"][0], "-a", GOOD["answer"],
                "--model", str(tiny_lm_path), "--quiet").output
    footer = next(line for line in table.splitlines() if line.startswith("scored by:"))
    assert "UQ_faith claim_prob / UQ_unfaith parametric" in footer
    assert "faithfulness verifier" in footer and "calibrator: uncalibrated" in footer


def test_the_decision_line_of_answer_says_what_produced_p_true(tiny_lm_path):
    result = run_cli("answer", "-q", GOOD["question"], "-p", GOOD["passages"][0], "--model", str(tiny_lm_path),
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
    result = run_cli("report", str(out), "--csv", str(path), "--threshold", "0.5")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(path.open()))
    assert rows and all(r["verdict"] in ("likely_true", "likely_false") for r in rows if r["status"] == "scored")
    assert all((r["verdict"] == "likely_true") == (float(r["p_true"]) >= 0.5) for r in rows if r["status"] == "scored")
    assert {r["uq_faith_scorer"] for r in rows} == {"claim_prob"} and {r["calibrator"] for r in rows} == {"uncalibrated"}
    run_cli("report", str(out), "--csv", str(path))  # no threshold given: the verdicts the claims were scored with
    assert {r["verdict"] for r in csv.DictReader(path.open())} == {""}


def test_report_given_an_unscored_input_file_says_it_holds_no_scored_records(scored, tmp_path):
    batch, out = scored
    html = tmp_path / "r.html"
    result = run_cli("report", str(batch), "-o", str(html))
    assert result.exit_code != 0 and not html.exists()
    message = result.output.splitlines()[-1]
    assert f"{batch} holds no scored records" in message and "'claims'" in message and "franq score" in message
    result = run_cli("report", str(out), str(batch), "-o", str(html))  # one good file does not hide the other
    assert result.exit_code != 0 and f"{batch} holds no scored records" in result.output


def test_threshold_adds_a_verdict_and_csv_has_one_row_per_claim(tiny_lm_path):
    args = ["score", "-q", GOOD["question"], "-p", GOOD["passages"][0], "-a", GOOD["answer"], *tiny_cli_args(tiny_lm_path),
            "--threshold", "0.0"]
    record = json.loads(CliRunner().invoke(main, [*args, "--format", "json"]).stdout)
    assert [c["verdict"] for c in record["claims"]] == ["likely_true", "likely_true"]  # every P >= 0
    res = CliRunner().invoke(main, [*args, "--threshold", "1.0", "--format", "csv"])
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    assert [r["claim_index"] for r in rows] == ["0", "1"] and {r["verdict"] for r in rows} == {"likely_false"}
    assert {"id", "text", "status", "p_true", "p_faithful", "uq_faith", "uq_unfaith",
            "signal.log_claim_prob"} <= set(rows[0])
    assert float(rows[0]["p_true"]) == pytest.approx(record["claims"][0]["p_true_raw"])
    with pytest.raises(franq.InputError, match="calibration.threshold"):
        franq.FranqConfig.from_dict({"calibration": {"threshold": 1.5}})


def test_answer_prints_the_generated_answer_and_html(tiny_lm_path, tmp_path):
    res = CliRunner().invoke(main, ["answer", "-q", GOOD["question"], "-p", GOOD["passages"][0], "--max-new-tokens",
                                    "12", "--html", str(tmp_path / "a.html"), *tiny_cli_args(tiny_lm_path)])
    if res.exit_code != 0:  # a random tiny model may generate an empty answer
        assert "empty answer" in res.output
        return
    assert res.stdout.startswith("Answer: ")
    assert 'class="answer-text"' in (tmp_path / "a.html").read_text()


def test_single_answer_progress_bar_names_its_stage(capsys):
    from franq.cli.options import StageProgress as _StageProgress

    bar = _StageProgress(True, "franq score")
    bar.TICK_SECONDS = 0.001
    err = ""
    with bar as step:
        while err.count("franq score: loading the model") < 3:  # the clock ticks before any step is done
            time.sleep(0.001)
            err += capsys.readouterr().err
        step()
    err += capsys.readouterr().err
    assert "franq score: loading the model" in err and "franq score: scoring" in err


def test_a_probability_inside_the_unit_interval_never_prints_as_certain():
    from franq.cli.table import _fmt

    assert _fmt(0.99953) == ">0.999" and _fmt(1.0) == "1.000" and _fmt(0.9994) == "0.999"
    assert _fmt(0.0003) == "<0.001" and _fmt(0.0) == "0.000" and _fmt(0.0003, True) == "3.00e-04"
    assert _fmt(None) == "-" and _fmt(0.5) == "0.500"
