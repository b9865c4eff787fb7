"""`franq report` (and franq.read_results) on hostile input: wrong types, values that
cannot be probabilities, deep nesting, invalid UTF-8, devices, overlong lines. Each bad
line is one warning naming the file, line and field and is skipped; a file with nothing
left is one error; never a traceback."""
from __future__ import annotations

import dataclasses
import json

import pytest
from click.testing import CliRunner

import franq
from franq.cli import main

BASE = {"mode": "long", "model": "m", "faithfulness": "f", "question": "q", "answer": "Ann is tall.",
        "passages": [{"title": "t", "text": "Ann is tall."}],
        "claims": [{"claim": {"text": "Ann is tall", "char_spans": [[0, 11]]}, "status": "scored",
                    "p_true_raw": 0.9}]}
GOOD = json.dumps(BASE)


def _claim(**values):
    return {**BASE, "claims": [{**BASE["claims"][0], **values}]}


CASES = {  # name: (line, words the warning must hold)
    "answer as int": (json.dumps({**BASE, "answer": 5}), "'answer'"),
    "claim as string": (json.dumps({**BASE, "claims": ["Ann is tall"]}), "'claims[0]'"),
    "claims as ints": (json.dumps({**BASE, "claims": [1, 2]}), "'claims[0]'"),
    "claims as string": (json.dumps({**BASE, "claims": "Ann"}), "claims"),
    "passages as int": (json.dumps({**BASE, "passages": 3}), "'passages'"),
    "passage as int": (json.dumps({**BASE, "passages": [3]}), "'passages[0]'"),
    "p_true as string": (json.dumps(_claim(p_true_raw="0.9")), "p_true_raw"),
    "p_true NaN": (GOOD.replace("0.9", "NaN"), "NaN"),
    "p_true 1e999": (GOOD.replace("0.9", "1e999"), "1e999"),
    "p_true -Infinity": (GOOD.replace("0.9", "-Infinity"), "Infinity"),
    "p_true above 1": (json.dumps(_claim(p_true_raw=1.5)), "'claims[0].p_true_raw' must be a probability"),
    "p_true below 0": (json.dumps(_claim(p_true_raw=-0.1)), "p_true_raw"),
    "p_faithful above 1": (json.dumps(_claim(p_faithful=7)), "p_faithful"),
    "calibrated above 1": (json.dumps(_claim(p_true_calibrated=2.0)), "p_true_calibrated"),
    "p_true as bool": (json.dumps(_claim(p_true_raw=True)), "p_true_raw"),
    "meta as string": (json.dumps({**BASE, "meta": "hello"}), "'meta'"),
    "meta as list": (json.dumps({**BASE, "meta": [1]}), "'meta'"),
    "char_spans as string": (json.dumps(_claim(claim={"text": "Ann", "char_spans": "0-3"})), "char_spans"),
    "span of floats": (json.dumps(_claim(claim={"text": "Ann", "char_spans": [[0.5, 3]]})), "char_spans[0]"),
    "status unknown": (json.dumps(_claim(status="great")), "status"),
    "top level list": ("[1, 2]", "expected a JSON object"),
    "top level string": ('"hello"', "expected a JSON object"),
    "an error record": (json.dumps({"id": "x", "error": "boom"}), "an error record"),
    "repeated key": (GOOD[:-1] + ', "answer": "x"}', "appears twice"),
    "broken JSON": ('{"answer": ', "not valid JSON"),
    "deep nesting in meta": (GOOD[:-1] + ', "meta": {"a": ' + "[" * 100_000 + "]" * 100_000 + "}}", "nested too deeply"),
    "moderate nesting": (GOOD[:-1] + ', "meta": {"a": ' + "[" * 200 + "]" * 200 + "}}", "nested too deeply"),
    "integer with 5000 digits": (GOOD.replace("0.9", "1" * 5000), "not valid JSON"),
}


@pytest.mark.parametrize("name", CASES)
def test_a_bad_line_is_a_warning_and_the_good_lines_render(tmp_path, name):
    line, words = CASES[name]
    src = tmp_path / "scores.jsonl"
    src.write_text(f"{GOOD}\n{line}\n{GOOD}\n")
    res = CliRunner().invoke(main, ["report", str(src), "-o", str(tmp_path / "r.html"),
                                    "--csv", str(tmp_path / "c.csv")])
    assert res.exit_code == 0, res.output
    warnings = [w for w in res.output.splitlines() if w.startswith("warning:")]
    assert len(warnings) == 1 and f"{src} line 2" in warnings[0] and words in warnings[0], res.output
    assert "wrote" in res.output and "2 answers" in res.output
    assert len((tmp_path / "c.csv").read_text().splitlines()) == 3  # header + 2 claims


@pytest.mark.parametrize("name", CASES)
def test_a_file_of_only_bad_lines_is_one_error(tmp_path, name):
    src = tmp_path / "scores.jsonl"
    src.write_text(CASES[name][0] + "\n")
    res = CliRunner().invoke(main, ["report", str(src), "-o", str(tmp_path / "r.html")])
    assert res.exit_code == 1 and "Traceback" not in res.output and res.output.splitlines()[-1].startswith("Error:")
    assert not (tmp_path / "r.html").exists()


def test_invalid_utf8_is_named_with_its_line(tmp_path):
    src = tmp_path / "scores.jsonl"
    src.write_bytes(GOOD.encode() + b"\n" + GOOD.replace("Ann is tall.", "Ann \xff").encode("latin-1") + b"\n")
    res = CliRunner().invoke(main, ["report", str(src), "-o", str(tmp_path / "r.html")])
    assert res.exit_code == 0 and f"{src} line 2: not valid UTF-8" in res.output


def test_meta_string_with_csv_is_refused_before_the_csv(tmp_path):
    src = tmp_path / "scores.jsonl"
    src.write_text(json.dumps({**BASE, "meta": "hello"}) + "\n" + json.dumps({**BASE, "meta": {"user": "u"}}) + "\n")
    res = CliRunner().invoke(main, ["report", str(src), "--csv", str(tmp_path / "c.csv")])
    assert res.exit_code == 0 and "'meta' must be an object" in res.output
    assert "meta.user" in (tmp_path / "c.csv").read_text()


@pytest.mark.parametrize("path", ["/dev/zero", "/dev/urandom"])
def test_a_device_is_refused_without_reading_it(tmp_path, path):
    res = CliRunner().invoke(main, ["report", path, "-o", str(tmp_path / "r.html")])
    assert res.exit_code == 1 and "device or special file" in res.output and "Traceback" not in res.output
    with pytest.raises(franq.InputError, match="device"):
        list(franq.read_results(path))


def test_a_directory_and_a_missing_file_are_one_line(tmp_path):
    for path, words in ((tmp_path, "directory"), (tmp_path / "nope.jsonl", "no such file")):
        res = CliRunner().invoke(main, ["report", str(path), "-o", str(tmp_path / "r.html")])
        assert res.exit_code != 0 and words in res.output and "Traceback" not in res.output


def test_an_overlong_line_is_skipped_without_holding_it(tmp_path, monkeypatch):
    from franq.limits import LIMITS

    monkeypatch.setitem(LIMITS, "record_bytes", dataclasses.replace(LIMITS["record_bytes"], default=1000))
    src = tmp_path / "scores.jsonl"
    src.write_text(GOOD + "\n" + "x" * 50_000 + "\n" + GOOD + "\n")
    res = CliRunner().invoke(main, ["report", str(src), "-o", str(tmp_path / "r.html")])
    assert res.exit_code == 0 and "line 2: more than 1000 bytes, over the limit of 1000" in res.output
    assert "2 answers" in res.output


def test_read_results_raises_naming_the_line_without_on_skip(tmp_path):
    src = tmp_path / "scores.jsonl"
    src.write_text(GOOD + "\n" + json.dumps(_claim(p_true_raw=3)) + "\n")
    with pytest.raises(franq.InputError, match=r"scores.jsonl line 2: 'claims\[0\].p_true_raw'"):
        list(franq.read_results(src))
