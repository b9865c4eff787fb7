"""`franq trust build` on hostile questions and pools: every bad field is one line naming
the file or record and the field; gzip bombs, devices and impossible poison ratios end
before memory grows; never a traceback, never a MemoryError."""
from __future__ import annotations

import dataclasses
import gzip
import json

import pytest
from click.testing import CliRunner

from franq.apps.trust import build as B
from franq.cli import main
from franq.files import iter_lines
from franq.limits import LIMITS

Q = {"id": "q1", "question": "Who built the tower?", "answers": ["Eiffel"],
     "gold_passages": [{"title": "Tower", "text": "The tower was built by Eiffel in 1889."}]}
Q2 = {"id": "q2", "question": "Who wrote the book?", "answers": ["Austen"],
      "gold_passages": ["The book was written by Austen."]}
POOL = [{"id": f"p{i}", "title": f"T{i}", "text": f"Passage number {i} about towers and books."} for i in range(5)]
NQ = {"id": "q3", "question": "Which city?", "answers": ["Paris"], "passage_ids": ["g1"], "gold_position": 0}
GOLD = {"id": "g1", "title": "City", "text": "The city is Paris."}


def _write(path, lines):
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return str(path)


def _build(tmp_path, questions, pool=None, *extra):
    qp = _write(tmp_path / "q.jsonl", questions)
    pp = _write(tmp_path / "pool.jsonl", POOL + [GOLD] if pool is None else pool)
    return CliRunner().invoke(main, ["trust", "build", qp, "--pool", pp, "--out", str(tmp_path / "c.jsonl"),
                                     "--distractors", "0,1", *extra])


def _refused(res, *words):
    assert res.exit_code != 0, res.output
    assert "Traceback" not in res.output and res.output.startswith("Error:"), res.output
    for w in words:
        assert w in res.output, res.output


QUESTION_CASES = {
    "gold_passages is 5": ({**Q, "gold_passages": 5}, "'gold_passages' must be a list"),
    "gold_passages is a string": ({**Q, "gold_passages": "text"}, "'gold_passages' must be a list"),
    "gold passage is a number": ({**Q, "gold_passages": [5]}, "gold_passages[0]"),
    "gold passage title is a list": ({**Q, "gold_passages": [{"title": [1], "text": "t"}]}, "gold_passages[0]"),
    "gold_passages empty": ({**Q, "gold_passages": []}, "'gold_passages' is empty"),
    "passage_ids not a list": ({**NQ, "passage_ids": "g1"}, "'passage_ids' must be a list"),
    "passage_ids holds a list": ({**NQ, "passage_ids": [["g1"]]}, "'passage_ids' must be a list"),
    "passage_ids holds null": ({**NQ, "passage_ids": [None]}, "'passage_ids'"),
    "gold_position out of range": ({**NQ, "gold_position": 7}, "'gold_position' must be an index"),
    "gold_position negative": ({**NQ, "gold_position": -1}, "'gold_position'"),
    "gold_position a string": ({**NQ, "gold_position": "0"}, "'gold_position'"),
    "gold_position a bool": ({**NQ, "gold_position": True}, "'gold_position'"),
    "gold id not in pool": ({**NQ, "passage_ids": ["zz"]}, "is not in the pool"),
    "answers empty": ({**Q, "answers": []}, "'answers'"),
    "answers a string": ({**Q, "answers": "Eiffel"}, "'answers'"),
    "question a number": ({**Q, "question": 5}, "'question'"),
    "record a list": ([1, 2], "expected a JSON object"),
    "no gold at all": ({"id": "q", "question": "Q?", "answers": ["a"]}, "needs 'gold_passages'"),
}


@pytest.mark.parametrize("name", QUESTION_CASES)
def test_bad_question_fields_are_named(tmp_path, name):
    record, words = QUESTION_CASES[name]
    _refused(_build(tmp_path, [Q, Q2, record]), "record 3", words)


POOL_CASES = {
    "pool line without id": ({"title": "t", "text": "x"}, "needs an 'id'"),
    "pool id a list": ({"id": [1], "title": "t", "text": "x"}, "needs an 'id'"),
    "pool id a bool": ({"id": True, "title": "t", "text": "x"}, "needs an 'id'"),
    "pool id an object": ({"id": {"a": 1}, "title": "t", "text": "x"}, "needs an 'id'"),
    "pool line a list": ([1, 2], "needs an 'id'"),
    "pool text missing": ({"id": "x", "title": "t"}, "a passage must be"),
    "pool text a number": ({"id": "x", "text": 5}, "a passage must be"),
}


@pytest.mark.parametrize("name", POOL_CASES)
def test_bad_pool_lines_are_named(tmp_path, name):
    line, words = POOL_CASES[name]
    _refused(_build(tmp_path, [Q, Q2], POOL + [line]), "pool record 6", words)


@pytest.mark.parametrize("text, words", [
    ('{"id": "q", "x": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply"),
    ('{"id": "q", "x": ' + "[" * 100 + "]" * 100 + "}", "nested too deeply"),
    ('{"id": "q", "x": NaN}', "invalid JSON"),
    ('{"id": "q", "x": 1e999}', "out of range"),
    ('{"id": "q", "id": "r"}', "appears twice"),
])
def test_hostile_json_in_the_questions(tmp_path, text, words):
    _refused(_build(tmp_path, [Q, text]), "q.jsonl, line 2", words)


def test_invalid_utf8_in_questions_and_pool(tmp_path):
    (tmp_path / "q.jsonl").write_bytes(json.dumps(Q).encode() + b"\n" + b'{"id": "\xff"}\n')
    _write(tmp_path / "pool.jsonl", POOL)
    res = CliRunner().invoke(main, ["trust", "build", str(tmp_path / "q.jsonl"), "--pool", str(tmp_path / "pool.jsonl"),
                                    "--out", str(tmp_path / "c.jsonl")])
    _refused(res, "q.jsonl, line 2: not valid UTF-8")
    (tmp_path / "p.jsonl").write_bytes(b'{"id": "p", "text": "caf\xe9"}\n')
    res = CliRunner().invoke(main, ["trust", "build", str(tmp_path / "q.jsonl"), "--pool", str(tmp_path / "p.jsonl"),
                                    "--out", str(tmp_path / "c.jsonl")])
    _refused(res, "line")


def test_a_device_as_pool_is_refused(tmp_path):
    qp = _write(tmp_path / "q.jsonl", [Q, Q2])
    res = CliRunner().invoke(main, ["trust", "build", qp, "--pool", "/dev/zero", "--out", str(tmp_path / "c.jsonl")])
    _refused(res, "device or special file")


def test_gzip_bomb_of_one_endless_line_stops_at_the_line_limit(tmp_path, monkeypatch):
    monkeypatch.setitem(LIMITS, "record_bytes", dataclasses.replace(LIMITS["record_bytes"], default=10_000))
    bomb = tmp_path / "pool.jsonl.gz"
    with gzip.open(bomb, "wb") as f:
        for _ in range(50):
            f.write(b"\0" * 2**20)  # 50 MB of zeros, no newline: 50 KB compressed
    assert bomb.stat().st_size < 200_000
    qp = _write(tmp_path / "q.jsonl", [Q, Q2])
    res = CliRunner().invoke(main, ["trust", "build", qp, "--pool", str(bomb), "--out", str(tmp_path / "c.jsonl")])
    _refused(res, "pool.jsonl.gz, line 1: more than 10000 bytes, over the limit")


def test_gzip_bomb_of_many_lines_stops_at_the_decompressed_limit(tmp_path):
    bomb = tmp_path / "pool.jsonl.gz"
    line = json.dumps({"id": "p", "title": "t", "text": "x" * 100}).encode() + b"\n"
    with gzip.open(bomb, "wb") as f:
        f.write(line * 20_000)  # 2.4 MB decompressed
    seen = 0
    with pytest.raises(Exception, match="more than 1000000 bytes, over the limit of 1000000"):
        for _ in iter_lines(str(bomb), limits={"decompressed_bytes": 1_000_000}):
            seen += 1
    assert seen < 1_000_000 // len(line) + 1  # stopped at the cap, not at the end


@pytest.mark.parametrize("ratio", ["0.9999999", "0.9995"])
def test_an_impossible_poison_ratio_is_refused_before_reading(tmp_path, ratio):
    res = _build(tmp_path, [Q, Q2], None, "--poison", ratio)
    _refused(res, f"poison ratio {ratio}", "over the limit")
    assert not (tmp_path / "c.jsonl").exists()


def test_a_high_but_possible_poison_ratio_is_bounded(tmp_path):
    conds = B.conditions((0.99,), ())
    out, _ = B.build([Q, Q2], POOL, conds=conds)
    assert all(len(r["passages"]) <= LIMITS["passages"].default for r in out)
    with pytest.raises(Exception, match="over the limit of"):
        B.build([{**Q, "gold_passages": [f"Eiffel built {i}." for i in range(20)]}, Q2], POOL, conds=conds)


def test_too_many_distractors_is_refused(tmp_path):
    _refused(_build(tmp_path, [Q, Q2], None, "--distractors", "1000000"), "distractor count")


def test_the_good_build_still_works_and_is_deterministic(tmp_path):
    assert _build(tmp_path, [Q, Q2, NQ]).exit_code == 0
    first = (tmp_path / "c.jsonl").read_bytes()
    assert _build(tmp_path, [Q, Q2, NQ]).exit_code == 0 and (tmp_path / "c.jsonl").read_bytes() == first
