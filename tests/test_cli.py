"""The real `franq` entry point, driven as a user would (a subprocess)."""
from __future__ import annotations

import json
import subprocess
import sys

from conftest import GOOD


def run_franq(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "franq", *args], capture_output=True, text=True, cwd=cwd)


def test_malformed_jsonl_lines_become_error_records_and_the_run_continues(tiny_lm_path, tmp_path):
    lines = [
        json.dumps(GOOD | {"id": "ok-1"}),
        '{"id": "bad-json", ',
        json.dumps(GOOD | {"id": "no-passages", "passages": []}),  # scored closed-book
        json.dumps({"id": "no-answer", "question": "q", "passages": ["p"]}),
        json.dumps(GOOD | {"id": "typed", "passages": [{"title": "t", "text": 5}]}),
        "",
        json.dumps(GOOD | {"id": "ok-2", "claims": [{"text": "It is in Paris.", "is_true": True}]}),
    ]
    src = tmp_path / "in.jsonl"
    src.write_bytes(("\n".join(lines) + "\n").encode() + b'\xff\xfe{"id": 1}\n')
    out = tmp_path / "out.jsonl"
    proc = run_franq("score", str(src), "-o", str(out), "--model", str(tiny_lm_path))
    assert proc.returncode == 0, proc.stderr
    results = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in results] == ["ok-1", "no-passages", "ok-2"]
    assert results[2]["claims"][0]["is_true"] is True
    errors = [json.loads(line) for line in (tmp_path / "out.jsonl.errors.jsonl").read_text().splitlines()]
    by_line = {e["line"]: e["error"] for e in errors}
    assert set(by_line) == {2, 4, 5, 8}
    assert "not valid JSON" in by_line[2]
    assert "missing field 'answer'" in by_line[4]
    assert "'passages[0].text' must be a string" in by_line[5]
    assert "not valid UTF-8" in by_line[8]
    assert "scored 3 answers, 4 bad records" in proc.stderr


def test_single_example_from_flags_prints_a_table_and_json(tiny_lm_path):
    args = ["score", "-q", GOOD["question"], "-p", GOOD["passages"][0], "-a", GOOD["answer"],
            "--model", str(tiny_lm_path)]
    table = run_franq(*args)
    assert table.returncode == 0, table.stderr
    assert "P(true)" in table.stdout and "It is in Paris." in table.stdout
    assert "Calibration: none (raw values only)" in table.stdout  # no shipped calibrator for the tiny model
    record = json.loads(run_franq(*args, "--format", "json").stdout)
    assert record["mode"] == "long" and len(record["claims"]) == 2
    assert {"p_true_raw", "p_true_calibrated", "p_faithful", "uq_faith", "uq_unfaith",
            "signals"} <= set(record["claims"][0])
    assert record["claims"][0]["p_true_calibrated"] is None and record["calibrator"] is None


def test_a_single_example_with_o_writes_its_record_as_a_batch_would_and_never_over_a_file(tiny_lm_path, tmp_path):
    """`-o` was read only in batch mode: a single example's record was printed and the file
    never written. It is now written as one JSON line (what `franq fit calibrator` and `franq
    fit prior --from-labelled` read back), beside the table; an existing file is not replaced."""
    from franq.results import read_results

    out = tmp_path / "one.jsonl"
    args = ["score", "-q", GOOD["question"], "-p", GOOD["passages"][0], "-a", GOOD["answer"],
            "--model", str(tiny_lm_path)]
    proc = run_franq(*args, "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "P(true)" in proc.stdout and f"wrote {out}" in proc.stderr
    (line,) = read_results(out, with_input=True)
    assert line.result.question == GOOD["question"] and len(line.result.claims) == 2
    again = run_franq(*args, "-o", str(out))
    assert again.returncode != 0 and "the file exists" in again.stderr and "-o" in again.stderr
    assert len(out.read_text().splitlines()) == 1
    to_stdout = run_franq(*args, "-o", "-", "--errors", str(tmp_path / "bad.jsonl"))
    assert to_stdout.returncode == 0 and json.loads(to_stdout.stdout)["mode"] == "long"
    assert "--errors" in to_stdout.stderr and "only a batch" in to_stdout.stderr  # not silently ignored
    assert not (tmp_path / "bad.jsonl").exists()


def test_missing_input_and_missing_model_give_clear_errors(tmp_path):
    proc = run_franq("score", "-q", "only a question")
    assert proc.returncode != 0 and "give --question, at least one --passage and --answer" in proc.stderr
    proc = run_franq("score", "--example", "--model", str(tmp_path / "nowhere"))
    assert proc.returncode != 0 and "never downloads" in proc.stderr


def test_table_names_the_observer_preset_of_a_given_short_answer():
    from types import SimpleNamespace

    from franq.cli.table import preset_name as _preset_name

    assert _preset_name(SimpleNamespace(mode="short", stack={"mode": "observer"})) == "short (observer)"
    assert _preset_name(SimpleNamespace(mode="short", stack={"mode": "short"})) == "short"
    assert _preset_name(SimpleNamespace(mode="long", stack={})) == "long"
