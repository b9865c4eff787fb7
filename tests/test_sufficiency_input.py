"""`franq sufficiency` on hostile input: a bad line (invalid UTF-8, deep nesting, non-finite
numbers, wrong types, over the line limit) is one error record naming its line and the run
carries on; devices, missing directories and aliased outputs are one-line errors before
anything is read; a failed run leaves an earlier output as it was. The contains_gold rater
needs no model."""
from __future__ import annotations

import dataclasses
import json
import os

import pytest
from click.testing import CliRunner

from franq.cli import main
from franq.limits import LIMITS

GOOD = {"id": "a", "question": "Who built it?", "passages": ["Eiffel built the tower."], "gold_answers": ["Eiffel"]}


def _run(tmp_path, data: bytes, *extra):
    src = tmp_path / "in.jsonl"
    src.write_bytes(data)
    args = ["sufficiency", str(src), "-o", str(tmp_path / "out.jsonl"), "--errors", str(tmp_path / "err.jsonl"),
            "--rater", "contains_gold", *extra]
    return CliRunner().invoke(main, args)


def _lines(path):
    return [json.loads(x) for x in path.read_text().splitlines()]


BAD_LINES = {
    "invalid UTF-8": (b'{"id": "b", "question": "caf\xe9?", "passages": ["x"]}', "not valid UTF-8"),
    "deep nesting": (b'{"id": "b", "meta": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested too deeply"),
    "nesting of 100": (b'{"x": ' + b"[" * 100 + b"]" * 100 + b"}", "nested too deeply"),
    "NaN": (b'{"id": "b", "question": NaN, "passages": ["x"]}', "NaN"),
    "1e999": (b'{"id": "b", "question": "q", "passages": ["x"], "sufficient": 1e999}', "out of range"),
    "not an object": (b"[1, 2, 3]", "expected a JSON object"),
    "a string": (b'"hello"', "expected a JSON object"),
    "question an int": (b'{"question": 5, "passages": ["x"]}', "'question'"),
    "passages an int": (b'{"question": "q", "passages": 3}', "'passages'"),
    "gold_answers a string": (b'{"question": "q", "passages": ["x"], "gold_answers": "E"}', "'gold_answers'"),
    "gold_passages 5": (b'{"question": "q", "passages": ["x"], "gold_passages": 5}', "'gold_passages'"),
    "sufficient a string": (b'{"question": "q", "passages": ["x"], "sufficient": "yes"}', "'sufficient'"),
    "unknown field": (b'{"question": "q", "passages": ["x"], "zz": 1}', "unknown field"),
    "broken JSON": (b'{"question": ', "not valid JSON"),
    "repeated key": (b'{"question": "q", "question": "r", "passages": ["x"]}', "appears twice"),
    "no gold answers": (b'{"question": "q", "passages": ["x"]}', "gold"),
}


@pytest.mark.parametrize("name", BAD_LINES)
def test_a_bad_line_is_an_error_record_and_the_run_carries_on(tmp_path, name):
    line, words = BAD_LINES[name]
    good = json.dumps(GOOD).encode()
    res = _run(tmp_path, good + b"\n" + line + b"\n" + good.replace(b'"a"', b'"c"') + b"\n")
    assert res.exit_code == 0, res.output
    assert [r["id"] for r in _lines(tmp_path / "out.jsonl")] == ["a", "c"]
    errors = _lines(tmp_path / "err.jsonl")
    assert len(errors) == 1 and errors[0]["line"] == 2 and words in errors[0]["error"], errors


def test_an_overlong_line_is_an_error_record(tmp_path, monkeypatch):
    monkeypatch.setitem(LIMITS, "record_bytes", dataclasses.replace(LIMITS["record_bytes"], default=2000))
    good = json.dumps(GOOD).encode()
    res = _run(tmp_path, good + b"\n" + b"x" * 100_000 + b"\n" + good + b"\n")
    assert res.exit_code == 0
    errors = _lines(tmp_path / "err.jsonl")
    assert errors[0]["line"] == 2 and "over the limit of 2000" in errors[0]["error"]
    assert len(_lines(tmp_path / "out.jsonl")) == 2


@pytest.mark.parametrize("option", ["-o", "--errors"])
def test_output_in_a_missing_directory_is_one_line(tmp_path, option):
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(GOOD) + "\n")
    args = ["sufficiency", str(src), "--rater", "contains_gold", "-o", str(tmp_path / "o.jsonl"),
            option, str(tmp_path / "missing" / "x.jsonl")]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 1 and "does not exist" in res.output and "Traceback" not in res.output


@pytest.mark.parametrize("kind", ["same", "symlink", "hardlink"])
def test_outputs_onto_the_input_are_refused(tmp_path, kind):
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(GOOD) + "\n")
    before = src.read_bytes()
    target = tmp_path / "alias.jsonl"
    if kind == "same":
        target = src
    elif kind == "symlink":
        os.symlink(src, target)
    else:
        os.link(src, target)
    for option in ("-o", "--errors"):
        args = ["sufficiency", str(src), "--rater", "contains_gold", "-o", str(tmp_path / "o.jsonl"), option,
                str(target)]
        res = CliRunner().invoke(main, args)
        assert res.exit_code == 1 and "same file" in res.output and src.read_bytes() == before


def test_a_device_as_input_is_refused(tmp_path):
    res = CliRunner().invoke(main, ["sufficiency", "/dev/zero", "-o", str(tmp_path / "o.jsonl"),
                                    "--rater", "contains_gold"])
    assert res.exit_code == 1 and "device or special file" in res.output


def test_output_to_dev_null_and_stdout_are_streams(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(GOOD) + "\n")
    assert CliRunner().invoke(main, ["sufficiency", str(src), "-o", os.devnull, "--rater", "contains_gold"]).exit_code == 0
    res = CliRunner().invoke(main, ["sufficiency", str(src), "-o", "-", "--rater", "contains_gold"])
    assert res.exit_code == 0 and '"p_sufficient"' in res.output


def test_a_failed_run_leaves_the_earlier_output(tmp_path, monkeypatch):
    from franq.apps import answering

    (tmp_path / "out.jsonl").write_text("earlier results\n")
    real = answering.read_qa_records

    def crash(*args, **kwargs):
        yield from real(*args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(answering, "read_qa_records", crash)
    res = _run(tmp_path, json.dumps(GOOD).encode() + b"\n")
    assert res.exit_code != 0
    assert (tmp_path / "out.jsonl").read_text() == "earlier results\n"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
