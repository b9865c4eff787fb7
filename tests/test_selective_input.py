"""`franq selective fit|threshold` on hostile rows: rows that are not objects, non-finite
or non-numeric scores, invalid UTF-8, deep nesting, devices; each is one line naming the
file, line and field, before any fitting; the policy is never written over the input."""
from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from franq.cli import main

ROWS = [{"p": i / 40, "nli": (i * 7 % 40) / 40, "correct": int(i > 15)} for i in range(40)]


def _src(tmp_path, bad: bytes | None = None):
    lines = [json.dumps(r).encode() for r in ROWS]
    if bad is not None:
        lines.insert(5, bad)
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


COMMANDS = {"fit": ["fit", "--features", "p,nli"], "threshold": ["threshold", "--score", "p"]}
BAD_ROWS = {
    "a list": (b"[0.5, 1]", "line 6: expected a JSON object, got list"),
    "a number": (b"0.5", "line 6: expected a JSON object, got float"),
    "a string": (b'"row"', "line 6: expected a JSON object, got str"),
    "null": (b"null", "line 6: expected a JSON object"),
    "infinite score": (b'{"p": 1e999, "nli": 0.1, "correct": 1}', "line 6"),
    "NaN score": (b'{"p": NaN, "nli": 0.1, "correct": 1}', "NaN"),
    "Infinity score": (b'{"p": Infinity, "nli": 0.1, "correct": 1}', "Infinity"),
    "huge integer score": (b'{"p": ' + b"9" * 400 + b', "nli": 0.1, "correct": 1}', "line 6: 'p' must be a number"),
    "string score": (b'{"p": "0.5", "nli": 0.1, "correct": 1}', "line 6: 'p' must be a number"),
    "list score": (b'{"p": [0.5], "nli": 0.1, "correct": 1}', "line 6: 'p' must be a number"),
    "missing score": (b'{"nli": 0.1, "correct": 1}', "line 6: 'p' must be a number (finite), got no such field"),
    "missing label": (b'{"p": 0.1, "nli": 0.1}', "line 6: 'correct'"),
    "invalid UTF-8": (b'{"p": 0.1, "note": "caf\xe9"}', "line 6: not valid UTF-8"),
    "deep nesting": (b'{"p": 0.1, "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "line 6: nested too deeply"),
    "nesting of 80": (b'{"p": 0.1, "x": ' + b"[" * 80 + b"]" * 80 + b"}", "nested too deeply"),
    "broken JSON": (b'{"p": ', "line 6: not valid JSON"),
    "repeated key": (b'{"p": 0.1, "p": 0.2, "nli": 0.1, "correct": 1}', "appears twice"),
}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("name", BAD_ROWS)
def test_bad_rows_are_one_line_naming_the_line(tmp_path, command, name):
    bad, words = BAD_ROWS[name]
    src = _src(tmp_path, bad)
    res = CliRunner().invoke(main, ["selective", COMMANDS[command][0], str(src), "-o", str(tmp_path / "p.json"),
                                    *COMMANDS[command][1:]])
    assert res.exit_code == 1, res.output
    assert "Traceback" not in res.output and len(res.output.strip().splitlines()) == 1, res.output
    assert str(src) in res.output and words in res.output, res.output
    assert not (tmp_path / "p.json").exists()


@pytest.mark.parametrize("command", COMMANDS)
def test_devices_empty_files_and_aliases(tmp_path, command):
    args = COMMANDS[command][1:]
    sub = COMMANDS[command][0]
    res = CliRunner().invoke(main, ["selective", sub, "/dev/zero", "-o", str(tmp_path / "p.json"), *args])
    assert res.exit_code != 0 and "device" in res.output
    (tmp_path / "empty.jsonl").write_text("\n\n")
    res = CliRunner().invoke(main, ["selective", sub, str(tmp_path / "empty.jsonl"), "-o", str(tmp_path / "p.json"),
                                    *args])
    assert res.exit_code == 1 and "no records" in res.output
    src = _src(tmp_path)
    before = src.read_bytes()
    os.symlink(src, tmp_path / "link.json")
    for out in (src, tmp_path / "link.json"):
        res = CliRunner().invoke(main, ["selective", sub, str(src), "-o", str(out), *args])
        assert res.exit_code == 1 and "same file" in res.output and src.read_bytes() == before
    res = CliRunner().invoke(main, ["selective", sub, str(src), "-o", str(tmp_path / "no" / "p.json"), *args])
    assert res.exit_code == 1 and "does not exist" in res.output


@pytest.mark.parametrize("command", COMMANDS)
def test_good_rows_still_fit_and_the_policy_loads(tmp_path, command):
    from franq.apps.answering.policy import load_policy

    res = CliRunner().invoke(main, ["selective", COMMANDS[command][0], str(_src(tmp_path)), "-o",
                                    str(tmp_path / "p.json"), *COMMANDS[command][1:]])
    assert res.exit_code == 0, res.output
    assert load_policy(tmp_path / "p.json").kind.endswith("-policy")
