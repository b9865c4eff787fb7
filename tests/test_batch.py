"""Batch scoring: resume after SIGKILL, bad records, output log, batching."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import GOOD, assert_float32_close, tiny_cli_args
from franq.cli import main
from franq.errors import redact
from franq.io import Example, parse_example
from franq.runners.base import Scored, dynamic_batches, score_records
from franq.runners.local import run_jsonl
from franq.runners.output import OutputLockedError, OutputLog
from franq.runners.records import BadRecord, Record, RecordReader, read_lines
from franq.types import Passage

ROOT = Path(__file__).resolve().parents[1]


def good(i: int, *, with_id: bool = True) -> dict:
    rec = {"question": f"Where is the tower number {i}?",
           "passages": [f"The Eiffel Tower {i} is in Paris, France."],
           "answer": f"Tower {i} is in Paris. It was built in {1800 + i}."}
    if with_id:
        rec["id"] = f"rec-{i}"
    return rec


def stable_id(rec: dict) -> str:
    return parse_example(rec).stable_id()


def output_ids(path: Path) -> list[str]:
    return [json.loads(line)["id"] for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def config_file(tiny_lm_path, tmp_path_factory):
    path = tmp_path_factory.mktemp("cfg") / "franq.json"
    path.write_text(json.dumps({"model": {"path": str(tiny_lm_path), "device": "cpu"}}))
    return path


@pytest.fixture(scope="module")
def tiny_franq(tiny_lm):
    from conftest import make_franq

    return make_franq(tiny_lm)


# ---------------------------------------------------------------------------- crash and resume
def test_sigkill_mid_run_then_rerun_loses_and_duplicates_no_record(tmp_path, config_file):
    records = [good(i, with_id=i % 3 != 0) for i in range(30)]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp_path / "out.jsonl"
    cmd = [sys.executable, "-m", "franq", "score", str(src), "-o", str(out), "--config", str(config_file),
           "--quiet", "--batch-tokens", "1"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    while proc.poll() is None and not (out.exists() and out.stat().st_size > 0):
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    first = output_ids(out)
    assert 0 < len(first) < len(records), "the kill should land mid-way"
    with open(out, "ab") as f:  # a torn write: the crash hit in the middle of a line
        f.write(b'{"id": "rec-torn", "question": "half a li')

    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    ids = output_ids(out)
    expected = [stable_id(r) for r in records]
    assert len(ids) == len(set(ids)), "duplicated records"
    assert set(ids) == set(expected), "lost records"
    assert ids[: len(first)] == first
    assert f"{len(first)} skipped (already in output)" in done.stderr


def test_rerun_of_finished_output_skips_everything_and_loads_no_model(tmp_path, config_file):
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(good(1)) + "\n")
    out = tmp_path / "out.jsonl"
    out.write_text(json.dumps({"id": "rec-1", "claims": [], "mode": "long"}) + "\n")
    loaded = []
    summary = run_jsonl(lambda: loaded.append(1), str(src), str(out), progress=False)
    assert (summary.scored, summary.skipped, loaded) == (0, 1, [])


def test_output_log_cuts_partial_last_line_and_keeps_whole_ones(tmp_path):
    path = tmp_path / "out.jsonl"
    path.write_bytes(b'{"id": "a", "x": 1}\n{"id": "b", "x": 2}\n{"id": "c", "x"')
    log = OutputLog(str(path))
    try:
        assert list(log.ids()) == ["a", "b"]
        log.append(['{"id": "d"}'])
    finally:
        log.close()
    assert path.read_text().splitlines() == ['{"id": "a", "x": 1}', '{"id": "b", "x": 2}', '{"id": "d"}']


def test_second_writer_on_same_output_is_refused(tmp_path):
    path = tmp_path / "out.jsonl"
    first = OutputLog(str(path))
    try:
        with pytest.raises(OutputLockedError, match="another franq run"):
            OutputLog(str(path))
    finally:
        first.close()


def test_foreign_output_file_error_names_the_line_and_is_left_untouched(tmp_path):
    path = tmp_path / "out.jsonl"
    path.write_text('not json\n{"id": 3}\n')
    with pytest.raises(ValueError, match="line 1: not a franq result line"):
        OutputLog(str(path))
    assert path.read_text() == 'not json\n{"id": 3}\n' and not (tmp_path / "out.jsonl.recovered").exists()


# ---------------------------------------------------------------------------- reading
def test_overlong_line_is_reported_without_breaking_the_next_line(tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_bytes(b"x" * 5000 + b"\n" + b'{"a": 1}\n')
    with open(path, "rb") as f:
        rows = list(read_lines(f, max_record_bytes=100))
    assert rows[0][0] == 1 and rows[0][1] is None and "5001 bytes, over the limit of 100" in rows[0][2]
    assert rows[1] == (2, '{"a": 1}\n', "")


def test_records_without_id_get_a_content_hash_and_repeats_are_reported(tmp_path):
    rec = good(1, with_id=False)
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps(rec) + "\n" + json.dumps(rec) + "\n")
    with open(path, "rb") as f:
        items = list(RecordReader().read(f))
    assert isinstance(items[0], Record) and items[0].id == stable_id(rec) and items[0].id.startswith("sha1:")
    assert isinstance(items[1], BadRecord) and items[1].duplicate and "repeats the id of line 1" in items[1].reason


def test_dynamic_batches_follow_the_token_budget():
    recs = [Record(i, str(i), Example("q", (Passage("p"),), "a")) for i in range(7)]
    sizes = {0: 50, 1: 50, 2: 120, 3: 10, 4: 10, 5: 10, 6: 10}
    batches = list(dynamic_batches(recs, lambda r: sizes[r.line], budget=100, max_answers=3))
    assert [[r.line for r in b] for b in batches] == [[0, 1], [2], [3, 4, 5], [6]]


# ---------------------------------------------------------------------------- scoring
def test_failing_record_is_isolated_and_the_rest_of_its_batch_is_scored(tiny_franq):
    too_long = Example(" ".join(["question"] * 600), (Passage("p"),), "An answer.")
    recs = [Record(1, "a", parse_example(good(1))), Record(2, "b", too_long), Record(3, "c", parse_example(good(3)))]
    out = score_records(tiny_franq, recs)
    assert [type(o) for o in out] == [Scored, BadRecord, Scored]
    assert out[1].reason.startswith("line 2: ") and "context" in out[1].reason


def test_batched_scores_equal_one_answer_at_a_time(tiny_franq):
    recs = [Record(i, str(i), parse_example(good(i))) for i in range(6)]
    together = score_records(tiny_franq, recs)
    alone = [score_records(tiny_franq, [r])[0] for r in recs]
    for a, b in zip(together, alone):
        ca, cb = json.loads(a.json)["claims"], json.loads(b.json)["claims"]
        assert_float32_close([c["p_true_raw"] for c in ca], [c["p_true_raw"] for c in cb])


def test_progress_bar_on_stderr_and_quiet_turns_it_off(tmp_path, config_file):
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(good(1)) + "\n")
    runner = CliRunner()
    loud = runner.invoke(main, ["score", str(src), "-o", str(tmp_path / "a.jsonl"), "--config", str(config_file)])
    quiet = runner.invoke(main, ["score", str(src), "-o", str(tmp_path / "b.jsonl"), "--config",
                                 str(config_file), "--quiet"])
    assert loud.exit_code == 0 and quiet.exit_code == 0
    assert "claims/s" in loud.stderr and "franq score:" in loud.stderr
    assert "franq score:" not in quiet.stderr and "scored 1 answers" in quiet.stderr


def test_unknown_config_key_fails_before_scoring_and_names_the_key(tmp_path):
    cfg = tmp_path / "bad.json"
    cfg.write_text(json.dumps({"modle": "x"}))
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(good(1)) + "\n")
    res = CliRunner().invoke(main, ["score", str(src), "-o", str(tmp_path / "o.jsonl"), "--config", str(cfg)])
    assert res.exit_code != 0 and "unknown key(s) ['modle']" in res.output


def test_api_keys_are_redacted_from_error_records(tmp_path, monkeypatch):
    key = "sk-test-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    assert key not in redact(f"request failed with key {key}")
    assert key not in BadRecord(1, None, f"unknown field(s) ['{key}']").to_json()
    assert "hf_" not in redact("token hf_abcdefghijkl")


def test_missing_input_and_unwritable_output_are_named(tmp_path):
    with pytest.raises(ValueError, match="input: no file at"):
        run_jsonl(lambda: None, str(tmp_path / "nope.jsonl"), str(tmp_path / "o.jsonl"), progress=False)
    src = tmp_path / "in.jsonl"
    src.write_text("")
    with pytest.raises(ValueError, match="output: cannot open"):
        run_jsonl(lambda: None, str(src), str(tmp_path / "no-dir" / "o.jsonl"), progress=False)


def test_user_metadata_passes_through_a_batch(tiny_lm_path, tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({**GOOD, "id": "a", "meta": {"request_id": "r-1", "user": {"name": "ann"}}}) + "\n"
                   + json.dumps({**GOOD, "id": "b", "extra": 1}) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    res = CliRunner().invoke(main, ["score", str(src), "-o", str(out), "--quiet", *tiny_cli_args(tiny_lm_path)])
    assert res.exit_code == 0, res.output
    a, b = [json.loads(line) for line in out.read_text().splitlines()]
    assert a["meta"] == {"request_id": "r-1", "user": {"name": "ann"}}
    assert a["passages"] == [{"text": GOOD["passages"][0], "title": ""}]
    assert b["meta"] == {"unknown_fields": {"extra": 1}}  # kept, not refused (--strict refuses)
    strict = tmp_path / "strict.jsonl"
    res = CliRunner().invoke(main, ["score", str(src), "-o", str(strict), "--quiet", "--strict",
                                    *tiny_cli_args(tiny_lm_path)])
    assert res.exit_code == 0, res.output
    assert [json.loads(line)["id"] for line in strict.read_text().splitlines()] == ["a"]
    error = json.loads((tmp_path / "strict.jsonl.errors.jsonl").read_text())
    assert "unknown field(s) ['extra']" in error["error"] and "put your own fields in 'meta'" in error["error"]
