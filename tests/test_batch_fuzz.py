"""Fuzz the JSONL batch path with malformed records: every one becomes an error record
whose reason names the field, the valid records around them are scored, exit code 0; the
record reader on duplicate keys, surrogates, limits and odd-but-valid lines."""
from __future__ import annotations

import io
import json

import pytest
from click.testing import CliRunner

from franq.cli import main
from franq.runners.records import BadRecord, Record, RecordReader

Q, P, A = "Where is the Eiffel Tower?", ["The Eiffel Tower is in Paris."], "It is in Paris."


def rec(**fields) -> bytes:
    base = {"question": Q, "passages": P, "answer": A}
    base.update(fields)
    return json.dumps({k: v for k, v in base.items() if v is not ...}).encode()


# (kind, raw line without newline, substring the reason must contain)
MALFORMED = [
    ("not json", b"this is not json", "not valid JSON"),
    ("truncated json", b'{"question": "Where', "not valid JSON"),
    ("top-level list", b'[1, 2, 3]', "expected a JSON object, got list"),
    ("top-level string", b'"just a string"', "expected a JSON object, got str"),
    ("top-level number", b"42", "expected a JSON object, got int"),
    ("top-level null", b"null", "expected a JSON object, got NoneType"),
    ("missing question", rec(question=...), "missing field 'question'"),
    ("missing passages", rec(passages=...), "missing field 'passages'"),
    ("missing answer", rec(answer=...), "missing field 'answer'"),
    ("question is int", rec(question=7), "'question' must be a string, got int"),
    ("question is null", rec(question=None), "'question' must be a string, got NoneType"),
    ("question empty", rec(question=""), "'question' is empty"),
    ("question whitespace", rec(question="  \t "), "'question' is empty"),
    ("answer empty", rec(answer=""), "'answer' is empty"),
    ("answer is list", rec(answer=["a"]), "'answer' must be a string, got list"),
    ("passages is string", rec(passages="Paris"), "'passages' must be a list"),
    ("passages is object", rec(passages={"text": "x"}), "'passages' must be a list"),
    ("passage is int", rec(passages=[3]), "'passages[0]' must be a string"),
    ("passage empty", rec(passages=["ok", ""]), "'passages[1]' is empty"),
    ("passage object without text", rec(passages=[{"title": "t"}]), "'passages[0]' has no 'text'"),
    ("passage object unknown key", rec(passages=[{"text": "t", "url": "u"}]), "'passages[0]' has unknown keys ['url']"),
    ("passage text is int", rec(passages=[{"text": 5}]), "'passages[0].text' must be a string, got int"),
    ("passage title is list", rec(passages=[{"text": "t", "title": ["x"]}]), "'passages[0].title' must be a string"),
    ("claims is string", rec(claims="It is in Paris."), "'claims' must be a list of strings or"),
    ("claim is int", rec(claims=[1]), "'claims[0]' must be a string, got int"),
    ("claim empty", rec(claims=[""]), "'claims[0]' is empty"),
    ("id is float", rec(id=1.5), "'id' must be a string or an integer, got float"),
    ("id is bool", rec(id=True), "'id' must be a string or an integer, got bool"),
    ("id is list", rec(id=["x"]), "'id' must be a string or an integer, got list"),
    ("unknown field", rec(config={"temperature": 2}), "unknown field(s) ['config']"),
    ("NaN value", b'{"question": NaN, "passages": ["p"], "answer": "a"}', "NaN is not valid JSON"),
    ("Infinity value", b'{"question": "q", "passages": ["p"], "answer": "a", "id": Infinity}',
     "Infinity is not valid JSON"),
    ("non-UTF-8 bytes", b'{"question": "caf\xe9", "passages": ["p"], "answer": "a"}', "not valid UTF-8"),
    ("latin-1 garbage", b"\xff\xfe\x00\x01", "not valid UTF-8"),
    ("unpaired surrogate", b'{"question": "q", "passages": ["p"], "answer": "a \\ud800 b"}',
     "'answer' holds an unpaired surrogate"),
    ("huge nested array", b"[" * 100_000 + b"]" * 100_000, "record is 200001 bytes"),
    ("nested too deep for json", b'{"question": ' + b"[" * 1500 + b"]" * 1500 + b"}", "nested too deeply"),
    ("oversized passage", rec(passages=["x " * 400]), "'passages[0]' is 800 characters, over the limit of 500"),
    ("oversized record", rec(answer="word " * 3000), "over the limit of 4000 (bytes per JSONL line"),
    ("control character", b'{"question": "a\x01b", "passages": ["p"], "answer": "a"}', "Invalid control character"),
    ("duplicate key", b'{"question": "q", "question": 1, "passages": ["p"], "answer": "a"}',
     "key 'question' appears twice in one object"),
    ("question overflows the model context", rec(question=" ".join(["why"] * 700)), "context"),
]


def test_fuzz_malformed_records_each_get_an_error_and_valid_ones_are_scored(tmp_path, tiny_lm_path):
    assert len({kind for kind, _, _ in MALFORMED}) >= 30
    lines, expected, valid_ids = [], {}, []
    for k, (kind, raw, reason) in enumerate(MALFORMED):
        valid_ids.append(f"ok-{k}")
        lines.append(rec(id=f"ok-{k}", question=f"Where is tower {k}?"))
        lines.append(raw)
        expected[len(lines)] = (kind, reason)
    lines.append(rec(id="ok-0"))  # a repeated id
    expected[len(lines)] = ("duplicate id", "repeats the id of line 1")
    lines.append(rec(id="ok-last"))
    valid_ids.append("ok-last")
    src = tmp_path / "in.jsonl"
    src.write_bytes(b"\n".join(lines) + b"\n\n")
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"model": {"path": str(tiny_lm_path), "device": "cpu", "on_overflow": "error"}}))
    out = tmp_path / "out.jsonl"

    res = CliRunner().invoke(main, ["score", str(src), "-o", str(out), "--config", str(cfg), "--quiet", "--strict",
                                    "--limit", "record_bytes=4000", "--limit", "passage_chars=500"])

    assert res.exit_code == 0, res.output
    errors = [json.loads(x) for x in (tmp_path / "out.jsonl.errors.jsonl").read_text().splitlines()]
    by_line = {e["line"]: e for e in errors}
    assert len(errors) == len(by_line) == len(expected)
    for line, (kind, reason) in expected.items():
        assert line in by_line, f"{kind}: no error record for line {line}"
        got = by_line[line]["error"]
        assert got.startswith(f"line {line}: "), f"{kind}: {got}"
        assert reason in got, f"{kind}: {got!r} lacks {reason!r}"
    scored = [json.loads(x)["id"] for x in out.read_text().splitlines()]
    assert scored == valid_ids
    assert (f"scored {len(valid_ids)} answers" in res.stderr
            and f"{len(MALFORMED)} bad records, 1 duplicate ids" in res.stderr)


def test_error_record_carries_the_id_of_a_bad_record(tmp_path, tiny_lm_path):
    src = tmp_path / "in.jsonl"
    src.write_bytes(rec(id="bad-1", config=1) + b"\n")
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"model": {"path": str(tiny_lm_path)}}))
    res = CliRunner().invoke(main, ["score", str(src), "-o", str(tmp_path / "o.jsonl"), "--config", str(cfg), "--quiet",
                                    "--strict"])
    assert res.exit_code == 0
    err = json.loads((tmp_path / "o.jsonl.errors.jsonl").read_text())
    assert err == {"file": str(src), "line": 1, "id": "bad-1", "error": "line 1: unknown field(s) ['config']; expected "
                   "['answer', 'claims', 'gold_answers', 'gold_passages', 'id', 'is_faithful', 'is_true', 'meta', "
                   "'passages', 'question', 'sufficient'] (put your own fields in "
                   "'meta': an object echoed to the output)"}


# ---------------------------------------------------------------------------- the record reader
RECORD_ERRORS = [
    ("nested duplicate key", b'{"question": "q", "passages": [{"text": "a", "text": "b"}], "answer": "a"}',
     "key 'text' appears twice"),
    ("duplicate id key", b'{"id": "a", "id": "b", "question": "q", "passages": ["p"], "answer": "a"}',
     "key 'id' appears twice"),
    ("claim surrogate", b'{"question": "q", "passages": ["p"], "answer": "a", "claims": ["\\ud800"]}',
     "'claims[0]' holds an unpaired surrogate"),
    ("passage title surrogate", b'{"question": "q", "passages": [{"text": "t", "title": "\\udc00"}], "answer": "a"}',
     "'passages[0].title' holds an unpaired surrogate"),
    ("claim too long", rec(claims=["x" * 10_001]), "'claims[0]' is 10001 characters, over the limit of 10000"),
    ("too many claims", rec(claims=["c"] * 1001), "'claims' has 1001 claims"),
    ("id is object", rec(id={"a": 1}), "'id' must be a string or an integer, got dict"),
    ("id is null with claims int", rec(claims=[None]), "'claims[0]' must be a string, got NoneType"),
    ("empty object", b"{}", "missing field 'question'"),
    ("trailing garbage", rec() + b" x", "not valid JSON"),
    ("two objects on a line", rec() + rec(), "not valid JSON"),
    ("single quotes", b"{'question': 'q'}", "not valid JSON"),
    ("-Infinity", b'{"question": -Infinity, "passages": ["p"], "answer": "a"}', "-Infinity is not valid JSON"),
]


@pytest.mark.parametrize("case", [c[0] for c in RECORD_ERRORS])
def test_malformed_record_becomes_an_error_record_naming_the_field(case):
    raw, expected = next((r, e) for name, r, e in RECORD_ERRORS if name == case)
    items = list(RecordReader().read(io.BytesIO(raw + b"\n" + rec(id="after") + b"\n")))
    assert isinstance(items[0], BadRecord) and items[0].reason.startswith("line 1: ")
    assert expected in items[0].reason, items[0].reason
    assert isinstance(items[1], Record) and items[1].id == "after"  # the run carries on


def test_int_and_string_ids_compare_as_text_and_the_repeat_says_so():
    items = list(RecordReader().read(io.BytesIO(rec(id=7) + b"\n" + rec(id="7") + b"\n")))
    assert isinstance(items[0], Record) and items[0].id == "7"
    assert isinstance(items[1], BadRecord) and items[1].duplicate
    assert 'ids compare as text: 7 and "7" are the same id' in items[1].reason


@pytest.mark.parametrize("raw", [b"\xef\xbb\xbf" + rec(id="bom"), rec(id="crlf") + b"\r",
                                 rec(id="esc", answer="Paris \u001b[2J is here.")])
def test_odd_but_valid_lines_are_read(raw):
    items = list(RecordReader().read(io.BytesIO(raw + b"\n")))
    assert len(items) == 1 and isinstance(items[0], Record)
